"""``python -m hearts_app ARGS``: the ``hearts`` command."""

import sys

from hearts_app.cli import main

sys.exit(main())
