"""Allow `python -m conda ...`, as the real package does."""

import sys

from conda.cli import main

sys.exit(main())
