"""Configuration: the stand-in's baked settings and conda's .condarc search path and parameters.

Only the parameters the collection reads or writes are known; any other key is rejected
as "unknown parameter", exactly as real conda rejects a key it does not know.
"""

import json
import os
import sys
from pathlib import Path

from conda import __version__
from conda._standin.errors import (
    ArgumentError, CondaError, CondaKeyError, ConfigurationLoadError, FileMark, MultipleKeysError, ParseError, YamlError,
)

ROOT_PREFIX = Path(sys.prefix)
STANDIN_DIR = ROOT_PREFIX / "etc" / "fakeconda"
STANDIN_FILE = STANDIN_DIR / "settings.json"
DEFAULT_WHEELHOUSE = "/srv/torchfleet-wheelhouse"


def standin_settings():
    """Settings baked into the prefix by the installer (wheelhouse location and versions)."""
    try:
        data = json.loads(STANDIN_FILE.read_text())
    except (OSError, ValueError):
        data = {}
    data.setdefault("conda_version", __version__)
    data.setdefault("wheelhouse", DEFAULT_WHEELHOUSE)
    if os.environ.get("FAKECONDA_WHEELHOUSE"):
        data["wheelhouse"] = os.environ["FAKECONDA_WHEELHOUSE"]
    return data


def wheelhouse():
    """Directory the stand-in installs every package from."""
    return Path(standin_settings()["wheelhouse"])


# A node where this file exists has a package index configured for pip (its /etc/pip.conf names
# a mirror): the pip section then runs pip as real conda does, with the node's pip configuration
# and the caller's PIP_* variables, instead of the offline wheelhouse.
NODE_PIP_MARKER = Path("/etc/fakeconda/node-pip-config")


def node_pip_config():
    """True when the pip section should use the node's own pip configuration (see NODE_PIP_MARKER)."""
    return NODE_PIP_MARKER.exists()


def offline_channel_root():
    """Where channel names resolve to: a file URL beside the wheelhouse, never a real host."""
    return f"file://{wheelhouse()}/channels"


# name: (type, default, aliases). Types: bool, bool?, str, str?, int, seq, map, and
# choice:<a>|<b>. Defaults that depend on the install are filled in by parameter_default().
PARAMETERS = {
    "add_pip_as_python_dependency": ("bool", True, ()),
    "allow_softlinks": ("bool", False, ()),
    "always_copy": ("bool", False, ("copy",)),
    "always_yes": ("bool?", None, ("yes",)),
    "auto_activate": ("bool", True, ("auto_activate_base",)),
    "auto_stack": ("int", 0, ()),
    "auto_update_conda": ("bool", True, ("self_update",)),
    "changeps1": ("bool", True, ()),
    "channel_alias": ("str", None, ()),
    "channel_priority": ("choice:flexible|strict|disabled", "flexible", ()),
    "channels": ("seq", (), ()),
    "create_default_packages": ("seq", (), ()),
    "custom_channels": ("map", {}, ()),
    "default_activation_env": ("str", "base", ()),
    "default_channels": ("seq", None, ()),
    "denylist_channels": ("seq", (), ()),
    "allowlist_channels": ("seq", (), ()),
    "env_prompt": ("str", "({default_env}) ", ()),
    "envs_dirs": ("seq", (), ("envs_path",)),
    "json": ("bool", False, ()),
    "notify_outdated_conda": ("bool", True, ()),
    "offline": ("bool", False, ()),
    "override_channels_enabled": ("bool", True, ()),
    "pip_interop_enabled": ("bool", False, ()),
    "pkgs_dirs": ("seq", (), ()),
    "proxy_servers": ("map", {}, ()),
    "quiet": ("bool", False, ()),
    "register_envs": ("bool", True, ()),
    "report_errors": ("bool?", None, ()),
    "show_channel_urls": ("bool?", None, ()),
    "solver": ("str", "libmamba", ()),
    "ssl_verify": ("str", True, ("verify_ssl",)),
    "use_only_tar_bz2": ("bool", False, ()),
    "verbosity": ("int", 0, ("verbose",)),
}
PLUGIN_PARAMETERS = {
    "auto_accept_tos": ("bool", False, ()),
}


def alias_map():
    """Alias -> canonical parameter name."""
    return {alias: name for name, spec in PARAMETERS.items() for alias in spec[2]}


def canonical_name(key):
    """The canonical name of key (itself when it is not an alias)."""
    return alias_map().get(key, key)


def is_known(key):
    """True when key (possibly dotted, possibly an alias) is a parameter conda knows."""
    first, *rest = key.split(".")
    if first == "plugins":
        return len(rest) == 1 and rest[0] in PLUGIN_PARAMETERS
    return first in PARAMETERS or first in alias_map()


def parameter_type(key):
    """Type string of a canonical top-level parameter or a plugins.* parameter."""
    first, *rest = key.split(".")
    if first == "plugins" and rest:
        return PLUGIN_PARAMETERS[rest[0]][0]
    return PARAMETERS[canonical_name(first)][0]


def parameter_default(name):
    """Default value of a canonical parameter on this install."""
    root = offline_channel_root()
    if name == "channel_alias":
        return root
    if name == "default_channels":
        return [f"{root}/pkgs/main", f"{root}/pkgs/r"]
    default = PARAMETERS[name][1]
    return list(default) if isinstance(default, tuple) else default


_TRUE = ("true", "yes", "on", "y", "1")
_FALSE = ("false", "no", "off", "n", "0")


def boolify(value):
    """conda.auxlib.type_coercion.boolify for strings from the command line."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise CondaError(f"The value '{value}' cannot be boolified.")


def typify(key, value):
    """Convert a --set value to the parameter's type, as conda's typify_parameter."""
    kind = parameter_type(key)
    if kind == "bool":
        return boolify(value)
    if kind == "bool?":
        return None if str(value).lower() in ("none", "null") else boolify(value)
    if kind == "int":
        try:
            return int(value)
        except ValueError as exc:
            raise CondaError(f"The value '{value}' cannot be converted to int.") from exc
    if kind.startswith("choice:"):
        choices = kind.split(":", 1)[1].split("|")
        if str(value) not in choices:
            raise CondaError(f"Parameter {key} = {value!r} declared in --set parameter is invalid.\nValid values: {', '.join(choices)}")
        return str(value)
    if kind == "str" and key == "ssl_verify" and str(value).lower() in _TRUE + _FALSE:
        return boolify(value)
    return value


def search_path():
    """conda's condarc search path (the parts that exist on a Linux node), lowest priority first."""
    home = Path(os.path.expanduser("~"))
    xdg = os.environ.get("XDG_CONFIG_HOME", str(home / ".config"))
    paths = [
        Path("/etc/conda/.condarc"),
        Path("/etc/conda/condarc"),
        Path("/var/lib/conda/.condarc"),
        Path("/var/lib/conda/condarc"),
        ROOT_PREFIX / ".condarc",
        ROOT_PREFIX / "condarc",
        Path(xdg) / "conda" / ".condarc",
        Path(xdg) / "conda" / "condarc",
        home / ".config" / "conda" / ".condarc",
        home / ".config" / "conda" / "condarc",
        home / ".conda" / ".condarc",
        home / ".conda" / "condarc",
        home / ".condarc",
    ]
    if os.environ.get("CONDARC"):
        paths.append(Path(os.environ["CONDARC"]))
    return list(dict.fromkeys(paths))


def sys_rc_path():
    """The system (root prefix) condarc that `conda config --system` writes."""
    return ROOT_PREFIX / ".condarc"


def user_rc_path():
    """The user condarc that `conda config` writes by default."""
    return Path(os.path.expanduser("~")) / ".condarc"


def _file_mark(mark):
    return None if mark is None else FileMark(mark.name, mark.line, mark.column)


def yaml_load_error(path, exc):
    """The error conda 25.11's YamlRawParameter.make_raw_parameters_from_file ends with for a
    condarc PyYAML cannot load: ScannerError and ReaderError become ConfigurationLoadError,
    any other (ParserError, ComposerError, ...) escapes as ruamel's own exception."""
    import yaml  # pylint: disable=import-outside-toplevel  # only commands that read YAML need it

    if isinstance(exc, yaml.scanner.ScannerError):
        return ConfigurationLoadError(path, "  reason: invalid yaml at line %(line)s, column %(column)s",
                                      line=exc.problem_mark.line, column=exc.problem_mark.column)
    if isinstance(exc, yaml.reader.ReaderError):
        return ConfigurationLoadError(path, "  reason: invalid yaml at position %(position)s", position=exc.position)
    if isinstance(exc, yaml.MarkedYAMLError):
        module = "ruamel.yaml." + type(exc).__module__.rsplit(".", 1)[-1]
        return YamlError(type(exc).__name__, module, exc.context, _file_mark(exc.context_mark), exc.problem,
                         _file_mark(exc.problem_mark))
    return ParseError(f"Unable to parse YAML file {path}\n{exc}")


def load_yaml_file(path):
    """Parse a condarc; an empty file is an empty mapping."""
    import yaml  # pylint: disable=import-outside-toplevel  # only commands that read YAML need it

    try:
        with open(path, encoding="utf-8") as stream:  # a stream: the parser's marks then name the file
            data = yaml.safe_load(stream)
    except FileNotFoundError:
        return {}
    except yaml.YAMLError as exc:
        raise yaml_load_error(path, exc) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParseError(f"Unable to parse YAML file {path}\nTop-level content must be a mapping.")
    return data


def check_aliases(source, raw):
    """Raise MultipleKeysError when one file declares a parameter under two names."""
    for name, (_kind, _default, aliases) in PARAMETERS.items():
        present = [key for key in raw if key in (name, *aliases)]
        if len(present) > 1:
            raise MultipleKeysError(source, present, name)


class Context:
    """Merged configuration of every condarc on the search path (later files win)."""

    def __init__(self, paths=None):
        self.sources = {}
        for path in paths if paths is not None else search_path():
            if path.is_file():
                raw = load_yaml_file(path)
                check_aliases(path, raw)
                self.sources[str(path)] = {canonical_name(k): v for k, v in raw.items()}
        self.values = {}
        for raw in self.sources.values():
            for key, value in raw.items():
                if isinstance(value, list) and isinstance(self.values.get(key), list):
                    value = value + [item for item in self.values[key] if item not in value]
                self.values[key] = value

    def get(self, name):
        """Value of a canonical parameter, falling back to its default."""
        if name in self.values:
            return self.values[name]
        return parameter_default(name)

    def get_plugin(self, name):
        """Value of a plugins.* parameter."""
        plugins = self.values.get("plugins") or {}
        return plugins.get(name, PLUGIN_PARAMETERS[name][1])

    @property
    def channels(self):
        """Configured channels; ["defaults"] when none are."""
        return list(self.values.get("channels") or ["defaults"])

    @property
    def config_files(self):
        """The condarc files that were read."""
        return list(self.sources)


def validate_show_keys(keys):
    """`conda config --show KEY` with an unknown KEY is an ArgumentError (exit 2)."""
    unknown = sorted(k for k in keys if not is_known(k))
    if unknown:
        raise ArgumentError("Invalid configuration parameters: " + "".join(f"\n  - {k}" for k in unknown))


def require_known(key):
    """`conda config --set` refuses keys it does not know."""
    if not is_known(key):
        raise CondaKeyError(key, "unknown parameter")
