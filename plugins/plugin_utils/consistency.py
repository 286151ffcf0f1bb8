# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-node consistency engine: which node differs from the others, or from the spec.

Input: ``{host: torch_facts or None}`` in inventory order (``None`` = unreachable),
optional spec expectations (see envspec_expect) and per-field rules.

Facts are flattened to dotted fields: ``version``, ``distributed.nccl``,
``gpus.0.name``, ``env.spec_sha256``, ``env.packages.numpy``. Empty mappings and
lists contribute no field; a field some hosts lack is ``null`` on those hosts.

Every field is compared against the **majority** value of the reachable hosts
(``null`` counts as a value, so a package present on one node only is drift) and,
where the spec names it, against the **spec**, so uniform drift is caught too.
A host that fails the spec is reported under ``source: spec`` only. Ties for the
majority go to the value the reference host holds (``torch_master`` / the first
host), else to the value of the earliest host in inventory order; such entries
carry ``tie: true``.

Each host's facts are also compared with what was built on it: ``env.build_changes``
(every package added, removed or changed since the conda_env module stamped the build)
becomes drift with ``source: build``, unless the host is already reported for that
field. ``env.stamp.collection_version`` and ``env.stamp.spec_file`` (provenance) are
reported under ``provenance``, not as drift, unless ``provenance_is_drift``.
Mixing pip into conda (module_utils.pipmix) is reported under ``warnings``.

Per-field rules (keys are field names or fnmatch globs, first match wins, exact
names before globs): ``exact`` (default), ``ignore``, ``info`` (reported under
``provenance``, never drift), ``{min: VERSION}`` (a floor
from configuration, reported as ``source: spec``) or ``{min: majority}`` (the
majority value is the floor; newer values are tolerated and listed under
``tolerated``). Defaults, switched off with ``use_defaults=False``:
``DEFAULT_IGNORE`` drops fields that are unique per device (GPU UUIDs, serials,
PCI bus ids) and ``DEFAULT_RULES`` makes the NVIDIA driver a minimum
(``{min: majority}``): a newer driver is tolerated, an older one is drift.

Linear in hosts x fields: identical sub-trees (the whole fact set, ``env``,
``env.packages``) are recognised with one C-level encoding and lookup per host and
flattened once per distinct value; only deviant hosts are ever listed one by one.
Values are compared exactly: ``false``, ``0`` and ``0.0`` are different values.
"""

from __future__ import annotations

import datetime
import fnmatch
import marshal
import operator
import re

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import pipmix
from ansible_collections.torchfleet.cluster.plugins.plugin_utils import cuda_driver
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.envspec_expect import (
    PACKAGE_PREFIX,
    Expectation,
    SpecError,
    canonical_name,
    coerce_expectation,
    version_key,
)

REPORT_VERSION = 1
SOURCE_SPEC = "spec"
SOURCE_MAJORITY = "majority"
SOURCE_BUILD = "build"
DEFAULT_IGNORE = ("gpus.*.uuid", "gpus.*.serial", "gpus.*.pci_bus_id")
# Where and by what a build was made: information, never drift unless provenance_is_drift.
PROVENANCE_FIELDS = ("env.stamp.collection_version", "env.stamp.spec_file")
# Fields that depend on build strings, left out with compare_builds=False (mixed architectures).
BUILD_STRING_FIELDS = ("env.builds.*", "env.packages_sha256")
# Facts the engine reads per host instead of comparing them across hosts.
PER_HOST_FACTS = ("build_changes", "duplicates")
DEFAULT_RULES = {"driver": {"min": "majority"}, "driver_cuda": {"min": "majority"}}

_HASH_LIMIT = 64
_DIGITS = re.compile(r"(\d+)")


class RuleError(ValueError):
    """A rule the engine cannot apply; the message names the field pattern."""


def natural_key(field):
    """Sort ``gpus.2`` before ``gpus.10``."""
    return [int(p) if i % 2 else p for i, p in enumerate(_DIGITS.split(field))]


def _normalize_rule(pattern, rule):
    if rule in ("ignore", True) or (isinstance(rule, dict) and rule.get("ignore") is True and len(rule) == 1):
        return ("ignore", None)
    if rule in ("exact", None) or rule == {} or rule == {"match": "exact"}:
        return ("exact", None)
    if rule == "info":
        return ("info", None)
    if rule in ("min", "min_version"):
        return ("min", None)
    if isinstance(rule, dict) and len(rule) == 1 and next(iter(rule)) in ("min", "min_version"):
        floor = next(iter(rule.values()))
        if floor in (None, "majority"):
            return ("min", None)
        if not isinstance(floor, (str, int, float)) or isinstance(floor, bool):
            raise RuleError(f"rule for {pattern!r}: 'min' is a version or 'majority', got {floor!r}")
        return ("min", str(floor))
    raise RuleError(
        f"rule for {pattern!r}: use 'exact', 'ignore', 'info', {{'min': VERSION}} or {{'min': 'majority'}}; got {rule!r}"
    )


class Rules:
    """Resolves the rule of a field once and remembers it."""

    def __init__(self, rules=None, ignore=None, use_defaults=True):
        self._exact = {}
        self._globs = []
        merged = dict(rules or {})
        if use_defaults:
            for pattern, rule in DEFAULT_RULES.items():
                merged.setdefault(pattern, rule)
        for pattern, rule in merged.items():
            normalized = _normalize_rule(pattern, rule)
            if any(c in pattern for c in "*?["):
                self._globs.append((pattern, normalized))
            else:
                self._exact[pattern] = normalized
        patterns = list(ignore or ()) + (list(DEFAULT_IGNORE) if use_defaults else [])
        self._globs.extend((p, ("ignore", None)) for p in patterns)
        self._cache = {}

    def rule(self, field):
        """``("exact"|"ignore"|"min", floor_or_None)`` for a field."""
        found = self._cache.get(field)
        if found is None:
            found = self._exact.get(field)
            if found is None:
                found = next((r for p, r in self._globs if fnmatch.fnmatchcase(field, p)), ("exact", None))
            self._cache[field] = found
        return found

    def ignored(self, field):
        return self.rule(field)[0] == "ignore"


def _scalar_key(value):
    # True == 1 and hash(True) == hash(1): keep booleans apart from integers.
    if isinstance(value, bool):
        return ("\0bool", value)
    try:
        hash(value)
    except TypeError:
        return ("\0repr", repr(value))
    return value


def _children(value):
    return value.items() if isinstance(value, dict) else enumerate(value)


class _PathState:
    """Distinct values seen at one container path, and the columns of its children.

    A container's identity is its ``marshal`` encoding: C speed, and exact (``False``,
    ``0`` and ``0.0`` differ, unlike ``==``). ``open``: new distinct values are
    remembered; ``closed``: the limit is reached but some values are popular, so they
    are still looked up; ``dead``: nearly every value was unique (per-node GPU UUIDs),
    so the path is always descended into.
    """

    __slots__ = ("path", "prefix", "table", "mode", "child_columns", "child_states", "rows")

    def __init__(self, path):
        self.path = path
        self.prefix = path + "." if path else ""
        self.table = {}
        self.mode = "open"
        self.child_columns = {}
        self.child_states = {}
        self.rows = None

    def reps(self):
        return self.table.values()

    def find(self, value, ignored):
        key = None
        if isinstance(value, list) and isinstance(value[0], dict):
            key = self._rows_key(value, ignored)
        if key is None:
            try:
                key = marshal.dumps(value)
            except ValueError:  # not plain data (a subclass): compare field by field
                return None
        rep = self.table.get(key)
        if rep is None and self.mode == "open":
            if len(self.table) < _HASH_LIMIT:
                rep = self.table[key] = [value, []]
            else:
                self._close()
        return rep

    def _rows_key(self, records, ignored):
        """A list of records with one key set (the GPU list): the key encodes each
        record's compared values only, so per-device UUIDs do not make every node
        unique. None when the list does not have that shape."""
        layout = self.rows
        if layout is None or layout[0] != len(records):
            layout = self.rows = self._layout(records, ignored)
        if layout is False:
            return None
        _count, width, kept, getter = layout
        try:
            rows = list(map(getter, records))
            if max(map(len, records)) != width or min(map(len, records)) != width:
                return None
            return b"rows" + marshal.dumps(tuple(row[:kept] for row in rows))
        except (KeyError, TypeError, ValueError):
            return None

    def _layout(self, records, ignored):
        keys = list(records[0])
        drop = [k for k in keys if ignored(f"{self.prefix}0.{k}")]
        for index in range(1, len(records)):
            if [k for k in keys if ignored(f"{self.prefix}{index}.{k}")] != drop:
                return False
        kept = [k for k in keys if k not in drop]
        if not kept or not drop:
            return False
        return (len(records), len(keys), len(kept), operator.itemgetter(*(kept + drop)))

    def _close(self):
        hits = sum(len(r[1]) for r in self.table.values())
        self.mode = "dead" if hits < 2 * len(self.table) else "closed"


class _Collector:
    """Column store: ``columns[field][key] = [value, direct_hosts, shared_host_lists]``.

    Hot path: a host whose sub-tree was seen before at that path costs one C-level
    encoding and a dict lookup; otherwise its children are bucketed through per-path
    column caches, so no field name is built twice.
    """

    def __init__(self, ignored):
        self.ignored = ignored
        self.columns = {}
        self.skipped = set()
        self._root = _PathState("")

    def column(self, field):
        """The column of a field, or False when the field is ignored."""
        column = self.columns.get(field)
        if column is None:
            if self.ignored(field):
                self.skipped.add(field)
                return False
            column = self.columns[field] = {}
        return column

    def add_host(self, facts, idx):
        if facts:
            self._add_container(self._root, facts, idx)

    def _add_container(self, state, value, idx):
        if state.mode != "dead":
            rep = state.find(value, self.ignored)
            if rep is not None:
                rep[1].append(idx)
                return
        self._descend(state, value, idx)

    def _descend(self, state, value, idx):
        columns = state.child_columns
        for key, child in value.items() if isinstance(value, dict) else enumerate(value):
            if isinstance(child, (dict, list, tuple)):
                if child:
                    sub = state.child_states.get(key)
                    if sub is None:
                        sub = state.child_states[key] = _PathState(state.prefix + str(key))
                    self._add_container(sub, child, idx)
                continue
            column = columns.get(key)
            if column is None:
                column = columns[key] = self.column(state.prefix + str(key))
            if column is False:
                continue
            bucket_key = ("\0bool", child) if child is True or child is False else child
            try:
                bucket = column.get(bucket_key)
            except TypeError:
                bucket_key = ("\0repr", repr(child))
                bucket = column.get(bucket_key)
            if bucket is None:
                column[bucket_key] = [child, [idx], []]
            else:
                bucket[1].append(idx)

    def finish(self):
        pending = [self._root]
        while pending:
            state = pending.pop()
            pending.extend(state.child_states.values())
            for value, members in state.reps():
                if members:
                    self._flatten_shared(state.path, value, members)
        return self.columns

    def _flatten_shared(self, path, value, members):
        if isinstance(value, (dict, list, tuple)):
            prefix = path + "." if path else ""
            for key, child in _children(value):
                self._flatten_shared(prefix + str(key), child, members)
            return
        column = self.column(path)
        if column is False:
            return
        key = _scalar_key(value)
        bucket = column.get(key)
        if bucket is None:
            column[key] = [value, [], [members]]
        else:
            bucket[2].append(members)


class _Candidate:
    """One distinct value of a field and the hosts holding it (``value`` may be null)."""

    __slots__ = ("value", "count", "_bucket", "_members")

    def __init__(self, value, count, bucket=None, members=None):
        self.value = value
        self.count = count
        self._bucket = bucket
        self._members = members

    def members(self):
        if self._members is None:
            direct, shared = self._bucket[1], self._bucket[2]
            if shared:
                merged = list(direct)
                for group in shared:
                    merged.extend(group)
                merged.sort()
                self._members = merged
            else:
                self._members = direct
        return self._members


def _candidates(column, compared):
    cands = []
    present = 0
    for bucket in column.values():
        count = len(bucket[1]) + sum(len(g) for g in bucket[2])
        present += count
        cands.append(_Candidate(bucket[0], count, bucket))
    if present < compared:
        cands.append(_Candidate(None, compared - present))
    return cands


def _missing_members(cands, compared):
    present = set()
    for cand in cands:
        if cand._bucket is not None:
            present.update(cand.members())
    return [i for i in range(compared) if i not in present]


def _members(cand, cands, compared):
    if cand._bucket is None and cand._members is None:
        cand._members = _missing_members(cands, compared)
    return cand.members()


def _majority(cands, compared, ref_idx):
    best = max(c.count for c in cands)
    tied = [c for c in cands if c.count == best]
    if len(tied) == 1:
        return tied[0], False
    for cand in tied:
        if ref_idx in _members(cand, cands, compared):
            return cand, True
    return min(tied, key=lambda c: _members(c, cands, compared)[0]), True


def _min_passes(value, floor_key):
    if value is None or isinstance(value, (dict, list, bool)):
        return False
    try:
        return version_key(value) >= floor_key
    except (TypeError, ValueError):
        return False


def _resolve_expected(expected, columns):
    """Map spec package names onto the names the nodes report (``typing_extensions``
    in a spec finds ``typing-extensions`` in the facts)."""
    result = {}
    observed = {}
    for field in columns:
        if field.startswith(PACKAGE_PREFIX):
            observed.setdefault(canonical_name(field[len(PACKAGE_PREFIX):]), field)
    for field, value in (expected or {}).items():
        try:
            exp = coerce_expectation(value)
        except SpecError as exc:
            raise RuleError(f"expected value for {field!r}: {exc}") from None
        if field not in columns and field.startswith(PACKAGE_PREFIX):
            field = observed.get(canonical_name(field[len(PACKAGE_PREFIX):]), field)
        result[field] = exp
    return result


def _entry(field, expected, source, rule, hosts, tie=False):
    return {"field": field, "expected": expected, "source": source, "rule": rule, "tie": tie, "hosts": hosts}


class _FieldCheck:
    """Everything the engine concludes about one field."""

    def __init__(self, field, cands, compared, ref_idx, rule, expectation, names):
        self.field = field
        self.entries = []
        self.tolerated = {}
        majority, tie = _majority(cands, compared, ref_idx)
        self.baseline = majority.value
        self.rule = rule[0]
        if rule[0] == "info":
            return
        failing = set()
        if expectation is not None:
            failing = {id(c) for c in cands if not expectation.satisfied(c.value)}
            self._add(expectation.display, SOURCE_SPEC, "constraint", [c for c in cands if id(c) in failing], cands, compared, names)
        rest = [c for c in cands if id(c) not in failing and c is not majority]
        if rule[0] == "min":
            self._check_min(rule[1], majority if id(majority) not in failing else None, rest, cands, compared, names)
        else:
            self._add(majority.value, SOURCE_MAJORITY, "exact", rest, cands, compared, names, tie)

    def _check_min(self, floor, majority, rest, cands, compared, names):
        if floor is not None:
            floor_value = floor
        else:
            floor_value = majority.value if majority is not None else self.baseline
        low = []
        if floor_value is not None:
            floor_key = version_key(floor_value)
            low = [c for c in rest if not _min_passes(c.value, floor_key)]
            if floor is not None and majority is not None and not _min_passes(majority.value, floor_key):
                low.insert(0, majority)
        source = SOURCE_SPEC if floor is not None else SOURCE_MAJORITY
        self._add(">=" + str(floor_value), source, "min_version", low, cands, compared, names)
        for cand in rest:
            if cand not in low:
                for idx in _members(cand, cands, compared):
                    self.tolerated[names[idx]] = cand.value

    def _add(self, expected, source, rule, bad, cands, compared, names, tie=False):
        if not bad:
            return
        pairs = []
        for cand in bad:
            pairs.extend((idx, cand.value) for idx in _members(cand, cands, compared))
        pairs.sort(key=lambda p: p[0])
        self.entries.append(_entry(self.field, expected, source, rule, {names[i]: v for i, v in pairs}, tie))


def _timestamp(generated_at):
    if generated_at is None:
        moment = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    elif isinstance(generated_at, (int, float)):
        moment = datetime.datetime.fromtimestamp(generated_at, datetime.timezone.utc)
    else:
        moment = datetime.datetime.fromisoformat(str(generated_at).replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.timezone.utc)
    text = moment.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    return text, moment.timestamp()


def _split_hosts(facts_by_host, failed):
    hosts, compared, facts, unreachable = [], [], [], []
    for host, host_facts in facts_by_host.items():
        host = str(host)
        hosts.append(host)
        if host in failed:
            continue
        if host_facts is None:
            unreachable.append(host)
        elif not isinstance(host_facts, dict):
            raise RuleError(f"facts of host {host!r} must be a mapping or null, got {type(host_facts).__name__}")
        else:
            compared.append(host)
            facts.append(host_facts)
    for host in failed:
        if host not in facts_by_host:
            hosts.append(str(host))
    return hosts, compared, facts, unreachable


def _collect(facts, rules):
    collector = _Collector(rules.ignored)
    for idx, host_facts in enumerate(facts):
        collector.add_host(host_facts, idx)
    return collector.finish(), collector.skipped


def _check_fields(columns, expected, compared, ref_idx, rules):
    fields = set(columns) | {f for f in expected if not rules.ignored(f)}
    checks = []
    for field in sorted(fields, key=natural_key):
        cands = _candidates(columns.get(field, {}), len(compared))
        if not cands:
            continue
        checks.append(_FieldCheck(field, cands, len(compared), ref_idx, rules.rule(field), expected.get(field), compared))
    return checks


def _per_host(hosts, unreachable, failed, drift):
    counts = {}
    for entry in drift:
        for host in entry["hosts"]:
            counts[host] = counts.get(host, 0) + 1
    unreachable = set(unreachable)
    per_host = {}
    for host in hosts:
        if host in failed:
            status = "failed"
        elif host in unreachable:
            status = "unreachable"
        else:
            status = "drift" if counts.get(host) else "ok"
        per_host[host] = {"status": status, "drift_fields": counts.get(host, 0)}
    return per_host


def _per_host_facts(facts):
    """Split each host's facts into what is compared across hosts and what is read per host."""
    compared, own = [], []
    for host_facts in facts:
        env = host_facts.get("env")
        if isinstance(env, dict) and any(key in env for key in PER_HOST_FACTS):
            own.append({key: env.get(key) for key in PER_HOST_FACTS})
            host_facts = dict(host_facts, env={k: v for k, v in env.items() if k not in PER_HOST_FACTS})
        else:
            own.append({})
        compared.append(host_facts)
    return compared, own


def _provenance(checks, columns, compared):
    """``{field: [{value, hosts}]}`` for the fields whose rule is ``info`` (the provenance fields
    unless provenance_is_drift): information, not drift, most common value first."""
    found = {}
    for field in (c.field for c in checks if c.rule == "info"):
        cands = _candidates(columns[field], len(compared))
        found[field] = [{"value": c.value, "hosts": [compared[i] for i in _members(c, cands, len(compared))]}
                        for c in sorted(cands, key=lambda c: -c.count)]
    return found


def _build_entries(own, compared, reported, compare_builds):
    """Drift against what was built on each node (source ``build``), one entry per field and
    built value; a host already reported for a field (majority or spec) is not repeated."""
    groups = {}
    unrecorded = []
    for host, host_own in zip(compared, own):
        changes = host_own.get("build_changes")
        if not isinstance(changes, dict):
            unrecorded.append(host)
            continue
        for name, change in sorted(changes.items()):
            for field, built, live in _build_change(name, change or {}, compare_builds):
                if (field, host) not in reported:
                    groups.setdefault((field, _scalar_key(built)), (built, {}))[1][host] = live
    entries = [_entry(field, built, SOURCE_BUILD, "build", hosts)
               for (field, _key), (built, hosts) in sorted(groups.items(), key=lambda kv: (natural_key(kv[0][0]), repr(kv[0][1])))]
    return entries, unrecorded


def _build_change(name, change, compare_builds):
    was, now = change.get("built"), change.get("live")
    version_was = (was or {}).get("version")
    version_now = (now or {}).get("version")
    if was is None or now is None or version_was != version_now:
        return [(PACKAGE_PREFIX + name, version_was, version_now)]
    if compare_builds and was.get("build") != now.get("build"):
        return [("env.builds." + name, was.get("build"), now.get("build"))]
    return []


def _mix_warnings(own, compared, facts):
    grouped = {}
    seen = {}  # identical environments are judged once (marshal: exact and C-fast, as in _PathState)
    for host, host_own, host_facts in zip(compared, own, facts):
        env = host_facts.get("env") if isinstance(host_facts.get("env"), dict) else {}
        inputs = (env.get("builds"), env.get("packages"), host_own.get("duplicates"))
        try:
            key = marshal.dumps(inputs)
        except ValueError:
            key = None
        found = seen.get(key) if key is not None else None
        if found is None:
            found = pipmix.live_warnings(*inputs)
            if key is not None:
                seen[key] = found
        for warning in found:
            key = (warning["package"], warning["kind"], warning["detail"])
            grouped.setdefault(key, dict(warning, hosts=[]))["hosts"].append(host)
    return [grouped[key] for key in sorted(grouped)]


def build_report(facts_by_host, expected=None, rules=None, ignore=None, use_defaults=True,
                 reference_host=None, failed=None, generated_at=None, previous=None, spec=None,
                 compare_builds=True, provenance_is_drift=False):
    """The audit report (DESIGN "Audit report contract") as a plain dict.

    facts_by_host: ordered ``{host: facts dict or None}``; None means unreachable.
    expected: ``{field: value | constraint | Expectation}`` from the spec.
    failed: ``{host: message}`` for hosts whose probe ran but failed.
    previous: an earlier report; adds ``changed_since``.
    spec: free-form description of the spec (file, digest) copied into the report.
    compare_builds: compare build strings (``env.builds.*``, the fingerprint, build-only
    changes since the build); off for fleets of mixed architectures.
    provenance_is_drift: compare ``PROVENANCE_FIELDS`` like any field instead of only
    reporting them under ``provenance``.
    """
    failed = {str(h): str(m) for h, m in (failed or {}).items()}
    if not isinstance(rules, Rules):
        rules = dict(rules or {})
        for pattern in () if provenance_is_drift else PROVENANCE_FIELDS:
            rules.setdefault(pattern, "info")
        ignore = list(ignore or ()) + ([] if compare_builds else list(BUILD_STRING_FIELDS))
        rules = Rules(rules, ignore, use_defaults)
    hosts, compared, facts, unreachable = _split_hosts(facts_by_host, failed)
    facts, own = _per_host_facts(facts)
    columns, skipped = _collect(facts, rules)
    expected = _resolve_expected(expected, columns)
    ref = reference_host if reference_host in compared else (compared[0] if compared else None)
    checks = _check_fields(columns, expected, compared, compared.index(ref) if ref else -1, rules) if compared else []
    drift = [e for check in checks for e in check.entries] + cuda_driver.entries(dict(zip(compared, facts)), rules.ignored)
    reported = {(e["field"], h) for e in drift for h in e["hosts"]}
    build_drift, unrecorded = _build_entries(own, compared, reported, compare_builds)
    drift.extend(build_drift)
    per_host = _per_host(hosts, unreachable, failed, drift)
    text, epoch = _timestamp(generated_at)
    consistent = bool(compared) and not drift and not failed
    drifted_hosts = sum(1 for h in per_host.values() if h["status"] == "drift")
    report = {
        "report_version": REPORT_VERSION,
        "generated_at": text,
        "timestamp": epoch,
        "consistent": consistent,
        "passed": consistent and not unreachable,
        "reference_host": ref,
        "hosts": hosts,
        "unreachable": unreachable,
        "failed": failed,
        "summary": {
            "hosts": len(hosts),
            "compared": len(compared),
            "unreachable": len(unreachable),
            "failed": len(failed),
            "drifted_hosts": drifted_hosts,
            "consistent_hosts": len(compared) - drifted_hosts,
            "fields_checked": len(checks),
            "drifted_fields": len({e["field"] for e in drift}),
            "drift_entries": len(drift),
            "spec_fields": len(expected),
            "ignored_fields": len(skipped | {f for f in expected if rules.ignored(f)}),
            "build_entries": len(build_drift),
        },
        "drift": drift,
        "per_host": per_host,
        "baseline": {c.field: c.baseline for c in checks},
        "tolerated": {c.field: c.tolerated for c in checks if c.tolerated},
        "spec": spec,
        "provenance": _provenance(checks, columns, compared),
        "build": {"compare_builds": bool(compare_builds), "unrecorded": unrecorded,
                  "entries": len(build_drift)},
        "warnings": _mix_warnings(own, compared, facts),
    }
    report["changed_since"] = changes_since(previous, report) if previous else None
    return report


def host_values(report):
    """``{host: {field: value}}`` overrides of the baseline (drift and tolerated values)."""
    overrides = {}
    for entry in report.get("drift") or ():
        for host, value in entry["hosts"].items():
            overrides.setdefault(host, {})[entry["field"]] = value
    for field, hosts in (report.get("tolerated") or {}).items():
        for host, value in hosts.items():
            overrides.setdefault(host, {})[field] = value
    return overrides


def _compared_hosts(report):
    skip = set(report.get("unreachable") or ()) | set(report.get("failed") or ())
    return [h for h in report.get("hosts") or () if h not in skip]


def changes_since(previous, report):
    """What changed since an earlier report: hosts that came or went, reachability,
    and per field ``{field, before, after, hosts}`` groups, reconstructed from each
    report's baseline plus its per-host deviations."""
    if not isinstance(previous, dict) or not isinstance(previous.get("baseline"), dict):
        return None
    before_hosts, after_hosts = set(previous.get("hosts") or ()), set(report["hosts"])
    before_down = set(previous.get("unreachable") or ()) | set(previous.get("failed") or ())
    after_down = set(report["unreachable"]) | set(report["failed"])
    common = [h for h in _compared_hosts(report) if h in before_hosts and h not in before_down]
    groups = _value_changes(previous, report, common)
    changes = [
        {"field": field, "before": before, "after": after, "hosts": hosts}
        for (field, _b, _a), (before, after, hosts) in sorted(groups.items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1], kv[0][2]))
    ]
    result = {
        "previous_generated_at": previous.get("generated_at"),
        "hosts_added": [h for h in report["hosts"] if h not in before_hosts],
        "hosts_removed": [h for h in previous.get("hosts") or () if h not in after_hosts],
        "became_unreachable": [h for h in report["hosts"] if h in report["unreachable"] and h in before_hosts and h not in before_down],
        "became_failed": {h: report["failed"][h] for h in report["hosts"]
                          if h in report["failed"] and h in before_hosts and h not in before_down},
        "became_reachable": [h for h in report["hosts"] if h in before_down and h not in after_down],
        "changes": changes,
    }
    result["changed"] = any(result[k] for k in ("hosts_added", "hosts_removed", "became_unreachable", "became_failed",
                                                "became_reachable", "changes"))
    return result


def _same(before, after):
    return _scalar_key(before) == _scalar_key(after)


def _value_changes(previous, report, common):
    before_base, after_base = previous["baseline"], report["baseline"]
    before_over, after_over = host_values(previous), host_values(report)
    order = {h: i for i, h in enumerate(common)}
    groups = {}

    def note(field, host, before, after):
        if _same(before, after):
            return
        key = (field, repr(before), repr(after))
        groups.setdefault(key, (before, after, []))[2].append(host)

    for field in set(before_base) | set(after_base):
        b, a = before_base.get(field), after_base.get(field)
        if _same(b, a):
            continue
        for host in common:
            if field not in before_over.get(host, ()) and field not in after_over.get(host, ()):
                note(field, host, b, a)
    for host in common:
        fields = set(before_over.get(host, ())) | set(after_over.get(host, ()))
        for field in fields:
            b = before_over.get(host, {}).get(field, before_base.get(field))
            a = after_over.get(host, {}).get(field, after_base.get(field))
            note(field, host, b, a)
    for _before, _after, hosts in groups.values():
        hosts.sort(key=order.get)
    return groups


__all__ = [
    "DEFAULT_IGNORE", "Expectation", "PROVENANCE_FIELDS", "REPORT_VERSION", "RuleError", "Rules", "SOURCE_BUILD",
    "SOURCE_MAJORITY", "SOURCE_SPEC",
    "build_report", "changes_since", "host_values", "natural_key",
]
