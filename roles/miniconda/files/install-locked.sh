#!/bin/sh
# Run a Miniconda installer under a node-wide lock, deciding under the lock whether it is
# still needed (a run that waited finds the prefix already installed by the one before it).
#
#   install-locked.sh LOCK_FILE TIMEOUT_S INSTALLER PREFIX [WANTED_CONDA_VERSION]
#
# The caller has checked that the prefix is root's, so a node user cannot change what this runs.
# Prints "torchfleet: installed" or "torchfleet: already installed"; exits 75 when another run holds the lock past TIMEOUT_S,
# 1 when the repair of an existing prefix leaves PREFIX/bin/conda without a version.
set -eu
lock=$1 timeout=$2 installer=$3 prefix=$4 wanted=${5:-}

installed_version() {
  [ -x "$prefix/bin/conda" ] || return 0
  "$prefix/bin/conda" --version 2>/dev/null | sed -n 's/^conda \([0-9][0-9.]*\).*/\1/p'
}

# The installer's -u links only the packages that PREFIX/conda-meta does not record yet, so the
# files of a recorded conda package (a deleted bin/conda) stay missing. conda's other entry point,
# condabin/conda, relinks the package from the installer's package cache, PREFIX/pkgs.
relink_conda() {
  tried="bash $installer -b -u -p $prefix"
  relink="$prefix/condabin/conda install -y --force-reinstall --offline -p $prefix conda"
  if [ -x "$prefix/condabin/conda" ] && "$prefix/condabin/conda" --version >/dev/null 2>&1; then
    echo "torchfleet: $relink"
    relink_rc=0
    "$prefix/condabin/conda" install -y --force-reinstall --offline -p "$prefix" conda || relink_rc=$?
    tried="$tried, then $relink (exit $relink_rc)"
  else
    tried="$tried ($prefix/condabin/conda cannot run either, so conda was not relinked)"
  fi
  [ -n "$(installed_version)" ] && return 0
  echo "$prefix/bin/conda --version reports no conda version after: $tried." >&2
  echo "Move the prefix aside (mv $prefix $prefix.broken; its environments go with it) and run again for a fresh installation." >&2
  exit 1
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
# A failed installer leaves its scratch directory in the prefix; never leave it behind.
trap 'rm -rf "$prefix/install_tmp"' EXIT
if [ -e "$prefix" ]; then
  echo "torchfleet: bash $installer -b -u -p $prefix"
  bash "$installer" -b -u -p "$prefix"
  [ -n "$(installed_version)" ] || relink_conda
else
  echo "torchfleet: bash $installer -b -p $prefix"
  bash "$installer" -b -p "$prefix"
fi
echo "torchfleet: installed"
