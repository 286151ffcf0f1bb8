# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which binary wheels a node can install, said as pip download's platform options.

The controller downloads the pip packages for the nodes, so it must ask pip for the nodes'
platform, not its own: the machine and the glibc each node reports, expanded into the
manylinux tags (PEP 600, with the older aliases of PEP 513/571/599) that glibc accepts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import platform
import re

_GLIBC = re.compile(r'^(?:glibc )?([0-9]+)[.]([0-9]+)')
# PEP 513/571/599 names of what PEP 600 calls manylinux_2_5, _2_12 and _2_17.
_LEGACY_ALIASES = {(2, 17): 'manylinux2014', (2, 12): 'manylinux2010', (2, 5): 'manylinux1'}
_OLDEST_MANYLINUX_MINOR = 5


class PlatformError(Exception):
    """The nodes' platforms cannot be served by one download."""


def this_node():
    """{'machine', 'glibc'} of the running node; glibc is None where the C library is not glibc."""
    try:
        libc = os.confstr('CS_GNU_LIBC_VERSION')
    except (AttributeError, ValueError, OSError):
        libc = None
    match = _GLIBC.match(libc or '')
    return dict(machine=platform.machine(), glibc='%s.%s' % match.groups() if match else None)


def _glibc_tuple(host, reported):
    match = _GLIBC.match(str(reported.get('glibc') or ''))
    if not match:
        raise PlatformError('%s reports no glibc version (%r): pip has binary wheels for glibc nodes only'
                            % (host, reported.get('glibc')))
    return int(match.group(1)), int(match.group(2))


def common_target(targets):
    """(machine, (major, minor)) that every node of ``targets`` ({host: {'machine', 'glibc'}}) can run:
    their one machine and their oldest glibc. Raises PlatformError naming the hosts that differ."""
    if not targets:
        raise PlatformError('no node to download for')
    machines = dict((host, str((reported or {}).get('machine') or '')) for host, reported in targets.items())
    if len(set(machines.values())) != 1:
        raise PlatformError('the nodes that build differ in machine (%s): one bundle cannot serve them; '
                            'build each kind of node in its own play'
                            % ', '.join('%s %s' % (host, machines[host] or '(none)') for host in sorted(machines)))
    machine = next(iter(machines.values()))
    if not re.match(r'^[A-Za-z0-9_]+\Z', machine):
        raise PlatformError('%s reports the machine %r, which is no platform name' % (sorted(machines)[0], machine))
    oldest = min(_glibc_tuple(host, reported or {}) for host, reported in targets.items())
    return machine, oldest


def manylinux_tags(machine, glibc):
    """The platform tags of wheels a glibc ``glibc`` (major, minor) ``machine`` installs, newest first."""
    major, minor = glibc
    if major != 2:
        raise PlatformError('glibc %d.%d: only glibc 2.x has manylinux tags' % glibc)
    tags = []
    for each in range(minor, _OLDEST_MANYLINUX_MINOR - 1, -1):
        tags.append('manylinux_2_%d_%s' % (each, machine))
        if (2, each) in _LEGACY_ALIASES:
            tags.append('%s_%s' % (_LEGACY_ALIASES[(2, each)], machine))
    return tags


def download_options(targets, python_version):
    """pip download's options for binary wheels that every node of ``targets`` installs with CPython X.Y."""
    machine, glibc = common_target(targets)
    match = re.match(r'^([0-9]+)[.]([0-9]+)\Z', python_version or '')
    if not match:
        raise PlatformError('the Python version to download for must be X.Y, got %r' % (python_version,))
    options = ['--only-binary=:all:', '--implementation', 'cp', '--python-version', python_version]
    for abi in ('cp%s%s' % match.groups(), 'abi3', 'none'):
        options += ['--abi', abi]
    for tag in manylinux_tags(machine, glibc):
        options += ['--platform', tag]
    return options
