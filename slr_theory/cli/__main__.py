"""``python -m slr_theory.cli``: the command line, as ``python -m slr_theory``."""

import sys

if __name__ == "__main__":  # guarded: importing it (a worker process, a doctest) runs nothing
    from slr_theory.__main__ import main  # Ctrl-C while it starts is one line there too

    sys.exit(main())
