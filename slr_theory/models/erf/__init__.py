"""The paper's erf, a model folder that owns its mathematics: the closed-form features of
every basis and their enclosures (``features``), the table that holds them (``table``),
the loop kernel for long runs (``kernel``), the interval enclosures for proofs
(``rigorous``), and the model (``model``). Its Gaussian identities are
:mod:`slr_theory.gaussian` (the term algebra and the checks use them too).
"""

from .model import Erf

__all__ = ["Erf"]
