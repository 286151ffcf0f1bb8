"""Entry point with the same import path as real conda (`from conda.cli import main`)."""

from conda._standin.main import main

__all__ = ["main"]
