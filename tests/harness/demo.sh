#!/usr/bin/env bash
# `make demo`: bring up (or reuse) the local demo cluster, run site.yml, smoke.yml and fabric.yml on it,
# and print a per-node summary with the consistency verdict.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
nodes=${NODES:-3}
out="$root/tests/output/demo"
mkdir -p "$out"
# One demo at a time. flock -o keeps the lock in flock itself: the nodes and SSH
# ControlPersist masters this run starts outlive it and must not inherit the lock.
if [ -z "${TORCHFLEET_DEMO_LOCKED:-}" ]; then
  status=0
  TORCHFLEET_DEMO_LOCKED=1 flock -n -o -E 75 "$out/demo.lock" "$0" "$@" || status=$?
  [ "$status" -ne 75 ] || echo "demo.sh: another 'make demo' is running on this machine (lock $out/demo.lock); wait for it" >&2
  exit "$status"
fi

# Installer variables for this machine, written where the demo inventory reads them, so the README's
# next commands (ansible-playbook -i inventories/demo ...) work without extra vars.
installer_vars="$root/inventories/demo/group_vars/all.yml"
if tests/harness/miniconda-reachable.sh; then
  installer="the real Miniconda installer (downloaded once on the controller)"
  printf -- '---\n# Written by tests/harness/demo.sh: the real installer is reachable.\n{}\n' > "$installer_vars"
  wheelhouse=()
else
  installer="the offline Miniconda stand-in (tests/fakeconda; the real download is not reachable from here)"
  tests/fakeconda/build.sh "$root/tests/output/fakeconda" >/dev/null
  read -r sum file < "$root/tests/output/fakeconda/SHA256SUMS"
  cat > "$installer_vars" <<YAML
---
# Written by tests/harness/demo.sh: no route to the Miniconda download, so the offline stand-in is used.
miniconda_installer_src: $root/tests/output/fakeconda/$file
miniconda_installer_checksum: sha256:$sum
# The controller downloads the environments' pip packages from the stand-in's wheelhouse only.
conda_env_pip_download_environment:
  PIP_CONFIG_FILE: /dev/null
  PIP_NO_INDEX: "1"
  PIP_FIND_LINKS: $root/tests/output/fakeconda/wheelhouse
YAML
  wheelhouse=(--wheelhouse "$root/tests/output/fakeconda/wheelhouse")
fi

# Started with the firewall role's peer-link range (the nodes cannot pin it themselves), as an
# operator would: a converged re-run of site.yml then takes each role's one-call path.
TORCHFLEET_PEER_PORT_RANGE="${TORCHFLEET_PEER_PORT_RANGE:-40000 59999}" \
  tests/harness/cluster.sh up demo "$nodes" "${wheelhouse[@]}" --inventory "$root/inventories/demo/hosts.yml" >/dev/null
echo "demo.sh: $nodes nodes up; installing with $installer"
log="$out/site.log"
if ! ansible-playbook -i inventories/demo site.yml > "$log" 2>&1; then
  tail -40 "$log"; echo "demo.sh: site.yml failed (full log: $log)" >&2; exit 1
fi
grep -A "$((nodes + 2))" '^PLAY RECAP' "$log"
rm -f "$out/smoke.json"
if ! ansible-playbook -i inventories/demo playbooks/smoke.yml -e "smoke_report_file=$out/smoke.json" > "$out/smoke.log" 2>&1; then
  tail -40 "$out/smoke.log"; echo "demo.sh: smoke.yml failed (full log: $out/smoke.log)" >&2; exit 1
fi
# The fabric check; the nodes share this machine's cores, so healthy links differ by up to 4x here: the limits
# are wider than the role's defaults (which suit a dedicated fabric).
rm -rf "$out/fabric"
if ! ansible-playbook -i inventories/demo playbooks/fabric.yml -e "fabric_report_dir=$out/fabric" \
     -e '{"fabric_bandwidth_fraction": 0.1, "fabric_latency_factor": 20}' > "$out/fabric.log" 2>&1; then
  tail -40 "$out/fabric.log"; echo "demo.sh: fabric.yml failed (full log: $out/fabric.log)" >&2; exit 1
fi
ansible-playbook tests/harness/demo_summary.yml -e "demo_installer='$installer'" -e "demo_smoke_report=$out/smoke.json" \
  -e "demo_fabric_report=$out/fabric/fabric-latest.json" 2>/dev/null | sed -n '/TORCHFLEET SUMMARY/,/END SUMMARY/p' | sed 's/^ *"//; s/",\?$//'
