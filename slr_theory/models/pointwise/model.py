"""Pointwise attention ``T(X) = sum_l sigma(lam X_l.k) X_l.v`` with any ``sigma``, by quadrature.

The default for every :class:`slr_theory.Nonlinearity`: the risk's Gaussian expectations
come from quadrature (:func:`slr_theory.nonlinearity.gaussian_moments`), served to the
the :class:`~slr_theory.models.pointwise.moments.MomentTable`. A ``sigma`` with closed forms overrides
the hooks (:mod:`slr_theory.models.erf`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...manifold import EDGE_SCAN, edge_roots, interior_points, underflow
from ...nonlinearity import Nonlinearity, moments
from ...params import Params
from ..base import Model
from .moments import moment_feature_bounds
from .tables import moment_table

__all__ = ["Pointwise"]


@dataclass(frozen=True)
class Pointwise(Model):
    """Pointwise attention with the nonlinearity `sigma`, its expectations by quadrature.

    Parameters
    ----------
    sigma : Nonlinearity
        Verified when it was built: its oddness gives the symmetry ``(k, v) -> (-k, -v)``,
        its monotonicity and bound the proof of M's five critical points.

    Examples
    --------
    >>> from slr_theory import Params
    >>> m = Params.paper().replace(nonlinearity="tanh").model
    >>> m.label, m.odd_weights, m.feature_bounds_proved
    ('tanh', True, False)
    """

    sigma: Nonlinearity
    name: ClassVar[str] = "pointwise"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sigma={self.sigma.name!r})"

    def table(self, params: Params, lam: np.ndarray, order):
        return moment_table(params, lam, order, self.sigma)

    def feature_bounds(self, params: Params, order) -> np.ndarray:
        return moment_feature_bounds(params, order, self.sigma)

    def forward(self, U, V, lam: float, derivatives: bool = False) -> tuple:
        z = lam * U
        E = self.sigma.f(z)
        T = np.add.reduce(E * V, axis=-1)  # np.sum's reduction, without its dispatch
        if not derivatives:
            return (T,)
        return T, lam * self.sigma.df(z) * V, E

    @property
    def odd_weights(self) -> bool:
        return self.sigma.odd

    def nullcline(self, params: Params, kappa: np.ndarray) -> np.ndarray:
        """``sgn(t) (1 - E[sigma' tau] / E sigma')`` by quadrature (``t = a kappa``,
        ``tau = 1 - sgn(t) sigma``), exact where ``sigma`` saturates."""
        a = params.lam * np.sqrt(params.d / 2)
        g = params.lam * params.gamma
        t = (a * kappa).reshape(-1)
        m = moments(self.sigma, t, g, 1)
        sgn = np.where(t >= 0, 1.0, -1.0)
        return (sgn * (1.0 - m["d1tau"] / m["E1"])).reshape(kappa.shape)

    def five_points_proved(self, params: Params) -> bool:
        """Whether the argument of :meth:`manifold_certificate` applies: ``sigma`` odd,
        non-decreasing and ``|sigma| <= 1``, each established when ``sigma`` was built,
        symbolically or by integral identities
        (:attr:`slr_theory.Nonlinearity.established`)."""
        sig = self.sigma
        return bool(self.odd_weights and sig.increasing and sig.bound <= 1.0)

    def manifold_certificate(self, params: Params) -> list[str]:
        """The proof of the five points on quadratures where ``sigma`` is odd, increasing
        and bounded by 1 (:meth:`five_points_proved`); otherwise what the scans located
        (:func:`_scan_certificate`)."""
        if not self.five_points_proved(params):
            return _scan_certificate(params, self.sigma)
        return _moment_certificate(params, self.sigma)

    @property
    def label(self) -> str:
        return self.sigma.name

    @property
    def predictor(self) -> str:
        return f"T(X) = Σ_ℓ {self.sigma.name}(λ X_ℓ·k) X_ℓ·v"

    @property
    def tag(self) -> str:
        return f", σ = {self.sigma.name}"


def _moment_certificate(params: Params, sig: Nonlinearity) -> list[str]:
    """The same argument for a nonlinearity by quadrature, with the properties it uses.

    It needs ``sigma`` odd, increasing and ``|sigma| <= 1`` (so ``|sigma| < 1`` wherever
    ``sigma' > 0``); these were established when ``sigma`` was built, symbolically or
    by integral identities (:attr:`slr_theory.Nonlinearity.established`, which the text
    cites), and the two positive numbers come from the quadrature (relative error
    ``~1e-15``), not from interval arithmetic.
    """
    a = params.lam * np.sqrt(params.d / 2)
    g = params.lam * params.gamma
    m = moments(sig, np.array([a]), g, 0)
    S = params.s
    sg = "gamma^2" if S == 1 else "S gamma^2"
    edge_nu = 2 * S * params.gamma**2 * m["E0"][0]
    return [
        f"On M the Riemannian gradient is ((1 - kappa^2) R_kappa, (1 - nu^2) R_nu) with "
        f"R_kappa = 2 {sg} a E[sigma'(U) (sigma(U) - nu)], R_nu = -2 {sg} E sigma(U), "
        f"U = a kappa + g Z, sigma = {sig.name}"
        + ("." if S == 1 else f", with S = {S} informative tokens."),
        "sigma is odd, non-decreasing and not constant, and |sigma| <= 1 (established when "
        f"it was built: {sig.how_established('odd', 'increasing', 'bound')}); "
        "the numbers below are quadratures, not interval bounds.",
        "Interior (|kappa|, |nu| < 1): E sigma(a kappa + g Z) is odd and strictly increasing "
        "in kappa (its derivative a E sigma'(U) > 0), so R_nu = 0 iff kappa = 0; then "
        "R_kappa = -2 a nu E sigma'(gZ) (E[sigma' sigma](gZ) = 0: an odd integrand) = 0 iff "
        "nu = 0: the origin only.",
        f"Edges kappa = +-1, |nu| < 1: |R_nu| = 2 {sg} E sigma(a + gZ) = {edge_nu:.6g} > 0: "
        "no critical point.",
        "Edges nu = +-1, |kappa| < 1: sigma' > 0 and |sigma| < 1 make sigma'(U)(sigma(U) - nu) "
        "of one sign everywhere, so R_kappa != 0 (exponentially small where sigma saturates, "
        "never zero): no critical point.",
        "Corners (+-1, +-1): both factors 1 - kappa^2 and 1 - nu^2 vanish: four critical points.",
        "Hence exactly five critical points on the closed square: the origin and the four corners.",
    ]


def _scan_certificate(params: Params, sig: Nonlinearity) -> list[str]:
    """What is known of M's critical points where the proof does not apply, with numbers."""
    S = params.s
    sg = "gamma^2" if S == 1 else "S gamma^2"
    inner = interior_points(params)
    fmt = lambda rows: (  # noqa: E731
        "; ".join(f"({a:.6g}, {b:.6g})" for a, b in rows) if len(rows) else "none"
    )
    edges = {nu: edge_roots(params, nu) for nu in (1.0, -1.0)}
    why = [
        name
        for name, ok in (
            ("odd", sig.odd),
            ("monotone", sig.increasing),
            ("bounded by 1", sig.bound <= 1.0),
        )
        if not ok
    ]
    unique = (
        "E sigma(U) is strictly increasing in kappa (sigma established non-decreasing and "
        "not constant), so R_nu has at most one root: the interior list is complete."
        if sig.increasing
        else "sigma is not monotone, so R_nu may have roots the scan does not separate: "
        f"the interior list is what a scan of {EDGE_SCAN} points found, not a proof."
    )
    return [
        f"On M the Riemannian gradient is ((1 - kappa^2) R_kappa, (1 - nu^2) R_nu) with "
        f"R_kappa = 2 {sg} a E[sigma'(U) (sigma(U) - nu)], R_nu = -2 {sg} E sigma(U), "
        f"U = a kappa + g Z, sigma = {sig.name}"
        + ("." if S == 1 else f", with S = {S} informative tokens."),
        f"sigma is {', '.join('not ' + w for w in why)} (established when it was built: "
        f"{sig.how_established('odd', 'increasing', 'bound')}), so the proof that "
        "M has exactly the origin and the four corners does not apply; M's critical points "
        f"are located instead, by scans of {EDGE_SCAN} points and Brent's method.",
        "R_M is affine in nu (checked on the scan), so an interior critical point is a root "
        "kappa_0 of R_nu with nu_0 = E[sigma' sigma] / E sigma' at kappa_0, kept where "
        f"|nu_0| < 1: {fmt(inner)}. {unique}",
        "Edges kappa = +-1, |nu| < 1: R_nu != 0 there (checked): no critical point.",
        f"Edges nu = +-1, |kappa| < 1: the roots of R_kappa(kappa, +-1): "
        f"{fmt([(r, 1.0) for r in edges[1.0]])} on nu = 1, "
        f"{fmt([(r, -1.0) for r in edges[-1.0]])} on nu = -1"
        + (
            " (sigma <= 1 makes sigma'(U)(sigma(U) - 1) of one sign: none on nu = 1)."
            if sig.bound <= 1.0 and sig.increasing
            else f" (found by the scan: roots closer than 2/{EDGE_SCAN - 1} may be missed)."
        )
        + "".join(
            f" On nu = {nu:+g}, |R_kappa| underflows below 1e-290 on {share:.1%} of the scan: roots "
            "there are beyond double precision, and not listed."
            for nu in (1.0, -1.0)
            if (share := underflow(params, nu)) > 0
        ),
        "Corners (+-1, +-1): both factors 1 - kappa^2 and 1 - nu^2 vanish: four critical points.",
    ]
