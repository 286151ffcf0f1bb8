# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Property test of the .condarc writer: every string round-trips through a YAML 1.1 loader
(PyYAML, what conda itself uses through ruamel's 1.1 mode and what older conda used) and a
YAML 1.2 loader (ruamel.yaml's safe loader)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import pytest
import yaml

from ansible_collections.torchfleet.cluster.plugins.module_utils._conda import condarc

ruamel_yaml = pytest.importorskip('ruamel.yaml')

# Strings that some YAML version reads as something else when written bare.
CORPUS = [
    '0x1F', '0o17', '017', '1_000', '.inf', '-.Inf', '.NaN', '1e3', '+1', '2024-01-01', '2024-01-01 10:00:00',
    '1:30', '190:20:30', 'mirror:', 'a: b', '- x', '? x', 'no', 'No', 'off', 'y', 'n', 'yes', 'on', 'true', 'True',
    'null', 'Null', '~', '', ' ', ' leading', 'trailing ', '#comment', 'a #b', '&anchor', '*alias', '!tag', '|', '>',
    '%YAML', '@at', '`tick', '"', "'", '\\', 'a"b\\c', '{x}', '[x]', ',', 'tab\there', 'new\nline', 'cr\rx', '\x00',
    '\x07', '\x1b[0m', '\x7f', '\x85', '\xa0', '\u2028', '\u2029', '\ufeff', '\ufffe', 'é', '😀', '=', '<<',
    'https://mirror.example/conda-forge', 'file:///srv/channel', 'conda-forge', 'defaults', 'pkgs/main',
]


def _generated(count=400, seed=11):
    """Random strings over the characters YAML treats specially (fixed seed: the run is reproducible)."""
    alphabet = ['0', '1', '9', 'x', 'e', '.', ':', '-', '+', '_', '#', ' ', '\t', '\n', '"', "'", '\\', '~', '!', '&',
                '*', '[', ']', '{', '}', ',', '?', '|', '>', '%', '@', '`', 'y', 'n', 'o', '\x85', '\u2028', '\x00', 'é',
                '\U0001f600']
    rng = random.Random(seed)
    return [''.join(rng.choice(alphabet) for dummy in range(rng.randint(0, 8))) for dummy in range(count)]


def _load_11(text):
    return yaml.safe_load(text)


def _load_12(text):
    return ruamel_yaml.YAML(typ='safe', pure=True).load(text)


@pytest.mark.parametrize('loader', [_load_11, _load_12], ids=['yaml-1.1-pyyaml', 'yaml-1.2-ruamel'])
def test_every_string_round_trips(loader):
    strings = CORPUS + _generated()
    settings = {'channels': strings, 'custom_channels': dict(('k%d' % i, s) for i, s in enumerate(strings)),
                'envs_dirs': strings[:3], 'ssl_verify': strings[0]}
    assert loader(condarc.render_condarc(settings)) == settings


@pytest.mark.parametrize('loader', [_load_11, _load_12], ids=['yaml-1.1-pyyaml', 'yaml-1.2-ruamel'])
def test_keys_and_other_scalars_round_trip(loader):
    settings = {'on': 'x', 'a b': 1, 'mirror:': True, '1:30': None, 'n': 1.5, 'off': -3, 'inf': float('inf')}
    assert loader(condarc.render_condarc(settings)) == settings


def test_plain_setting_names_stay_bare():
    text = condarc.render_condarc({'channels': ['conda-forge'], 'auto_activate': False})
    assert '\nchannels:\n  - "conda-forge"\n' in text and '\nauto_activate: false\n' in text
    assert condarc.top_level_keys(text) == ['auto_activate', 'channels']
