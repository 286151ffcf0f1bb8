# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pip: lines read as pip reads a requirements file (pip/_internal/req/req_file.py and
constructors.py decide what a line is; packaging.requirements parses the requirement), and
the lenient grammar a node without packaging falls back to."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import envspec, pipmix, pipreq

SHA = 'sha256:' + '0123456789abcdef' * 4

# (line, kind, name, op, version, extra fields)
VALID = [
    ('torch==2.13.0', 'requirement', 'torch', '==', '2.13.0', {}),
    ('torch===2.13.0+cpu', 'requirement', 'torch', '===', '2.13.0+cpu', {}),
    ('requests[socks,security]>=2.31,<3', 'requirement', 'requests', 'range', '<3,>=2.31', {'extras': ['security', 'socks']}),
    ('numpy==2.4.6; python_version >= "3.10"', 'requirement', 'numpy', '==', '2.4.6', {'marker': 'python_version >= "3.10"'}),
    ('torch==2.13.0 --hash=' + SHA, 'requirement', 'torch', '==', '2.13.0', {'hashes': [SHA]}),
    ('torch==2.13.0 --hash=%s --hash=sha512:%s' % (SHA, 'ab' * 64), 'requirement', 'torch', '==', '2.13.0', {}),
    ('pkg @ https://mirror.invalid/pkg-1.0-py3-none-any.whl', 'requirement', 'pkg', '', None,
     {'url': 'https://mirror.invalid/pkg-1.0-py3-none-any.whl'}),
    ('pkg @ file:///srv/wheels/pkg-1.0-py3-none-any.whl', 'requirement', 'pkg', '', None, {}),
    ('https://mirror.invalid/six-1.17.0-py2.py3-none-any.whl', 'url', 'six', '', None, {}),
    ('git+https://github.com/pytorch/vision.git@v0.24.0#egg=torchvision', 'url', 'torchvision', '', None, {}),
    ('./vendor/mypkg', 'path', None, '', None, {'url': './vendor/mypkg'}),
    ('/srv/wheels/six-1.17.0-py2.py3-none-any.whl', 'path', 'six', '', None, {}),
    ('-e ./src', 'editable', None, '', None, {'url': './src'}),
    ('--editable git+https://github.com/org/repo.git#egg=repo', 'editable', 'repo', '', None, {}),
    ('-r requirements.txt', 'include', None, '', None, {'url': 'requirements.txt'}),
    ('--requirement=extra.txt', 'include', None, '', None, {}),
    ('-c constraints.txt', 'include', None, '', None, {}),
    ('--extra-index-url https://mirror.invalid/whl/cu129', 'option', None, '', None, {}),
    ('--index-url=https://mirror.invalid/simple', 'option', None, '', None, {}),
    ('--no-index', 'option', None, '', None, {}),
    ('--find-links /srv/torchfleet-wheelhouse', 'option', None, '', None, {}),
    ('--pre', 'option', None, '', None, {}),
    ('torch  # the CPU build', 'requirement', 'torch', '', None, {}),
]

# (line, what the message says)
INVALID = [
    ('torch==', 'not a valid requirement'),
    ('torch =2', 'not a valid requirement'),
    ('==2.0', 'not a valid requirement'),
    ('torch @ not-a-url', 'not a URL pip can fetch'),
    ('torch>=2 extra words', 'not a valid requirement'),
    ('--frobnicate', 'unknown pip option --frobnicate'),
    ('-r', 'pip option -r needs a value'),
    ('--pre yes', 'takes no value'),
    ('torch --hash=md5:' + '0' * 32, 'ALGORITHM one of sha256, sha384, sha512'),
    ('torch --hash=sha256:abc', 'a sha256 digest has 64 hex digits, this one 3'),
    ('torch --index-url x', 'is not an option a requirement line accepts'),
    ('-e numpy', '-e needs a local directory or a VCS URL'),
    ('ftp://mirror.invalid/six.whl', 'not a URL pip can fetch'),
    ('# only a comment', 'empty requirement'),
]


@pytest.mark.parametrize('line, kind, name, op, version, extra', VALID, ids=[c[0][:40] for c in VALID])
def test_valid_lines(line, kind, name, op, version, extra):
    found = pipreq.parse_line(line, strict=True)
    assert (found['kind'], found['name'], found['op'], found['version']) == (kind, name, op, version)
    for key, value in extra.items():
        assert found[key] == value, key


@pytest.mark.parametrize('line, fragment', INVALID, ids=[c[0][:40] for c in INVALID])
def test_invalid_lines(line, fragment):
    with pytest.raises(pipreq.PipLineError, match=fragment.replace('(', r'\(').replace('.', r'\.')):
        pipreq.parse_line(line, strict=True)


@pytest.mark.parametrize('line, kind, name, op, version, extra', [c for c in VALID if c[1] == 'requirement' and 'extras' not in c[5]],
                         ids=[c[0][:40] for c in VALID if c[1] == 'requirement' and 'extras' not in c[5]])
def test_the_lenient_fallback_agrees_on_plain_requirements(line, kind, name, op, version, extra):
    found = pipreq.parse_line(line, strict=False)
    assert (found['kind'], found['name'], found['op']) == (kind, name, op)


def test_a_rejected_line_names_file_and_line():
    text = 'name: t\ndependencies:\n  - pip\n  - pip:\n      - torch==2.13.0\n      - torch --hash=sha256:abc\n'
    with pytest.raises(envspec.SpecError) as caught:
        envspec.parse_spec(text, 'inventories/x/environment.yml')
    assert str(caught.value).startswith('inventories/x/environment.yml:6: pip would refuse the requirement')


def test_marker_lines_set_no_expectation():
    spec = envspec.parse_spec('name: t\ndependencies:\n  - pip\n  - pip:\n      - colorama; sys_platform == "win32"\n')
    assert envspec.expected_pins(spec) == {'pip': None}


def test_unknown_top_level_key_warns_like_conda():
    spec = envspec.parse_spec('name: t\ndependencies: [pip]\ndescription: my env\n', 'e.yml')
    assert spec['warnings'] == ["e.yml: unknown key 'description' at line 3 is ignored, as conda ignores it "
                                "(conda reads: name, channels, dependencies, prefix, variables, platforms)"]


# (spec dependencies, pip lines, warning fragments)
MIX_CASES = [
    (['python=3.11', 'pip'], ['torch==2.13.0'], []),   # the demo: a CPU torch wheel, nothing conda installs too
    (['python=3.11', 'pip', 'numpy=2.4.6'], ['numpy==2.4.6'], ['numpy is both a conda dependency and a pip requirement']),
    (['python=3.11', 'pip', 'pytorch=2.13'], ['torch==2.13.0'], ['torch is both a conda dependency']),
    (['python=3.11', 'pip'], ['numpy==2.4.6'], ['numpy comes from pip over conda', 'OpenBLAS']),
    (['python=3.11', 'pip'], ['scipy-openblas64'], ['second BLAS']),
    (['python=3.11', 'pip'], ['torch==2.13.0+cu129'], ['torch comes from pip over conda', 'CUDA libraries']),
    (['python=3.11', 'pip'], ['--extra-index-url https://mirror.invalid/whl/cu129', 'torch==2.13.0'], ['torch comes from pip']),
    (['python=3.11', 'pip'], ['nvidia-nccl-cu12==2.27.3'], ['nvidia-nccl-cu12 comes from pip over conda']),
]


@pytest.mark.parametrize('deps, pip, fragments', MIX_CASES)
def test_spec_check_warns_about_pip_over_conda(deps, pip, fragments):
    text = 'name: t\ndependencies:\n' + ''.join('  - %s\n' % d for d in deps) + '  - pip:\n' + ''.join('      - "%s"\n' % p for p in pip)
    warnings = envspec.parse_spec(text, 'environment.yml')['warnings']
    assert len(warnings) == (1 if fragments else 0), warnings
    for fragment in fragments:
        assert fragment in warnings[0]


def test_live_warnings():
    found = pipmix.live_warnings({'numpy': 'py311_0', 'python': 'h_0', 'nvidia-cublas-cu12': 'pypi_0', 'six': 'pypi_0'},
                                 {'nvidia-cublas-cu12': '12.8.4.1'}, {'numpy': {'conda': '2.4.6', 'pip': '2.4.5'}})
    assert [(w['package'], w['kind']) for w in found] == [('numpy', 'two_copies'), ('nvidia-cublas-cu12', 'pip_over_conda')]
