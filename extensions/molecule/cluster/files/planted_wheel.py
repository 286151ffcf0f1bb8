# -*- coding: utf-8 -*-
# Copyright: torchfleet.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write a wheel of six whose version carries a local label, as root on a node would serve it.

Usage: planted_wheel.py DIR LABEL. The module imports and reports "<version>+<label>"; pip installs it
from a find-links directory like any other wheel of six.
"""
import base64
import hashlib
import os
import sys
import zipfile

directory, label = sys.argv[1], sys.argv[2]
version = '1.17.0+' + label
dist_info = 'six-%s.dist-info' % version
files = {
    'six.py': '__version__ = %r\nPLANTED = True\n' % version,
    dist_info + '/METADATA': 'Metadata-Version: 2.1\nName: six\nVersion: %s\n' % version,
    dist_info + '/WHEEL': 'Wheel-Version: 1.0\nGenerator: planted\nRoot-Is-Purelib: true\nTag: py2.py3-none-any\n',
}


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode('ascii')
    return '%s,sha256=%s,%d\n' % (name, digest, len(data))


os.makedirs(directory, exist_ok=True)
path = os.path.join(directory, 'six-%s-py2.py3-none-any.whl' % version)
with zipfile.ZipFile(path, 'w') as wheel:
    record = ''
    for name, text in files.items():
        wheel.writestr(name, text)
        record += record_line(name, text.encode('utf-8'))
    wheel.writestr(dist_info + '/RECORD', record + dist_info + '/RECORD,,\n')
print(path)
