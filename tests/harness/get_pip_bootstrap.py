"""Offline stand-in for ansible-test's get-pip bootstrap script.

ansible-test runs ``python get_pip_<ver>.py [pip options] pip==<ver> [--no-setuptools] [--no-wheel]``
inside a fresh virtual environment. This machine cannot reach the host that serves the real
script, so the test runner seeds ansible-test's cache with this file: it installs the bundled
pip with ensurepip and then lets that pip install the requested version from the package index.
"""
import subprocess
import sys

BOOTSTRAP_ONLY_FLAGS = ("--no-setuptools", "--no-wheel")


def main():
    subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
    pip_args = [arg for arg in sys.argv[1:] if arg not in BOOTSTRAP_ONLY_FLAGS]
    subprocess.check_call([sys.executable, "-m", "pip", "install"] + pip_args)


if __name__ == "__main__":
    main()
