"""The models: one contract (:class:`Model`), one registry, and each model's own place.

Everything above this package talks to a model object (``Params.model``), never to a
model's name: the risk table, the forward map, the symmetry, the facts on M, the
labels. ``pointwise.py`` is pointwise attention with any nonlinearity by quadrature;
``erf.py`` the paper's, a nonlinearity with closed forms (hooks of the same class);
``softmax/`` softmax attention (the Laplace transform of its normalisation, its table,
its model); ``softmax1/`` softmax-1 (softmax with a sink). ``registry.py`` maps
``Params(attention=...)`` to them; the lines at the end of this file register the
built-ins, and :func:`register_model` adds one of a user's (``docs/models.md``).
"""

from __future__ import annotations

from ..nonlinearity import Nonlinearity, nonlinearity_of
from .base import Model
from .erf import Erf
from .pointwise import Pointwise
from .registry import (
    attention_names,
    canonical_names,
    model_of,
    register_model,
    takes_nonlinearity,
    unregister_model,
)
from .softmax import Softmax, SoftmaxTable
from .softmax1 import Softmax1

__all__ = [
    "Erf",
    "Model",
    "Pointwise",
    "Softmax",
    "Softmax1",
    "SoftmaxTable",
    "attention_names",
    "canonical_names",
    "model_of",
    "register_model",
    "takes_nonlinearity",
    "unregister_model",
]


def _pointwise(sigma: str | Nonlinearity) -> Pointwise:
    """The built-in ``erf`` has closed forms (a user's sigma named "erf" does not)."""
    return Erf() if sigma == "erf" else Pointwise(nonlinearity_of(sigma))


# The built-in models, one line each (a new attention: its folder, and one line here).
register_model("pointwise", _pointwise, nonlinearity=True, built_in=True)
register_model("softmax", lambda sigma: Softmax(), nonlinearity=False, built_in=True)
register_model("softmax1", lambda sigma: Softmax1(), nonlinearity=False, built_in=True)
