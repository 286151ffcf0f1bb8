# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A directory of reports as the audit and the fabric check keep it: the latest file of each format,
replaced atomically (node_exporter and CI never read half a report), timestamped JSON copies named
PREFIX-YYYYMMDDTHHMMSSZ[.N].json, the oldest pruned, and the previous latest JSON read back."""

from __future__ import annotations

import json
import os
import re

from ansible.errors import AnsibleActionFail

from ansible_collections.torchfleet.cluster.plugins.module_utils._files.atomic_file import replace_file


def atomic_write(directory, name, text):
    """Readers never see half a report."""
    return replace_file(os.path.join(directory, name), text)


class ReportDirectory:
    """``files``: (kind, name, render) per format, the JSON one of kind ``json``; ``prefix`` names the copies."""

    def __init__(self, report_dir, files, prefix, keep=10, textfile=None):
        self.report_dir = report_dir
        self.files = files
        self.prefix = prefix
        self.keep = keep
        self.textfile = textfile  # (directory, name, render) of an extra copy, or None
        self.generation = re.compile(r"^%s-(\d{8}T\d{6}Z)(?:\.(\d+))?\.json$" % re.escape(prefix))
        self.warnings = []

    def latest_json(self):
        return os.path.join(self.report_dir, next(name for kind, name, _render in self.files if kind == "json"))

    def previous(self):
        """The last latest JSON, or None (missing or unreadable: a warning, never a failure)."""
        path = self.latest_json()
        if not os.path.exists(path):
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError) as exc:
            self.warnings.append(f"ignoring the previous report {path}: {exc}")
            return None
        return data if isinstance(data, dict) else None

    def write(self, report):
        try:
            os.makedirs(self.report_dir, mode=0o755, exist_ok=True)
            written = {kind: atomic_write(self.report_dir, name, render(report)) for kind, name, render in self.files}
            written["generation"] = self._write_generation(written["json"], report)
            written["pruned"] = self._prune()
            if self.textfile:
                directory, name, render = self.textfile
                written["textfile"] = atomic_write(directory, name, render(report))
        except OSError as exc:
            raise AnsibleActionFail(f"{self.prefix}: cannot write the reports under {self.report_dir}: {exc}") from None
        return written

    def _write_generation(self, latest, report):
        stamp = report["generated_at"].replace("-", "").replace(":", "")
        name, counter = f"{self.prefix}-{stamp}.json", 1
        while os.path.exists(os.path.join(self.report_dir, name)):
            counter += 1
            name = f"{self.prefix}-{stamp}.{counter}.json"
        with open(latest, encoding="utf-8") as handle:
            return atomic_write(self.report_dir, name, handle.read())

    def generations(self):
        """Timestamped JSON copies, oldest first."""
        found = []
        for name in os.listdir(self.report_dir):
            match = self.generation.match(name)
            if match:
                found.append((match.group(1), int(match.group(2) or 1), name))
        return [os.path.join(self.report_dir, name) for _s, _c, name in sorted(found)]

    def _prune(self):
        if self.keep <= 0:
            return []
        old = self.generations()[:-self.keep]
        for path in old:
            os.unlink(path)
        return old
