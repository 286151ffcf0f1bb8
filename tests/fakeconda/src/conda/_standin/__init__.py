"""Implementation of the conda stand-in; nothing here is a public API."""
