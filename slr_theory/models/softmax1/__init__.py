"""Softmax-1 attention, ``p_l = e^{lam X_l.k} / (1 + sum_j e^{lam X_j.k})``: softmax with a
sink.

The ``1`` in the normaliser is a token of logit 0 that carries no value (an attention
sink): the weights are positive and sum to less than one, so the head can attend to
nothing. Everything softmax attention computes carries over with the sink's weight as one
more factor of the Laplace-transform terms (:mod:`slr_theory.softmax`, "A sink"); this
file only names the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..softmax import Softmax

__all__ = ["Softmax1"]


@dataclass(frozen=True)
class Softmax1(Softmax):
    """Softmax-1 attention: softmax weights with a sink, ``p_l = e_l / (1 + S)``.

    Its numerics and domain are softmax attention's
    (:data:`slr_theory.softmax.SOFTMAX_DOMAIN`). Unlike softmax, the risk depends on the
    key with one token (``p_1 = 1 / (1 + e^{-lam U_1})``), and a shift of every logit
    moves the weights.

    Attributes
    ----------
    name : str
        ``"softmax1"``, its name in the registry.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> m = Params.paper().replace(attention="softmax1").model
    >>> m.label, m.sink, m.odd_weights
    ('softmax-1', True, False)
    >>> # one token of logit 0 beside the sink: half the weight, so T = V / 2
    >>> float(m.forward(np.array([0.0]), np.array([3.0]), 1.0)[0])
    1.5
    """

    name: ClassVar[str] = "softmax1"
    sink: ClassVar[bool] = True

    @property
    def label(self) -> str:
        return "softmax-1"

    @property
    def predictor(self) -> str:
        return "T(X) = Σ_ℓ e^{λ X_ℓ·k} X_ℓ·v / (1 + Σ_j e^{λ X_j·k})"

    @property
    def tag(self) -> str:
        return ", softmax-1 attention"
