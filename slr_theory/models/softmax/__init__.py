"""Softmax attention ``T(X) = sum_l softmax(lam X k)_l X_l.v``, a model folder: the
Laplace transform of its normalisation (``laplace``), and the model and its table
(``model``). Softmax-1 (:mod:`slr_theory.models.softmax1`) is this model with a sink.
"""

from .model import Softmax, SoftmaxTable

__all__ = ["Softmax", "SoftmaxTable"]
