"""`conda config`: --show/--get/--set/--add/--append/--prepend/--remove/--remove-key on one condarc."""

import sys
from pathlib import Path

from conda._standin import prefixes, settings
from conda._standin.errors import CondaError, CondaKeyError, CondaValueError
from conda._standin.output import json_out, json_success


def add_parser(subparsers, common):
    """Register `conda config`."""
    parser = subparsers.add_parser("config", parents=[common], help="Modify configuration values in .condarc.")
    location = parser.add_mutually_exclusive_group()
    location.add_argument("--system", action="store_true")
    location.add_argument("--env", action="store_true")
    location.add_argument("--file")
    parser.add_argument("--show", nargs="*", default=None)
    parser.add_argument("--show-sources", action="store_true")
    parser.add_argument("--validate", action="store_true")
    parser.add_argument("--get", nargs="*", default=None)
    parser.add_argument("--set", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"))
    parser.add_argument("--add", "--prepend", dest="prepend", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"))
    parser.add_argument("--append", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"))
    parser.add_argument("--remove", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"))
    parser.add_argument("--remove-key", action="append", default=[])
    parser.set_defaults(func=execute)


def _rc_path(args, context):
    if args.system:
        return settings.sys_rc_path()
    if args.file:
        return Path(args.file)
    if args.prefix or args.name:
        prefix = prefixes.target_prefix(args, context)
        prefixes.assert_environment(prefix)
        return prefix / ".condarc"
    return settings.user_rc_path()


def _shown_value(context, key):
    if key.startswith("plugins."):
        return context.get_plugin(key.split(".", 1)[1])
    if key == "channels":
        return context.channels
    return context.get(key)


def format_lines(data):
    """conda.cli.main_config.format_dict."""
    lines = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(f"{key}:" if value else f"{key}: {{}}")
            lines += [f"  {k}: {v}" for k, v in value.items()]
        elif isinstance(value, (list, tuple)):
            lines.append(f"{key}:" if value else f"{key}: []")
            lines += [f"  - {v}" for v in value]
        else:
            lines.append(f"{key}: {value if value is not None else 'None'}")
    return lines


def show(args, context):
    """--show [KEY ...]: effective values, as JSON (sorted) or key: value lines."""
    if args.file:
        context = settings.Context([Path(args.file)])
    if args.show:
        settings.validate_show_keys(args.show)
        keys = list(dict.fromkeys(settings.canonical_name(k) for k in args.show))
    else:
        keys = list(settings.PARAMETERS) + [f"plugins.{k}" for k in settings.PLUGIN_PARAMETERS]
    data = {}
    for key in keys:
        if key.startswith("plugins."):
            data.setdefault("plugins", {})[key.split(".", 1)[1]] = _shown_value(context, key)
        else:
            data[key] = _shown_value(context, key)
    data = dict(sorted(data.items()))
    if args.json:
        json_out(data, sort_keys=True)
    else:
        print("\n".join(format_lines(data)))
    return 0


def show_sources(args, context):
    """--show-sources: what each condarc file declares."""
    if args.json:
        json_out(context.sources, sort_keys=True)
        return 0
    for source, values in context.sources.items():
        print(f"==> {source} <==")
        print("\n".join(format_lines(values)))
        print()
    return 0


def _set_key(key, value, config):
    settings.require_known(key)
    canonical = settings.canonical_name(key)
    if canonical != key:
        sys.stderr.write(f"WARNING conda.cli.condarc:set_key(484): Key {key} is an alias of {canonical}; setting value with latter\n")
    first, *rest = canonical.split(".")
    if first == "plugins":
        config.setdefault("plugins", {})[rest[0]] = settings.typify(canonical, value)
        return
    kind = settings.parameter_type(first)
    if not rest and kind not in ("seq", "map"):
        config[first] = settings.typify(first, value)
    elif kind == "map" and len(rest) == 1:
        config.setdefault(first, {})[rest[0]] = value
    else:
        raise CondaKeyError(key, "invalid parameter")


def _add_item(key, item, config, prepend, warnings, json_mode):
    if not settings.is_known(key) or settings.parameter_type(key.split(".")[0]) != "seq":
        raise CondaValueError(f"Key '{key}' is not a known sequence parameter.")
    key = settings.canonical_name(key)
    items = config.setdefault(key, [])
    if not isinstance(items, list):
        raise CondaError(f"key {key!r} should be a list, not {items.__class__.__name__}.")
    if item in items:
        message = f"Warning: '{item}' already in '{key}' list, moving to the {'top' if prepend else 'bottom'}"
        items[:] = [i for i in items if i != item]
        if json_mode:
            warnings.append(message)
        else:
            sys.stderr.write(message + "\n")
    items.insert(0 if prepend else len(items), item)


def _remove_item(key, item, config):
    settings.require_known(key)
    key = settings.canonical_name(key)
    if settings.parameter_type(key) != "seq":
        raise CondaKeyError(key, "invalid parameter")
    if key not in config:
        if key != "channels":
            raise CondaKeyError(key, "undefined in config")
        config[key] = ["defaults"]
    if item not in config[key]:
        raise CondaKeyError(key, f"value {item!r} not present in config")
    config[key] = [i for i in config[key] if i != item]


def _remove_key(key, config):
    for candidate in (key, settings.canonical_name(key)):
        if candidate in config:
            del config[candidate]
            return
    raise CondaKeyError(key, "undefined in config")


class _IndentedDumper:  # pylint: disable=too-few-public-methods
    """Factory for a yaml Dumper that indents sequences like conda's ruamel settings."""

    @staticmethod
    def make():
        """Build the dumper class (yaml is imported lazily)."""
        import yaml  # pylint: disable=import-outside-toplevel

        class Dumper(yaml.SafeDumper):  # pylint: disable=too-many-ancestors
            """Sequences indented under their key: `channels:\\n  - defaults`."""

            def increase_indent(self, flow=False, indentless=False):
                return super().increase_indent(flow, False)

        return Dumper


def write_rc(path, config):
    """Write a condarc as conda does (key order kept; comments are not preserved)."""
    import yaml  # pylint: disable=import-outside-toplevel

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(yaml.dump(config, Dumper=_IndentedDumper.make(), default_flow_style=False, sort_keys=False) if config else "{}\n")
    except OSError as exc:
        raise CondaError(f"Cannot write to condarc file at {path}\nCaused by {exc!r}") from exc


def execute(args, context):
    """Run one `conda config` invocation."""
    if args.show_sources:
        return show_sources(args, context)
    if args.show is not None:
        return show(args, context)
    if args.validate:
        return 0
    path = _rc_path(args, context)
    config = settings.load_yaml_file(path) if path.exists() else (settings.load_yaml_file(settings.sys_rc_path()) if settings.sys_rc_path().exists() else {})
    warnings, got = [], {}
    if args.get is not None:
        for key in args.get or sorted(config):
            if settings.is_known(key):
                canonical = settings.canonical_name(key)
                if canonical in config:
                    got[canonical] = config[canonical]
                    if not args.json:
                        print(f"--set {canonical} {config[canonical]}")
            elif args.json:
                warnings.append(f"Unknown key: {key!r}")
            else:
                sys.stderr.write(f"Unknown key: {key!r}\n")
    for key, item in args.prepend:
        _add_item(key, item, config, True, warnings, args.json)
    for key, item in args.append:
        _add_item(key, item, config, False, warnings, args.json)
    for key, value in args.set:
        _set_key(key, value, config)
    for key, item in args.remove:
        _remove_item(key, item, config)
    for key in args.remove_key:
        _remove_key(key, config)
    if args.get is None:
        write_rc(path, config)
    if args.json:
        json_success(rc_path=str(path), warnings=warnings, get=got)
    return 0
