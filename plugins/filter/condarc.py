# Copyright: torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller side of module_utils/_conda/condarc: PREFIX/.condarc exactly as conda_config would write
it, so a role can tell from a digest that the module has nothing to do.

Documentation lives beside this file, one YAML file per filter.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda.condarc import (
    SETTINGS_SPEC,
    desired_settings,
    parse_conda_version,
    render_condarc,
)
from ansible_collections.torchfleet.cluster.plugins.plugin_utils.plain import plain


def condarc_text(options, conda_version):
    """The file conda_config writes for ``options`` (its settings options) and this conda version."""
    checked = ArgumentSpecValidator(SETTINGS_SPEC).validate(plain(options))
    if checked.error_messages:
        raise AnsibleFilterError("condarc_text: the options do not fit conda_config's: %s" % "; ".join(checked.error_messages))
    text = str(conda_version)
    version = parse_conda_version(text if text.startswith("conda") else "conda " + text)
    if version is None:
        raise AnsibleFilterError("condarc_text: %r is not a conda version such as 25.5.1" % text)
    try:
        return render_condarc(desired_settings(checked.validated_parameters, version))
    except ValueError as exc:
        raise AnsibleFilterError("condarc_text: %s" % exc) from exc


class FilterModule:
    def filters(self):
        return {"condarc_text": condarc_text}
