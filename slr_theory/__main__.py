"""The ``slr-theory`` command (and ``python -m slr_theory``): :func:`slr_theory.cli.main`.

The command line's modules import NumPy and SciPy, about a second. A Ctrl-C meanwhile
is one line and exit 130, as at any later moment: :func:`main` imports them with the
interrupt held (:func:`slr_theory.interrupts.interrupts_held`).
"""

import sys

__all__ = ["main"]


def main() -> int:
    """Run the command line with ``sys.argv``; its exit status.

    Returns
    -------
    int
        As :func:`slr_theory.cli.main`; 130 when interrupted while it starts.
    """
    from .interrupts import STARTING_INTERRUPTED, interrupts_held

    with interrupts_held() as noted:
        from .cli import main as run
    if noted:
        print(STARTING_INTERRUPTED, file=sys.stderr)
        return 130
    try:
        return run()
    except KeyboardInterrupt:  # between the imports and the command's own handling
        print(STARTING_INTERRUPTED, file=sys.stderr)
        return 130


if __name__ == "__main__":  # guarded: worker processes (reproduce --jobs) must not rerun the CLI
    sys.exit(main())
