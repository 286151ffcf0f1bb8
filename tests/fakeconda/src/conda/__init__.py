"""Offline stand-in for conda (torchfleet test harness; see tests/fakeconda/README.md).

Only the subset of the conda CLI that the torchfleet.cluster collection calls is
implemented, with the output shapes and exit codes of the conda release named below.
"""

__version__ = "25.11.1"
