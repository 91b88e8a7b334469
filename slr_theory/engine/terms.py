"""The term algebra of the risk, model-independent: its terms and their derivatives as coefficients times bases, the plan of a table's columns, and the constants of the closed forms."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .. import doubledouble as dd
from ..gaussian import (
    PLACKETT_NODES,
    ZETA_SERIES_TERMS,
    mean_erf_prime,
    plackett_rule,
    zeta,
    zeta_series_coefficients,
    zeta_tt,
)
from ..nonlinearity import Nonlinearity, moments, nonlinearity_of
from ..params import Params

__all__ = ["COMPONENTS", "HESSIAN_PAIRS"]


K2 = 2.0 / np.sqrt(np.pi)


#: The bases of the module docstring, in feature order.
BASES = ("1", "erf", "ex", "exey", "exu", "exD", "zeta", "W", "erf2", "erfex", "ex2")


#: The bases of a nonlinearity without closed forms, functions of ``t = a kappa`` (and
#: ``nu`` for ``W_j``): ``E_j``, ``Z_j`` of :func:`slr_theory.nonlinearity.gaussian_moments`,
#: ``W_j = d^j/dt^j [1 - 2 nu E_0 + Z_0]`` and the products ``E_i E_j`` of informative pairs.
MOMENT_BASES = (
    "1",
    *(f"E{j}" for j in range(5)),
    *(f"Z{j}" for j in range(5)),
    *(f"W{j}" for j in range(5)),
    *(f"E{i}E{j}" for j in range(4) for i in range(j + 1) if i + j <= 4),
)


#: The variables of the monomials, in the order of their exponents.
MONOMIAL_VARIABLES = ("nu", "theta", "eta", "rho", "delta")


#: Rows of the value table: the risk minus ``eps**2``, split as in :class:`slr_theory.RiskComponents`.
COMPONENTS = ("informative", "distractors", "interactions")


#: Rows of the Hessian table: pairs ``(i, j)``, ``i <= j``, of overlap indices.
HESSIAN_PAIRS = tuple((i, j) for i in range(5) for j in range(i, 5))


#: The risk minus ``eps**2`` as ``(component, coefficient, exponents of
#: (nu, theta, eta, rho, delta), F)``, ``delta = nu rho - eta``.
#: ``E_j = E erf^(j)(lambda U)`` and ``Z_j = d^j zeta / dt^j (a kappa, g)`` for the informative
#: token, ``W = 1 - 2 nu E_0 + Z_0`` and ``W_2 = Z_2 - 2 nu E_2``; ``B = sqrt(d/2)``,
#: ``P = lambda E erf'(lambda Z)``, ``S_0 = zeta(0, lambda)``,
#: ``S_2 = lambda^2 zeta_tt(0, lambda)`` for the distractors (derivations/risk.py).
#: ``rho^2 W_2 + 2 rho delta E_2 = rho^2 Z_2 - 2 eta rho E_2``: the grouping keeps the
#: informative part's relative precision off M beside the edge ``nu = 1``.
RISK_TERMS = (
    ("informative", "G", (0, 0, 0, 0, 0), "W"),  # gamma^2 (1 - 2 nu E0 + Z0)
    ("informative", "Gg2", (0, 0, 0, 2, 0), "W2"),  # gamma^2 g^2 rho^2 (Z2 - 2 nu E2)
    ("informative", "2Gg2", (0, 0, 0, 1, 1), "E2"),  # 2 gamma^2 g^2 rho (nu rho - eta) E2
    ("informative", "-2Bh", (0, 1, 1, 0, 0), "E1"),  # -2 B gamma g theta eta E1
    ("informative", "B2", (0, 2, 0, 0, 0), "Z0"),  # B^2 theta^2 Z0
    ("informative", "2Bh", (0, 1, 0, 1, 0), "Z1"),  # 2 B gamma g theta rho Z1
    ("distractors", "S0L", (0, 0, 0, 0, 0), "1"),  # (L - 1) S0
    ("distractors", "S2L", (0, 0, 0, 2, 0), "1"),  # (L - 1) S2 rho^2
    ("interactions", "2LPB", (0, 1, 0, 1, 0), "E0"),  # 2 (L-1) P B theta rho E0
    ("interactions", "2LPh", (0, 0, 0, 2, 0), "E1"),  # 2 (L-1) P gamma g rho^2 E1
    ("interactions", "LLP2", (0, 0, 0, 2, 0), "1"),  # (L-1)(L-2) P^2 rho^2
    # s > 1 informative tokens: s (s - 1) m1^2, m1 = B theta E0 + gamma g rho E1 (pairs only)
    ("interactions", "SSB2", (0, 2, 0, 0, 0), "E0E0"),  # s(s-1) B^2 theta^2 E0^2
    ("interactions", "2SSBh", (0, 1, 0, 1, 0), "E0E1"),  # 2 s(s-1) B gamma g theta rho E0 E1
    ("interactions", "SSGg2", (0, 0, 0, 2, 0), "E1E1"),  # s(s-1) gamma^2 g^2 rho^2 E1^2
)


#: The terms that exist only with ``s > 1`` informative tokens (their coefficients carry
#: ``s (s - 1)``); the tables of ``s = 1`` leave them out, so the paper's numbers are the
#: same to the bit.
PAIR_TERMS = ("SSB2", "2SSBh", "SSGg2")


# Layout of the per-temperature constants the features need (one row per temperature).
A, QH, QL, RH, RL, ISQ, IR, Z0 = range(8)


ZS = slice(8, 8 + ZETA_SERIES_TERMS)


PN = slice(ZS.stop, ZS.stop + PLACKETT_NODES)


PW = slice(PN.stop, PN.stop + PLACKETT_NODES)


PAIRS = PW.stop  # 1.0 when the table has the terms of informative pairs (s > 1)


#: Length of a row of ``EngineTable.constants``.
N_CONSTANTS = PAIRS + 1


def add_term(out: dict, key, c) -> None:
    """Add `c` to the coefficient of `key` in the expression `out` (in place)."""
    out[key] = out[key] + c if key in out else c


#: ``d/dx`` of each basis ``b(x)`` times ``x^p``, apart from the power's own term:
#: ``(p, s) -> [(power, basis, factor)]`` (the closed-form derivatives of the module
#: docstring; ``s`` the table's scalars, ``s["K2"] = 2/sqrt(pi)`` among them, so that a
#: table of rigorous intervals (:mod:`slr_theory.rigorous`) runs the same algebra).
_BASIS_DERIVATIVES = {
    "erf": lambda p, s: [(p, "ex", s["K2"])],
    "ex": lambda p, s: [(p + 1, "ex", -2.0)],
    "exey": lambda p, s: [(p + 1, "exey", -2.0 * (1.0 + s["ir2"]))],
    "exu": lambda p, s: [(p + 1, "exu", -2.0), (p, "exey", s["K2"] * s["ir"])],
    "exD": lambda p, s: [(p + 1, "exD", -2.0), (p, "exey", s["K2"] * s["ir"])],
    "zeta": lambda p, s: [(p, "exu", 2.0 * s["K2"])],
    "W": lambda p, s: [(p, "exD", 2.0 * s["K2"])],
    "erf2": lambda p, s: [(p, "erfex", 2.0 * s["K2"])],
    "erfex": lambda p, s: [(p, "ex2", s["K2"]), (p + 1, "erfex", -2.0)],
    "ex2": lambda p, s: [(p + 1, "ex2", -4.0)],
}


def _ddx(expr: dict, s: dict) -> dict:
    """``d/dx`` of an expression (the closed-form derivative of each basis)."""
    out: dict = {}
    for (p, b), c in expr.items():
        if b not in _BASIS_DERIVATIVES:
            continue  # the constant 1 (the table has no bare powers of x)
        if p:
            add_term(out, (p - 1, b), p * c)
        for q, base, factor in _BASIS_DERIVATIVES[b](p, s):
            add_term(out, (q, base), factor * c)
    return out


def _dnu_basis(expr: dict) -> dict:
    """The ``nu``-derivative of the bases that contain ``nu`` (``exD`` and ``W``)."""
    out: dict = {}
    for (p, b), c in expr.items():
        if b == "exD":
            add_term(out, (p, "ex"), -c)
        elif b == "W":
            add_term(out, (p, "erf"), -2.0 * c)
    return out


def _mddt(expr: dict, s: dict) -> dict:
    """``d/dt`` of an expression in the moment bases (:data:`MOMENT_BASES`)."""
    out: dict = {}
    for (p, b), c in expr.items():
        if b == "1":
            continue
        if len(b) == 2:  # E_j, Z_j, W_j -> index + 1
            add_term(out, (p, f"{b[0]}{int(b[1]) + 1}"), c)
        else:  # a product E_i E_j: the product rule
            i, j = int(b[1]), int(b[3])
            add_term(out, (p, _pair(i + 1, j)), c)
            add_term(out, (p, _pair(i, j + 1)), c)
    return out


def _pair(i: int, j: int) -> str:
    i, j = sorted((i, j))
    return f"E{i}E{j}"


def _mdnu(expr: dict) -> dict:
    """The ``nu``-derivative of the moment bases that contain ``nu``: ``d W_j / d nu = -2 E_j``."""
    out: dict = {}
    for (p, b), c in expr.items():
        if b[0] == "W":
            add_term(out, (p, f"E{b[1]}"), -2.0 * c)
    return out


def _family(f: str, s: dict) -> dict:
    """``F`` of the term table as an expression (``E_{j+1} = q^{-1/2} dE_j/dx``, same for Z)."""
    if not s["closed"]:  # moment bases: F is itself a basis
        return {(0, "W0" if f == "W" else f): s["one"]}
    if f in ("1", "W"):
        return {(0, f): s["one"]}
    if f[0] == "W":  # W_j = q^{-j/2} d^j W / dx^j
        base = {(0, "W"): s["one"]}
        for _ in range(int(f[1])):
            base = {k: s["isq"] * c for k, c in _ddx(base, s).items()}
        return base
    if f == "E0E0":  # products of E0 = erf(x) and E1 = q^{-1/2} K2 e^{-x^2}
        return {(0, "erf2"): s["one"]}
    if f == "E0E1":
        return {(0, "erfex"): s["K2"] * s["isq"]}
    if f == "E1E1":
        return {(0, "ex2"): s["K2"] * s["K2"] * s["isq"] * s["isq"]}
    base = {(0, "erf" if f[0] == "E" else "zeta"): s["one"]}
    for _ in range(int(f[1])):
        base = {k: s["isq"] * c for k, c in _ddx(base, s).items()}
    return base


def _partial(term, i: int, s: dict):
    """``d term / d overlap_i`` as a list of terms ``(coefficient, monomial, expression)``.

    The monomial's ``delta = nu rho - eta`` by the chain rule: ``d delta / d nu = rho``,
    ``d delta / d eta = -1``, ``d delta / d rho = nu``.
    """
    coef, mono, expr = term
    out = []
    if i == 0:
        de = _ddx(expr, s) if s["closed"] else _mddt(expr, s)
        if de:
            out.append((coef * s["cx"], mono, de))
        return out
    e = mono[i - 1]
    if e:
        low = list(mono)
        low[i - 1] -= 1
        out.append((coef * e, tuple(low), expr))
    e = mono[4]
    if e and i != 2:
        low = list(mono)
        low[4] -= 1
        if i == 1:
            low[3] += 1  # rho
        elif i == 4:
            low[0] += 1  # nu
        out.append((coef * (-e if i == 3 else e), tuple(low), expr))
    if i == 1:
        de = _dnu_basis(expr) if s["closed"] else _mdnu(expr)
        if de:
            out.append((coef, mono, de))
    return out


def coefficient_scalars(params: Params, lam, sigma: Nonlinearity | None) -> dict:
    """Every temperature-dependent scalar of the table, vectorised over ``lam``; `sigma`
    None: the closed forms of ``erf``."""
    lam = np.asarray(lam, dtype=np.float64)
    g = lam * params.gamma
    qh, _ql = dd.one_plus_c_sq(g, 2.0)
    rh, _rl = dd.one_plus_c_sq(g, 4.0)
    closed = sigma is None
    if closed:
        P = lam * mean_erf_prime(0.0, lam)
        S0, S2 = zeta(0.0, lam), lam * lam * zeta_tt(0.0, lam)
    else:  # the distractor's moments, by quadrature at t = 0 with scale lam
        P, S0, S2 = _distractor_moments(sigma, lam)
    return table_scalars(
        params,
        lam,
        params.gamma,
        np.sqrt(params.d / 2.0),
        {"one": np.ones_like(lam), "isq": 1.0 / np.sqrt(qh), "ir": 1.0 / np.sqrt(rh), "K2": K2},
        (P, S0, S2),
        closed,
    )


def table_scalars(params: Params, lam, gam, B, numbers: dict, distractor, closed: bool) -> dict:
    """The scalars the term algebra multiplies, from their ingredients: one formula for
    every number type.

    `lam`, `gam` and ``B = sqrt(d/2)`` are floats or arrays (the engine's tables) or
    rigorous intervals (:mod:`slr_theory.rigorous`); `numbers` holds ``one``,
    ``isq = q^{-1/2}``, ``ir = r^{-1/2}`` and ``K2 = 2/sqrt(pi)`` of the same type;
    `distractor` is ``(P, S0, S2)``; `closed` whether the bases are erf's closed forms.
    """
    L, S = params.L, params.s
    one, isq, ir = numbers["one"], numbers["isq"], numbers["ir"]
    P, S0, S2 = distractor
    g = lam * gam
    G = gam * gam
    out = {
        "closed": closed,
        "pairs": S > 1,
        "one": one,
        "K2": numbers["K2"],
        "cx": lam * B * isq if closed else lam * B,
        "isq": isq,
        "ir": ir,
        "ir2": ir * ir,
        "G": G * one,
        "2Gg2": 2.0 * G * g * g,
        "-2Bh": -2.0 * B * gam * g,
        "B2": B * B * one,
        "2Bh": 2.0 * B * gam * g,
        "Gg2": G * g * g,
        "S0L": (L - S) * S0,
        "S2L": (L - S) * S2,
        "2LPB": 2.0 * S * (L - S) * P * B,
        "2LPh": 2.0 * S * (L - S) * P * gam * g,
        "LLP2": (L - S) * (L - S - 1) * P * P,
        "SSB2": S * (S - 1) * B * B * one,
        "2SSBh": 2.0 * S * (S - 1) * B * gam * g,
        "SSGg2": S * (S - 1) * G * g * g,
    }
    if S > 1:  # every informative token contributes its own term
        for name in ("G", "2Gg2", "-2Bh", "B2", "2Bh", "Gg2"):
            out[name] = S * out[name]
    return out


def _distractor_moments(sig: Nonlinearity, lam: np.ndarray):
    """``P = lam E sigma'(lam Z)``, ``S0 = E sigma(lam Z)^2``, ``S2 = lam^2 E (sigma^2)''(lam Z)``."""
    flat = np.ravel(lam)
    P, S0, S2 = (np.empty(flat.shape) for _ in range(3))
    for value in np.unique(flat):
        m = moments(sig, np.zeros(1), float(value), 0)
        at = flat == value
        P[at], S0[at], S2[at] = value * m["E1"][0], m["Z0"][0], value * value * m["Z2"][0]
    return P.reshape(lam.shape), S0.reshape(lam.shape), S2.reshape(lam.shape)


def entries(s: dict, order: int):
    """``[(row, (monomial, power, basis), coefficient)]`` of the table of one order
    (`s` from :func:`table_scalars`: the coefficients are of its number type)."""
    terms = [
        (comp, (s[name], mono, _family(f, s)))
        for comp, name, mono, f in RISK_TERMS
        if s["pairs"] or name not in PAIR_TERMS
    ]
    out = []
    if order == 0:
        for comp, (coef, mono, expr) in terms:
            row = COMPONENTS.index(comp)
            out.extend((row, (mono, p, b), coef * c) for (p, b), c in expr.items())
        return out
    first = [[t for _, term in terms for t in _partial(term, i, s)] for i in range(5)]
    if order == 1:
        for i, ts in enumerate(first):
            for coef, mono, expr in ts:
                out.extend((i, (mono, p, b), coef * c) for (p, b), c in expr.items())
        return out
    for row, (i, j) in enumerate(HESSIAN_PAIRS):
        for term in first[i]:
            for coef, mono, expr in _partial(term, j, s):
                out.extend((row, (mono, p, b), coef * c) for (p, b), c in expr.items())
    return out


@dataclass(frozen=True)
class _Plan:
    """Structure of one order's table: its columns and how to gather their features."""

    rows: int
    columns: tuple
    i1: np.ndarray
    i2: np.ndarray
    ip: np.ndarray
    ib: np.ndarray
    bases: frozenset
    max_power: int
    q: np.ndarray  # (3, Q): the distinct (i1, i2, ip) of the columns, each product formed once
    iq: np.ndarray  # the column's row of q


def _mono_rows(mono) -> list[int]:
    # ext = [1, nu, theta, eta, rho, delta] (monomial_variables)
    idx = [i + 1 for i, e in enumerate(mono) for _ in range(e)]
    return idx + [0] * (2 - len(idx))


def delta(nu: np.ndarray, rho: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``nu rho - eta`` to an ulp of itself: the product kept exactly (Dekker), one rounding.

    Where it is small (beside the edge ``nu = 1``, where ``rho = eta``), ``nu rho`` and
    ``eta`` agree to within a factor 2, so their difference is exact (Sterbenz) and the
    product's rounding error, added last, is the only one left.
    """
    p, err = dd.two_prod(nu, rho)
    return (p - eta) + err


def monomial_variables(ov5: np.ndarray) -> np.ndarray:
    """``(1, nu, theta, eta, rho, delta)`` ``(6, n)`` at overlaps ``(5, n)``: the rows the
    monomials of a table's columns multiply."""
    ext = np.empty((6, ov5.shape[1]))
    ext[0] = 1.0
    ext[1:5] = ov5[1:]
    ext[5] = delta(ov5[1], ov5[4], ov5[3])
    return ext


_ROWS = (len(COMPONENTS), 5, len(HESSIAN_PAIRS))


def orders_of(order) -> tuple[int, ...]:
    """The orders a table stacks, as a tuple (`order` one of 0, 1, 2 or a tuple of them)."""
    orders = (order,) if isinstance(order, int | np.integer) else tuple(order)
    if not orders or any(o not in (0, 1, 2) for o in orders):
        raise ValueError(f"`order` must be 0, 1, 2 or a tuple of them, got {order!r}.")
    return orders


def stacked_entries(s: dict, orders: tuple[int, ...]):
    """The entries of several orders, their rows stacked in the order given."""
    offset = 0
    for o in orders:
        for row, key, c in entries(s, o):
            yield row + offset, key, c
        offset += _ROWS[o]


@cache
def plan_of(orders: tuple[int, ...], pairs: bool = False, closed: bool = True) -> _Plan:
    probe = coefficient_scalars(
        Params(d=4, L=3, lam=1.0, gamma=1.0, s=2 if pairs else 1),
        1.0,
        None if closed else nonlinearity_of("tanh"),
    )
    bases = BASES if closed else MOMENT_BASES
    cols: dict = {}
    for _row, key, _c in stacked_entries(probe, orders):
        cols.setdefault(key, len(cols))
    keys = tuple(cols)
    i1 = np.array([_mono_rows(m)[0] for m, _p, _b in keys])
    i2 = np.array([_mono_rows(m)[1] for m, _p, _b in keys])
    ip = np.array([p for _m, p, _b in keys])
    q, iq = np.unique(np.stack([i1, i2, ip]), axis=1, return_inverse=True)
    return _Plan(
        rows=sum(_ROWS[o] for o in orders),
        columns=keys,
        i1=i1,
        i2=i2,
        ip=ip,
        ib=np.array([bases.index(b) for _m, _p, b in keys]),
        bases=frozenset(b for _m, _p, b in keys),
        max_power=max(p for _m, p, _b in keys),
        q=q,
        iq=iq.reshape(-1),
    )


def closed_constants(params: Params, lam: np.ndarray) -> np.ndarray:
    g = lam * params.gamma
    out = np.empty((*lam.shape, N_CONSTANTS))
    out[..., A] = lam * np.sqrt(params.d / 2.0)
    out[..., QH], out[..., QL] = dd.one_plus_c_sq(g, 2.0)
    out[..., RH], out[..., RL] = dd.one_plus_c_sq(g, 4.0)
    out[..., ISQ] = 1.0 / np.sqrt(out[..., QH])
    out[..., IR] = 1.0 / np.sqrt(out[..., RH])
    out[..., Z0] = (2.0 / np.pi) * np.arctan2(2.0 * g * g, np.sqrt(out[..., RH]))
    out[..., ZS] = zeta_series_coefficients(out[..., RH])
    out[..., PN], out[..., PW] = plackett_rule(out[..., RH])
    out[..., PAIRS] = 1.0 if params.s > 1 else 0.0
    return out


def columns(order, pairs: bool = False) -> tuple:
    """The feature columns ``(monomial, power of x, basis)`` of the table of `order`.

    Parameters
    ----------
    order : {0, 1, 2} or tuple of them
    pairs : bool
        The table of a model with ``s > 1`` informative tokens (:attr:`EngineTable.pairs`).

    Returns
    -------
    tuple of (tuple, int, str)
        In the order of ``EngineTable.C``'s last axis.

    Examples
    --------
    >>> from slr_theory.engine import columns
    >>> ((0, 0, 0, 0, 0), 0, "exD") in columns(1)
    True
    """
    return plan_of(orders_of(order), pairs).columns


def rows_on_m(table, kn: np.ndarray) -> np.ndarray:
    """A table's rows on M at ``kn = (kappa, nu)`` ``(2, n)`` (``theta = eta = rho = 0``)."""
    ov5 = np.zeros((5, kn.shape[1]))
    ov5[:2] = kn
    return table(ov5)


#: The bases that carry the factor ``e^{-x^2}`` (:func:`features` with ``scaled=True`` drops it).
GAUSSIAN_BASES = ("ex", "exey", "exu", "exD", "erfex", "ex2")


#: The bases that contain ``nu`` (affine in it).
NU_BASES = ("exD", "W")


def gaussian_columns(order, pairs: bool = False) -> np.ndarray:
    """Boolean mask of the columns of the table of `order` whose basis carries ``e^{-x^2}``.

    Parameters
    ----------
    order : {0, 1, 2} or tuple of them
    pairs : bool
        The table of a model with ``s > 1`` informative tokens (:attr:`EngineTable.pairs`).

    Returns
    -------
    ndarray of bool
    """
    return np.array([b in GAUSSIAN_BASES for _m, _p, b in columns(order, pairs)])
