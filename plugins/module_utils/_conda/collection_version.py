# -*- coding: utf-8 -*-
# Copyright: (c) 2026, torchfleet developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's version, for code that runs on a node, where galaxy.yml is not available.

galaxy.yml is the one source: tests/unit/test_collection_metadata.py fails when this copy differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

COLLECTION_VERSION = '0.1.0'
