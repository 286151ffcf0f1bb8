# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side helpers of the benchmark: measured runs, the bench cluster, SSH counts."""

from __future__ import annotations

import bisect
import glob
import json
import os
import resource
import shlex
import statistics
import subprocess
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "tests", "bench")
CLUSTER_SH = os.path.join(ROOT, "tests", "harness", "cluster.sh")
PEER_PORT_RANGE = "40000 59999"
SSH_TOOLS = ("ssh", "sftp", "scp")


class Measured:
    """Wall time and controller CPU time (the child and everything it waited for)."""

    def __init__(self, wall, cpu, rc, stdout, stderr):
        self.wall, self.cpu, self.rc, self.stdout, self.stderr = wall, cpu, rc, stdout, stderr

    def tail(self, lines=25):
        text = (self.stdout or "") + (self.stderr or "")
        return "\n".join(text.splitlines()[-lines:])


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(argv, env=None, stdin_text=None, timeout=1800, cwd=ROOT):
    """Run one command and time it.  The benchmark runs one child at a time, so the
    RUSAGE_CHILDREN delta is that child's tree (daemonised ssh masters excluded)."""
    cpu0, wall0 = _children_cpu(), time.monotonic()
    try:
        proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin_text, capture_output=True,
                              text=True, timeout=timeout, check=False)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = 124, _text(exc.stdout), _text(exc.stderr) + "\n(timed out after %ss)" % timeout
    return Measured(time.monotonic() - wall0, _children_cpu() - cpu0, rc, out, err)


def _text(data):
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def log(message):
    print("bench: %s" % message, flush=True)


class Cluster:
    """The benchmark's own podman cluster, through tests/harness/cluster.sh."""

    def __init__(self, name, inventory_dir, wheelhouse=None):
        self.name = name
        self.inventory_dir = inventory_dir
        self.hosts_file = os.path.join(inventory_dir, "hosts.yml")
        self.wheelhouse = wheelhouse
        self.hosts = []
        self.vars = {}

    def up(self, count):
        argv = [CLUSTER_SH, "up", self.name, str(count), "--inventory", self.hosts_file]
        if self.wheelhouse:
            # The wheelhouse is also the nodes' counting package index (their only one).
            argv += ["--wheelhouse", self.wheelhouse]
        # The firewall role's default range, as an operator sets it where a container starts
        # (its /proc/sys is read-only): the converged re-run then takes the one-call path.
        env = dict(os.environ, TORCHFLEET_PEER_PORT_RANGE=PEER_PORT_RANGE)
        result = measure(argv, env=env, timeout=900)
        if result.rc != 0:
            raise RuntimeError("cluster.sh up %s %d failed:\n%s" % (self.name, count, result.tail()))
        self._read_inventory()
        return result

    def attach(self, count):
        """Use a running cluster of at least `count` nodes as it is; False when there is none."""
        if not os.path.exists(self.hosts_file):
            return False
        self._read_inventory()
        running = measure(["podman", "ps", "--filter", "label=org.torchfleet.cluster=" + self.name,
                           "--format", "{{ .Names }}"]).stdout.split()
        return len(self.hosts) >= count and len(running) >= count

    def upstream_gets(self):
        """Paths of the package files the nodes fetched from the counting upstream, one per GET."""
        path = os.path.join(ROOT, "tests", "output", "clusters", self.name, "upstream", "requests.log")
        try:
            with open(path, encoding="utf-8") as handle:
                lines = [line.split() for line in handle]
        except OSError:
            return []
        return [f[1] for f in lines if len(f) == 3 and f[0] == "GET" and f[1].endswith(".whl") and f[2] == "200"]

    def down(self):
        return measure([CLUSTER_SH, "down", self.name], timeout=300)

    def node_cpu(self):
        """CPU seconds the cluster's node containers have used so far (read from their cgroups:
        sshd, the modules, conda and pip inside them), or None where a cgroup cannot be read."""
        names = ["tf-%s-%s" % (self.name, name) for name in self.names()]
        found = measure(["podman", "inspect", "--format", "{{ .State.CgroupPath }}"] + names)
        paths = found.stdout.split()
        if found.rc != 0 or len(paths) != len(names):
            return None
        used = [_cgroup_cpu_seconds(path) for path in paths]
        return None if None in used else sum(used)

    def _read_inventory(self):
        with open(self.hosts_file, encoding="utf-8") as handle:
            doc = yaml.safe_load(handle)
        self.vars = doc["all"]["vars"]
        hosts = doc["all"]["children"]["torch_nodes"]["hosts"]
        self.hosts = [(name, hosts[name]["ansible_host"]) for name in hosts]

    def names(self, count=None):
        return [host[0] for host in self.hosts[:count]]

    def ip_map(self):
        return {ip: name for name, ip in self.hosts}

    def ssh_argv(self, ip, ssh="ssh"):
        """What an operator types: a plain ssh with the cluster's key and verified host keys."""
        return [ssh, "-o", "BatchMode=yes", "-i", self.vars["ansible_ssh_private_key_file"]] + \
            shlex.split(self.vars.get("ansible_ssh_common_args", "")) + ["root@" + ip]


def _cgroup_cpu_seconds(path):
    """CPU seconds of one cgroup: cgroup v1 cpuacct (nanoseconds) or v2 cpu.stat (microseconds)."""
    try:
        with open("/sys/fs/cgroup/cpuacct%s/cpuacct.usage" % path, encoding="ascii") as handle:
            return int(handle.read()) / 1e9
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup%s/cpu.stat" % path, encoding="ascii") as handle:
            stat = dict(line.split() for line in handle if line.strip())
        return int(stat["usage_usec"]) / 1e6
    except (OSError, ValueError, KeyError):
        return None


class SshCounter:
    """ssh/sftp/scp stand-ins that log each call, and fresh ControlPersist dirs per run."""

    def __init__(self, workdir):
        self.bin_dir = os.path.join(workdir, "bin")
        self.log_dir = os.path.join(workdir, "ssh-logs")
        os.makedirs(self.bin_dir, exist_ok=True)
        os.makedirs(self.log_dir, exist_ok=True)
        for tool in SSH_TOOLS:
            link = os.path.join(self.bin_dir, tool)
            if not os.path.lexists(link):
                os.symlink(os.path.join(HERE, "ssh_count.sh"), link)
        self.runs = 0

    def new_run(self, tag):
        """Return (env additions, log path, control dir) for one cold run."""
        self.runs += 1
        log_path = os.path.join(self.log_dir, "%03d-%s.log" % (self.runs, tag))
        control = tempfile.mkdtemp(prefix="cp", dir="/tmp")
        env = {
            "TORCHFLEET_BENCH_SSH_LOG": log_path,
            "ANSIBLE_SSH_EXECUTABLE": os.path.join(self.bin_dir, "ssh"),
            "ANSIBLE_SFTP_EXECUTABLE": os.path.join(self.bin_dir, "sftp"),
            "ANSIBLE_SCP_EXECUTABLE": os.path.join(self.bin_dir, "scp"),
            "ANSIBLE_SSH_CONTROL_PATH_DIR": control,
        }
        return env, log_path, control

    @staticmethod
    def close_masters(control):
        """End the run's ControlPersist masters so the next run starts cold."""
        for socket_path in glob.glob(os.path.join(control, "*")):
            subprocess.run(["/usr/bin/ssh", "-O", "exit", "-o", "ControlPath=" + socket_path, "bench"],
                           capture_output=True, check=False, timeout=30)
        for leftover in glob.glob(os.path.join(control, "*")):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass  # a master that was exiting removed its socket after the glob
        os.rmdir(control)

    @staticmethod
    def counts(log_path, ip_map):
        """{host: {"ssh": n, "sftp": n, "scp": n}} for every logged call naming a node."""
        counts = {}
        if not os.path.exists(log_path):
            return counts
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                tool, rest = (line.split(" ", 1) + [""])[:2]
                if tool not in SSH_TOOLS or " -O " in " %s " % rest:
                    continue
                host = _host_in(rest.split(), ip_map)
                if host is not None:
                    entry = counts.setdefault(host, dict.fromkeys(SSH_TOOLS, 0))
                    entry[tool] += 1
        return counts


def round_trips_by_role(log_path, ip_map, tasks):
    """{role: largest per-node count of SSH calls made while that role's tasks ran}."""
    tasks = sorted((t for t in tasks or [] if len(t) > 3), key=lambda t: t[3])
    starts = [t[3] for t in tasks]
    per_role = {}
    if not tasks or not os.path.exists(log_path):
        return {}
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            tokens = line.split()
            if len(tokens) < 3 or tokens[0] not in SSH_TOOLS or "-O" in tokens:
                continue
            host = _host_in(tokens[2:], ip_map)
            try:
                index = bisect.bisect_right(starts, float(tokens[1].replace(",", "."))) - 1
            except ValueError:
                continue
            if host is None or index < 0:
                continue
            role = per_role.setdefault(tasks[index][0], {})
            role[host] = role.get(host, 0) + 1
    return {role: max(hosts.values()) for role, hosts in per_role.items()}


def _host_in(tokens, ip_map):
    for token in tokens:
        bare = token.split("@")[-1].strip("[]")
        if bare in ip_map:
            return ip_map[bare]
    return None


def read_json(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None
