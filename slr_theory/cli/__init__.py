"""Command-line interface: ``slr-theory <command>`` (also ``python -m slr_theory``).

It parses and dispatches: one parser builder per command, the work in the
numerical modules, the tables in :mod:`slr_theory.render`. Usage errors print
one line on stderr and exit with status 2; failed checks exit with status 1.
"""

from __future__ import annotations

from .dispatch import main

__all__ = ["main"]
