# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Replace a file whole: readers see the old content or the new, never half of either."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import os

TEMP_PREFIX = '.tmp-'
_RANDOM_BYTES = 4
# What a temporary name adds to the target's: the prefix, the random hex digits and a dash.
TEMP_NAME_EXTRA = len(TEMP_PREFIX) + 2 * _RANDOM_BYTES + 1


def _fresh(directory, name, mode):
    """A new file beside the target, made with O_EXCL (never an existing name or a planted link)."""
    while True:
        temp = os.path.join(directory, '%s%s-%s' % (TEMP_PREFIX, binascii.hexlify(os.urandom(_RANDOM_BYTES)).decode(), name))
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode & 0o600), temp
        except FileExistsError:
            continue


def replace_file(path, data, mode=0o644, gid=None):
    """Write ``data`` (text or bytes) to a fresh file beside ``path`` and rename it onto ``path``.

    The fresh file (named ``TEMP_PREFIX``, random hex digits, ``-``, the target's name) is made
    with O_EXCL (never an existing name or a planted link), gets ``mode``
    whatever the umask and, when given, group ``gid`` before any byte is written; the rename
    replaces whatever ``path`` was, a link included, without following it. On any failure the
    fresh file is removed, ``path`` is left as it was and the error propagates. Returns ``path``.
    """
    if not isinstance(data, bytes):
        data = data.encode('utf-8')
    directory, name = os.path.split(path)
    fd, temp = _fresh(directory or '.', name, mode)
    try:
        with os.fdopen(fd, 'wb') as handle:
            if gid is not None and os.fstat(handle.fileno()).st_gid != gid:
                os.fchown(handle.fileno(), -1, gid)
            os.fchmod(handle.fileno(), mode)
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        if os.path.lexists(temp):
            os.unlink(temp)
        raise
    return path
