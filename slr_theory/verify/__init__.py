"""Verification: every closed form checked against mpmath quadrature and Monte Carlo.

Checks live in a registry; importing this package registers the checks of
every layer below it. ``slr-theory verify`` runs them all.
"""

from . import gaussian_checks, risk_checks  # noqa: F401  (register checks)
from .registry import MAX_SAMPLES, MIN_SAMPLES, REGISTRY, Check, CheckResult, register, run_checks

__all__ = [
    "MAX_SAMPLES",
    "MIN_SAMPLES",
    "REGISTRY",
    "Check",
    "CheckResult",
    "register",
    "run_checks",
]
