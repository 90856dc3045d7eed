"""``python -m minimcp``: the ``minimcp`` command line (see :mod:`minimcp.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
