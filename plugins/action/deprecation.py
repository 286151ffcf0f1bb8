# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A deprecation warning from a role: the entry point or variable it names will go in a later release.

Documentation: plugins/modules/deprecation.py.
"""

from __future__ import annotations

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

COLLECTION = "torchfleet.cluster"
ARGUMENT_SPEC = {
    "msg": {"type": "str", "required": True},
    "version": {"type": "str", "required": True},
}

display = Display()


class ActionModule(ActionBase):
    """Say what is deprecated, once per task, and change nothing."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars or {})
        _validated, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        display.deprecated(args["msg"], version=args["version"], collection_name=COLLECTION)
        result.update(changed=False, msg=args["msg"])
        return result
