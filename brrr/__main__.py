"""``python -m brrr`` runs the ``brrr`` command line (see :mod:`brrr.cli`)."""
import sys

from .cli import main

sys.exit(main())
