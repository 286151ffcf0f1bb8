# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The torchfleet benchmark: where the time goes, on a local podman cluster of its own.

    tests/bench/run.sh [--quick] [--keep] [--nodes N] [--runs R] [--phases LIST]

(run.sh builds the offline stand-in and calls this file).  Not a test: it never fails
because the machine is slow; it prints one table (tests/output/bench/table.txt) and
keeps the raw numbers in tests/output/bench/results.json.  Ratios are measured side by
side in one run (the variants alternate) and every time is a median of several runs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import time

# Run as a script, so its own directory is on sys.path.
import bench_table
import unit_costs
from bench_util import HERE, ROOT, Cluster, SshCounter, log, measure, median, read_json, round_trips_by_role

PHASES = ("site", "probe", "audit", "unitcost", "engine", "packages")
CONDA_ENV_ONLY = os.path.join(HERE, "conda_env_only.yml")
LOOP_PROBE = ("import platform, sys, torch; print(platform.node(), torch.__version__, torch.version.cuda, "
              "torch.backends.cudnn.version(), sys.version.split()[0])")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 nodes, 3 runs, engine up to 10,000 hosts")
    parser.add_argument("--keep", action="store_true", help="leave the bench cluster running at the end")
    parser.add_argument("--reuse", action="store_true",
                        help="keep a running bench cluster instead of starting fresh (first-run figures are then not fresh)")
    parser.add_argument("--nodes", type=int, help="largest cluster size (default 6, --quick 3)")
    parser.add_argument("--runs", type=int, help="timed runs per variant (default 5, --quick 3)")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help="comma-separated subset of " + ",".join(PHASES) + " (packages leaves a variant of the spec live: keep it last)")
    parser.add_argument("--fakeconda", required=True, help="output directory of tests/fakeconda/build.sh")
    parser.add_argument("--workdir", default=os.path.join(ROOT, "tests", "output", "bench"))
    parser.add_argument("--name", default="bench", help="cluster name (default bench)")
    args = parser.parse_args(argv)
    args.nodes = args.nodes or (3 if args.quick else 6)
    args.runs = args.runs or (3 if args.quick else 5)
    args.phases = [p for p in args.phases.split(",") if p]
    unknown = set(args.phases) - set(PHASES)
    if unknown:
        parser.error("unknown phase(s): %s" % ", ".join(sorted(unknown)))
    return args


class Bench:
    """State shared by the phases: the cluster, the ssh counter, the installer server, results."""

    def __init__(self, args):
        self.args = args
        self.work = args.workdir
        self.inventory = os.path.join(self.work, "inventory")
        self.cluster = Cluster(args.name, self.inventory, os.path.join(args.fakeconda, "wheelhouse"))
        self.counter = SshCounter(self.work)
        self.results = {"args": {k: v for k, v in vars(args).items() if k != "workdir"}, "notes": []}
        self.http = None
        self.installer = None
        self.env_python = None
        self.serial = 0

    # ---- environment -------------------------------------------------------------------------
    def base_env(self):
        env = dict(os.environ)
        env.update({
            "ANSIBLE_CONFIG": os.path.join(ROOT, "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
            "ANSIBLE_CALLBACK_PLUGINS": os.path.join(HERE, "callback_plugins"),
            "ANSIBLE_CALLBACKS_ENABLED": "bench_stats",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
        })
        return env

    def note(self, text):
        log(text)
        self.results["notes"].append(text)

    def logfile(self, tag):
        self.serial += 1
        path = os.path.join(self.work, "logs", "%03d-%s.log" % (self.serial, tag))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return path

    # ---- installer stand-in on loopback ------------------------------------------------------
    def start_installer_server(self):
        with open(os.path.join(self.args.fakeconda, "SHA256SUMS"), encoding="utf-8") as handle:
            checksum, name = handle.readline().split()
        name = name.lstrip("*")
        log_path = os.path.join(self.work, "http-requests.log")
        port_file = os.path.join(self.work, "http.port")
        for stale in (log_path, port_file):
            if os.path.exists(stale):
                os.unlink(stale)
        self.http = subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "harness", "counting_http.py"),
                                      "--root", self.args.fakeconda, "--log", log_path,
                                      "--port-file", port_file, "--max-seconds", "3600"])
        deadline = time.monotonic() + 10
        while not _nonempty(port_file) and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(port_file, encoding="utf-8") as handle:
            port = int(handle.read())
        self.installer = {"name": name, "checksum": "sha256:" + checksum, "log": log_path,
                          "url": "http://127.0.0.1:%d/%s" % (port, name)}

    def installer_gets(self):
        """Successful GETs of the installer so far (the count of real downloads)."""
        if not os.path.exists(self.installer["log"]):
            return 0
        with open(self.installer["log"], encoding="utf-8") as handle:
            return sum(1 for line in handle if line.split()[:1] == ["GET"]
                       and line.split()[1].endswith("/" + self.installer["name"]) and line.split()[2] == "200")

    def stop_installer_server(self):
        if self.http is not None:
            self.http.terminate()
            self.http.wait(timeout=10)

    # ---- inventory ---------------------------------------------------------------------------
    def write_inventory(self, directory):
        """The demo inventory's variables and files, the cluster's hosts, and the loopback installer."""
        demo = os.path.join(ROOT, "inventories", "demo")
        os.makedirs(directory, exist_ok=True)
        for entry in os.listdir(demo):
            if entry in ("hosts.yml", "installer.yml"):
                continue
            link = os.path.join(directory, entry)
            if not os.path.lexists(link):
                os.symlink(os.path.join(demo, entry), link)
        with open(os.path.join(directory, "installer.yml"), "w", encoding="utf-8") as handle:
            handle.write("---\n# Written by tests/bench/bench.py: the installer comes from a counting loopback server.\n"
                         "all:\n  vars:\n    miniconda_installer_url: %s\n    miniconda_installer_checksum: \"%s\"\n"
                         % (self.installer["url"], self.installer["checksum"]))

    # ---- running Ansible and ssh -------------------------------------------------------------
    def ansible(self, tag, argv, limit=None, extra_env=None, timeout=1800, cluster=None):
        """Run ansible/ansible-playbook cold (its own ControlPersist dir); counts and stats."""
        cluster = cluster or self.cluster
        env = self.base_env()
        ssh_env, ssh_log, control = self.counter.new_run(tag)
        stats_path = os.path.join(self.work, "stats", "%s-%d.json" % (tag, self.counter.runs))
        os.makedirs(os.path.dirname(stats_path), exist_ok=True)
        env.update(ssh_env)
        env["TORCHFLEET_BENCH_STATS"] = stats_path
        env.update(extra_env or {})
        argv = list(argv) + ["-i", cluster.inventory_dir]
        if limit:
            argv += ["--limit", ",".join(limit)]
        try:
            result = measure(argv, env=env, timeout=timeout)
        finally:
            self.counter.close_masters(control)
        with open(self.logfile(tag), "w", encoding="utf-8") as handle:
            handle.write("$ %s\n%s\n%s" % (" ".join(argv), result.stdout, result.stderr))
        result.ssh = self.counter.counts(ssh_log, cluster.ip_map())
        result.stats = read_json(stats_path)
        result.ssh_by_role = round_trips_by_role(ssh_log, cluster.ip_map(), (result.stats or {}).get("tasks"))
        return result

    def playbook(self, tag, playbook, limit=None, extra_vars=None, extra_env=None, cluster=None):
        # The demo inventory finds its spec relative to itself; this inventory lives elsewhere.
        argv = ["ansible-playbook", playbook, "-e", "conda_env_file=%s" % os.path.join(ROOT, "environments", "demo.yml")]
        for key, value in (extra_vars or {}).items():
            argv += ["-e", "%s=%s" % (key, value)]
        return self.ansible(tag, argv, limit=limit, extra_env=extra_env, cluster=cluster)

    def write_floor_playbook(self):
        """The loop's own command as the only task of a playbook: what Ansible costs before the audit adds anything."""
        path = os.path.join(self.work, "ansible-floor.yml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps([{
                "name": "Ansible's floor: the hand-rolled loop's probe as one task", "hosts": "torch_nodes",
                "gather_facts": False, "become": False,
                "tasks": [{"name": "Run the loop's probe", "ansible.builtin.command": {"argv": [self.env_python, "-c", LOOP_PROBE]},
                           "changed_when": False}]}], indent=1) + "\n")
        return path

    def hand_rolled_loop(self, hosts):
        """What an operator writes instead of the audit: xargs -P over ssh, one python line each."""
        ssh_env, ssh_log, _control = self.counter.new_run("loop")
        os.rmdir(_control)
        ips = [ip for name, ip in self.cluster.hosts if name in hosts]
        ssh = self.cluster.ssh_argv("{}", ssh=os.path.join(self.counter.bin_dir, "ssh"))
        remote = "%s -c %s" % (self.env_python, _shell_quote(LOOP_PROBE))
        argv = ["xargs", "-P", str(len(ips)), "-I{}"] + ssh + [remote]
        env = dict(os.environ, TORCHFLEET_BENCH_SSH_LOG=ssh_env["TORCHFLEET_BENCH_SSH_LOG"])
        result = measure(argv, env=env, stdin_text="\n".join(ips) + "\n")
        result.ssh = self.counter.counts(ssh_log, self.cluster.ip_map())
        return result


def _nonempty(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return bool(handle.read().strip())
    except OSError:
        return False


def _shell_quote(text):
    return "'" + text.replace("'", "'\"'\"'") + "'"


# ---- phases ------------------------------------------------------------------------------------
def phase_site(bench):
    """Fresh site.yml (fan-out at N), converged re-runs, then a fresh one-node cluster (fan-out at 1)."""
    nodes, runs = bench.args.nodes, max(2, bench.args.runs - 2)
    out = bench.results.setdefault("site", {})
    first = site_run(bench, "site-first", bench.cluster)
    out["first"] = summarise_run(first, nodes)
    out["fanout"] = {str(nodes): first.downloads}
    converged = [site_run(bench, "site-converged", bench.cluster) for run in range(runs)]
    out["converged"] = [summarise_run(run, nodes) for run in converged]
    cache = {"ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile",
             "ANSIBLE_CACHE_PLUGIN_CONNECTION": os.path.join(bench.work, "factcache")}
    shutil.rmtree(cache["ANSIBLE_CACHE_PLUGIN_CONNECTION"], ignore_errors=True)
    site_run(bench, "site-fill-factcache", bench.cluster, cache)
    out["converged_factcache"] = summarise_run(site_run(bench, "site-converged-factcache", bench.cluster, cache), nodes)
    single = Cluster(bench.args.name + "1", os.path.join(bench.work, "inventory-1"), bench.cluster.wheelhouse)
    bench.write_inventory(single.inventory_dir)
    log("starting the one-node cluster '%s' for the single-node fan-out run" % single.name)
    single.down()
    try:
        single.up(1)
        one = site_run(bench, "site-first-1", single)
        out["fanout"]["1"] = one.downloads
        out["first_single"] = summarise_run(one, 1)
        log("converged site.yml vs audit.yml on the one-node cluster (%d rounds)" % (runs + 1))
        out["single_converged"] = converged_vs_audit(bench, single, runs)
    finally:
        single.down()


def converged_vs_audit(bench, cluster, runs):
    """Converged site.yml and audit.yml alternately on `cluster`: on one node nothing else shares
    the node's CPU, so their ratio is what the tasks themselves cost, not the nodes' contention."""
    reports = os.path.join(bench.work, "reports", cluster.name)
    variants = {
        "site": lambda: with_node_cpu(cluster, lambda: bench.playbook("site-converged-%s" % cluster.name, "site.yml", cluster=cluster)),
        "audit": lambda: with_node_cpu(cluster, lambda: bench.playbook(
            "audit-%s" % cluster.name, "playbooks/audit.yml", cluster=cluster, extra_vars={"audit_report_dir": reports})),
    }
    return alternate(bench, variants, runs)


def site_run(bench, tag, cluster, extra_env=None):
    """One site.yml run with a cold controller cache, so a needed installer is really fetched."""
    cache = os.path.join(bench.work, "cache", "%s-%d" % (tag, bench.serial + 1))
    before, packages_before = bench.installer_gets(), len(cluster.upstream_gets())
    log("%s on %d node(s)" % (tag, len(cluster.hosts)))
    result = with_node_cpu(cluster, lambda: bench.playbook(
        tag, "site.yml", cluster=cluster, extra_vars={"miniconda_cache_dir": cache},
        extra_env=dict(extra_env or {}, ANSIBLE_CALLBACKS_ENABLED="bench_stats,ansible.posix.profile_roles")))
    result.downloads = bench.installer_gets() - before
    result.package_gets = cluster.upstream_gets()[packages_before:]
    if result.rc != 0:
        bench.note("%s failed (rc %d); its figures are not a converged run:\n%s" % (tag, result.rc, result.tail(15)))
    shutil.rmtree(cache, ignore_errors=True)
    return result


def with_node_cpu(cluster, run):
    """run() with the CPU the cluster's node containers used meanwhile as result.node_cpu (None where unreadable)."""
    before = cluster.node_cpu()
    result = run()
    after = cluster.node_cpu()
    result.node_cpu = None if None in (before, after) else after - before
    return result


def summarise_run(result, nodes):
    stats = result.stats or {}
    return {"wall": result.wall, "cpu": result.cpu, "node_cpu": getattr(result, "node_cpu", None), "cores": os.cpu_count(),
            "rc": result.rc, "nodes": nodes, "changed": recap_changed(result.stdout),
            "downloads": getattr(result, "downloads", None), "ssh": result.ssh,
            "package_gets": package_counts(getattr(result, "package_gets", None)),
            "ssh_by_role": getattr(result, "ssh_by_role", {}),
            "tasks": stats.get("hosts", {}), "roles": stats.get("roles", {})}


def package_counts(gets):
    """Downloads of a run from the counting upstream: total, distinct packages, most fetches of one."""
    if gets is None:
        return None
    counts = collections.Counter(gets)
    return {"total": len(gets), "packages": len(counts), "max_per_package": max(counts.values()) if counts else 0}


def phase_packages(bench):
    """Fresh builds of a spec variant on 1, 3 and N nodes, every node downloading vs the fan-out."""
    sizes = sorted({k for k in (1, 3, bench.args.nodes) if k <= bench.args.nodes})
    out = bench.results.setdefault("packages", {})
    with open(os.path.join(ROOT, "environments", "demo.yml"), encoding="utf-8") as handle:
        spec = handle.read()
    for fanout in (False, True):
        mode = "fanout" if fanout else "per_node"
        for size in sizes:
            variant = os.path.join(bench.work, "spec-%s-%d.yml" % (mode, size))
            with open(variant, "w", encoding="utf-8") as handle:  # a new spec digest: a new build everywhere
                handle.write(spec + "# benchmark variant %s-%d\n" % (mode, size))
            extra = {"conda_env_file": variant, "conda_env_pip_fanout": str(fanout).lower()}
            hosts = bench.cluster.names(size)
            log("environment build, %s, %d node(s)" % (mode, size))
            before = len(bench.cluster.upstream_gets())
            first = bench.playbook("packages-%s-%d" % (mode, size), CONDA_ENV_ONLY, limit=hosts, extra_vars=extra)
            middle = len(bench.cluster.upstream_gets())
            again = bench.playbook("packages-%s-%d-again" % (mode, size), CONDA_ENV_ONLY, limit=hosts, extra_vars=extra)
            gets = bench.cluster.upstream_gets()
            for run in (first, again):
                if run.rc != 0:
                    bench.note("packages %s on %d node(s) failed (rc %d):\n%s" % (mode, size, run.rc, run.tail(10)))
            out.setdefault(mode, {})[str(size)] = {
                "wall": first.wall, "rc": first.rc, "gets": package_counts(gets[before:middle]),
                "converged_gets": len(gets) - middle, "converged_changed": recap_changed(again.stdout)}


def recap_changed(stdout):
    """Sum of changed=N over the PLAY RECAP lines (None when there is no recap)."""
    total, seen = 0, False
    for line in stdout.splitlines():
        if " changed=" in line and " ok=" in line:
            seen = True
            total += int(line.split(" changed=", 1)[1].split()[0])
    return total if seen else None


def resolve_env_python(bench):
    """The environment interpreter, resolved the way the playbooks do it."""
    expr = ("{{ miniconda_prefix | default('/opt/miniconda3') }}/envs/"
            "{{ (lookup('ansible.builtin.file', conda_env_file) | from_yaml).name }}/bin/python")
    # The demo inventory finds its spec relative to itself; this inventory lives elsewhere.
    spec = os.path.join(ROOT, "environments", "demo.yml")
    result = bench.ansible("resolve", ["ansible", bench.cluster.names(1)[0], "-m", "ansible.builtin.debug",
                                       "-a", "msg=" + expr, "-e", "conda_env_file=" + spec, "-o"])
    for line in result.stdout.splitlines():
        if " | SUCCESS" in line and '"msg": "' in line:
            return line.split('"msg": "', 1)[1].split('"', 1)[0]
    raise RuntimeError("cannot resolve the environment's python:\n" + result.tail())


def phase_probe(bench):
    """Probe cost in the node (no SSH) and end to end from the controller."""
    out = bench.results.setdefault("probe", {})
    out["in_node"] = probe_in_node(bench)
    out["over_ssh"] = probe_over_ssh(bench)


def keep_ansiballz(bench, host):
    """Run torch_facts once with remote files kept; return the module file's path on the node."""
    remote_tmp = "/tmp/torchfleet-bench-ansiballz"
    bench.ansible("keep-module", ["ansible", host, "-m", "torchfleet.cluster.torch_facts", "-a",
                                  "python=" + bench.env_python],
                  extra_env={"ANSIBLE_KEEP_REMOTE_FILES": "1", "ANSIBLE_PIPELINING": "0",
                             "ANSIBLE_REMOTE_TMP": remote_tmp})
    ip = dict(bench.cluster.hosts)[host]
    found = measure(bench.cluster.ssh_argv(ip) + ["ls -t %s/*/AnsiballZ_torch_facts.py | head -n 1" % remote_tmp])
    return found.stdout.strip() or None


def probe_argv(python):
    sys.path.insert(0, os.path.join(ROOT, ".ansible", "collections"))
    from ansible_collections.torchfleet.cluster.plugins.module_utils._probe import torch_probe
    return torch_probe.probe_command(python)


def probe_in_node(bench):
    host = bench.cluster.names(1)[0]
    jobs = [{"name": "import_torch", "argv": [bench.env_python, "-c", "import torch"]},
            {"name": "probe", "argv": probe_argv(bench.env_python)}]
    module = keep_ansiballz(bench, host)
    if module:
        jobs.append({"name": "module", "argv": ["/usr/bin/python3", module]})
    else:
        bench.note("could not keep the torch_facts AnsiballZ file; the in-node module row is missing")
    spec = {"repeats": bench.args.runs + 2, "warmup": 1, "jobs": jobs}
    with open(os.path.join(HERE, "innode_timer.py"), encoding="utf-8") as handle:
        program = handle.read() + "\nmain(%s)\n" % json.dumps(spec)
    log("timing the probe inside %s (%d rounds)" % (host, spec["repeats"] + 1))
    result = measure(bench.cluster.ssh_argv(dict(bench.cluster.hosts)[host]) + ["/usr/bin/python3", "-"],
                     stdin_text=program, timeout=1200)
    if result.rc != 0:
        bench.note("in-node timing failed:\n" + result.tail())
        return {}
    raw = json.loads(result.stdout.strip().splitlines()[-1])
    for name, entry in raw.items():
        if entry["stderr"] or any(entry["rc"]):
            bench.note("in-node job %s exited %s: %s" % (name, entry["rc"], entry["stderr"][-300:]))
    return {name: {"wall": median(e["wall"]), "cpu": median(e["cpu"]), "walls": e["wall"]} for name, e in raw.items()}


def probe_over_ssh(bench):
    host = bench.cluster.names(1)[0]
    ssh = bench.cluster.ssh_argv(dict(bench.cluster.hosts)[host])
    variants = {
        "ssh_true": lambda: measure(ssh + ["true"]),
        "ssh_import_torch": lambda: measure(ssh + [bench.env_python, "-c", "'import torch'"]),
        "ansible_ping": lambda: bench.ansible("adhoc-ping", ["ansible", host, "-m", "ansible.builtin.ping"]),
        "ansible_torch_facts": lambda: bench.ansible("adhoc-facts", [
            "ansible", host, "-m", "torchfleet.cluster.torch_facts", "-a", "python=" + bench.env_python]),
    }
    log("timing over SSH from the controller (%d rounds)" % (bench.args.runs + 1))
    return alternate(bench, variants, bench.args.runs)


def alternate(bench, variants, runs, warmup=1):
    """Run the variants in turn, `runs` times after `warmup` rounds; medians of wall and CPU."""
    samples = {name: [] for name in variants}
    for index in range(warmup + runs):
        for name, run in variants.items():
            result = run()
            if result.rc != 0:
                bench.note("%s exited %d:\n%s" % (name, result.rc, result.tail(8)))
            if index >= warmup:
                samples[name].append(result)
    return {name: {"wall": median([r.wall for r in rs]), "cpu": median([r.cpu for r in rs]),
                   "node_cpu": median([getattr(r, "node_cpu", None) for r in rs]),
                   "walls": [round(r.wall, 3) for r in rs], "rc": [r.rc for r in rs],
                   "ssh": getattr(rs[-1], "ssh", None), "tasks": (getattr(rs[-1], "stats", None) or {}).get("hosts")}
            for name, rs in samples.items()}


def phase_audit(bench):
    """audit.yml vs the xargs loop at 1, 3 and 6 nodes (what exists of them): wall, CPU, round trips."""
    sizes = [k for k in (1, 3, 6) if k <= bench.args.nodes]
    if bench.args.nodes not in sizes:
        sizes.append(bench.args.nodes)
    out = bench.results.setdefault("audit", {})
    floor = bench.write_floor_playbook()
    for index, size in enumerate(sizes):
        hosts = bench.cluster.names(size)
        reports = os.path.join(bench.work, "reports", str(size))
        variants = {
            "audit": lambda h=hosts, r=reports: with_node_cpu(bench.cluster, lambda: bench.playbook(
                "audit-%d" % len(h), "playbooks/audit.yml", limit=h, extra_vars={"audit_report_dir": r})),
            "loop": lambda h=hosts: bench.hand_rolled_loop(h),
            "floor": lambda h=hosts: bench.ansible("floor-%d" % len(h), ["ansible-playbook", floor], limit=h),
        }
        log("audit vs hand-rolled loop vs Ansible's floor on %d node(s) (%d rounds)" % (size, bench.args.runs + (index == 0)))
        out[str(size)] = alternate(bench, variants, bench.args.runs, warmup=1 if index == 0 else 0)
        out[str(size)]["reports"] = sorted(os.listdir(reports)) if os.path.isdir(reports) else []


def phase_unitcost(bench):
    """Ansible's own cost of a task on one node here: do-nothing playbooks, alternately."""
    paths = unit_costs.write_playbooks(os.path.join(bench.work, "unitcost"))
    variants = {name: lambda p=path, n=name: with_node_cpu(
        bench.cluster, lambda: bench.ansible("unitcost-" + n, ["ansible-playbook", p])) for name, path in paths.items()}
    log("Ansible's cost per task: %d playbooks of do-nothing tasks on %d node(s) (%d rounds)"
        % (len(paths), len(bench.cluster.hosts), bench.args.runs + 1))
    samples = alternate(bench, variants, bench.args.runs)
    unusable = sorted(name for name, sample in samples.items() if any(sample["rc"]) or sample["node_cpu"] is None)
    if unusable:
        bench.note("unit costs not computed: %s failed or had no node CPU" % ", ".join(unusable))
        return
    bench.results["unitcost"] = {"samples": samples, "costs": unit_costs.unit_costs(samples, len(bench.cluster.hosts))}


def phase_engine(bench):
    script = os.path.join(HERE, "engine_bench.py")
    if not os.path.exists(script):
        bench.note("tests/bench/engine_bench.py is missing; engine rows skipped")
        return
    sizes = "1000,10000" if bench.args.quick else "1000,10000,100000"
    path = os.path.join(bench.work, "engine.json")
    log("consistency engine on %s synthetic hosts" % sizes)
    result = measure([sys.executable, script, "--hosts", sizes, "--shapes", "cpu", "--repeat", "3", "--json", path],
                     timeout=1200)
    if result.rc != 0:
        bench.note("engine_bench.py failed:\n" + result.tail())
        return
    bench.results["engine"] = read_json(path)


# ---- main --------------------------------------------------------------------------------------
def prepare(bench):
    args = bench.args
    os.makedirs(bench.work, exist_ok=True)
    for stale in ("logs", "stats", "ssh-logs", "reports", "cache"):
        shutil.rmtree(os.path.join(bench.work, stale), ignore_errors=True)
    bench.counter = SshCounter(bench.work)
    bench.start_installer_server()
    bench.write_inventory(bench.inventory)
    if args.reuse and bench.cluster.attach(args.nodes):
        log("reusing the running cluster '%s'" % args.name)
        return
    bench.cluster.down()
    log("starting cluster '%s' with %d node(s)" % (args.name, args.nodes))
    up = bench.cluster.up(args.nodes)
    bench.results["cluster_up_s"] = up.wall


def run_phases(bench):
    started = time.monotonic()
    for phase in PHASES:
        if phase not in bench.args.phases:
            continue
        if phase in ("probe", "audit") and bench.env_python is None:
            bench.env_python = resolve_env_python(bench)
            bench.results["env_python"] = bench.env_python
        phase_started = time.monotonic()
        try:
            globals()["phase_" + phase](bench)
        except Exception as exc:
            bench.note("phase %s stopped: %s: %s" % (phase, type(exc).__name__, exc))
        bench.results.setdefault("phase_s", {})[phase] = time.monotonic() - phase_started
    bench.results["total_s"] = time.monotonic() - started


def finish(bench):
    bench.stop_installer_server()
    with open(os.path.join(bench.work, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(bench.results, handle, indent=1, sort_keys=True, default=str)
    table = bench_table.render(bench.results)
    with open(os.path.join(bench.work, "table.txt"), "w", encoding="utf-8") as handle:
        handle.write(table + "\n")
    print(table)
    if bench.args.keep:
        log("cluster '%s' kept (inventory %s); remove it with: tests/harness/cluster.sh down %s"
            % (bench.args.name, bench.inventory, bench.args.name))
    else:
        bench.cluster.down()


def _terminate(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def main(argv=None):
    bench = Bench(parse_args(argv))
    signal.signal(signal.SIGTERM, _terminate)
    try:
        prepare(bench)
        run_phases(bench)
    except KeyboardInterrupt as exc:
        bench.note("interrupted (%s)" % exc)
    except RuntimeError as exc:
        bench.note(str(exc))
    finally:
        finish(bench)
    return 0


if __name__ == "__main__":
    sys.exit(main())
