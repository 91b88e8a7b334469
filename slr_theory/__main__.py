"""``python -m slr_theory`` is the ``slr-theory`` command."""

import sys

from .cli import main

if __name__ == "__main__":  # guarded: worker processes (reproduce --jobs) must not rerun the CLI
    sys.exit(main())
