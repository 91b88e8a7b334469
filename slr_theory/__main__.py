"""``python -m slr_theory`` is the ``slr-theory`` command."""

import sys

from .cli import main

sys.exit(main())
