"""``python3 -m dlbridge.check TARGET``: the command (cli.py)."""
import sys

from .cli import main

sys.exit(main())
