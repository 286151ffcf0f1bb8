# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""conda's own documented match-spec cases, through the path both the build and the audit take.

Cases come from conda's documentation, "Package match specifications"
(docs/source/user-guide/concepts/pkg-specs.rst: the command-line forms table, the
"Examples" section and the valid specifications of numpy-1.8.1-py27_0) and the
ordering list of ``VersionOrder`` in conda/models/version.py. Each requirement is parsed
by module_utils.envspec (as the conda_env build and the drift audit both parse it) and
judged by module_utils.matchspec: the build's pin check (envstore.pin_problems) and the
audit's expectation (envspec_expect) must give the same answer on every case.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec, envstore, matchspec
from ansible_collections.torchfleet.cluster.plugins.plugin_utils import envspec_expect

# (requirement, installed version, installed build, conda installs it?)
DOCUMENTED = [
    # the command-line forms table
    ('numpy=1.11', '1.11.0', 'py_0', True),
    ('numpy=1.11', '1.11.18', 'py_0', True),
    ('numpy=1.11', '1.12.0', 'py_0', False),
    ('numpy=1.11', '1.110', 'py_0', False),
    ('numpy==1.11', '1.11', 'py_0', True),
    ('numpy==1.11', '1.11.0', 'py_0', True),
    ('numpy==1.11', '1.11.0.0', 'py_0', True),
    ('numpy==1.11', '1.11.1', 'py_0', False),
    ('numpy>=1.8', '1.8', 'py_0', True),
    ('numpy>=1.8', '1.7.9', 'py_0', False),
    ('numpy>=1.8,<2', '1.9', 'py_0', True),
    ('numpy>=1.8,<2', '2.0', 'py_0', False),
    ('numpy=1.11.2=*nomkl*', '1.11.2', 'py36_nomkl_0', True),
    ('numpy=1.11.2=*nomkl*', '1.11.2', 'py36_mkl_0', False),
    ('numpy=1.11.2=*nomkl*', '1.11.2.1', 'py36_nomkl_0', False),  # with a build, =V is exact
    # "Examples"
    ('numpy=1.11.1|1.11.3', '1.11.1', 'py_0', True),
    ('numpy=1.11.1|1.11.3', '1.11.3', 'py_0', True),
    ('numpy=1.11.1|1.11.3', '1.11.2', 'py_0', False),
    ('numpy=1.11.1|1.11.3=py36_0', '1.11.3', 'py36_0', True),
    ('numpy=1.11.1|1.11.3=py36_0', '1.11.3', 'py35_0', False),
    # the canonical (space separated) form: 1.0|1.4* and the relational operators
    ('numpy 1.0|1.4*', '1.4.1b2', 'py_0', True),
    ('numpy 1.0|1.4*', '1.2', 'py_0', False),
    ('numpy <=1.0', '0.9.1', 'py_0', True),
    ('numpy <=1.0', '1.0.1', 'py_0', False),
    ('numpy >1.0b4', '1.0b5', 'py_0', True),
    ('numpy >1.0b4', '1.0rc1', 'py_0', True),
    ('numpy >1.0b4', '1.0a5', 'py_0', False),
    ('numpy >=1,<2|>3', '1.3', 'py_0', True),
    ('numpy >=1,<2|>3', '2.2', 'py_0', False),
    ('numpy !=1.8.1', '1.8.1', 'py_0', False),
    ('numpy !=1.8.*', '1.9', 'py_0', True),
    ('numpy !=1.8.*', '1.8.4', 'py_0', False),
    ('numpy 1.*.1', '1.8.1', 'py_0', True),
    ('numpy 1.*.1', '1.8.2', 'py_0', False),
    ('numpy *', '0.1', 'py_0', True),
    # every valid specification for numpy-1.8.1-py27_0, and a near miss for each
    ('numpy', '1.8.1', 'py27_0', True),
    ('numpy 1.8*', '1.8.1', 'py27_0', True),
    ('numpy 1.8.1', '1.8.1', 'py27_0', True),
    ('numpy 1.8.1', '1.8.10', 'py27_0', False),
    ('numpy >=1.8', '1.8.1', 'py27_0', True),
    ('numpy ==1.8.1', '1.8.1', 'py27_0', True),
    ('numpy 1.8|1.8*', '1.8.1', 'py27_0', True),
    ('numpy >=1.8,<2', '1.8.1', 'py27_0', True),
    ('numpy >=1.8,<2|1.9', '1.8.1', 'py27_0', True),
    ('numpy 1.8.1 py27_0', '1.8.1', 'py27_0', True),
    ('numpy 1.8.1 py27_0', '1.8.1', 'py27_1', False),
    ('numpy=1.8.1=py27_0', '1.8.1', 'py27_0', True),
    ('numpy=1.8.1=py27_0', '1.8.1', 'py35_0', False),
    # two places where the build and the audit once read pins differently
    ('pytorch==2.13', '2.13.1', 'py_0', False),
    ('pytorch==2.13', '2.13.0', 'py_0', True),
    ('numpy==2.4.6', '2.4.6.1', 'py_0', False),
    ('numpy=2.4.6', '2.4.6.1', 'py_0', True),
]


@pytest.mark.parametrize('requirement, version, build, installs', DOCUMENTED)
def test_build_and_audit_agree_with_conda(requirement, version, build, installs):
    dep = envspec.parse_conda_dep(requirement)
    assert dep is not None, requirement
    name = envspec.normalize_name(dep['name'])
    pins = {name: envspec.requirement_pin(dep)}
    problems = envstore.pin_problems(pins, {name: {'version': version, 'build': build}})
    assert (not problems) is installs, (requirement, problems)
    expected = envspec_expect.expectations_from_parsed({'dependencies': [dep]})
    audit_ok = all(exp.satisfied({'env.packages.' + name: version, 'env.builds.' + name: build}[field])
                   for field, exp in expected.items())
    assert audit_ok is installs, requirement


# VersionOrder's documented order (conda/models/version.py), each strictly below the next
ORDER = ['0.4', '0.4.1.rc', '0.4.1', '0.5a1', '0.5b3', '0.5C1', '0.5', '0.9.6', '0.960923', '1.0', '1.1dev1',
         '1.1_', '1.1a1', '1.1.0dev1', '1.1.a1', '1.1.0rc1', '1.1.0', '1.1.0post1', '1.1post1', '1996.07.12',
         '1!0.4.1', '1!3.1.1.6', '2!0.4.1']
SAME = [('0.4', '0.4.0'), ('0.4.1.rc', '0.4.1.RC'), ('1.1.0dev1', '1.1.dev1'), ('1.1.0', '1.1'),
        ('1.1.0post1', '1.1.post1'), ('2.13.0-cpu', '2.13.0_cpu')]


@pytest.mark.parametrize('low, high', list(zip(ORDER, ORDER[1:])))
def test_documented_version_order(low, high):
    assert matchspec.Version(low) < matchspec.Version(high)
    assert matchspec.Version(high) >= matchspec.Version(low)


@pytest.mark.parametrize('left, right', SAME)
def test_documented_equal_versions(left, right):
    assert matchspec.Version(left) == matchspec.Version(right)


@pytest.mark.parametrize('constraint, version, ok', [
    ('==2.13.0', '2.13.0+cpu', True),       # pip's rule for local labels (PEP 440)
    ('==2.13.0+cu129', '2.13.0+cpu', False),
    ('===2.13.0', '2.13.0+cpu', False),     # pip's arbitrary equality: the text itself
    ('~=2.4.1', '2.4.9', True),
    ('~=2.4.1', '2.5.0', False),
    ('(>=1|<0.5),!=1.5', '1.5', False),
    ('(>=1|<0.5),!=1.5', '0.4', True),
    ('>=2.4.*', '2.4.0', True),             # conda drops a superfluous .* after >=
    ('', '0.1', True),
    ('', None, False),
])
def test_pip_and_grouping_cases(constraint, version, ok):
    assert matchspec.version_satisfies(constraint, version) is ok


@pytest.mark.parametrize('constraint', ['~=2', '~=2.*', '>=<2', '1.0$', '(1.0', '1.0)', '2.0+', '1!!2'])
def test_invalid_constraints(constraint):
    with pytest.raises(matchspec.InvalidSpec):
        matchspec.version_test(constraint)


@pytest.mark.parametrize('pattern, build, ok', [
    ('py27_0', 'py27_0', True), ('py27_0', 'py27_1', False), ('*nomkl*', 'py36_nomkl_0', True),
    ('py3*', 'py311h_0', True), ('*', None, True), ('*cuda*', None, False),
])
def test_build_strings(pattern, build, ok):
    assert matchspec.build_test(pattern)(build) is ok
