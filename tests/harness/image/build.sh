#!/usr/bin/env bash
# Build the test-node image from Debian bookworm with debootstrap and import it into
# podman. The tag carries a hash of this recipe, so an unchanged recipe is never rebuilt.
# Usage: build.sh [plain|systemd]   prints the image reference (building it when missing)
#   plain    sshd as PID 1 (node-init): the default node
#   systemd  systemd as PID 1 (run with podman --systemd=always), with dbus, cron, firewalld
#            and ufw baked in (the nodes reach no package archive); both firewalls disabled
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
variant=${1:-plain}
case $variant in
  plain) package_lists=("$here/packages.txt"); extras=("$here/node-init"); image_repo=localhost/torchfleet-node ;;
  systemd) package_lists=("$here/packages.txt"); extras=("$here/packages-systemd.txt" "$here/torchfleet-hostkeys.service")
           image_repo=localhost/torchfleet-node-systemd ;;
  *) echo "build.sh: unknown variant '$variant' (plain or systemd)" >&2; exit 2 ;;
esac
recipe_hash=$(cat "$here/build.sh" "${package_lists[@]}" "${extras[@]}" | sha256sum | cut -c1-12)
image="$image_repo:$recipe_hash"

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
debootstrap --variant=minbase --include="$(cat "${package_lists[@]}" | paste -sd, -)" bookworm "$rootfs" >"$rootfs.log" 2>&1 \
  || { echo "build.sh: debootstrap failed; last lines of $rootfs.log:" >&2; tail -20 "$rootfs.log" >&2; exit 1; }
rm -f "$rootfs.log"
rm -f "$rootfs"/etc/ssh/ssh_host_*            # made per node on first boot
if [ "$variant" = systemd ]; then
  # apt in the chroot orders the configuration (polkitd needs systemd's sysusers) where
  # debootstrap's single pass fails; policy-rc.d keeps it from starting services.
  printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"; chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
  mapfile -t systemd_packages < "$here/packages-systemd.txt"
  mount -t proc proc "$rootfs/proc"
  chroot "$rootfs" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${systemd_packages[@]}" >"$rootfs.log" 2>&1 \
    || { umount "$rootfs/proc"; echo "build.sh: apt-get install in the chroot failed; last lines of $rootfs.log:" >&2; tail -20 "$rootfs.log" >&2; exit 1; }
  umount "$rootfs/proc"
  rm -f "$rootfs.log" "$rootfs/usr/sbin/policy-rc.d"
  install -m 0644 "$here/torchfleet-hostkeys.service" "$rootfs/etc/systemd/system/"
  chroot "$rootfs" systemctl enable torchfleet-hostkeys.service ssh.service >/dev/null 2>&1
  # The firewall role chooses and enables its backend; none runs before it.
  chroot "$rootfs" systemctl disable firewalld.service ufw.service >/dev/null 2>&1
  # Containers have no consoles, udev or kernel-time sync to manage.
  chroot "$rootfs" systemctl mask getty.target systemd-udevd.service systemd-timesyncd.service >/dev/null 2>&1 || true
  : > "$rootfs/etc/machine-id"                   # made per node on first boot
  cmd='CMD ["/sbin/init"]'
else
  install -m 0755 "$here/node-init" "$rootfs/usr/local/sbin/node-init"
  cmd='CMD ["/usr/local/sbin/node-init"]'
fi
chroot "$rootfs" apt-get clean
rm -rf "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | podman import \
  --change "$cmd" \
  --change 'LABEL org.torchfleet.recipe='"$recipe_hash" - "$image" >/dev/null
echo "$image"
