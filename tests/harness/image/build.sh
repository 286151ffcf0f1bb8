#!/usr/bin/env bash
# Build the test-node image from Debian bookworm with debootstrap and import it into
# podman. The tag carries a hash of this recipe, so an unchanged recipe is never rebuilt.
# Usage: build.sh            prints the image reference (building it when missing)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
recipe_hash=$(cat "$here/build.sh" "$here/packages.txt" "$here/node-init" | sha256sum | cut -c1-12)
image="localhost/torchfleet-node:$recipe_hash"

if podman image exists "$image"; then
  if podman run --rm --network none --entrypoint /usr/bin/python3 "$image" -c 'import venv, ssl' >/dev/null 2>&1; then
    echo "$image"; exit 0
  fi
  echo "build.sh: image $image exists but is broken (python3 -c 'import venv' fails); rebuilding" >&2
  podman rmi -f "$image" >/dev/null
fi

command -v debootstrap >/dev/null || { echo "build.sh: debootstrap is not installed (run 'make deps')" >&2; exit 1; }
rootfs=$(mktemp -d /var/tmp/torchfleet-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
echo "build.sh: debootstrap bookworm into $rootfs (about a minute)" >&2
debootstrap --variant=minbase --include="$(paste -sd, "$here/packages.txt")" bookworm "$rootfs" >"$rootfs.log" 2>&1 \
  || { echo "build.sh: debootstrap failed; last lines of $rootfs.log:" >&2; tail -20 "$rootfs.log" >&2; exit 1; }
rm -f "$rootfs.log"
install -m 0755 "$here/node-init" "$rootfs/usr/local/sbin/node-init"
rm -f "$rootfs"/etc/ssh/ssh_host_*            # made per node on first boot
chroot "$rootfs" apt-get clean
rm -rf "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | podman import \
  --change 'CMD ["/usr/local/sbin/node-init"]' \
  --change 'LABEL org.torchfleet.recipe='"$recipe_hash" - "$image" >/dev/null
echo "$image"
