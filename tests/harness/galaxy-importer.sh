#!/usr/bin/env bash
# Build the collection artifact and run galaxy-importer on it; any warning fails the stage.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tree=$("$root/tests/harness/collection-tree.sh")
dist="$root/tests/output/dist"
rm -rf "$dist" && mkdir -p "$dist"
ansible-galaxy collection build --output-path "$dist" "$tree" >/dev/null
artifact=$(ls "$dist"/torchfleet-cluster-*.tar.gz)
log="$dist/importer.log"
# It writes importer_result.json into its working directory: keep that out of the checkout.
(cd "$dist" && GALAXY_IMPORTER_CONFIG="$root/tests/harness/galaxy-importer.cfg" \
  python -m galaxy_importer.main "$artifact" >"$log" 2>&1) || { cat "$log"; echo "galaxy-importer failed on $artifact" >&2; exit 1; }
if grep -E 'WARNING|ERROR' "$log"; then
  echo "galaxy-importer reported the warnings above for $artifact" >&2
  exit 1
fi
echo "galaxy-importer: $(basename "$artifact") imported without warnings"
