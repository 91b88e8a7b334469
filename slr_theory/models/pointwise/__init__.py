"""Pointwise attention with any nonlinearity, a model folder: the table of its Gaussian
moments by quadrature (``moments``), the pointwise tables built from the term algebra,
erf's closed forms included (``tables``), and the model (``model``).
"""

from .model import Pointwise

__all__ = ["Pointwise"]
