# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When the miniconda role skips conda_config: only where the probe's report of PREFIX/.condarc is
exactly the file the module would leave (digest, owner, group, mode) and nothing else needs the
module. Each case evaluates the role's own _miniconda_condarc_unchanged with Ansible's templar."""

from __future__ import annotations

import hashlib
import os

import pytest

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.torchfleet.cluster.plugins.filter.condarc import condarc_text
from ansible_collections.torchfleet.cluster.tests.unit.roles.role_templar import load_plugins

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "roles", "miniconda")
INSTALLED = "25.11.1"
# The defaults' settings options, as _miniconda_condarc_options passes them to the module.
DEFAULT_OPTIONS = {"auto_activate": False, "channels": ["conda-forge"], "channel_priority": "strict",
                   "channel_alias": None, "default_channels": None, "custom_channels": None,
                   "always_yes": True, "notify_outdated_conda": False, "settings": {}}
PROXY = {"proxy_servers": {"https": "http://u:secret@proxy:3128"}}


@pytest.fixture(autouse=True, scope="module")
def plugins():
    load_plugins()


def report(owner="root:root:644", options=None, version=INSTALLED, others=False):
    """What the probe reports of a regular .condarc that conda_config wrote with these options."""
    digest = hashlib.sha256(condarc_text(options or DEFAULT_OPTIONS, version).encode()).hexdigest()
    user, group, mode = owner.split(":")
    return {"owner": user, "group": group, "mode": mode, "sha256": digest}, others


def unchanged(variables, probed):
    condarc, others = probed
    loader = DataLoader()
    scope = dict(loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml"), trusted_as_template=True))
    scope.update(loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    scope["_miniconda_plan"] = {"needs_install": False, "installed": INSTALLED, "requested": INSTALLED, "condarc": condarc,
                                "other_condarc": others}
    scope.update(variables)
    return Templar(loader=loader, variables=scope).template(trust_as_template("{{ _miniconda_condarc_unchanged }}"))


CASES = [
    # id, variables, the probe's report, whether the module is skipped
    ("as written", {}, report(), True),
    ("channels changed since", {"miniconda_channels": ["defaults", "conda-forge"], "miniconda_accept_tos": True},
     report(), False),
    ("edited on the node", {}, report(options=dict(DEFAULT_OPTIONS, settings={"ssl_verify": False})), False),
    ("written for another conda", {}, report(version="25.5.0"), False),
    ("mode changed", {}, report(owner="root:root:600"), False),
    ("owner changed", {}, report(owner="conda:root:644"), False),
    ("narrower mode asked", {"miniconda_condarc_mode": "0640"}, report(), False),
    ("narrower mode in place", {"miniconda_condarc_mode": "0640"}, report(owner="root:root:640"), True),
    ("mode as a YAML integer", {"miniconda_condarc_mode": 0o644}, report(), True),
    ("symbolic mode", {"miniconda_condarc_mode": "u=rw,go=r"}, report(), False),
    ("another system-wide file", {}, report(others=True), False),
    ("no file", {}, (None, False), False),
    # The file as written, credentials included: only the credentials rule keeps the module running.
    ("credentials", {"miniconda_condarc_extra": PROXY, "miniconda_condarc_mode": "0640"},
     report(owner="root:root:640", options=dict(DEFAULT_OPTIONS, settings=PROXY)), False),
    ("settings without credentials", {"miniconda_condarc_extra": {"ssl_verify": False}},
     report(options=dict(DEFAULT_OPTIONS, settings={"ssl_verify": False})), True),
]


@pytest.mark.parametrize("dummy, variables, condarc, expected", CASES, ids=[case[0] for case in CASES])
def test_the_module_is_skipped_only_for_the_file_it_would_write(dummy, variables, condarc, expected):
    assert unchanged(variables, condarc) is expected


def test_a_node_that_needs_an_install_without_a_known_version_never_skips():
    loader = DataLoader()
    scope = dict(loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml"), trusted_as_template=True))
    scope.update(loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    scope["_miniconda_plan"] = {"needs_install": True, "installed": "", "requested": "", "condarc": report()[0],
                                "other_condarc": False}
    assert Templar(loader=loader, variables=scope).template(trust_as_template("{{ _miniconda_condarc_unchanged }}")) is False
