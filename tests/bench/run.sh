#!/usr/bin/env bash
# `make bench`: the benchmark on a podman cluster of its own (name `bench`), torn down at the end.
#
#   tests/bench/run.sh [--quick] [--keep] [--reuse] [--nodes N] [--runs R] [--phases site,probe,audit,unitcost,engine,packages]
#
# Extra options may also come from $BENCH_ARGS (`make bench BENCH_ARGS=--quick`). Builds the
# offline Miniconda stand-in the way tests/harness/demo.sh does, then runs tests/bench/bench.py,
# which prints one table and writes tests/output/bench/{table.txt,results.json}. Not a test:
# it exits 0 whatever the figures are, and non-zero only when it could not run at all.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export CONTAINERS_CONF="$root/tests/harness/containers.conf"
export ANSIBLE_CONFIG="$root/ansible.cfg"

die() { echo "bench: $*" >&2; exit 1; }

for arg in "$@"; do
  case $arg in
    -h|--help) exec python tests/bench/bench.py --fakeconda - --help ;;
  esac
done
[ -x tests/fakeconda/build.sh ] || die "tests/fakeconda/build.sh is missing: the benchmark needs the offline stand-in"
[ -x tests/harness/cluster.sh ] || die "tests/harness/cluster.sh is missing"

out="$root/tests/output/bench"
mkdir -p "$out"
exec 8>"$out/bench.lock"
flock -n 8 || die "another benchmark is running on this machine (lock $out/bench.lock)"

# Its own copy: a rebuild of the shared one by a concurrent `make demo` must not change the files mid-run.
fakeconda="$out/fakeconda"
echo "bench: building the offline Miniconda stand-in into $fakeconda"
tests/fakeconda/build.sh "$fakeconda" >"$out/fakeconda-build.log" 2>&1 \
  || { tail -20 "$out/fakeconda-build.log" >&2; die "tests/fakeconda/build.sh failed (log: $out/fakeconda-build.log)"; }

# shellcheck disable=SC2086 # BENCH_ARGS is a list of options, split on purpose
exec python tests/bench/bench.py --fakeconda "$fakeconda" ${BENCH_ARGS:-} "$@"
