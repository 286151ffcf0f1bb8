# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The package files a lock names on the node's own disk, checked against the lock's digests.

conda checks a downloaded package against the ``#md5`` / ``#sha256`` of its explicit line, but it
copies a ``file://`` package into its cache without looking at either (conda 25.11 and 26.7,
``CacheUrlAction`` for a local URL), and records the lock's digest in ``conda-meta`` as if it had.
So before conda runs, every ``file://`` package of the lock that exists is hashed here (SHA-256
where the lock gives one, else MD5) and must match; it must also be a file that no user other
than root (or the module's user) can change, so that what was checked is what conda copies. A
``file://`` package that does not exist is left to conda, which fails on it naming the path.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

from ansible.module_utils.six.moves.urllib.parse import unquote, urlparse

from ansible_collections.torchfleet.cluster.plugins.module_utils._files import trusted_exec

_CHUNK = 1 << 20


def local_path(url):
    """The path of a ``file://`` URL, or None for any other URL."""
    parsed = urlparse(url)
    if parsed.scheme != 'file':
        return None
    return unquote(parsed.path)


def wanted_digest(package):
    """(algorithm, hex digest) the lock gives for the package, SHA-256 first, or None."""
    for algorithm in ('sha256', 'md5'):
        if package.get(algorithm):
            return algorithm, package[algorithm].lower()
    return None


def file_digest(path, algorithm):
    digest = hashlib.new(algorithm)
    with open(path, 'rb') as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b''):
            digest.update(chunk)
    return digest.hexdigest()


def package_problem(package):
    """Why the lock's local file for ``package`` may not be installed, or None."""
    path = local_path(package['url'])
    wanted = wanted_digest(package)
    if path is None or wanted is None or not os.path.exists(path):
        return None
    finding = trusted_exec.untrusted_writer(path)
    if finding:
        return trusted_exec.describe(finding, 'install %s from it' % package['url'])
    algorithm, expected = wanted
    actual = file_digest(path, algorithm)
    if actual != expected:
        return '%s has %s %s, the lock says %s' % (package['url'], algorithm, actual, expected)
    return None


def problems(packages):
    """One sentence per conda package of the lock whose local file does not match it."""
    found = []
    for package in packages:
        if package.get('manager', 'conda') != 'conda':
            continue
        problem = package_problem(package)
        if problem:
            found.append(problem)
    return found
