#!/bin/sh
# The cluster-wide lock of ssh_mesh, held on the master while a run hands out keys and trust:
# two runs at once (two operators, a rotation and a converge) would leave nodes with different keys.
#
#   mesh-lock.sh take LOCK_DIR STALE_AFTER_S HOLDER   prints the run's token; exits 75 naming the holder
#   mesh-lock.sh release LOCK_DIR TOKEN               removes the lock only if TOKEN still holds it
#
# LOCK_DIR is made with mkdir (atomic) in a root-only directory. A lock older than STALE_AFTER_S was
# left by a run that died; it is taken over.
set -eu
action=$1 lock=$2

holder_of() { sed -n '2,$p' "$lock/holder" 2>/dev/null || echo "an unknown run"; }

take() {
  stale_after=$1 holder=$2
  token=$(cat /proc/sys/kernel/random/uuid)
  if ! mkdir -m 0700 "$lock" 2>/dev/null; then
    age=$(( $(date +%s) - $(stat -c %Y "$lock" 2>/dev/null || date +%s) ))
    if [ "$age" -lt "$stale_after" ]; then
      echo "another ssh_mesh run has held the cluster's lock $lock for ${age}s: $(holder_of); nothing was changed (it is taken over after ${stale_after}s, ssh_mesh_lock_stale_after)" >&2
      exit 75
    fi
    echo "taking over the lock $lock left ${age}s ago by $(holder_of)" >&2
    rm -rf "$lock"
    mkdir -m 0700 "$lock"
  fi
  printf '%s\n%s since %s\n' "$token" "$holder" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$lock/holder"
  echo "$token"
}

release() {
  if [ "$(sed -n 1p "$lock/holder" 2>/dev/null)" = "$1" ]; then
    rm -rf "$lock"
  fi
}

case "$action" in
  take) take "$3" "$4" ;;
  release) release "$3" ;;
  *) echo "usage: mesh-lock.sh take LOCK_DIR STALE_AFTER_S HOLDER | release LOCK_DIR TOKEN" >&2; exit 2 ;;
esac
