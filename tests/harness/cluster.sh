#!/usr/bin/env bash
# Local test clusters: Debian bookworm podman containers that Ansible reaches over real SSH.
#
#   cluster.sh up NAME N [--outsider] [--systemd] [--privileged] [--mount DIR]... [--wheelhouse DIR] [--inventory FILE] [--molecule-config FILE]
#   cluster.sh down NAME
#   cluster.sh ips NAME
#
# Nodes are tf-NAME-node0..N-1 (hostnames node0..), on the dual-stack (IPv4 + IPv6) podman
# network torchfleet-NAME, reachable from each other by name. `up` reuses running nodes and
# prints the inventory path. --systemd: systemd is PID 1 of each node (image variant systemd).
# --privileged: the nodes' /proc/sys is writable (sysctl per network namespace). --mount DIR:
# DIR of this machine read-only at the same path in each node (a controller's tools for the
# drift audit schedule, which runs ansible-playbook on the node). --wheelhouse DIR: DIR is
# mounted read-only in each node, and container tf-NAME-upstream (host name `upstream`) serves
# it over HTTP as the nodes' only package index (their /etc/pip.conf), logging every request
# to tests/output/clusters/NAME/upstream/requests.log, so tests count downloads per package.
# A node's pip never reaches any other index.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
PEER_PORT_RANGE="${TORCHFLEET_PEER_PORT_RANGE:-40000 40999}"

die() { echo "cluster.sh: $*" >&2; exit 1; }
log() { echo "cluster.sh: $*" >&2; }

require_podman() {
  command -v podman >/dev/null || die "podman is not installed; run 'make deps' (needs root and Debian's package archive)"
  podman info >/dev/null 2>&1 || die "podman does not work here: $(podman info 2>&1 | tail -1)"
}

state_dir() { echo "$root/tests/output/clusters/$1"; }
node_name() { echo "tf-$1-node$2"; }
outsider_name() { echo "tf-$1-outsider"; }
upstream_name() { echo "tf-$1-upstream"; }
UPSTREAM_PORT=8080
network_name() { echo "torchfleet-$1"; }

ensure_network() {
  local net; net=$(network_name "$1")
  podman network exists "$net" || podman network create --ipv6 --label org.torchfleet.cluster="$1" "$net" >/dev/null
}

# A container name may already be used by something that is not this cluster's node.
check_owner() {
  local cname=$1 cluster=$2 owner
  podman container exists "$cname" || return 0
  owner=$(podman inspect -f '{{ index .Config.Labels "org.torchfleet.cluster" }}' "$cname" 2>/dev/null || true)
  [ "$owner" = "$cluster" ] || die "container name $cname is already taken by a container that is not part of cluster '$cluster' (label: '${owner:-none}'); remove or rename it first"
}

# Recreate a node whose image is not the current recipe's (a stale node), start a stopped one.
ensure_node() {
  local cluster=$1 cname=$2 host=$3 image=$4 wheelhouse=$5 run_options=$6 current
  check_owner "$cname" "$cluster"
  if podman container exists "$cname"; then
    current=$(podman inspect -f '{{ .ImageName }}' "$cname")
    if [ "$current" != "$image" ]; then
      log "$cname runs stale image $current; recreating it from $image"
      podman rm -f "$cname" >/dev/null
    else
      [ "$(podman inspect -f '{{ .State.Running }}' "$cname")" = true ] || podman start "$cname" >/dev/null 9>&-
      return 0
    fi
  fi
  local mounts=() options
  [ -n "$wheelhouse" ] && mounts=(-v "$wheelhouse:/srv/torchfleet-wheelhouse:ro")
  read -ra options <<< "$run_options"
  podman run -d --name "$cname" --hostname "$host" \
    --network "$(network_name "$cluster")" --network-alias "$host" \
    --cap-add NET_ADMIN,NET_RAW --sysctl net.ipv4.ip_local_port_range="$PEER_PORT_RANGE" \
    --label org.torchfleet.cluster="$cluster" "${options[@]}" "${mounts[@]}" "$image" >/dev/null 9>&-
}

# The counting package index: the wheelhouse over HTTP, every request logged on this machine.
ensure_upstream() {
  local cluster=$1 wheelhouse=$2 image=$3 logdir=$4 cname; cname=$(upstream_name "$cluster")
  check_owner "$cname" "$cluster"
  if podman container exists "$cname"; then
    [ "$(podman inspect -f '{{ .State.Running }}' "$cname")" = true ] || podman start "$cname" >/dev/null 9>&-
    return 0
  fi
  mkdir -p "$logdir"
  podman run -d --name "$cname" --hostname upstream \
    --network "$(network_name "$cluster")" --network-alias upstream \
    --label org.torchfleet.cluster="$cluster" \
    -v "$wheelhouse:/srv/torchfleet-wheelhouse:ro" -v "$here/counting_http.py:/opt/upstream/counting_http.py:ro" \
    -v "$logdir:/var/log/upstream" --entrypoint /usr/bin/python3 "$image" \
    /opt/upstream/counting_http.py --root /srv/torchfleet-wheelhouse --bind :: --port "$UPSTREAM_PORT" \
    --log /var/log/upstream/requests.log --max-seconds 604800 >/dev/null 9>&-
}

# Point a node's pip (and the stand-in's pip section, through its marker file) at the upstream.
use_upstream() {
  printf '[global]\nno-index = true\nfind-links = http://upstream:%s/\ntrusted-host = upstream\n' "$UPSTREAM_PORT" \
    | podman exec -i "$1" sh -c 'mkdir -p /etc/fakeconda && : > /etc/fakeconda/node-pip-config && cat > /etc/pip.conf'
}

container_ip() {
  podman inspect -f '{{ range .NetworkSettings.Networks }}{{ .IPAddress }}{{ end }}' "$1"
}

ensure_ssh_key() {
  local dir=$1
  [ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C torchfleet-harness -f "$dir/id_ed25519"
}

# Give root the harness key and record the node's real host key for the controller.
authorize_and_collect_hostkey() {
  local cname=$1 dir=$2 ip=$3 i
  podman exec -i "$cname" sh -c 'umask 077; mkdir -p /root/.ssh; cat > /root/.ssh/authorized_keys' < "$dir/id_ed25519.pub"
  for i in $(seq 1 50); do
    podman exec "$cname" test -s /etc/ssh/ssh_host_ed25519_key.pub && break
    sleep 0.2
  done
  echo "$ip $(podman exec "$cname" cat /etc/ssh/ssh_host_ed25519_key.pub | cut -d' ' -f1,2)" >> "$dir/known_hosts.new"
}

wait_for_ssh() {
  local dir=$1 ip=$2 i
  for i in $(seq 1 60); do
    ssh -o BatchMode=yes -o ConnectTimeout=2 -o UserKnownHostsFile="$dir/known_hosts" \
        -o StrictHostKeyChecking=yes -i "$dir/id_ed25519" "root@$ip" true 2>/dev/null && return 0
    sleep 0.5
  done
  die "node at $ip does not accept SSH after 30 s (see: podman logs on that node)"
}

write_inventory() {
  local cluster=$1 dir=$2 file=$3; shift 3
  {
    echo "# Written by tests/harness/cluster.sh for cluster '$cluster'; regenerated by every 'up'."
    echo "---"
    echo "all:"
    echo "  vars:"
    echo "    ansible_user: root"
    echo "    ansible_python_interpreter: /usr/bin/python3"
    echo "    ansible_ssh_private_key_file: $dir/id_ed25519"
    echo "    ansible_ssh_common_args: -o UserKnownHostsFile=$dir/known_hosts -o StrictHostKeyChecking=yes"
    echo "  children:"
    echo "    torch_nodes:"
    echo "      hosts:"
    local entry
    for entry in "$@"; do
      echo "        ${entry%%=*}:"
      echo "          ansible_host: ${entry#*=}"
    done
  } > "$file"
}

# The instance list molecule's delegated driver reads to build its inventory.
write_molecule_config() {
  local dir=$1 file=$2 entry; shift 2
  {
    echo "---"
    for entry in "$@"; do
      echo "- instance: ${entry%%=*}"
      echo "  address: ${entry#*=}"
      echo "  user: root"
      echo "  port: 22"
      echo "  identity_file: $dir/id_ed25519"
    done
  } > "$file"
}

cmd_up() {
  local cluster=$1 count=$2; shift 2
  local outsider=false upstream=false wheelhouse="" inventory="" molecule_config="" variant=plain run_options=""
  while [ $# -gt 0 ]; do
    case $1 in
      --outsider) outsider=true ;;
      --systemd) variant=systemd; run_options+=" --systemd=always" ;;
      --privileged) run_options+=" --privileged" ;;
      --mount) run_options+=" -v $(cd "$2" && pwd):$(cd "$2" && pwd):ro"; shift ;;
      --mount=*) run_options+=" -v $(cd "${1#--mount=}" && pwd):$(cd "${1#--mount=}" && pwd):ro" ;;
      --wheelhouse) wheelhouse=$(cd "$2" && pwd); upstream=true; shift ;;
      --inventory) inventory=$2; shift ;;
      --molecule-config) molecule_config=$2; shift ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  [[ $count =~ ^[1-9][0-9]?$ ]] || die "node count must be 1..99, got '$count'"
  require_podman
  local dir; dir=$(state_dir "$cluster")
  mkdir -p "$dir"
  exec 9>"$dir/lock"
  flock -n 9 || die "cluster '$cluster' is being set up by another run (lock $dir/lock); wait for it to finish"

  local image; image=$("$here/image/build.sh" "$variant")
  ensure_network "$cluster"
  ensure_ssh_key "$dir"
  rm -f "$dir/known_hosts.new"
  if $upstream; then
    ensure_upstream "$cluster" "$wheelhouse" "$("$here/image/build.sh")" "$dir/upstream"
    echo "http://$(container_ip "$(upstream_name "$cluster")"):$UPSTREAM_PORT/" > "$dir/upstream_url"
  fi
  local i cname ip entries=()
  for ((i = 0; i < count; i++)); do
    cname=$(node_name "$cluster" "$i")
    ensure_node "$cluster" "$cname" "node$i" "$image" "$wheelhouse" "$run_options"
    ! $upstream || use_upstream "$cname"
    ip=$(container_ip "$cname")
    authorize_and_collect_hostkey "$cname" "$dir" "$ip"
    entries+=("node$i=$ip")
  done
  if $outsider; then
    cname=$(outsider_name "$cluster")
    ensure_node "$cluster" "$cname" outsider "$("$here/image/build.sh")" "" ""
    container_ip "$cname" > "$dir/outsider_ip"
  fi
  mv "$dir/known_hosts.new" "$dir/known_hosts"
  for entry in "${entries[@]}"; do wait_for_ssh "$dir" "${entry#*=}"; done
  inventory=${inventory:-$dir/hosts.yml}
  write_inventory "$cluster" "$dir" "$inventory" "${entries[@]}"
  [ -z "$molecule_config" ] || write_molecule_config "$dir" "$molecule_config" "${entries[@]}"
  echo "$inventory"
}

cmd_down() {
  local cluster=$1
  require_podman
  local ids; mapfile -t ids < <(podman ps -aq --filter label=org.torchfleet.cluster="$cluster")
  [ ${#ids[@]} -eq 0 ] || podman rm -f -t 0 "${ids[@]}" >/dev/null   # disposable: no graceful stop
  ! podman network exists "$(network_name "$cluster")" || podman network rm -f "$(network_name "$cluster")" >/dev/null
  rm -rf "$(state_dir "$cluster")"
  log "cluster '$cluster' removed"
}

cmd_ips() {
  local cluster=$1 c
  for c in $(podman ps --filter label=org.torchfleet.cluster="$cluster" --format '{{ .Names }}'); do
    echo "$c $(container_ip "$c")"
  done
}

case ${1:-} in
  up) [ $# -ge 3 ] || die "usage: cluster.sh up NAME N [--outsider] [--systemd] [--privileged] [--mount DIR]... [--wheelhouse DIR] [--inventory FILE] [--molecule-config FILE]"; shift; cmd_up "$@" ;;
  down) [ $# -eq 2 ] || die "usage: cluster.sh down NAME"; cmd_down "$2" ;;
  ips) [ $# -eq 2 ] || die "usage: cluster.sh ips NAME"; cmd_ips "$2" ;;
  *) die "usage: cluster.sh up|down|ips NAME ..." ;;
esac
