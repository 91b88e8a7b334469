"""The risk's partials over boxes of overlaps, rigorously: the path the documentation
names. Erf's interval enclosures live with its model, in
:mod:`slr_theory.models.erf.rigorous`."""

from .models.erf.rigorous import PRECISION, RigorousTable, flint_context  # noqa: F401

__all__ = ["RigorousTable"]
