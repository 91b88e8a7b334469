"""The paper's model: pointwise attention with ``sigma = erf``, every expectation in closed form.

``erf`` is a nonlinearity *with closed forms*, not a special case: :class:`Erf` is
:class:`slr_theory.models.pointwise.Pointwise` with its hooks overridden (the
closed-form table and its loop kernel, the nullcline ``erf(a kappa / s)``, and the proof
of M's five critical points in interval arithmetic).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
from scipy.special import erf

from ...nonlinearity import Nonlinearity, nonlinearity_of
from ...params import Params
from ..pointwise import Pointwise
from ..pointwise.tables import closed_table
from .features import closed_feature_bounds

__all__ = ["Erf"]


@dataclass(frozen=True)
class Erf(Pointwise):
    """The paper's pointwise ``erf`` attention, with closed forms.

    Attributes
    ----------
    sigma : Nonlinearity
        The built-in ``erf`` (whose closed forms these are), built and established when
        first read: the tables and the loop never read it, the proofs and names do.

    Examples
    --------
    >>> from slr_theory import Params
    >>> m = Params.paper().model
    >>> m.label, m.feature_bounds_proved, m.tag
    ('erf', True, '')
    """

    # Built when first asked (its integral identities cost 0.15 s, a fifth of a short
    # experiment's process): the closed forms never read it, the proofs and labels do.
    sigma: Nonlinearity = field(init=False, repr=False, compare=False)
    feature_bounds_proved = True  # the closed forms' bounds (features.closed_feature_bounds)

    def __repr__(self) -> str:
        return "Erf()"

    def table(self, params: Params, lam: np.ndarray, order):
        return closed_table(params, lam, order)

    def feature_bounds(self, params: Params, order) -> np.ndarray:
        return closed_feature_bounds(params, order)

    def rigorous_table(self, params: Params):
        """The closed forms in interval arithmetic, bases enclosed by python-flint (one table
        per parameters in a process, its balls shared by every census and check there)."""
        from .rigorous import table_of

        return table_of(params)

    def nullcline(self, params: Params, kappa: np.ndarray) -> np.ndarray:
        """``erf(a kappa / s)``, ``s = sqrt((1 + 2 g^2)(1 + 4 g^2))``."""
        a = params.lam * np.sqrt(params.d / 2)
        g = params.lam * params.gamma
        return erf(a * kappa / np.sqrt((1 + 2 * g * g) * (1 + 4 * g * g)))

    def manifold_certificate(self, params: Params) -> list[str]:
        """The proof that M's critical points are the origin and the four corners.

        Each numeric step is an inequality certified with mpmath interval arithmetic
        (outward rounding): ``c > 0`` and ``erfc(a/s) > 0`` (a rigorous lower bound
        ``erfc(z) > 2 e^{-z^2} / (sqrt(pi) (z + sqrt(z^2 + 2)))``), and ``erf(c) > 0``.
        """
        import mpmath as mp

        if not self.five_points_proved(
            params
        ):  # pragma: no cover - erf is odd, increasing, bounded
            return super().manifold_certificate(params)
        iv = mp.iv
        iv.dps = 30
        lam, gam, d = iv.mpf(params.lam), iv.mpf(params.gamma), iv.mpf(params.d)
        a = lam * iv.sqrt(d / 2)
        g = lam * gam
        q = 1 + 2 * g * g
        c = a / iv.sqrt(q)
        s = iv.sqrt(q * (1 + 4 * g * g))
        z = a / s
        # erfc(z) > 2 exp(-z^2) / (sqrt(pi) (z + sqrt(z^2 + 2)))  (z >= 0; Abramowitz-Stegun 7.1.13)
        erfc_low = 2 * iv.exp(-(z * z)) / (iv.sqrt(iv.pi) * (z + iv.sqrt(z * z + 2)))
        # erf(c) >= (2/sqrt(pi)) c e^{-c^2} > 0 (the integrand's minimum on [0, c])
        erf_low = 2 / iv.sqrt(iv.pi) * c * iv.exp(-(c * c))
        S = params.s  # informative tokens: every term of R on M that moves is S times the paper's
        C = 4 * S * gam * gam * c / iv.sqrt(iv.pi)
        sg = "gamma^2" if S == 1 else "S gamma^2"
        checks = {
            "c > 0": c.a > 0,
            "C > 0": C.a > 0,
            "erfc(a/s) > 0": erfc_low.a > 0,
            "erf(c) > 0": erf_low.a > 0,
        }
        if not all(checks.values()):  # pragma: no cover - impossible for valid Params
            raise ArithmeticError(f"a certified inequality failed: {checks}")
        fmt = lambda x: mp.nstr(mp.mpf(x.a.a), 6)  # noqa: E731  (lower end of the interval)
        return [
            "On M the Riemannian gradient is ((1 - kappa^2) R_kappa, (1 - nu^2) R_nu) with "
            f"R_kappa = C e^{{-c^2 kappa^2}} [erf(a kappa / s) - nu], R_nu = -2 {sg} erf(c kappa)"
            + ("." if S == 1 else f", with S = {S} informative tokens."),
            f"C = 4 {sg} c / sqrt(pi) >= {fmt(C)} > 0 and c = a / sqrt(1 + 2 g^2) >= {fmt(c)} > 0 "
            "(interval arithmetic).",
            "Interior (|kappa|, |nu| < 1): R_nu = 0 iff erf(c kappa) = 0 iff kappa = 0 (erf is odd "
            "and strictly increasing, c > 0); then R_kappa = -C nu = 0 iff nu = 0: the origin only.",
            f"Edges kappa = +-1, |nu| < 1: |R_nu| = 2 {sg} erf(c) >= 2 {sg} (2/sqrt(pi)) c e^(-c^2) "
            f">= {fmt(2 * S * gam * gam * erf_low)} > 0: no critical point.",
            f"Edges nu = +-1, |kappa| < 1: |erf(a kappa / s)| <= erf(a/s) = 1 - erfc(a/s) with "
            f"erfc(a/s) >= {fmt(erfc_low)} > 0, so erf(a kappa / s) - nu != 0 and R_kappa != 0 "
            "(exponentially small where erf saturates, never zero): no critical point.",
            "Corners (+-1, +-1): both factors 1 - kappa^2 and 1 - nu^2 vanish: four critical points.",
            "Hence exactly five critical points on the closed square: the origin and the four corners.",
        ]

    @property
    def tag(self) -> str:
        return ""


def _erf_sigma(self: Erf) -> Nonlinearity:
    """The built-in ``erf``, established when first asked."""
    return nonlinearity_of("erf")


# The field is not set by __init__; the first read builds it and keeps it (a cached
# property writes the instance's own dict, which a frozen dataclass allows).
Erf.sigma = functools.cached_property(_erf_sigma)
Erf.sigma.__set_name__(Erf, "sigma")
