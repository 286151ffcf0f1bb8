#!/usr/bin/env bash
# Copy the collection's tracked and not-ignored files into
# $TMPDIR/torchfleet-<checkout hash>/ansible_collections/torchfleet/cluster (the layout
# ansible-test needs) and print that path. Stale files from an earlier copy are removed first.
# The copy lives outside the checkout: ansible-test finds no targets under a tests/output path.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tree="${TMPDIR:-/tmp}/torchfleet-$(echo "$root" | sha256sum | cut -c1-8)/ansible_collections/torchfleet/cluster"
rm -rf "$tree"
mkdir -p "$tree"
cd "$root"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -C "$tree" -xf -
echo "$tree"
