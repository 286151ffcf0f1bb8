# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turns the benchmark's results.json into its one table (targets from issue 6)."""

from __future__ import annotations

from bench_util import median, ratio
from unit_costs import profile_cost

HEAD = ("#", "measurement", "value", "target", "met")
# A later per-node CPU slope may be this much steeper than the first and still count as flat.
FLAT_TOLERANCE = 1.5


def seconds(value):
    return "n/a" if value is None else "%.2f s" % value


def millis(value):
    return "n/a" if value is None else "%.0f ms" % (value * 1000)


def times(value):
    return "n/a" if value is None else "%.2fx" % value


def verdict(ok):
    return "n/a" if ok is None else ("yes" if ok else "NO")


def at_most(value, limit):
    return None if value is None else value <= limit


def render(results):
    rows = []
    for section in (probe_rows, audit_rows, round_trip_rows, converged_rows, scale_rows, engine_rows, fanout_rows,
                    package_rows, issue15_rows, unitcost_rows):
        rows.extend(section(results))
    rows = rows or [("-", "no phase produced figures", "", "", "")]
    widths = [max(len(str(r[i])) for r in rows + [HEAD]) for i in range(len(HEAD))]
    line = "  ".join("%-*s" % (w, h) for w, h in zip(widths, HEAD))
    out = ["torchfleet benchmark — medians of %s runs, %s nodes; ratios measured side by side"
           % (results["args"].get("runs"), results["args"].get("nodes")), line, "-" * len(line)]
    for row in rows:
        out.append("  ".join("%-*s" % (w, c) for w, c in zip(widths, row)).rstrip())
    out.extend("note: " + n.splitlines()[0] for n in results.get("notes", []))
    if "total_s" in results:
        out.append("benchmark wall time %.0f s (phases: %s)" % (results["total_s"], ", ".join(
            "%s %.0f s" % (k, v) for k, v in results.get("phase_s", {}).items())))
    return "\n".join(out)


def probe_rows(results):
    probe = results.get("probe")
    if not probe:
        return []
    rows = []
    node = probe.get("in_node", {})
    base = (node.get("import_torch") or {}).get("wall")
    rows.append(("1", 'in node: python -c "import torch"', seconds(base), "", ""))
    for key, label in (("probe", "in node: torch_facts probe alone"),
                       ("module", "in node: torch_facts module (AnsiballZ)")):
        wall = (node.get(key) or {}).get("wall")
        value = ratio(wall, base)
        rows.append(("1", label, "%s = %s" % (seconds(wall), times(value)), "<= 1.30x", verdict(at_most(value, 1.3))))
    ssh = probe.get("over_ssh", {})

    def get(key):
        return (ssh.get(key) or {}).get("wall")

    rows.append(("1", 'over SSH: ssh python -c "import torch"', seconds(get("ssh_import_torch")), "", ""))
    rows.append(("1", "over SSH: ansible -m ping (Ansible's floor)", seconds(get("ansible_ping")), "", ""))
    value = ratio(get("ansible_torch_facts"), get("ssh_import_torch"))
    rows.append(("1", "over SSH: ansible -m torch_facts", "%s = %s" % (seconds(get("ansible_torch_facts")), times(value)),
                 "(info)", ""))
    if None not in (get("ansible_torch_facts"), get("ansible_ping"), get("ssh_import_torch"), get("ssh_true")):
        net = ratio(get("ansible_torch_facts") - get("ansible_ping"), get("ssh_import_torch") - get("ssh_true"))
        rows.append(("1", "over SSH: (facts - ping) / (import - ssh true)", times(net), "<= 1.30x",
                     verdict(at_most(net, 1.3))))
    return rows


def _largest(results, key):
    sizes = sorted((int(k) for k in (results.get(key) or {}) if k.isdigit()), reverse=True)
    return sizes[0] if sizes else None


def audit_rows(results):
    size = _largest(results, "audit")
    if size is None:
        return []
    rows = []
    for key in sorted((int(k) for k in results["audit"] if k.isdigit())):
        entry = results["audit"][str(key)]
        audit, loop = entry["audit"]["wall"], entry["loop"]["wall"]
        value = ratio(audit, loop)
        target, met = ("<= 1.50x", verdict(at_most(value, 1.5))) if key == size else ("(info)", "")
        rows.append(("2", "audit.yml vs xargs -P ssh loop, %d node(s)" % key,
                     "%s vs %s = %s" % (seconds(audit), seconds(loop), times(value)), target, met))
        floor = _floor_wall(entry)
        if floor is not None:
            rows.append(("2", "  Ansible's floor (the loop's probe as one task)", "%s = %s of the loop; audit %s of it" % (
                seconds(floor), times(ratio(floor, loop)), times(ratio(audit, floor))), "(info)", ""))
        elif "floor" in entry:
            rows.append(("2", "  Ansible's floor (the loop's probe as one task)", "failed, exit codes %s (see logs/)" % " ".join(
                str(rc) for rc in entry["floor"].get("rc", [])), "(info)", ""))
    entry = results["audit"][str(size)]
    missing = {"latest.json", "latest.md", "latest.junit.xml", "torchfleet_drift.prom"} - set(entry.get("reports", []))
    rows.append(("2", "audit reports written (%d nodes)" % size, "all 4" if not missing else "missing " + ", ".join(sorted(missing)),
                 "all 4", verdict(not missing)))
    rcs = entry["audit"].get("rc", [])
    if any(rcs):
        rows.append(("2", "audit exit codes", " ".join(str(rc) for rc in rcs), "0 (consistent)", "NO"))
    return rows


def _floor_wall(entry):
    """Wall time of Ansible's floor at one size, or None when it was not run or any run of it failed."""
    floor = entry.get("floor") or {}
    return None if not floor or any(floor.get("rc", [])) else floor.get("wall")


def _per_node(ssh_counts, hosts=None):
    """Largest count of ssh+sftp+scp calls over the nodes, and the split of that node."""
    if not ssh_counts:
        return None, ""
    totals = {h: sum(c.values()) for h, c in ssh_counts.items() if hosts is None or h in hosts}
    if not totals:
        return None, ""
    worst = max(totals, key=totals.get)
    split = ssh_counts[worst]
    detail = "ssh %d, sftp %d, scp %d" % (split["ssh"], split["sftp"], split["scp"]) if split["sftp"] or split["scp"] else ""
    return totals[worst], detail


def _remote_tasks(tasks):
    if not tasks:
        return ""
    worst = max(tasks.values(), key=lambda c: c["remote"])
    return "tasks/node: %d remote, %d on controller, %d delegated, %d skipped" % (
        worst["remote"], worst["controller"], worst["delegated_local"], worst["skipped"])


def round_trip_rows(results):
    rows = []
    size = _largest(results, "audit")
    if size is not None:
        audit = results["audit"][str(size)]["audit"]
        count, detail = _per_node(audit.get("ssh"))
        rows.append(("3", "audit.yml: SSH round trips per node", _join(count, detail), "<= 2", verdict(at_most(count, 2))))
        rows.append(("3", "audit.yml: task results per node", _remote_tasks(audit.get("tasks")), "", ""))
        loop = _per_node(results["audit"][str(size)]["loop"].get("ssh"))[0]
        rows.append(("3", "hand-rolled loop: SSH round trips per node", _join(loop, ""), "", ""))
    site = results.get("site") or {}
    if site.get("converged"):
        run = site["converged"][-1]
        count, detail = _per_node(run.get("ssh"))
        rows.append(("3", "converged site.yml: SSH round trips per node", _join(count, detail), "", ""))
        rows.append(("3", "converged site.yml: task results per node", _remote_tasks(run.get("tasks")), "", ""))
    cached = site.get("converged_factcache")
    if cached:
        count, detail = _per_node(cached.get("ssh"))
        rows.append(("3", "  same, with a jsonfile fact cache (gathering=smart)",
                     "%s, %s" % (_join(count, detail), seconds(cached["wall"])), "(info)", ""))
    return rows


def _join(count, detail):
    if count is None:
        return "n/a"
    return "%d (%s)" % (count, detail) if detail else str(count)


def converged_rows(results):
    site = results.get("site") or {}
    if not site.get("first") or not site.get("converged"):
        return []
    first, runs = site["first"], site["converged"]
    conv = median([r["wall"] for r in runs])
    rows = [("4", "site.yml first run, fresh %d nodes" % first["nodes"], seconds(first["wall"]), "", verdict(first["rc"] == 0)),
            ("4", "site.yml converged re-run (median of %d)" % len(runs),
             "%s = %s of first" % (seconds(conv), times(ratio(conv, first["wall"]))), "", ""),
            ("4", "converged re-run: changed tasks", ", ".join(str(r["changed"]) for r in runs), "0",
             verdict(all(r["changed"] == 0 for r in runs)))]
    roles = sorted(set(first["roles"]) | set(runs[-1]["roles"]), key=lambda r: -first["roles"].get(r, 0))
    for role in roles:
        again = median([r["roles"].get(role) for r in runs])
        trips = runs[-1].get("ssh_by_role", {}).get(role)
        rows.append(("4", "  role %s: first vs converged" % role.replace("torchfleet.cluster.", ""),
                     "%s vs %s%s" % (seconds(first["roles"].get(role)), seconds(again),
                                     "" if trips is None else " (%d SSH round trips/node)" % trips), "", ""))
    return rows


def scale_rows(results):
    audit = results.get("audit") or {}
    sizes = sorted(int(k) for k in audit if k.isdigit())
    if not sizes:
        return []
    rows, cpu = [], {}
    for size in sizes:
        entry = audit[str(size)]["audit"]
        cpu[size] = entry["cpu"]
        rows.append(("5", "audit, %d node(s): wall / controller CPU" % size,
                     "%s / %s (%.2f s per node)" % (seconds(entry["wall"]), seconds(entry["cpu"]), entry["cpu"] / size), "", ""))
    slopes = [((cpu[b] - cpu[a]) / (b - a), a, b) for a, b in zip(sizes, sizes[1:])]
    if slopes:
        text = ", ".join("%d->%d: %.2f s/node" % (a, b, s) for s, a, b in slopes)
        flat = None if len(slopes) < 2 else slopes[-1][0] <= FLAT_TOLERANCE * max(slopes[0][0], 0.05)
        rows.append(("5", "controller CPU per added node", text, "flat", verdict(flat)))
    return rows


def engine_rows(results):
    engine = results.get("engine")
    if not engine:
        return []
    rows = []
    for entry in engine:
        ok = at_most(entry["median_s"], 1.0) if entry["hosts"] == 10000 else None
        rows.append(("5", "engine, %d hosts: time / peak memory" % entry["hosts"],
                     "%.3f s (%.1f us/host) / %.1f MiB" % (entry["median_s"], entry["per_host_us"], entry["peak_mib"]),
                     "< 1 s" if entry["hosts"] == 10000 else "", verdict(ok) if ok is not None else ""))
    if len(engine) > 1:
        growth = ratio(engine[-1]["per_host_us"], engine[0]["per_host_us"])
        rows.append(("5", "engine per-host time, %d vs %d hosts" % (engine[-1]["hosts"], engine[0]["hosts"]),
                     times(growth), "linear (<= 2x)", verdict(at_most(growth, 2.0))))
    return rows


def fanout_rows(results):
    fanout = (results.get("site") or {}).get("fanout")
    if not fanout:
        return []
    return [("6", "installer downloads per run, %s node(s)" % size, str(count), "1", verdict(count == 1))
            for size, count in sorted(fanout.items(), key=lambda kv: int(kv[0]))]


def _gets_text(gets):
    if not gets:
        return "n/a"
    return "%d packages, at most %d fetch(es) each (%d in all)" % (gets["packages"], gets["max_per_package"], gets["total"])


def package_rows(results):
    packages = results.get("packages") or {}
    rows = []
    first = ((results.get("site") or {}).get("first") or {}).get("package_gets")
    if first:
        rows.append(("6", "first site.yml, %d nodes: environment package downloads" % results["site"]["first"]["nodes"],
                     _gets_text(first), "1 each", verdict(first["max_per_package"] <= 1)))
    for size in sorted((int(k) for k in packages.get("fanout", {})), key=int):
        fan, own = packages["fanout"][str(size)], packages.get("per_node", {}).get(str(size))
        rows.append(("6", "environment build, %d node(s), every node downloading" % size, _gets_text((own or {}).get("gets")), "", ""))
        rows.append(("6", "environment build, %d node(s), fan-out" % size, _gets_text(fan.get("gets")), "1 each",
                     verdict(None if not fan.get("gets") else fan["gets"]["max_per_package"] <= 1)))
        rows.append(("6", "  its converged re-run: downloads, changed", "%s, %s" % (fan["converged_gets"], fan["converged_changed"]),
                     "0, 0", verdict(fan["converged_gets"] == 0 and fan["converged_changed"] == 0)))
        if own:
            rows.append(("6", "  build wall time, fan-out vs every node downloading", "%s vs %s = %s" % (
                seconds(fan["wall"]), seconds(own["wall"]), times(ratio(fan["wall"], own["wall"]))), "(info)", ""))
    return rows


# Issue 15's table: the values the issue measured ("today") beside this run's.
ISSUE15_TODAY = {"site_vs_audit": "6.0x", "round_trips": "61", "changed": "0", "downloads": "one per node",
                 "first_n_vs_1": "not measured", "audit_vs_loop": "1.58x, 1.45x", "cpu_per_node": "0.40 s/node, rising"}


def _issue15_row(key, label, now, target, met):
    return ("7", label, "%s -> %s" % (ISSUE15_TODAY[key], now), target, met)


def first_run_work_rows(first, single):
    """Whether a fresh node costs the same work at N nodes as alone, and the wall time this
    machine's cores allow for the N-node run: the nodes share them here, unlike a real cluster."""
    if first.get("node_cpu") is None or single.get("node_cpu") is None:
        return []
    nodes, cores = first["nodes"], first.get("cores") or 1
    per_node = ratio(first["node_cpu"] / nodes, single["node_cpu"])
    floor = (first["node_cpu"] + first["cpu"]) / cores
    return [("7", "  same, node CPU per node (container cgroups)",
             "%s at %d vs %s at 1 = %s" % (seconds(first["node_cpu"] / nodes), nodes, seconds(single["node_cpu"]), times(per_node)),
             "(info)", ""),
            ("7", "  same, fastest %d-node run on %d core(s)" % (nodes, cores),
             "%s (nodes' + controller CPU / cores) = %s of the 1-node run" % (seconds(floor), times(ratio(floor, single["wall"]))),
             "(info)", "")]


def issue15_rows(results):
    site, audit, packages = results.get("site") or {}, results.get("audit") or {}, results.get("packages") or {}
    size = _largest(results, "audit")
    rows = []
    runs = site.get("converged") or []
    if runs and size is not None:
        value = ratio(median([r["wall"] for r in runs]), audit[str(size)]["audit"]["wall"])
        rows.append(_issue15_row("site_vs_audit", "converged site.yml / audit.yml, %d nodes" % size, times(value),
                                 "<= 2.00x", verdict(at_most(value, 2.0))))
    single = site.get("single_converged") or {}
    if single.get("site") and single.get("audit"):
        rows.append(("7", "  same, 1 node (no other node shares the CPU)", "%s / %s = %s" % (
            seconds(single["site"]["wall"]), seconds(single["audit"]["wall"]),
            times(ratio(single["site"]["wall"], single["audit"]["wall"]))), "(info)", ""))
    if runs:
        count = _per_node(runs[-1].get("ssh"))[0]
        rows.append(_issue15_row("round_trips", "SSH round trips per node, converged site.yml", _join(count, ""),
                                 "<= 8", verdict(at_most(count, 8))))
        rows.append(_issue15_row("changed", "converged re-run, changed tasks", ", ".join(str(r["changed"]) for r in runs),
                                 "0", verdict(all(r["changed"] == 0 for r in runs))))
    fan = packages.get("fanout") or {}
    if fan:
        sizes = sorted(fan, key=int)
        most = ["%s" % ((fan[k].get("gets") or {}).get("max_per_package", "n/a")) for k in sizes]
        met = all(fan[k].get("gets") and fan[k]["gets"]["max_per_package"] <= 1 and fan[k]["converged_gets"] == 0 for k in sizes)
        rows.append(_issue15_row("downloads", "package downloads per package and run, %s nodes" % " / ".join(sizes),
                                 "%s (converged: %s)" % (" / ".join(most), " / ".join(str(fan[k]["converged_gets"]) for k in sizes)),
                                 "1 (0 converged)", verdict(met)))
    if site.get("first") and site.get("first_single"):
        value = ratio(site["first"]["wall"], site["first_single"]["wall"])
        rows.append(_issue15_row("first_n_vs_1", "first site.yml, %d fresh nodes / 1 fresh node" % site["first"]["nodes"],
                                 times(value), "<= 1.50x", verdict(at_most(value, 1.5))))
        rows += first_run_work_rows(site["first"], site["first_single"])
    loops = [k for k in (3, size) if k is not None and str(k) in audit]
    if loops:
        values = [ratio(audit[str(k)]["audit"]["wall"], audit[str(k)]["loop"]["wall"]) for k in sorted(set(loops))]
        rows.append(_issue15_row("audit_vs_loop", "audit / hand-rolled ssh loop, %s nodes" % " and ".join(str(k) for k in sorted(set(loops))),
                                 ", ".join(times(v) for v in values), "<= 1.30x", verdict(all(at_most(v, 1.3) for v in values))))
        floors = [(_floor_wall(audit[str(k)]), audit[str(k)]["loop"]["wall"]) for k in sorted(set(loops)) if "floor" in audit[str(k)]]
        if floors:
            rows.append(("7", "  same, Ansible's floor: the loop's probe as one task",
                         ", ".join("failed" if floor is None else times(ratio(floor, loop)) for floor, loop in floors), "(info)", ""))
    sizes = sorted(int(k) for k in audit if k.isdigit())
    if len(sizes) >= 3:
        cpu = dict((k, audit[str(k)]["audit"]["cpu"]) for k in sizes)
        slopes = [(cpu[b] - cpu[a]) / (b - a) for a, b in zip(sizes, sizes[1:])]
        rows.append(_issue15_row("cpu_per_node", "controller CPU per added node, audit %d->%d" % (sizes[-2], sizes[-1]),
                                 "%.2f s/node (%d->%d: %.2f)" % (slopes[-1], sizes[0], sizes[1], slopes[0]),
                                 "flat (within 20%)", verdict(slopes[-1] <= 1.2 * max(slopes[0], 0.05))))
    return rows


def _run_cpu(run):
    """Controller + node CPU of a run summary, or None."""
    return None if run.get("node_cpu") is None else run["cpu"] + run["node_cpu"]


def _tasks_per_node(hosts):
    return sum(sum(c.get(k, 0) for k in ("remote", "controller", "delegated_local", "skipped")) for c in hosts.values()) / len(hosts)


def unitcost_rows(results):
    """Ansible's own cost of a task here, and the least CPU the converged run and the audit need for
    their task profiles: how far the converged/audit ratio can fall without fewer tasks."""
    costs = (results.get("unitcost") or {}).get("costs")
    if not costs:
        return []
    rows = [("8", "Ansible's cost per task and node (do-nothing tasks)",
             "set_fact %s, skipped %s, remote %s controller + %s node" % (
                 millis(costs["set_fact"]), millis(costs["skipped"]), millis(costs["remote_controller"]), millis(costs["remote_node"])), "(info)", ""),
            ("8", "  start-up; opening a node's connection", "%s; %s per node" % (seconds(costs["startup"]), millis(costs["connection"])),
             "(info)", "")]
    site, audit, size = results.get("site") or {}, results.get("audit") or {}, _largest(results, "audit")
    runs = site.get("converged") or []
    if not runs or size is None or not runs[-1].get("tasks") or not audit[str(size)]["audit"].get("tasks"):
        return rows
    site_cpu = median([_run_cpu(r) for r in runs])
    audit_run = audit[str(size)]["audit"]
    audit_cpu = _run_cpu(audit_run)
    site_least, audit_least = profile_cost(costs, runs[-1]["tasks"]), profile_cost(costs, audit_run["tasks"])
    for label, cpu, least, hosts in (("converged site.yml", site_cpu, site_least, runs[-1]["tasks"]),
                                     ("audit.yml", audit_cpu, audit_least, audit_run["tasks"])):
        rows.append(("8", "%s: CPU, and its tasks at Ansible's cost" % label,
                     "%s; %.0f tasks/node: %s" % (seconds(cpu), _tasks_per_node(hosts), seconds(least)), "(info)", ""))
    if site_cpu is not None and audit_cpu is not None:
        # The audit's work beyond Ansible's cost is the probe, which the converged run also does.
        least_ratio = ratio(site_least + audit_cpu - audit_least, audit_cpu)
        rows.append(("8", "least converged/audit CPU for these task profiles",
                     "%s (measured: %s)" % (times(least_ratio), times(ratio(site_cpu, audit_cpu))), "(info)", ""))
    return rows
