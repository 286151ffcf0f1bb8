#!/usr/bin/env bash
# Behaviour tests of the miniconda role on a real two-node podman cluster over SSH, with the
# offline installer stand-in served both as a controller file and from a loopback HTTP server.
#
#   roles/miniconda/tests/scenarios.sh [CLUSTER_NAME]     (default: mini; removed at the end)
#
# Checks: a wrong checksum (file and URL) fails before anything reaches a node and leaves no
# partial file; check mode changes nothing; one upstream download per run for all nodes and
# none once cached; a converged second run has changed=0; an interrupted install is repaired;
# a .condarc naming both auto-activation keys is repaired; Anaconda channels without
# miniconda_accept_tos fail during validation. Prints the wall time of each run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export CONTAINERS_CONF="$root/tests/harness/containers.conf" ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_FORCE_COLOR=0 ANSIBLE_NOCOLOR=1
cluster=${1:-mini}
work="$root/tests/output/miniconda-$cluster"
play="$root/roles/miniconda/tests/play.yml"
nodes=(0 1)
failures=0
mkdir -p "$work"

say() { printf '\n=== %s\n' "$*"; }
ok() { printf '  ok   %s\n' "$*"; }
bad() { printf '  FAIL %s\n' "$*"; failures=$((failures + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
on_node() { podman exec "tf-$cluster-node$1" sh -c "$2"; }

cleanup() {
  if [ -n "${http_pid:-}" ]; then kill "$http_pid" 2>/dev/null || true; fi
  tests/harness/cluster.sh down "$cluster" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Run the play; keep its output in $work/last.log and its exit status in $rc.
play() {
  local start; start=$(date +%s%N)
  set +e
  ansible-playbook -i "$inventory" "$play" -e @"$work/installer.yml" "$@" > "$work/last.log" 2>&1
  rc=$?
  set -e
  local tenths=$(( ($(date +%s%N) - start) / 100000000 ))
  printf '  run  rc=%s %d.%ds: %s\n' "$rc" $((tenths / 10)) $((tenths % 10)) "${*:-(defaults)}"
}
recap() { awk -v f="$1" '/^PLAY RECAP/ {r=1; next} r && /: ok=/ {for (i = 1; i <= NF; i++) if ($i ~ "^" f "=") {split($i, a, "="); s += a[2]}} END {print s + 0}' "$work/last.log"; }
logged() { grep -q -- "$1" "$work/last.log"; }
downloads() { grep -c '"GET /' "$work/http.log" || true; }
no_install_anywhere() { local n; for n in "${nodes[@]}"; do on_node "$n" "test ! -e /opt/miniconda3 && test -z \"\$(ls /var/tmp)\"" || return 1; done; }

say "stand-in installer, loopback server, cluster '$cluster'"
tests/fakeconda/build.sh "$work/fakeconda" >/dev/null 2>&1
read -r sum file < "$work/fakeconda/SHA256SUMS"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/fakeconda" > "$work/http.log" 2>&1 &
http_pid=$!
tests/harness/cluster.sh down "$cluster" >/dev/null 2>&1 || true
inventory=$(tests/harness/cluster.sh up "$cluster" "${#nodes[@]}")
zeros=$(printf '0%.0s' $(seq 64))
url_vars() {
  printf 'miniconda_installer_url: http://127.0.0.1:%s/%s\nminiconda_installer_checksum: "sha256:%s"\nminiconda_cache_dir: %s\n' \
    "$port" "$file" "$1" "$work/cache" > "$work/installer.yml"
}
src_vars() {
  printf 'miniconda_installer_src: %s\nminiconda_installer_checksum: "sha256:%s"\n' "$work/fakeconda/$file" "$1" > "$work/installer.yml"
}

say "wrong checksum, controller file"
src_vars "$zeros"; play
check "play fails" test "$rc" -ne 0
check "message names file, expected and actual" logged "$file: checksum mismatch, expected sha256:$zeros, actual sha256:$sum"
check "nothing reached a node" no_install_anywhere

say "wrong checksum, URL"
rm -rf "$work/cache"; : > "$work/http.log"; url_vars "$zeros"; play
check "play fails" test "$rc" -ne 0
check "message names URL, expected and actual" logged "$file failed: checksum mismatch, expected sha256:$zeros, actual sha256:$sum"
check "no partial file in the cache" test -z "$(ls -A "$work/cache" 2>/dev/null)"
check "nothing reached a node" no_install_anywhere

say "check mode on fresh nodes"
url_vars "$sum"; : > "$work/http.log"; play --check
check "succeeds and reports changes" test "$rc" -eq 0 -a "$(recap changed)" -gt 0
check "nothing reached a node" no_install_anywhere
check "nothing cached" test ! -e "$work/cache/$file"

say "fresh install from the URL"
: > "$work/http.log"; play
check "succeeds" test "$rc" -eq 0
check "one download for ${#nodes[@]} nodes (got $(downloads))" test "$(downloads)" -eq 1
check "conda works on every node" on_node 0 "/opt/miniconda3/bin/conda --version >/dev/null && test -n \"\$(ls /opt/miniconda3/conda-meta)\""
check "installer removed from the nodes" on_node 1 "test -z \"\$(ls /var/tmp)\""
check ".condarc has auto_activate: false only" on_node 0 'grep -qx "auto_activate: false" /opt/miniconda3/.condarc && ! grep -q auto_activate_base /opt/miniconda3/.condarc'

say "second run"
: > "$work/http.log"; play
check "changed=0" test "$rc" -eq 0 -a "$(recap changed)" -eq 0
check "no download (got $(downloads))" test "$(downloads)" -eq 0

say "check mode on converged nodes"
play --check --diff
check "changed=0" test "$rc" -eq 0 -a "$(recap changed)" -eq 0

say "interrupted install on node1 (bin/conda deleted)"
on_node 1 'rm -f /opt/miniconda3/bin/conda'
play --check
check "check mode reports it" test "$rc" -eq 0 -a "$(recap changed)" -gt 0
check "check mode left it broken" on_node 1 'test ! -e /opt/miniconda3/bin/conda'
play -v
check "repair succeeds" test "$rc" -eq 0
check "repaired with -u" logged ' -b -u -p /opt/miniconda3'
check "conda works again" on_node 1 '/opt/miniconda3/bin/conda --version >/dev/null'
play
check "then changed=0" test "$rc" -eq 0 -a "$(recap changed)" -eq 0

say ".condarc with both auto-activation keys on node0"
on_node 0 'printf "auto_activate_base: false\n" >> /opt/miniconda3/.condarc'
play --diff
check "succeeds" test "$rc" -eq 0
check "only auto_activate remains" on_node 0 '! grep -q auto_activate_base /opt/miniconda3/.condarc && grep -qx "auto_activate: false" /opt/miniconda3/.condarc'
play
check "then changed=0" test "$rc" -eq 0 -a "$(recap changed)" -eq 0

say "Anaconda channels without miniconda_accept_tos"
play -e '{"miniconda_channels": ["defaults"]}'
check "fails during validation" test "$rc" -ne 0
check "message explains miniconda_accept_tos" logged "Set miniconda_accept_tos: true"

say "result"
if [ "$failures" -eq 0 ]; then echo "all miniconda scenarios passed"; else echo "$failures check(s) failed (last log: $work/last.log)"; exit 1; fi
