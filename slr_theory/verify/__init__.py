"""Verification: every closed form checked against mpmath quadrature and Monte Carlo.

Checks live in a registry; importing this package registers the checks of
every layer below it. ``slr-theory verify`` runs them all.
"""

from . import gaussian_checks, registry, risk_checks  # noqa: F401  (register checks)
from .registry import *  # noqa: F403  (the registry's public names are this package's)

__all__ = list(registry.__all__)
