#!/usr/bin/env bash
# Install the Debian packages the demo and the tests need, only when something is missing.
set -euo pipefail
# iptables: netavark (podman 4.3 on bookworm) sets up container networks through it.
declare -A package_of=(
  [podman]=podman [runc]=runc [debootstrap]=debootstrap [ssh]=openssh-client
  [ssh-keygen]=openssh-client [flock]=util-linux [netavark]=netavark [aardvark-dns]=aardvark-dns [shellcheck]=shellcheck
  [iptables]=iptables
)
locate() { command -v "$1" >/dev/null || [ -x "/usr/lib/podman/$1" ]; }
missing=()
for cmd in "${!package_of[@]}"; do locate "$cmd" || missing+=("${package_of[$cmd]}"); done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t packages_list < <(printf '%s\n' "${missing[@]}" | sort -u)
packages="${packages_list[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "deps.sh: missing Debian packages: $packages — install them (apt-get install $packages) as root and re-run" >&2
  exit 1
fi
echo "deps.sh: installing $packages" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages_list[@]}" >/dev/null \
  || { echo "deps.sh: apt-get could not install: $packages" >&2; exit 1; }
