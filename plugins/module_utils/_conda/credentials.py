# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find and mask credentials in configuration text and values.

Credentials are what conda and pip accept in their configuration: a URL with a password
(``https://user:secret@proxy:3128``), an anaconda.org token path (``/t/<token>/``) and the
values of keys named like a secret (``password``, ``token``, ``api_key`` …)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

MASK = '********'

_URL_PASSWORD_RE = re.compile(r'(://[^/@\s:]*:)([^/@\s]+)(@)')
_TOKEN_PATH_RE = re.compile(r'(/t/)([^/\s]+)(/)')
_SECRET_KEY_RE = re.compile(r'(password|passwd|token|secret|api_key|apikey|credential)', re.IGNORECASE)
_SECRET_LINE_RE = re.compile(r'^(\s*-?\s*[\'"]?[\w.-]*(?:password|passwd|token|secret|api_key|apikey|credential)'
                             r'[\w.-]*[\'"]?\s*:\s*)(\S.*)$', re.IGNORECASE | re.MULTILINE)


def mask_text(text):
    """``text`` with every credential replaced by MASK (keys and structure kept)."""
    if not text:
        return text
    text = _URL_PASSWORD_RE.sub(r'\g<1>%s\g<3>' % MASK, text)
    text = _TOKEN_PATH_RE.sub(r'\g<1>%s\g<3>' % MASK, text)
    return _SECRET_LINE_RE.sub(r'\g<1>%s' % MASK, text)


def mask_value(value, key=None):
    """A copy of a settings value (dicts, lists, scalars) with credentials masked."""
    if isinstance(value, dict):
        return dict((k, mask_value(v, k)) for k, v in value.items())
    if isinstance(value, list):
        return [mask_value(v) for v in value]
    if key is not None and _SECRET_KEY_RE.search(str(key)) and value not in (None, ''):
        return MASK
    if isinstance(value, str):
        return mask_text(value)
    return value


def has_credentials(value):
    return mask_value(value) != value
