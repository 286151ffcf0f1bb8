"""Environment locations: -n/-p resolution, the environments.txt registry, validation."""

import os
import pwd
from pathlib import Path

from conda._standin import settings
from conda._standin.errors import CondaValueError, DirectoryNotACondaEnvironmentError, EnvironmentLocationNotFound

RESERVED_NAMES = ("base", "root")
DISALLOWED_NAME_CHARS = frozenset("/ :#")


def envs_dirs(context):
    """context.envs_dirs for a writable root prefix."""
    dirs = [os.path.expanduser(str(d)) for d in context.get("envs_dirs")]
    dirs += [str(settings.ROOT_PREFIX / "envs"), os.path.expanduser("~/.conda/envs")]
    return [Path(d) for d in dict.fromkeys(dirs)]


def is_environment(prefix):
    """conda's marker of an environment: conda-meta/history."""
    return (Path(prefix) / "conda-meta" / "history").is_file()


def locate_by_name(name, context):
    """Existing prefix of a named environment, or None."""
    if name in RESERVED_NAMES:
        return settings.ROOT_PREFIX
    for envs_dir in envs_dirs(context):
        if (envs_dir / name).is_dir():
            return envs_dir / name
    return None


def target_prefix(args, context):
    """determine_target_prefix: -p wins, then -n (an unknown name goes to the first envs dir)."""
    if getattr(args, "prefix", None):
        return Path(os.path.abspath(os.path.expanduser(args.prefix)))
    name = getattr(args, "name", None)
    if name:
        if "/" in name:
            raise CondaValueError("Environment names cannot contain path separators")
        return locate_by_name(name, context) or envs_dirs(context)[0] / name
    return Path(os.environ.get("CONDA_PREFIX") or settings.ROOT_PREFIX)


def display_name(prefix, context):
    """PrefixData.name: 'base', the directory name inside an envs dir, or ''."""
    prefix = Path(prefix)
    if prefix == settings.ROOT_PREFIX:
        return "base"
    if prefix.parent in envs_dirs(context):
        return prefix.name
    return ""


def assert_environment(prefix):
    """Raise EnvironmentLocationNotFound / DirectoryNotACondaEnvironmentError like PrefixData."""
    if not Path(prefix).is_dir():
        raise EnvironmentLocationNotFound(prefix)
    if not is_environment(prefix):
        raise DirectoryNotACondaEnvironmentError(prefix)


def validate_new(prefix, context):
    """PrefixData.validate_path / validate_name for an environment about to be created."""
    text = str(prefix)
    if os.pathsep in text:
        raise CondaValueError(f"Environment paths cannot contain '{os.pathsep}'. Prefix: '{text}'")
    if Path(prefix) != settings.ROOT_PREFIX and is_environment(Path(prefix).parent):
        raise CondaValueError("Environment paths cannot be immediately nested under another conda environment.")
    name = display_name(prefix, context)
    if name in RESERVED_NAMES:
        raise CondaValueError(f"'{name}' is a reserved environment name")
    if DISALLOWED_NAME_CHARS.intersection(Path(prefix).name):
        raise CondaValueError(f"Environment names cannot contain any of these characters: {set(DISALLOWED_NAME_CHARS)}")


def environments_txt():
    """The user's registry of environments outside envs_dirs."""
    return Path(os.path.expanduser("~")) / ".conda" / "environments.txt"


def _registered():
    try:
        return [line.strip() for line in environments_txt().read_text().splitlines() if line.strip()]
    except OSError:
        return []


def register(prefix, context):
    """register_env: remember a new environment in ~/.conda/environments.txt."""
    if not context.get("register_envs"):
        return
    location = os.path.normpath(str(prefix))
    if location in _registered():
        return
    try:
        environments_txt().parent.mkdir(parents=True, exist_ok=True)
        with environments_txt().open("a") as handle:
            handle.write(location + "\n")
    except OSError:
        pass


def unregister(prefix):
    """unregister_env: drop a removed environment from the registry."""
    location = os.path.normpath(str(prefix))
    lines = _registered()
    if location in lines:
        environments_txt().write_text("".join(f"{line}\n" for line in lines if line != location))


def _registered_by_anyone():
    """What list_all_known_prefixes reads: as root, every passwd entry's environments.txt
    (conda/core/envs_manager.py, is_admin + getpwall), else only this user's."""
    lines = _registered()
    if os.geteuid() == 0:
        for home in sorted({entry.pw_dir for entry in pwd.getpwall() if entry.pw_dir}):
            try:
                text = (Path(home) / ".conda" / "environments.txt").read_text()
            except OSError:
                continue
            lines += [line.strip() for line in text.splitlines() if line.strip()]
    return lines


def all_known_prefixes(context):
    """list_all_known_prefixes: registered (by every user, as root) + found in envs_dirs + the root prefix, sorted."""
    found = {line for line in _registered_by_anyone() if is_environment(line)}
    for envs_dir in envs_dirs(context):
        if envs_dir.is_dir():
            found.update(str(entry) for entry in envs_dir.iterdir() if is_environment(entry))
    found.add(str(settings.ROOT_PREFIX))
    return sorted(found)
