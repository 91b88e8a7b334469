"""Nonlinearities written as a user writes one, importable by path.

What the command line's ``--nonlinearity package.module:attr`` takes, shown on the
toolkit's own: ``--nonlinearity slr_theory.nonlinearity.examples:softsign``. A module of
one's own is written the same way (a :class:`Nonlinearity` at its top level) and passed
by its path; worker processes import it again by that path.
"""

from __future__ import annotations

import numpy as np

from .function import Nonlinearity

__all__ = ["softsign"]


def _r(u):
    return 1.0 / (1.0 + np.abs(u))


#: ``u / (1 + |u|)``, bounded, increasing and odd, with ``sigma''`` jumping from 2 to -2
#: at 0: a kink the quadrature must know of (``kinks=(0.0,)``, the pieces' derivatives
#: up to the fourth), else its expectations lose from 8 digits to all of them.
softsign = Nonlinearity(
    "softsign",
    lambda u: u * _r(u),
    lambda u: _r(u) ** 2,
    lambda u: -2.0 * np.sign(u) * _r(u) ** 3,
    lambda u: 6.0 * _r(u) ** 4,
    d4f=lambda u: -24.0 * np.sign(u) * _r(u) ** 5,
    kinks=(0.0,),
)
