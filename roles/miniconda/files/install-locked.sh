#!/bin/sh
# Run a Miniconda installer under a node-wide lock, deciding under the lock whether it is
# still needed (a run that waited finds the prefix already installed by the one before it).
#
#   install-locked.sh LOCK_FILE TIMEOUT_S INSTALLER PREFIX [WANTED_CONDA_VERSION]
#
# An existing prefix that belongs to another user is installed over (-u) as that user, so
# root never runs code that user can change. Prints "torchfleet: installed" or
# "torchfleet: already installed"; exits 75 when another run holds the lock past TIMEOUT_S.
set -eu
lock=$1 timeout=$2 installer=$3 prefix=$4 wanted=${5:-}

as_owner_of() {
  uid=$(stat -c %u "$1") gid=$(stat -c %g "$1")
  shift
  if [ "$uid" -eq 0 ]; then "$@"; else setpriv --reuid="$uid" --regid="$gid" --init-groups -- "$@"; fi
}

installed_version() {
  [ -x "$prefix/bin/conda" ] || return 0
  as_owner_of "$prefix" "$prefix/bin/conda" --version 2>/dev/null | sed -n 's/^conda \([0-9][0-9.]*\).*/\1/p'
}

# The lock lives in a root-owned directory (never a fixed name in a world-writable one).
lock_dir=$(dirname "$lock")
mkdir -m 0755 "$lock_dir" 2>/dev/null || [ -d "$lock_dir" ]
exec 9>>"$lock"
if ! flock -w "$timeout" 9; then
  echo "another run has held the Miniconda installation lock $lock for more than ${timeout}s (miniconda_lock_timeout); nothing was changed" >&2
  exit 75
fi

now=$(installed_version)
if [ -n "$now" ] && { [ -z "$wanted" ] || [ "$now" = "$wanted" ]; }; then
  echo "torchfleet: already installed (conda $now in $prefix)"
  exit 0
fi

if [ -L "$prefix" ]; then
  echo "$prefix is a symbolic link; refusing to install through it as root" >&2
  exit 1
fi
if [ -e "$prefix" ]; then
  # The installer sits in root's private directory: let the prefix's owner read it, and no more.
  chmod 0755 "$(dirname "$installer")"
  echo "torchfleet: bash $installer -b -u -p $prefix"
  as_owner_of "$prefix" bash "$installer" -b -u -p "$prefix"
else
  echo "torchfleet: bash $installer -b -p $prefix"
  bash "$installer" -b -p "$prefix"
fi
echo "torchfleet: installed"
