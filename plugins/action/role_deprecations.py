# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Show a deprecation warning for each deprecated role variable that a play sets, and for a deprecated entry point.

Documentation: plugins/modules/role_deprecations.py.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain

COLLECTION = "torchfleet.cluster"
ARGUMENT_SPEC = {
    "role": {"type": "str", "required": True},
    "variables": {"type": "dict", "default": {}},
    "entry_points": {"type": "dict", "default": {}},
    "version": {"type": "str", "required": True},
}

display = Display()


def deprecation_message(role, name, now, kind="variable"):
    return "%s: the %s %s is deprecated and %s" % (role, kind, name, now)


class ActionModule(ActionBase):
    """Warn once per deprecated entry point or variable; never contacts a node."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars or {})
        _validated, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        named = [("entry point", name, now) for name, now in sorted(plain(args["entry_points"]).items())]
        named += [("variable", name, now) for name, now in sorted(plain(args["variables"]).items())]
        for kind, name, now in named:
            display.deprecated(deprecation_message(args["role"], name, now, kind), version=args["version"],
                               collection_name=COLLECTION)
        result.update(changed=False, deprecated=[name for kind, name, now in named])
        return result
