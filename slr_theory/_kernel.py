r"""Fused, unchecked per-step kernels for the training dynamics (issue 4).

:func:`slr_theory.risk.risk_grad` validates its input and evaluates each special
function through the public, fully general :mod:`slr_theory.gaussian` API. A
trajectory of 120 000 steps cannot afford that, and at a batch of 30 to 120
trajectories the cost of a NumPy step is the number of array operations, not
their size. So this module writes the gradient of the risk in the overlaps as
one small matrix product per temperature,

.. math:: \nabla R = C(\lambda)\,\Phi, \qquad
          \Phi_{(m, p, b)} = m(\nu, \theta, \eta, \rho)\, x^p\, b(x),

where ``x = a kappa / sqrt(q)`` (``a = lambda sqrt(d/2)``, ``q = 1 + 2 g^2``,
``g = lambda gamma``), the monomials ``m`` have degree at most two, and the bases
``b`` are the six special-function values ``erf(x)``, ``e^{-x^2}``,
``e^{-x^2} e^{-y^2}``, ``e^{-x^2} erf(y)``, ``e^{-x^2} D`` and ``zeta(a kappa, g)``
with ``y = x / sqrt(r)``, ``r = 1 + 4 g^2``. That works because every term of the
risk is ``const * monomial * F`` with ``F`` in ``{1, E_j, Z_j}``
(``E_j = E erf^(j)(lambda U)``, ``Z_j = d^j zeta/dt^j``, see :mod:`slr_theory.risk`),
differentiating in ``kappa`` multiplies by ``a`` and raises ``j``, and each
``E_j``, ``Z_j`` is a polynomial in ``x`` times a basis value. ``C`` depends on
``lambda`` only, so it is tabulated once per temperature (per step under a
schedule, in chunks).

``-2 gamma^2 nu E_1 + gamma^2 Z_1`` inside ``dR/dkappa`` is evaluated as
``(2 gamma^2 / sqrt(q)) erf'(x) D`` with ``D = (s - nu) - s erfc(|y|)``, ``s = sgn kappa``:
at the optimum it is exponentially small and the naive difference loses all
relative precision. ``zeta`` is ``1 - 8 T`` (Owen's T) where that is at least 1/2,
and otherwise the positive head integral of :func:`slr_theory.gaussian.zeta`
(``1 - 8 T`` alone costs ~200 ulp of ``dR/dtheta`` at small ``lambda``, where
``zeta`` is tiny and multiplied by ``d theta``).

Everything here assumes valid, feasible input; :mod:`slr_theory.dynamics` checks it.
Against :func:`slr_theory.risk.risk_grad` the kernel agrees to a few ulp of the
gradient's scale (``tests/test_kernel.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf, erfc, gammaln, owens_t

from . import gaussian as g_
from .params import Params

_K2 = 2.0 / np.sqrt(np.pi)
_NSER = 18  # terms of the series of zeta in x^2 (5 ulp where zeta < 1/2, i.e. x^2 < 0.56)


def _zeta_series(r: np.ndarray) -> np.ndarray:
    """Coefficients ``c_K``, ``K = 1.._NSER``: ``zeta = zeta(0, g) + sum_K c_K x^(2K)``.

    From ``zeta - zeta(0, g) = 2 int_0^|x| erf(w / sqrt r) erf'(w) dw`` with both
    factors expanded: ``c_K = (4/pi) (-1)^(K-1) / K
    sum_{n<K} r^(-n-1/2) / (n! (2n+1) (K-1-n)!)`` (all inner terms positive).
    """
    r = np.asarray(r, dtype=np.float64)[..., None, None]
    K = np.arange(1, _NSER + 1)[:, None]
    n = np.arange(_NSER)[None, :]
    ok = n < K
    m = np.where(ok, K - 1 - n, 0)
    logt = -(n + 0.5) * np.log(r) - gammaln(n + 1) - np.log(2 * n + 1) - gammaln(m + 1)
    inner = np.sum(np.where(ok, np.exp(logt), 0.0), axis=-1)
    return (4.0 / np.pi) * (-1.0) ** (K[:, 0] - 1) / K[:, 0] * inner


_BASES = ("erf", "ex", "exey", "exu", "exD", "Z0")


def _scalars(params: Params, lam) -> dict[str, np.ndarray]:
    """Every temperature-dependent scalar, vectorised over ``lam``."""
    lam = np.asarray(lam, dtype=np.float64)
    gam, L = params.gamma, params.L
    B = np.sqrt(params.d / 2.0)
    one = np.ones_like(lam)
    a = lam * B
    g = lam * gam
    G = gam * gam
    q = 1.0 + 2.0 * g * g
    r = 1.0 + 4.0 * g * g
    P = lam * g_.mean_erf_prime(0.0, lam)
    S2 = lam * lam * g_.zeta_tt(0.0, lam)
    isq = 1.0 / np.sqrt(q)
    return {
        "1": one,
        "a": a,
        "cx": a * isq,
        "ir": 1.0 / np.sqrt(r),  # y = x / sqrt(r)
        "z0": (2.0 / np.pi) * np.arctan2(2.0 * g * g, np.sqrt(r)),  # zeta(0, g)
        "zser": _zeta_series(r),  # (..., _NSER)
        "isq": isq,
        "iq": isq * isq,
        "isqr": isq / np.sqrt(r),
        "G": G * one,
        "-2G": -2.0 * G * one,
        "-2Gg2": -2.0 * G * g * g,
        "-2Bh": -2.0 * B * gam * g,
        "B2": B * B * one,
        "2Bh": 2.0 * B * gam * g,
        "Gg2": G * g * g,
        "S2L": (L - 1) * S2,
        "2LPB": 2.0 * (L - 1) * P * B,
        "2LPh": 2.0 * (L - 1) * P * gam * g,
        "LLP2": (L - 1) * (L - 2) * P * P,
    }


# The risk minus constants: (coefficient, exponents over (nu, theta, eta, rho), F).
# -2 c1 + s1 + (L-1) s0 + 2 (L-1) m1 m0 + (L-1)(L-2) m0^2, term by term.
_RISK_TERMS = (
    ("-2G", (1, 0, 0, 0), "E0"),
    ("-2Gg2", (0, 0, 1, 1), "E2"),
    ("-2Bh", (0, 1, 1, 0), "E1"),
    ("B2", (0, 2, 0, 0), "Z0"),
    ("G", (0, 0, 0, 0), "Z0"),
    ("2Bh", (0, 1, 0, 1), "Z1"),
    ("Gg2", (0, 0, 0, 2), "Z2"),
    ("S2L", (0, 0, 0, 2), "1"),
    ("2LPB", (0, 1, 0, 1), "E0"),
    ("2LPh", (0, 0, 0, 2), "E1"),
    ("LLP2", (0, 0, 0, 2), "1"),
)


def _expand(f: str, s: dict[str, np.ndarray]) -> list[tuple[np.ndarray, int, str]]:
    """``F`` as ``[(coefficient, power of x, basis)]`` (``u = erf y``, ``y = x ir``)."""
    K2, isq, iq, isqr, ir = _K2, s["isq"], s["iq"], s["isqr"], s["ir"]
    return {
        "E0": [(s["1"], 0, "erf")],
        "E1": [(K2 * isq, 0, "ex")],
        "E2": [(-2 * K2 * iq, 1, "ex")],
        "E3": [(4 * K2 * iq * isq, 2, "ex"), (-2 * K2 * iq * isq, 0, "ex")],
        "Z0": [(s["1"], 0, "Z0")],
        "Z1": [(2 * K2 * isq, 0, "exu")],
        "Z2": [(2 * K2 * K2 * isq * isqr, 0, "exey"), (-4 * K2 * iq, 1, "exu")],
        "Z3": [
            (2 * isq * K2 * K2 * isqr * (-2 * ir * isqr - 4 * isq), 1, "exey"),
            (8 * K2 * iq * isq, 2, "exu"),
            (-4 * K2 * iq * isq, 0, "exu"),
        ],
    }[f]


def _gradient_entries(s: dict[str, np.ndarray]):
    """``[(row, (monomial, power, basis), coefficient)]`` of the gradient."""
    out = []
    for name, mono, f in _RISK_TERMS:
        c = s[name]
        # d/dkappa: times a, derivative order + 1; the G-terms of -2 nu E1 + Z1 go stably below.
        if f != "1" and name not in ("-2G", "G"):
            for cf, p, b in _expand(f[0] + str(int(f[1]) + 1), s):
                out.append((0, (mono, p, b), c * s["a"] * cf))
        for i in range(4):
            if mono[i]:
                low = list(mono)
                low[i] -= 1
                for cf, p, b in [(s["1"], 0, "1")] if f == "1" else _expand(f, s):
                    out.append((i + 1, (tuple(low), p, b), mono[i] * c * cf))
    out.append((0, ((0, 0, 0, 0), 0, "exD"), 2 * _K2 * s["G"] * s["a"] * s["isq"]))
    return out


def _plan():
    ones = {k: np.ones(()) for k in _scalars(Params(d=4, L=2, lam=1.0, gamma=1.0), 1.0)}
    cols: dict = {}
    for _row, key, _c in _gradient_entries(ones):
        cols.setdefault(key, len(cols))
    return cols


_COLS = _plan()
_K = len(_COLS)
STABLE_COL = _COLS[((0, 0, 0, 0), 0, "exD")]  # row 0: 2 K2 gamma^2 a / sqrt(q)
NU_COL = _COLS[((0, 0, 0, 0), 0, "erf")]  # row 1: -2 gamma^2
_BASIS_INDEX = {b: i for i, b in enumerate(("1", *_BASES))}


def _mono_rows(mono):
    idx = [i + 2 for i, e in enumerate(mono) for _ in range(e)]
    return idx + [0] * (2 - len(idx))


# Phi = ext[_I1] * ext[_I2] * xpow[_IP] * basis[_IB], ext = [1, kappa, nu, theta, eta, rho].
_I1 = np.array([_mono_rows(m)[0] for (m, _p, _b) in _COLS])
_I2 = np.array([_mono_rows(m)[1] for (m, _p, _b) in _COLS])
_IP = np.array([p for (_m, p, _b) in _COLS])
_IB = np.array([_BASIS_INDEX[b] for (_m, _p, b) in _COLS])


def coefficient_table(params: Params, lam) -> tuple[np.ndarray, np.ndarray]:
    """``C`` of shape ``(..., 5, K)`` and the scalars ``(..., 3 + _NSER)``.

    The scalars are ``cx``, ``ir``, ``zeta(0, g)`` and the series coefficients of
    :func:`_zeta_series`; :func:`features` takes them unpacked (``*sc``).
    """
    s = _scalars(params, lam)
    shape = np.shape(s["a"])
    C = np.zeros((*shape, 5, _K))
    for row, key, c in _gradient_entries(s):
        C[..., row, _COLS[key]] += c
    sc = np.concatenate([np.stack([s["cx"], s["ir"], s["z0"]], axis=-1), s["zser"]], axis=-1)
    return C, sc


def _zeta(x: np.ndarray, sc: np.ndarray) -> np.ndarray:
    """``zeta(a kappa, g)`` from ``x = a kappa / sqrt(q)``, to full relative precision.

    ``1 - 8 T(sqrt2 x, 1/sqrt r)`` (Owen's T) where that is >= 1/2; below, where
    it would lose relative precision, the series ``zeta(0, g) + sum_K c_K x^(2K)``
    of :func:`_zeta_series` (there ``x^2 < 0.56``, by Jensen's inequality
    ``zeta >= erf(x)^2``). ``sc`` is the scalar table of :func:`coefficient_table`,
    shape ``(3 + _NSER,)`` or one column per entry of ``x``.
    """
    ir, z0, c = sc[1], sc[2], sc[3:]
    out = 1.0 - 8.0 * owens_t(np.sqrt(2.0) * x, ir)
    x2 = x * x
    powers = np.empty((_NSER, *x2.shape))  # x^2, x^4, ..., x^(2 _NSER) by doubling blocks
    powers[0] = x2
    done = 1
    while done < _NSER:
        step = min(done, _NSER - done)
        powers[done : done + step] = powers[:step] * powers[done - 1]
        done += step
    head = z0 + (c @ powers if c.ndim == 1 else (c * powers).sum(axis=0))
    return np.where(out >= 0.5, out, head)


def features(ov5: np.ndarray, sc: np.ndarray) -> np.ndarray:
    """``Phi`` of shape ``(K, n)`` at overlaps ``ov5`` ``(5, n)``.

    ``sc`` is a row of the scalar table of :func:`coefficient_table` (shared by
    all columns) or that table transposed, one column per trajectory.
    """
    cx, ir = sc[0], sc[1]
    k, n = ov5[0], ov5[1]
    x = cx * k
    y = ir * x
    ex = np.exp(-(x * x))
    s = np.copysign(1.0, k)
    secy = s * erfc(np.abs(y))  # s erfc(|y|), shared by erf(y) and D
    sn = s - n
    nb = k.shape[-1]
    basis = np.empty((7, nb))
    basis[0] = 1.0
    basis[1] = erf(x)
    basis[2] = ex
    basis[3] = ex * np.exp(-(y * y))
    basis[4] = ex * (s - secy)
    basis[5] = ex * (sn - secy)
    basis[6] = _zeta(x, sc)
    ext = np.empty((6, nb))
    ext[0] = 1.0
    ext[1:] = ov5
    xp = np.empty((3, nb))
    xp[0] = 1.0
    xp[1] = x
    xp[2] = x * x
    return ext[_I1] * ext[_I2] * xp[_IP] * basis[_IB]


def pgd_step(ov5: np.ndarray, G: np.ndarray, alpha) -> np.ndarray:
    """One exact PGD step on overlaps ``(5, n)`` given the partials ``(5, n)``.

    Row order ``(kappa, nu, theta, eta, rho)``; formulas in :mod:`slr_theory.dynamics`.
    ``alpha`` is a scalar or one value per column.
    """
    k, n, t, e, r = ov5
    rk, rn, rt, re, rr = G
    A = k * rk + e * re + r * rr
    Bv = t * rt + n * rn + r * rr
    ca = 1.0 + alpha * A
    cb = 1.0 + alpha * Bv
    X = rt * k + rn * e  # grad_v R . k minus its rho part
    Y = rk * t + re * n  # grad_k R . v minus its rho part
    al2 = alpha * alpha
    ik = 1.0 / np.sqrt(1.0 + al2 * (rk * rk + re * re + rr * (rr + 2.0 * Y) - A * A))
    iv = 1.0 / np.sqrt(1.0 + al2 * (rt * rt + rn * rn + rr * (rr + 2.0 * X) - Bv * Bv))
    out = np.empty_like(ov5)
    out[0] = (ca * k - alpha * (rk + rr * t)) * ik
    out[1] = (cb * n - alpha * (rn + rr * e)) * iv
    out[2] = (cb * t - alpha * (rt + rr * k)) * iv
    out[3] = (ca * e - alpha * (re + rr * n)) * ik
    out[4] = (
        ca * cb * r
        - alpha * (ca * (X + rr) + cb * (Y + rr))
        + al2 * (rk * rt + re * rn + rr * (A + Bv - r * rr))
    ) * (ik * iv)
    return out


def to_vectors(ov5: np.ndarray) -> np.ndarray:
    """Coordinates ``(8, n)`` of ``k`` (rows 0-3) and ``v`` (rows 4-7) realising overlaps ``(5, n)``.

    In the orthonormal basis ``(k*, v*, e3, e4)`` of ``span{k*, v*, k, v}``:
    ``k = (kappa, eta, k3, 0)``, ``v = (theta, nu, v3, v4)`` (a Cholesky factor of
    the Gram matrix; ``v3 = 0`` when ``k`` lies in ``span{k*, v*}``).
    """
    k, n, t, e, r = ov5
    k3 = np.sqrt(np.maximum(1.0 - k * k - e * e, 0.0))
    v3 = np.where(k3 > 0, (r - k * t - e * n) / np.where(k3 > 0, k3, 1.0), 0.0)
    v4 = np.sqrt(np.maximum(1.0 - t * t - n * n - v3 * v3, 0.0))
    zero = np.zeros_like(k)
    return np.stack([k, e, k3, zero, t, n, v3, v4])


def to_overlaps(kv: np.ndarray) -> np.ndarray:
    """The overlaps ``(5, n)`` of coordinates ``kv`` ``(8, n)`` (see :func:`to_vectors`)."""
    out = np.empty((5, kv.shape[1]))
    out[:4] = kv[_OV_ROWS]
    out[4] = (kv[:4] * kv[4:]).sum(axis=0)
    return out


_OV_ROWS = np.array([0, 5, 4, 1])  # kappa = k.k*, nu = v.v*, theta = v.k*, eta = k.v*


def vector_step(kv: np.ndarray, gr: np.ndarray, alpha) -> np.ndarray:
    """One PGD step on the coordinates ``(8, n)``, given the overlap partials ``(5, n)``.

    The iterates never leave ``span{k0, v0, k*, v*}``, so PGD in ``R^d`` is exactly
    this step in ``R^4``; it agrees with :func:`pgd_step` to rounding and costs
    fewer array operations.
    """
    k, v = kv[:4], kv[4:]
    rk, rn, rt, re, rr = gr
    gk = rr * v
    gk[0] += rk
    gk[1] += re
    gv = rr * k
    gv[0] += rt
    gv[1] += rn
    nk = k - alpha * (gk - (gk * k).sum(axis=0) * k)
    nv = v - alpha * (gv - (gv * v).sum(axis=0) * v)
    out = np.empty_like(kv)
    out[:4] = nk / np.sqrt((nk * nk).sum(axis=0))
    out[4:] = nv / np.sqrt((nv * nv).sum(axis=0))
    return out


def manifold_grad(kn: np.ndarray, cx, ir, c_kappa, c_nu) -> np.ndarray:
    """``(dR/dkappa, dR/dnu)`` on M for ``kn = (kappa, nu)`` of shape ``(2, n)``.

    ``c_kappa = 2 K2 gamma^2 a / sqrt(q)`` and ``c_nu = -2 gamma^2``.
    """
    k, n = kn
    x = cx * k
    s = np.copysign(1.0, k)
    out = np.empty_like(kn)
    out[0] = c_kappa * np.exp(-(x * x)) * ((s - n) - s * erfc(np.abs(ir * x)))
    out[1] = c_nu * erf(x)
    return out


def manifold_step(kn: np.ndarray, gr: np.ndarray, alpha) -> np.ndarray:
    """Exact PGD on M: ``x <- (x - alpha R_x (1 - x^2)) / sqrt(1 + alpha^2 R_x^2 (1 - x^2))``.

    ``|x| <= 1`` is preserved: ``1 - x_new^2 = (1 - x^2)(1 + alpha x R_x)^2 / norm^2``.
    """
    one_m = (1.0 - kn) * (1.0 + kn)
    ag = alpha * gr
    return (kn - ag * one_m) / np.sqrt(1.0 + ag * ag * one_m)
