#!/usr/bin/env bash
# The whole test suite (what `make test` and CI run). Stages can be run alone:
#   tests/run.sh [lint] [sanity] [units] [fakeconda] [packaging] [importer] [demo] [molecule]
# Prints a per-stage wall-time table at the end; exits non-zero when any stage failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export PATH="$root/.venv/bin:$PATH"
export CONTAINERS_CONF="$root/tests/harness/containers.conf"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0 PY_COLORS=0
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(lint sanity units fakeconda packaging importer demo molecule)
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
# The README's own commands as a new user types them: make demo, then the playbooks on the demo
# inventory with nothing else given (a converged site.yml changes nothing), then make demo-down.
stage_demo() {
  local log="${TMPDIR:-/tmp}/torchfleet-demo-stage.log" status=0
  NODES=2 make demo > "$log" 2>&1 || { tail -40 "$log"; make demo-down >/dev/null 2>&1; return 1; }
  grep -q 'TORCHFLEET SUMMARY' "$log" || { echo "make demo printed no summary"; tail -40 "$log"; status=1; }
  if [ "$status" -eq 0 ]; then
    ansible-playbook -i inventories/demo site.yml > "$log" 2>&1 || { tail -40 "$log"; status=1; }
  fi
  if [ "$status" -eq 0 ] && grep -E '^node[0-9]+ .*changed=[1-9]' "$log"; then
    echo "a converged site.yml on the demo inventory changed something"; status=1
  fi
  if [ "$status" -eq 0 ]; then
    ansible-playbook -i inventories/demo playbooks/audit.yml -e audit_report_dir="${TMPDIR:-/tmp}/torchfleet-demo-reports" \
      > "$log" 2>&1 || { tail -40 "$log"; status=1; }
  fi
  make demo-down >/dev/null 2>&1 || status=1
  return "$status"
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
