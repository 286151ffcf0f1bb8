# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where mixing pip into a conda environment goes wrong, and why.

Two cases are worth a warning, in the spec check and in the audit:

* a package both conda and pip install: pip writes a second copy over conda's files,
  conda still believes it owns them, and the next conda transaction may undo pip's;
* a CUDA or core numeric package from pip in a conda environment: pip's wheels bundle
  their own shared libraries (OpenBLAS in numpy/scipy, the CUDA runtime, cuBLAS, cuDNN and
  NCCL in the ``nvidia-*`` wheels torch's CUDA builds depend on), conda's packages link
  against conda's, and one process then loads two conflicting copies.

Names are compared as pip normalises them; conda's ``pytorch`` is pip's ``torch``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

CONDA_ALIASES = {'pytorch': 'torch', 'pytorch-gpu': 'torch', 'pytorch-cpu': 'torch', 'py-opencv': 'opencv-python'}
TWO_COPIES = ('pip installs a second copy over the one conda installed; conda still records its own files, '
              'so the next conda transaction can silently undo or break what pip installed')
_BLAS = ('a second BLAS/OpenMP runtime beside conda\'s: two copies of libopenblas/libmkl/libgomp in one process '
         'conflict (symbol clashes, oversubscribed threads)')
_NUMPY = ('pip\'s numpy/scipy wheels bundle their own OpenBLAS while conda\'s packages are built against conda\'s '
          'numpy and link conda\'s BLAS (libblas): two BLAS libraries load in one process and conda\'s '
          'compiled packages may not match pip\'s numpy ABI')
_CUDA = ('CUDA libraries from pip wheels (nvidia-*: cudart, cuBLAS, cuDNN, NCCL) beside conda\'s CUDA packages: '
         'two copies of the same shared libraries, and whichever loads first wins')
NUMERIC = {'numpy': _NUMPY, 'scipy': _NUMPY, 'mkl': _BLAS, 'mkl-service': _BLAS, 'intel-openmp': _BLAS,
           'openblas': _BLAS, 'scipy-openblas32': _BLAS, 'scipy-openblas64': _BLAS, 'cupy': _CUDA}
_CUDA_LOCAL_RE = re.compile(r'\+cu\d+')
_CUDA_INDEX_RE = re.compile(r'/(?:whl/)?cu\d+/?(?:\s|$)')


def pip_name(name, manager='pip'):
    name = re.sub(r'[-_.]+', '-', str(name)).lower()
    return CONDA_ALIASES.get(name, name) if manager == 'conda' else name


def numeric_reason(name, version=None, cuda_hint=False):
    """Why this pip package should come from conda instead, or None."""
    name = pip_name(name)
    if name in NUMERIC:
        return NUMERIC[name]
    if name.startswith('nvidia-'):
        return _CUDA
    if name in ('torch', 'torchvision', 'torchaudio') and (cuda_hint or _CUDA_LOCAL_RE.search(str(version or ''))):
        return _CUDA
    return None


def _cuda_index(pip_entries):
    return any(entry.get('kind') == 'option' and _CUDA_INDEX_RE.search(entry.get('line', '') + ' ')
               for entry in pip_entries)


def spec_warnings(spec, source):
    """Warnings for an environment.yml parsed by module_utils.envspec."""
    conda = set(pip_name(dep['name'], 'conda') for dep in spec.get('dependencies') or ())
    pip_entries = spec.get('pip') or []
    cuda_hint = _cuda_index(pip_entries) or any(pip_name(e['name']).startswith('nvidia-')
                                                for e in pip_entries if e.get('name'))
    warnings = []
    for entry in pip_entries:
        if not entry.get('name'):
            continue
        name = pip_name(entry['name'])
        where = '%s:%s' % (source, entry.get('lineno') or '?')
        if name in conda and name != 'pip':
            warnings.append('%s: %s is both a conda dependency and a pip requirement: %s' % (where, name, TWO_COPIES))
            continue
        reason = numeric_reason(name, entry.get('version'), cuda_hint)
        if reason and conda:
            warnings.append('%s: %s comes from pip over conda: %s; list it among the conda dependencies'
                            % (where, name, reason))
    return warnings


def live_warnings(builds, versions, duplicates):
    """Warnings for one node's live environment: ``builds`` maps name -> build string (``pypi_0``
    for pip), ``versions`` name -> version, ``duplicates`` name -> {conda, pip} versions of
    packages installed by both. Returns a list of {package, kind, reason, detail}."""
    found = []
    for name in sorted(duplicates or {}):
        both = duplicates[name] or {}
        found.append({'package': name, 'kind': 'two_copies', 'reason': TWO_COPIES,
                      'detail': 'conda %s, pip %s' % (both.get('conda'), both.get('pip'))})
    pip_names = [n for n, b in sorted((builds or {}).items()) if b == 'pypi_0']
    conda_present = any(b != 'pypi_0' for b in (builds or {}).values())
    cuda_hint = any(n.startswith('nvidia-') for n in pip_names)
    for name in pip_names:
        if name in (duplicates or {}):
            continue
        reason = numeric_reason(name, (versions or {}).get(name), cuda_hint)
        if reason and conda_present:
            found.append({'package': name, 'kind': 'pip_over_conda', 'reason': reason,
                          'detail': 'pip %s' % (versions or {}).get(name)})
    return found
