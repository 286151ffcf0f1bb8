#!/usr/bin/env bash
# Create or refresh the project's virtualenv (.venv) from requirements-dev.txt.
# Cheap when nothing changed: the installed requirements' hash is kept in the venv.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python=${PYTHON:-python3.11}
command -v "$python" >/dev/null || python=python3
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)
[ "$version" = 3.11 ] || { echo "venv.sh: Python 3.11 is required (ansible-core 2.19 and the torch 2.13.0 wheel); found $python = $version" >&2; exit 1; }

want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
stamp=.venv/.requirements.sha256
if [ -x .venv/bin/python ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  :
else
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  echo "venv.sh: installing requirements-dev.txt into .venv (a few minutes the first time)" >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt \
    || { echo "venv.sh: pip could not install requirements-dev.txt" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
# The collection resolves from the working tree (ansible.cfg: collections_path) through a
# committed link; this restores it where a checkout lost it.
mkdir -p .ansible/collections/ansible_collections/torchfleet
ln -sfn ../../../.. .ansible/collections/ansible_collections/torchfleet/cluster
