#!/usr/bin/env bash
# Copy what a fresh clone of this checkout holds (tracked and untracked-not-ignored files, links
# kept as links) into DEST, emptied first: tests run there to prove they need no setup step.
set -euo pipefail
dest=${1:?usage: checkout-copy.sh DEST}
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$dest"
mkdir -p "$dest"
cd "$root"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -L "$f" ] || [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -C "$dest" -xf -
