# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for conda's ``.condarc``: the version -> auto-activation key rule,
version detection from ``conda --version`` output or ``conda-meta`` records,
and a small deterministic YAML emitter (nodes need no PyYAML)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import re

# conda 25.5.0 renamed the setting to ``auto_activate`` and kept ``auto_activate_base`` as a
# file alias; 25.5.1 made ``conda config`` accept the alias too. The rule used here (new key
# from 25.5.1, as the collection specifies) therefore gives 25.5.0 the alias, which it reads.
# A file that names both keys makes conda stop with MultipleKeysError.
AUTO_ACTIVATE_NEW_KEY = 'auto_activate'
AUTO_ACTIVATE_OLD_KEY = 'auto_activate_base'
AUTO_ACTIVATE_ALIASES = (AUTO_ACTIVATE_NEW_KEY, AUTO_ACTIVATE_OLD_KEY)
AUTO_ACTIVATE_SINCE = (25, 5, 1)

HEADER = '# Managed by torchfleet.cluster.conda_config: local edits are replaced on the next run.\n'

_VERSION_RE = re.compile(r'(?:^|\s)(\d+)\.(\d+)(?:\.(\d+))?')
_META_RE = re.compile(r'^conda-(\d+\.\d+(?:\.\d+)?)(?:\.\w+)?-[^-]+\.json$')
# A key written bare: a plain identifier no YAML 1.1 or 1.2 loader reads as anything but a string.
_PLAIN_KEY_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_YAML_WORDS = frozenset(('true', 'false', 'yes', 'no', 'on', 'off', 'null', 'y', 'n', '~'))
# Characters a YAML double-quoted scalar must escape: not printable in YAML (its c-printable set),
# line breaks YAML folds (NEL, LS, PS), the BOM, and the quote and backslash themselves.
_ESCAPES = {'\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r', '\0': '\\0'}
_TOP_KEY_RE = re.compile(r'^"?([A-Za-z_][\w.-]*)"?\s*:')

# The options that decide the file's settings, as conda_config takes them; the condarc_text filter
# checks and converts its input with the same spec, so both render the same text.
SETTINGS_SPEC = dict(
    auto_activate=dict(type='bool', default=False),
    channels=dict(type='list', elements='str'),
    channel_priority=dict(type='str', choices=['strict', 'flexible', 'disabled']),
    channel_alias=dict(type='str'),
    default_channels=dict(type='list', elements='str'),
    custom_channels=dict(type='dict'),
    always_yes=dict(type='bool'),
    notify_outdated_conda=dict(type='bool'),
    settings=dict(type='dict', default={}),
)
OPTION_KEYS = (
    'channels', 'channel_priority', 'channel_alias', 'default_channels',
    'custom_channels', 'always_yes', 'notify_outdated_conda',
)


def parse_conda_version(text):
    """Return the version tuple from ``conda --version`` output ("conda 25.5.1"), or None."""
    if not text:
        return None
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith('conda'):
            continue
        match = _VERSION_RE.search(line[len('conda'):])
        if match:
            return tuple(int(part or 0) for part in match.groups())
    return None


def version_from_conda_meta(prefix):
    """Return the conda version recorded in ``PREFIX/conda-meta/conda-<ver>-<build>.json``, or None.

    Used when ``conda --version`` cannot run (for instance a broken ``.condarc``)."""
    meta = os.path.join(prefix, 'conda-meta')
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        return None
    for name in names:
        match = _META_RE.match(name)
        if match:
            return parse_conda_version('conda ' + match.group(1))
    return None


def other_system_sources(prefix, path, etc_dir='/etc/conda'):
    """Other system-wide files conda merges with ``path`` (its search path, user files aside)."""
    candidates = []
    for base in (etc_dir, prefix):
        candidates.extend([os.path.join(base, '.condarc'), os.path.join(base, 'condarc')])
        directory = os.path.join(base, 'condarc.d')
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        candidates.extend(os.path.join(directory, name) for name in names if name.endswith(('.yml', '.yaml')))
    target = os.path.abspath(path)
    return [name for name in candidates if os.path.isfile(name) and os.path.abspath(name) != target]


def version_string(version):
    return '.'.join(str(part) for part in version) if version else None


def auto_activate_key(version):
    """The auto-activation key the given conda version understands."""
    if version is not None and tuple(version) >= AUTO_ACTIVATE_SINCE:
        return AUTO_ACTIVATE_NEW_KEY
    return AUTO_ACTIVATE_OLD_KEY


def top_level_keys(text):
    """Top-level keys of a block-style YAML mapping, good enough to report what a rewrite drops."""
    keys = []
    for line in (text or '').splitlines():
        match = _TOP_KEY_RE.match(line)
        if match and match.group(1) not in keys:
            keys.append(match.group(1))
    return keys


def _printable(char):
    code = ord(char)
    if code in (0x09, 0x0a, 0x0d) or 0x20 <= code <= 0x7e:
        return True
    if code == 0x85 or 0x2028 <= code <= 0x2029 or code == 0xfeff:
        return False
    return 0xa0 <= code <= 0xd7ff or 0xe000 <= code <= 0xfffd or 0x10000 <= code <= 0x10ffff


def quote(text):
    """``text`` as a YAML double-quoted scalar that YAML 1.1 and 1.2 loaders read back unchanged."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif _printable(char):
            out.append(char)
        elif ord(char) <= 0xff:
            out.append('\\x%02x' % ord(char))
        elif ord(char) <= 0xffff:
            out.append('\\u%04x' % ord(char))
        else:
            out.append('\\U%08x' % ord(char))
    return '"%s"' % ''.join(out)


def _scalar(value):
    """A value: every string quoted (``0x1F``, ``.inf``, ``2024-01-01``, ``1:30``, ``mirror:``, ``no`` would
    otherwise read back as numbers, dates, sexagesimals, mappings or booleans in YAML 1.1 or 1.2)."""
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return '.nan'
        if value in (float('inf'), float('-inf')):
            return '.inf' if value > 0 else '-.inf'
        return repr(value)
    return quote(str(value))


def _key(value):
    text = str(value) if not isinstance(value, bool) else ('true' if value else 'false')
    if isinstance(value, str) and _PLAIN_KEY_RE.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return quote(text)


def _emit(value, indent):
    """Lines for a value nested under a key or list item at ``indent`` spaces."""
    pad = ' ' * indent
    if isinstance(value, dict):
        if not value:
            return [' {}']
        lines = ['']
        for key in sorted(value, key=str):
            lines.extend(_emit_pair(key, value[key], indent))
        return lines
    if isinstance(value, (list, tuple)):
        if not value:
            return [' []']
        lines = ['']
        for item in value:
            if isinstance(item, dict) and item:
                first = True
                for key in sorted(item, key=str):
                    sub = _emit_pair(key, item[key], indent + 2)
                    if first:
                        sub[0] = pad + '- ' + sub[0].lstrip()
                        first = False
                    lines.extend(sub)
            else:
                sub = _emit(item, indent + 2)
                lines.append(pad + '-' + sub[0])
                lines.extend(sub[1:])
        return lines
    return [' ' + _scalar(value)]


def _emit_pair(key, value, indent):
    body = _emit(value, indent + 2)
    lines = [' ' * indent + _key(key) + ':' + body[0]]
    lines.extend(body[1:])
    return lines


def desired_settings(params, version):
    """The settings the file holds for these options (SETTINGS_SPEC) and conda version.

    Raises ValueError when ``settings`` names an auto-activation key or repeats an option."""
    extra = params['settings'] or {}
    clash = sorted(key for key in extra if key in AUTO_ACTIVATE_ALIASES)
    if clash:
        raise ValueError('settings must not contain %s: use the auto_activate option, which writes '
                         'the one key this conda version understands' % ', '.join(clash))
    repeated = sorted(key for key in extra if key in OPTION_KEYS and params[key] is not None)
    if repeated:
        raise ValueError('%s given both as an option and in settings' % ', '.join(repeated))
    settings = dict(extra)
    for key in OPTION_KEYS:
        if params[key] is not None:
            settings[key] = params[key]
    settings[auto_activate_key(version)] = params['auto_activate']
    return settings


def render_condarc(settings):
    """Deterministic block YAML for a settings mapping: sorted keys, a header, no timestamps."""
    lines = [HEADER.rstrip('\n')]
    for key in sorted(settings):
        lines.extend(_emit_pair(key, settings[key], 0))
    return '\n'.join(lines) + '\n'
