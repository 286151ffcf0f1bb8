#!/usr/bin/env bash
# Build the offline Miniconda stand-in used by the tests and offline demos.
#
#   tests/fakeconda/build.sh OUTDIR
#
# Writes OUTDIR/wheelhouse/ (torch, numpy and friends for cp311 manylinux x86_64, by
# `pip download`), OUTDIR/Miniconda3-py311_25.11.1-1-Linux-x86_64.sh (a self-extracting
# installer with the real one's options and exit codes) and OUTDIR/SHA256SUMS. Each part
# is rebuilt only when its inputs change (hash stamps), so a second run costs a second.
#
# Environment: FAKECONDA_WHEELHOUSE_PATH  where nodes see the wheelhouse (default
#              /srv/torchfleet-wheelhouse; baked into the installer)
#              FAKECONDA_PIP              pip used for `pip download` (default: the
#                                         project venv's pip, else python3 -m pip)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
INSTALLER_VER="py311_25.11.1-1"
INSTALLER="Miniconda3-${INSTALLER_VER}-Linux-x86_64.sh"
WHEELHOUSE_PATH="${FAKECONDA_WHEELHOUSE_PATH:-/srv/torchfleet-wheelhouse}"

die() { echo "fakeconda/build.sh: $*" >&2; exit 1; }
log() { echo "fakeconda/build.sh: $*" >&2; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
mkdir -p "$1"
outdir=$(cd "$1" && pwd)

pip_cmd() {
  if [ -n "${FAKECONDA_PIP:-}" ]; then
    "$FAKECONDA_PIP" "$@"
  elif [ -x "$root/.venv/bin/pip" ]; then
    "$root/.venv/bin/pip" "$@"
  else
    python3 -m pip "$@"
  fi
}

# One `pip download` per line of wheelhouse.txt, into a fresh directory that replaces the
# old one only when every download worked.
build_wheelhouse() {
  local stamp want tmp line out
  want=$(sha256sum "$here/wheelhouse.txt" | cut -d' ' -f1)
  stamp="$outdir/wheelhouse/.stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  log "downloading the wheelhouse (torch is ~200 MB; found through pip's find-links)"
  tmp="$outdir/wheelhouse.partial"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  local -a reqs
  while IFS= read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    read -r -a reqs <<< "$line"
    if ! out=$(pip_cmd download --quiet --disable-pip-version-check --dest "$tmp" --only-binary=:all: \
        --platform manylinux_2_28_x86_64 --python-version 3.11 --implementation cp --abi cp311 "${reqs[@]}" 2>&1); then
      echo "$out" >&2
      die "pip download failed for: $line"
    fi
  done < "$here/wheelhouse.txt"
  echo "$want" > "$tmp/.stamp"
  rm -rf "$outdir/wheelhouse"
  mv "$tmp" "$outdir/wheelhouse"
}

inputs_hash() {
  {
    echo "$INSTALLER_VER $WHEELHOUSE_PATH"
    (cd "$here" && find build.sh installer src -type f ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum)
    find "$outdir/wheelhouse" -maxdepth 1 -iname 'pyyaml-*.whl' -printf '%f\n' | sort
  } | sha256sum | cut -d' ' -f1
}

# The payload: the conda stand-in package, conda.sh, and the PyYAML wheel the base needs.
# tar and gzip are made reproducible, so identical inputs give an identical installer.
build_installer() {
  local want stamp work md5 size pyyaml
  want=$(inputs_hash)
  stamp="$outdir/.installer.stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$outdir/$INSTALLER" ] && [ -f "$outdir/SHA256SUMS" ]; then
    return 0
  fi
  log "building $INSTALLER"
  work=$(mktemp -d)
  mkdir -p "$work/payload/wheels" "$work/payload/etc/profile.d"
  (cd "$here/src" && find conda -type f -name '*.py' -print0 | tar --null -T - -cf - | tar -C "$work/payload" -xf -)
  cp "$here/src/etc/profile.d/conda.sh" "$work/payload/etc/profile.d/conda.sh"
  pyyaml=$(find "$outdir/wheelhouse" -maxdepth 1 -iname 'pyyaml-*.whl' | head -1)
  [ -n "$pyyaml" ] || die "no PyYAML wheel in $outdir/wheelhouse (is wheelhouse.txt missing pyyaml?)"
  cp "$pyyaml" "$work/payload/wheels/"
  tar -C "$work/payload" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - . | gzip -n -9 > "$work/payload.tar.gz"
  md5=$(md5sum "$work/payload.tar.gz" | cut -d' ' -f1)
  size=$(( $(du -sk "$work/payload" | cut -f1) / 1024 + 40 ))
  sed -e "s|@@INSTALLER_VER@@|$INSTALLER_VER|g" -e "s|@@PAYLOAD_MD5@@|$md5|g" \
      -e "s|@@WHEELHOUSE@@|$WHEELHOUSE_PATH|g" -e "s|@@SIZE_MB@@|$size|g" \
      "$here/installer/header.sh" > "$work/$INSTALLER"
  echo "@@END_HEADER@@" >> "$work/$INSTALLER"
  cat "$work/payload.tar.gz" >> "$work/$INSTALLER"
  chmod 0755 "$work/$INSTALLER"
  mv "$work/$INSTALLER" "$outdir/$INSTALLER"
  (cd "$outdir" && sha256sum "$INSTALLER" > SHA256SUMS.partial && mv SHA256SUMS.partial SHA256SUMS)
  echo "$want" > "$stamp"
  rm -rf "$work"
}

build_wheelhouse
build_installer
echo "$outdir/$INSTALLER"
