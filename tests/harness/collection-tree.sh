#!/usr/bin/env bash
# Copy the collection's tracked and not-ignored files into
# $TMPDIR/torchfleet-<checkout hash>/ansible_collections/torchfleet/cluster (the layout
# ansible-test needs) and print that path. Stale files from an earlier copy are removed first.
# The copy lives outside the checkout: ansible-test finds no targets under a tests/output path.
# It leaves out .ansible/, whose link to the checkout only serves tools run in the checkout
# (ansible-test refuses links to directories).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tree="${TMPDIR:-/tmp}/torchfleet-$(echo "$root" | sha256sum | cut -c1-8)/ansible_collections/torchfleet/cluster"
"$root/tests/harness/checkout-copy.sh" "$tree"
rm -rf "$tree/.ansible"
echo "$tree"
