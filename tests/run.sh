#!/usr/bin/env bash
# The whole test suite (what `make test` and CI run). Stages can be run alone:
#   tests/run.sh [lint] [sanity] [units] [fakeconda] [packaging] [importer] [scenarios] [molecule]
# Prints a per-stage wall-time table at the end; exits non-zero when any stage failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export PATH="$root/.venv/bin:$PATH"
export CONTAINERS_CONF="$root/tests/harness/containers.conf"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(lint sanity units fakeconda packaging importer scenarios molecule)
results=()
failed=0

collection_tree() { tests/harness/collection-tree.sh; }

seed_ansible_test_pip() {
  local cache=~/.ansible/test/cache version
  version=$(python -c 'from ansible_test._internal.python_requirements import get_venv_packages as g; print(g(type("P", (), {"version": "3.11"})())["pip"])')
  mkdir -p "$cache"
  cp tests/harness/get_pip_bootstrap.py "$cache/get_pip_${version//./_}.py"
}

# ansible-lint runs in a copy of what a fresh clone holds, with that copy's ansible.cfg:
# it must resolve torchfleet.cluster with no setup step (the committed .ansible link does).
stage_lint() {
  local copy
  copy="${TMPDIR:-/tmp}/torchfleet-lint-$(echo "$root" | sha256sum | cut -c1-8)/cluster"
  yamllint --strict . || return 1
  tests/harness/checkout-copy.sh "$copy" || return 1
  (cd "$copy" && ANSIBLE_CONFIG="$copy/ansible.cfg" ansible-lint --offline --profile production --strict)
}

stage_sanity() {
  seed_ansible_test_pip
  local tree; tree=$(collection_tree) || return 1
  (cd "$tree" && ansible-test sanity --venv --python 3.11 --color no)
}

stage_units() {
  local tree; tree=$(collection_tree) || return 1
  (cd "$tree" && ansible-test units --local --python 3.11 --color no)
}

stage_fakeconda() {
  python -m pytest -q -p no:cacheprovider tests/fakeconda
}

# The tarball against its allow-list, one version source, the execution environment's build context.
stage_packaging() {
  python -m pytest -q -p no:cacheprovider tests/packaging
}

stage_importer() {
  tests/harness/galaxy-importer.sh
}

# Role behaviour on a real 2-node SSH cluster that molecule's one converge cannot cover
# (fresh nodes: wrong checksums, check mode, one download for all nodes).
stage_scenarios() {
  roles/miniconda/tests/scenarios.sh
}

stage_molecule() {
  molecule test -s cluster || return 1
  molecule test -s backends || return 1
  if tests/harness/miniconda-reachable.sh; then
    molecule test -s real_installer
  else
    echo "molecule real_installer: skipped (the Miniconda download is not reachable from this machine)"
  fi
}

for stage in "${stages[@]}"; do
  declare -F "stage_$stage" >/dev/null || { echo "run.sh: unknown stage '$stage'" >&2; exit 2; }
  echo "=== stage: $stage"
  start=$(date +%s)
  if "stage_$stage"; then status=passed; else status=failed; failed=$((failed + 1)); fi
  results+=("$(printf '%-10s %-7s %5ss' "$stage" "$status" "$(( $(date +%s) - start ))")")
  echo "=== stage $stage: $status"
done

echo
echo "stage      result   time"
printf '%s\n' "${results[@]}"
passed=$(( ${#stages[@]} - failed ))
echo "stages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
