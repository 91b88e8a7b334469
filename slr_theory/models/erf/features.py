"""The closed forms of erf: the features of every basis at overlaps, their enclosures and bounds, the gradient on M, and the table that holds them (EngineTable)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf, erfc

from ... import doubledouble as dd
from ...engine.contract import CHUNK, Enclosure, delta_parts, part_exponents, times, to_mid_rad
from ...engine.terms import (
    BASES,
    IR,
    ISQ,
    PAIRS,
    PN,
    PW,
    QH,
    QL,
    RH,
    RL,
    Z0,
    ZS,
    A,
    columns,
    monomial_variables,
    orders_of,
    plan_of,
)
from ...gaussian import ZETA_SERIES_BELOW, erfc_sq_reduced, zeta_reduced
from ...params import Params

__all__ = []


_PSI_BOUND = 2.0 / math.sqrt(math.pi) * 2.0**54  # see features: where psi is below an ulp of W


def _zeta_from_psi(x: np.ndarray, psi: np.ndarray, ecx: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``zeta`` at ``x`` where ``psi = E erfc(|a kappa| + g Z)^2`` and ``ecx = erfc|x|`` are known.

    ``E erfc(t + g Z) = erfc(t / sqrt q) = erfc x`` and ``1 - erf^2 = 2 erfc - erfc^2``, so
    ``zeta = 1 - 2 erfc|x| + psi`` (``zeta`` is even). For ``x^2 >= ZETA_SERIES_BELOW``,
    ``1 - 2 erfc|x| >= 0.36`` and ``psi >= 0``: a sum of positive terms, to a few ulp,
    for one pass of ``erfc`` where :func:`~slr_theory.gaussian.zeta_reduced` takes
    Owen's T (about five passes of ``erf`` at ``lambda = 0.9``). Where the quadrature of
    ``psi`` was skipped (``psi < 2^-52``, see :func:`features`), it adds at most 2 ulp.
    Below, the series of :func:`~slr_theory.gaussian.zeta_reduced`.
    """
    out = 1.0 - 2.0 * ecx + psi  # ecx = erfc|x|, shared with psi's Plackett branch
    low = x * x < ZETA_SERIES_BELOW
    if low.any():
        kl = k[:, low] if np.ndim(k) == 2 else k
        out[low] = zeta_reduced(x[low], kl[IR], kl[Z0], kl[ZS].T)
    return out


def reduced(kappa, k: np.ndarray):
    """``x``, ``x^2`` as ``hi + lo`` (to ``2^-61``, :func:`~slr_theory.doubledouble.near_sq_over`:
    the rounding of ``a kappa`` moves it by ``2^-52``) and ``s = sgn kappa`` (``k`` the
    constants, by row)."""
    m = k[A] * kappa
    eh, el = dd.near_sq_over(m, k[QH], k[QL])
    return m * k[ISQ], eh, el, np.copysign(1.0, kappa)


def _bracket(s, nu, erfc_ay):
    """``erf(y) - nu`` as ``(s - nu) - s erfc|y|``: exact where it is exponentially small."""
    return (s - nu) - s * erfc_ay


def manifold_gradient(kn: np.ndarray, constants: np.ndarray, c_kappa, c_nu) -> np.ndarray:
    """``(dR/dkappa, dR/dnu)`` on the invariant manifold for ``kn = (kappa, nu)`` ``(2, n)``.

    The two bases of the order-1 table that survive on M, ``exD`` and ``erf``, computed
    as in :func:`features`; ``c_kappa``, ``c_nu`` are their coefficients
    (``EngineTable.column``), ``constants`` a row of ``EngineTable.constants`` (or
    its transpose, one column per entry).

    Parameters
    ----------
    kn : ndarray, shape ``(2, n)``
        ``(kappa, nu)``.
    constants : ndarray
        ``EngineTable.constants`` of one temperature, or its transpose ``(N_CONSTANTS, n)``.
    c_kappa, c_nu : float or ndarray
        The coefficients of the ``exD`` and ``erf`` columns.

    Returns
    -------
    ndarray, shape ``(2, n)``
    """
    k = constants
    x, eh, el, s = reduced(kn[0], k)
    out = np.empty_like(kn)
    ex = dd.mul_exp_neg(1.0, eh, el)
    out[0] = c_kappa * ex * _bracket(s, kn[1], erfc(np.abs(x * k[IR])))
    out[1] = c_nu * erf(x)
    return out


def features(ov5: np.ndarray, constants: np.ndarray, order, *, scaled: bool = False) -> np.ndarray:
    """``Phi`` of shape ``(K, n)`` at overlaps ``ov5`` ``(5, n)`` for the table of `order`.

    ``constants`` is a row of ``EngineTable.constants`` (shared by all columns) or
    that array transposed, ``(N_CONSTANTS, n)``, one temperature per column. With
    `scaled`, the columns of :data:`GAUSSIAN_BASES` are returned without their factor
    ``e^{-x^2}``, and ``erfc|y|`` in ``D`` is kept at least ``1e-300``: what
    they are made of, even where they underflow (used to tell a plateau from a zero).

    Parameters
    ----------
    ov5 : ndarray, shape ``(5, n)``
        Feasible overlaps (unchecked).
    constants : ndarray
        ``EngineTable.constants`` of one temperature, or transposed, one per column.
    order : {0, 1, 2} or tuple of them
    scaled : bool

    Returns
    -------
    ndarray, shape ``(K, n)``
        ``K = len(columns(order))``.
    """
    k = constants
    plan = plan_of(orders_of(order), bool((k[PAIRS] if k.ndim == 1 else k[PAIRS, 0]) != 0.0))
    kappa, nu = ov5[0], ov5[1]
    n = kappa.shape[-1]
    if n > CHUNK:  # blocks that stay in cache: the same values, fewer trips to memory
        out = np.empty((len(plan.columns), n))
        per_column = np.ndim(k) == 2
        for start in range(0, n, CHUNK):
            sl = slice(start, start + CHUNK)
            out[:, sl] = features(ov5[:, sl], k[:, sl] if per_column else k, order, scaled=scaled)
        return out
    x, eh, el, s = reduced(kappa, k)
    need = plan.bases
    basis = np.empty((len(BASES), n))
    basis[0] = 1.0
    basis[1] = erf(x)
    ex = np.ones(n) if scaled else dd.mul_exp_neg(1.0, eh, el)
    basis[2] = ex
    y = x * k[IR]
    if "exey" in need:
        if scaled:
            basis[3] = dd.mul_exp_neg(1.0, *dd.near_div(eh, el, k[RH], k[RL]))
        else:  # e^{-x^2 (1 + 1/r)}
            basis[3] = dd.mul_exp_neg(1.0, *dd.near_add_div(eh, el, k[RH], k[RL]))
    if "exu" in need:
        basis[4] = ex * erf(y)
    if "exD" in need:
        tail = erfc(np.abs(y))
        if scaled:  # keep erfc|y| > 0 where it underflows: the bracket vanishes only truly
            # (1e-300 keeps the arithmetic normal; a representable nu != sgn(kappa) differs
            # from it by at least 1.1e-16, so nothing else changes)
            tail = np.maximum(tail, 1e-300)
        basis[5] = ex * _bracket(s, nu, tail)
    psi = None
    if "W" in need:
        ax = np.abs(x)
        rest = 2.0 * np.abs(basis[1]) * (1.0 - s * nu)
        # psi = E erfc(|a kappa| + g Z)^2 <= 2 E erfc(|a kappa| + g Z) = 2 erfc|x|
        # < 2 e^{-x^2} / (|x| sqrt(pi)): where that is below 2^-54 of the rest (>= 0), W is
        # the rest to an ulp and the quadrature is skipped (never where the rest vanishes:
        # at the optimum psi is the whole of W)
        ecx = erfc(ax)  # erfc|x|, for Plackett's branch of psi and for zeta
        far = None if scaled else ex * _PSI_BOUND < rest * ax
        if far is None or not far.any():
            psi = erfc_sq_reduced(ax, eh, el, k[RH], k[RL], k[PN].T, k[PW].T, ecx)
        else:
            near = ~far
            psi = np.zeros(n)
            if near.any():
                kn = k[:, near] if np.ndim(k) == 2 else k
                psi[near] = erfc_sq_reduced(
                    ax[near], eh[near], el[near], kn[RH], kn[RL], kn[PN].T, kn[PW].T, ecx[near]
                )
        basis[7] = psi + rest
    if "zeta" in need:
        if psi is None:
            basis[6] = zeta_reduced(x, k[IR], k[Z0], k[ZS].T)
        else:
            basis[6] = _zeta_from_psi(x, psi, ecx, k)
    if "erf2" in need:  # the bases of informative pairs (s > 1)
        basis[8] = basis[1] * basis[1]
        basis[9] = basis[1] * ex
        # e^{-2x^2}: scaled, one factor e^{-x^2} is left
        basis[10] = dd.mul_exp_neg(1.0, eh, el) if scaled else ex * ex
    ext = monomial_variables(ov5)
    xp = np.empty((plan.max_power + 1, n))
    xp[0] = 1.0
    for p in range(1, plan.max_power + 1):
        xp[p] = xp[p - 1] * x
    # each distinct monomial once (ndarray.take: a third of fancy indexing's cost on
    # the few tens of runs of a loop, the same values)
    mono = ext.take(plan.q[0], axis=0) * ext.take(plan.q[1], axis=0) * xp.take(plan.q[2], axis=0)
    return mono.take(plan.iq, axis=0) * basis.take(plan.ib, axis=0)


def closed_enclosure(cols, k: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Enclosure:
    """:meth:`EngineTable.enclosure` for the columns `cols` and one temperature's constants `k`.

    Each basis is monotone in ``x`` or in ``|x|`` (``zeta`` and ``1 + zeta`` rise with
    ``|x|`` by Anderson's inequality; ``e^{-x^2}``, ``e^{-x^2 - y^2}`` fall), so its range
    over a slab is its values at the ends, or at the smallest and largest ``|x|``; the
    two products, ``e^{-x^2} erf(y)`` and ``erf(x) e^{-x^2}``, and ``x^p`` times a basis, are
    interval products. ``W = (1 + zeta) - 2 nu erf(x)`` and ``exD = e^{-x^2} erf(y) - nu e^{-x^2}``
    are split into their parts.
    """
    a = k[A] * k[ISQ]
    x0, x1 = a * lo, a * hi
    m = np.where((x0 < 0.0) & (x1 > 0.0), 0.0, np.minimum(np.abs(x0), np.abs(x1)))
    M = np.maximum(np.abs(x0), np.abs(x1))
    ir2 = k[IR] * k[IR]
    zs = k[ZS].T
    zeta_m = zeta_reduced(m, k[IR], k[Z0], zs)
    zeta_M = zeta_reduced(M, k[IR], k[Z0], zs)
    ex = (np.exp(-M * M), np.exp(-m * m))
    erfx = (erf(x0), erf(x1))
    one = (np.ones_like(lo), np.ones_like(lo))
    zero = (np.zeros_like(lo), np.zeros_like(lo))
    exu = times(*ex, erf(k[IR] * x0), erf(k[IR] * x1))
    parts = {
        "1": (one, zero),
        "erf": (erfx, zero),
        "ex": (ex, zero),
        "exey": ((np.exp(-M * M * (1 + ir2)), np.exp(-m * m * (1 + ir2))), zero),
        "exu": (exu, zero),
        "exD": (exu, (-ex[1], -ex[0])),
        "zeta": ((zeta_m, zeta_M), zero),
        "W": ((1.0 + zeta_m, 1.0 + zeta_M), (-2.0 * erfx[1], -2.0 * erfx[0])),
        "erf2": ((erf(m) ** 2, erf(M) ** 2), zero),
        "erfex": (times(*erfx, *ex), zero),
        "ex2": ((np.exp(-2 * M * M), np.exp(-2 * m * m)), zero),
    }
    mid = np.empty((2, len(cols), lo.size))
    rad = np.empty_like(mid)
    for c, (_mono, p, b) in enumerate(cols):
        xp = (x0**p, x1**p) if p % 2 else (m**p, M**p)
        for part in (0, 1):
            mid[part, c], rad[part, c] = to_mid_rad(*times(*xp, *parts[b][part]))
    delta_parts(cols, mid, rad)
    return Enclosure(part_exponents(cols), mid, rad)


def closed_feature_bounds(params: Params, order) -> np.ndarray:
    """:func:`feature_bounds` of the closed-form table (:func:`closed_table`)."""
    plan_cols = columns(order, params.s > 1)
    a = params.lam * np.sqrt(params.d / 2.0)
    g = params.lam * params.gamma
    cx = a / np.sqrt(1 + 2 * g * g)
    ir2 = 1.0 / (1 + 4 * g * g)

    def gauss(p, rate):
        if p == 0:
            return 1.0
        x = min(np.sqrt(p / (2 * rate)), cx)
        return x**p * np.exp(-rate * x * x)

    out = []
    for _mono, p, b in plan_cols:
        if b == "1":
            out.append(1.0)
        elif b in ("erf", "zeta"):
            out.append(cx**p)
        elif b == "W":
            out.append(4.0 * cx**p)
        elif b in ("ex", "exu"):
            out.append(gauss(p, 1.0))
        elif b == "exD":
            out.append(2.0 * gauss(p, 1.0))
        elif b == "exey":
            out.append(gauss(p, 1.0 + ir2))
        elif b == "erf2":
            out.append(cx**p)
        elif b == "erfex":
            out.append(gauss(p, 1.0))
        elif b == "ex2":
            out.append(gauss(p, 2.0))
    return np.array(out)
