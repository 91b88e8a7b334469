"""The table of a nonlinearity without closed forms: the same rows, its features Gaussian moments by quadrature (MomentTable)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...engine import contract
from ...engine.contract import Enclosure, RiskTable, delta_parts, part_exponents, times, to_mid_rad
from ...engine.terms import MOMENT_BASES, monomial_variables, orders_of, plan_of, rows_on_m
from ...nonlinearity import MOMENT_NAMES, Nonlinearity, derivative_sup, moment_sups, moments
from ...params import Params

__all__ = []


#: The last quadrature of the moments up to order 2 at a few points:
#: a Newton step asks the gradient's table and the Hessian's at the same point, and the
#: quadrature's rule (its mode search, most of the cost) serves every order at once.
_LAST_MOMENTS: list = [None]


def _shared_moments(sigma, t: np.ndarray, g: float) -> dict:
    """The moments up to order 2 at `t` by quadrature, kept for the next call there."""
    key = (g, t.tobytes())
    last = _LAST_MOMENTS[0]  # (sigma, key, moments): sigma by identity, kept alive here
    if last is not None and last[0] is sigma and last[1] == key:
        return last[2]
    got = moments(sigma, t, g, 2)
    _LAST_MOMENTS[0] = (sigma, key, got)
    return got


@dataclass(frozen=True)
class MomentTable(RiskTable):
    """The table of a nonlinearity without closed forms: the same rows, moment features.

    The coefficients are those of :class:`EngineTable` with every ``E_j``, ``Z_j`` kept as
    a basis (:data:`MOMENT_BASES`); the features are the Gaussian expectations of
    :func:`slr_theory.nonlinearity.gaussian_moments` at ``t = a kappa``.

    Attributes
    ----------
    order : int or tuple
    C : ndarray, shape ``(..., rows, K)``
    constants : ndarray, shape ``(..., 3)``
        ``(a, g, pairs)`` of each temperature: ``a = lambda sqrt(d/2)``, ``g = lambda gamma``.
    sigma : Nonlinearity
    least : int or None
        The smallest batch of ``kappa`` served from the moments' interpolant (``None``:
        :data:`slr_theory.nonlinearity.INTERPOLATE_FROM`; 0 after :meth:`prepared`).
    """

    order: int | tuple
    C: np.ndarray
    constants: np.ndarray
    sigma: Nonlinearity
    least: int | None = None

    def __call__(self, ov5: np.ndarray) -> np.ndarray:
        """The rows ``(rows, n)`` at overlaps ``(5, n)`` (one temperature; unchecked)."""
        return self.C @ self.features(ov5)

    @property
    def pairs(self) -> bool:
        """Whether the table has the terms of informative pairs (``s > 1``)."""
        return bool(np.ravel(self.constants[..., 2])[0] != 0.0)

    def at(self, j: int) -> MomentTable:
        """The table of the `j`-th temperature of a table built for several."""
        return MomentTable(self.order, self.C[j], self.constants[j], self.sigma, self.least)

    def prepared(self) -> MomentTable:
        """The table serving every batch from the moments' interpolant (built once per
        temperature and cached): for loops that evaluate it at every step."""
        return MomentTable(self.order, self.C, self.constants, self.sigma, 0)

    def scaled_part(self, ov5: np.ndarray):
        """None: no feature carries a factor that underflows before its terms do."""
        return None

    def enclosure(self, lo: np.ndarray, hi: np.ndarray) -> Enclosure:
        """:class:`Enclosure` of the features over the slabs ``lo <= kappa <= hi`` (one temperature).

        Each moment at the slab's centre ``t_c = a kappa_c``, plus or minus the half-width
        in ``t`` times the sup of its derivative (``dE_j/dt = E_{j+1}``,
        :func:`slr_theory.nonlinearity.moment_sups`) and ``1e-12`` of its own sup for
        the quadrature; ``W_j = [j = 0] + Z_j - 2 nu E_j``; products of moments as
        interval products.
        """
        orders = orders_of(self.order)
        cols = plan_of(orders, self.pairs, False).columns
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        a, g = float(self.constants[0]), float(self.constants[1])
        half = 0.5 * a * (hi - lo)
        got = moments(self.sigma, 0.5 * a * (lo + hi), g, max(orders), a, least=self.least)
        sup = moment_sups(self.sigma, g)
        iv = {}
        for j in range(3 + max(orders)):
            for f in ("E", "Z"):
                r = half * sup[f"{f}{j + 1}"] + 1e-12 * sup[f"{f}{j}"]
                iv[f"{f}{j}"] = (got[f"{f}{j}"] - r, got[f"{f}{j}"] + r)
        one = (np.ones_like(lo), np.ones_like(lo))
        zero = (np.zeros_like(lo), np.zeros_like(lo))
        mid = np.empty((2, len(cols), lo.size))
        rad = np.empty_like(mid)
        for c, (_mono, _p, b) in enumerate(cols):
            if b == "1":
                pair = (one, zero)
            elif b[0] == "W":
                z0, z1 = iv[f"Z{b[1]}"]
                e0, e1 = iv[f"E{b[1]}"]
                shift = 1.0 if b == "W0" else 0.0
                pair = ((z0 + shift, z1 + shift), (-2.0 * e1, -2.0 * e0))
            elif len(b) == 4:
                pair = (times(*iv[b[:2]], *iv[b[2:]]), zero)
            else:
                pair = (iv[b], zero)
            for part in (0, 1):
                mid[part, c], rad[part, c] = to_mid_rad(*pair[part])
        delta_parts(cols, mid, rad)
        return Enclosure(part_exponents(cols), mid, rad)

    def manifold_gradient(self, kn: np.ndarray) -> np.ndarray:
        """``(dR/dkappa, dR/dnu)`` ``(2, n)`` on M at ``kn = (kappa, nu)`` (order-1 tables)."""
        return rows_on_m(self, kn)[:2]

    def features_and_sizes(self, ov5: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Phi`` and the size of each feature's terms, from one evaluation of the
        moments (protocol: :class:`RiskTable`).

        The size is ``|Phi|``, except for two moments that can vanish by cancellation inside
        themselves, which get a bound on their terms instead:

        - ``E0 = E sigma(U)``, ``U = t + gZ``, wherever ``sigma`` changes sign (at the
          origin of M, ``E tanh(gZ)`` is 0 up to rounding): its terms are at most
          ``E |sigma(U)| <= |sigma(0)| + sup |sigma'| E |U| <= |sigma(0)| + sup |sigma'|
          (|t| + g sqrt(2/pi))``, and ``max |sigma|``; a one-signed ``sigma``
          (:attr:`slr_theory.Nonlinearity.sign`: ReLU, sigmoid) has ``E |sigma| = |E0|``,
          which ReLU's dead key, ``1e-80``, needs;
        - ``W1 = 2 s (w E sigma' - E sigma' tau)``, a difference of two terms (at the
          origin of M both are of order one and ``W1 = 2 E sigma' sigma = 0``): its size
          is ``2 (|w| E sigma' + E sigma' tau)`` where ``sigma' >= 0`` and ``tau = 1 - s sigma
          >= 0`` (``sigma`` non-decreasing, ``|sigma| <= 1``). Otherwise ``E sigma' tau``
          cancels inside itself too, and the size is ``2 (|w| E |sigma'| + T)`` with ``T`` the
          smaller of ``(1 + max |sigma|) E |sigma'|`` and ``sup |sigma'| (1 + E |sigma|)`` (the
          latter finite for an unbounded ``sigma``), or ``E sigma' + |Z1|/2`` where
          ``sigma`` is one-signed and non-decreasing (``sigma' sigma`` is then one-signed);
          ``E |sigma'|`` is ``E sigma'`` for a
          non-decreasing ``sigma``, else the sup of ``|sigma'|``. On the
          edge ``nu = sgn kappa`` (``w = 0``) one term remains: a plateau, where it is
          exponentially small, stays one.

        ``W0`` and the products of moments take the sizes of the moments they are made of;
        ``W_j = Z_j - 2 nu E_j`` (``j = 2, 3, 4``), computed from the derivatives of
        ``E tau^2``, the larger of ``|Z_j| + 2 |nu E_j|``, ``2 w |E_j|`` and itself.
        """
        basis, plan, ext = self._bases(ov5)
        phi = ext[plan.i1] * ext[plan.i2] * basis[plan.ib]
        sig = self.sigma
        index = {b: i for i, b in enumerate(MOMENT_BASES)}
        a, g = float(self.constants[0]), float(self.constants[1])
        t = a * ov5[0]
        sup1 = derivative_sup(sig, 1)  # finite for the identity too, whose sigma is not
        at0 = abs(float(np.asarray(sig.f(np.zeros(1)), dtype=np.float64)[0]))
        e0 = np.minimum(sig.bound, at0 + sup1 * (np.abs(t) + g * np.sqrt(2.0 / np.pi)))
        if not np.isfinite(sup1):  # sigma' unbounded too: no bound of E |sigma| from it
            e0 = np.zeros_like(t)
        size = {f"E{j}": np.abs(basis[index[f"E{j}"]]) for j in range(1, 5)}
        # one-signed sigma (checked when built): E |sigma(U)| is |E sigma(U)| itself
        size["E0"] = (
            np.abs(basis[index["E0"]]) if sig.sign else np.maximum(np.abs(basis[index["E0"]]), e0)
        )
        sgn = np.where(t >= 0, 1.0, -1.0)
        w = np.abs(1.0 - sgn * ov5[1])
        basis[index["E0"]] = size["E0"]
        basis[index["W0"]] = np.abs(basis[index["W0"]]) + 2.0 * w * size["E0"]
        if sig.increasing and sig.bound <= 1.0:
            e1 = np.abs(basis[index["E1"]])
            d1tau = np.abs(w * basis[index["E1"]] - 0.5 * sgn * basis[index["W1"]])
            basis[index["W1"]] = 2.0 * (w * e1 + d1tau)
        else:
            e1 = (
                np.abs(basis[index["E1"]])
                if sig.increasing or not np.isfinite(sup1)
                else np.full(t.shape, sup1)
            )
            # E |sigma' tau| <= (1 + max |sigma|) E |sigma'|, and <= sup |sigma'| (1 + E |sigma|):
            # the second is the one that stays finite for an unbounded sigma (the identity)
            tail = (1.0 + sig.bound) * e1
            if np.isfinite(sup1):
                tail = np.minimum(tail, sup1 * (1.0 + size["E0"]))
            if sig.increasing and sig.sign:  # sigma' sigma one-signed: E sigma'|sigma| = |Z1|/2
                tail = np.minimum(tail, e1 + 0.5 * np.abs(basis[index["Z1"]]))
            basis[index["W1"]] = 2.0 * (w * e1 + tail)
        nu = np.abs(ov5[1])
        for j in range(2, 5):  # W_j: the terms it is made of, or the pair it replaces
            if f"W{j}" in plan.bases:
                e, z = np.abs(basis[index[f"E{j}"]]), np.abs(basis[index[f"Z{j}"]])
                w_j = np.abs(basis[index[f"W{j}"]])
                basis[index[f"W{j}"]] = np.maximum(w_j, np.maximum(z + 2.0 * nu * e, 2.0 * w * e))
        for b in plan.bases:
            if len(b) == 4:
                basis[index[b]] = size[b[:2]] * size[b[2:]]
        return phi, np.maximum(np.abs(phi), np.abs(ext[plan.i1] * ext[plan.i2] * basis[plan.ib]))

    def features(self, ov5: np.ndarray, constants: np.ndarray | None = None) -> np.ndarray:
        """``Phi`` ``(K, n)`` at overlaps ``(5, n)``; `constants` default: the table's own.

        `constants` may be transposed, ``(3, n)``: one temperature per column.
        """
        basis, plan, ext = self._bases(ov5, constants)
        return ext[plan.i1] * ext[plan.i2] * basis[plan.ib]

    def _bases(self, ov5: np.ndarray, constants: np.ndarray | None = None):
        """The bases ``(len(MOMENT_BASES), n)`` at the overlaps, the plan, and ``(1, ov5[1:])``."""
        k = self.constants if constants is None else constants
        orders = orders_of(self.order)
        plan = plan_of(orders, self.pairs, False)
        top = max(orders)
        kappa, nu = ov5[0], ov5[1]
        n = kappa.shape[-1]
        t = k[0] * kappa
        g = np.broadcast_to(k[1], t.shape)
        names = [
            *MOMENT_NAMES[0],
            *(MOMENT_NAMES[1] if top >= 1 else ()),
            *(MOMENT_NAMES[2] if top >= 2 else ()),
        ]
        m = {key: np.empty(n) for key in names}
        a = np.broadcast_to(k[0], t.shape)
        for value in np.unique(g):
            at = g == value  # one temperature: |t| <= a, the interpolant's span
            span = float(np.max(a[at]))
            if self.least is None and at.sum() <= contract.SHARED_POINTS and top <= 2:
                got = _shared_moments(self.sigma, t[at], float(value))  # a Newton step's
            else:
                got = moments(self.sigma, t[at], float(value), top, span, least=self.least)
            for key, v in m.items():  # (shared moments hold higher orders too)
                v[at] = got[key]
        basis = np.full((len(MOMENT_BASES), n), np.nan)
        index = {b: i for i, b in enumerate(MOMENT_BASES)}
        basis[0] = 1.0
        for j in range(3 + top):
            basis[index[f"E{j}"]] = m[f"E{j}"]
            basis[index[f"Z{j}"]] = m[f"Z{j}"]
        sgn = np.where(t >= 0, 1.0, -1.0)
        w = 1.0 - sgn * nu  # >= 0: the distance of nu from the sign of kappa
        # W_j = d^j/dt^j E tau^2 + 2 s w E_j: terms small where sigma saturates, w >= 0
        basis[index["W0"]] = m["tau2"] + 2.0 * w * (sgn * m["E0"])
        basis[index["W2"]] = 2.0 * (m["d1sq"] + sgn * (w * m["E2"] - m["d2tau"]))
        if top >= 1:
            basis[index["W1"]] = 2.0 * sgn * (w * m["E1"] - m["d1tau"])
        for j in range(3, 3 + top):
            basis[index[f"W{j}"]] = m[f"d{j}tau2"] + 2.0 * w * (sgn * m[f"E{j}"])
        for b in plan.bases:
            if len(b) == 4:
                basis[index[b]] = m[b[:2]] * m[b[2:]]
        return basis, plan, monomial_variables(ov5)


def moment_feature_bounds(params: Params, order, sig: Nonlinearity) -> np.ndarray:
    """:func:`feature_bounds` of a table by quadrature (:func:`moment_table`)."""
    g = params.lam * params.gamma
    sup = moment_sups(sig, g)
    s0, s1, s2 = sup["E0"], sup["E1"], sup["E2"]
    sup["W0"] = (s0 + 1.0) ** 2 + 1.0
    sup["W1"] = 2.0 * s1 * (s0 + 1.0)
    sup["W2"] = 2.0 * (s1 * s1 + s2 * (s0 + 1.0))
    for j in (3, 4):  # W_j = Z_j - 2 nu E_j
        sup[f"W{j}"] = sup[f"Z{j}"] + 2.0 * sup[f"E{j}"]
    sup["1"] = 1.0
    out = []
    cols = plan_of(orders_of(order), params.s > 1, False).columns
    for _mono, _p, b in cols:
        out.append(sup[b[:2]] * sup[b[2:]] if len(b) == 4 else sup[b])
    return np.array(out)
