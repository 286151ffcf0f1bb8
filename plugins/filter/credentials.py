# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller side of module_utils/_conda/credentials: one rule for what counts as a credential,
whether a role checks its variables or a module masks its output.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import credentials
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain


def has_credentials(value):
    """True when ``value`` (settings: mappings, lists, scalars) carries a credential."""
    return credentials.has_credentials(plain(value))


class FilterModule:
    def filters(self):
        return {"has_credentials": has_credentials}
