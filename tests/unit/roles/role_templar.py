# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rendering a role's templates with Ansible's own templar, under ansible-test and plain pytest."""

from __future__ import annotations

import sys

from ansible.plugins.loader import init_plugin_loader
from ansible.utils.collection_loader import AnsibleCollectionConfig


def load_plugins():
    # ansible-test installs Ansible's collection finder before any import. Under plain pytest the
    # collection may already be imported as an ordinary namespace package, which that finder cannot
    # extend (ansible.builtin filters would not load); let the finder import it afresh.
    if AnsibleCollectionConfig.collection_finder is None:
        for name in [m for m in sys.modules if m == "ansible_collections" or m.startswith("ansible_collections.")]:
            del sys.modules[name]
    init_plugin_loader()
