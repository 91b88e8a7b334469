r"""The risk engine: value, gradient and Hessian of the population risk from one term table.

Every public function of :mod:`slr_theory.risk`, the dynamics (:func:`slr_theory.pgd`,
the flows, SGD's pricing) and the geometry layer evaluate the risk here; they
differ only in what they validate first. The population risk minus ``eps**2`` is
a sum of terms

.. math:: \text{const}(\lambda)\; \nu^{e_1}\theta^{e_2}\eta^{e_3}\rho^{e_4}\delta^{e_5}\; F(x),
          \qquad x = \frac{a\kappa}{\sqrt q}, \qquad \delta = \nu\rho - \eta,

(:data:`RISK_TERMS`; ``a = lambda sqrt(d/2)``, ``g = lambda gamma``, ``q = 1 + 2 g^2``,
``r = 1 + 4 g^2``, ``y = x / sqrt(r)``) where every ``F`` is a polynomial in ``x`` times
one of the *bases*

=========  =====================================================
``erf``    ``erf(x)``
``ex``     ``e^{-x^2}``
``exey``   ``e^{-x^2} e^{-y^2}``
``exu``    ``e^{-x^2} erf(y)``
``exD``    ``e^{-x^2} [erf(y) - nu]``, as ``e^{-x^2} [(s - nu) - s erfc|y|]``, ``s = sgn kappa``
``zeta``   ``zeta(a kappa, g)`` (:func:`slr_theory.gaussian.zeta_reduced`)
``W``      ``1 - 2 nu erf(x) + zeta = E erfc(|a kappa| + gZ)^2 + 2 erf|x| (1 - s nu)``
=========  =====================================================

Each basis has a closed-form derivative in ``x`` that stays in the family (e.g.
``d exD/dx = -2x exD + (2/sqrt(pi)) r^{-1/2} exey``), so the partial derivatives of
any order are generated mechanically from the one table: ``d/dkappa = (a/sqrt q) d/dx``,
and ``d/dnu`` acts on the monomial and on the two bases that contain ``nu``.
Grouping the informative token's ``gamma^2 (1 - 2 nu E_0 + Z_0)`` into the single
basis ``W`` is what keeps the risk and its ``kappa``-derivatives to relative
precision at the optimum, where they are exponentially small differences of
numbers of order one. Off M beside the edge ``nu = 1`` the pair
``gamma^2 g^2 (rho^2 Z_2 - 2 eta rho E_2)`` cancels the same way; it is written
``gamma^2 g^2 (rho^2 W_2 + 2 rho delta E_2)`` with ``W_2 = Z_2 - 2 nu E_2`` the second
derivative of ``W`` and ``delta = nu rho - eta`` (0 on the edge, where ``rho = eta``)
a sixth variable of the monomials, computed exactly (:func:`delta`).

A table ``C`` of coefficients (rows: components, partials or Hessian entries;
columns: monomial x power of ``x`` x basis) depends on ``lambda`` only; the
*features* ``Phi`` depend on the overlaps. Then every quantity is ``C @ Phi``:
one matrix product per temperature, whatever the batch. Exponents are carried in
double-double (:mod:`slr_theory.doubledouble`), so ``e^{-x^2}`` does not inherit the
``2 x^2`` condition number of a rounded square.

Everything here assumes validated, feasible input; :mod:`slr_theory.risk` is the
checked front door.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Protocol, runtime_checkable

import numpy as np
from scipy.special import erf, erfc

from . import doubledouble as dd
from .gaussian import (
    PLACKETT_NODES,
    ZETA_SERIES_BELOW,
    ZETA_SERIES_TERMS,
    erfc_sq_reduced,
    mean_erf_prime,
    plackett_rule,
    zeta,
    zeta_reduced,
    zeta_series_coefficients,
    zeta_tt,
)
from .nonlinearity import (
    MOMENT_NAMES,
    Nonlinearity,
    derivative_sup,
    moment_sups,
    moments,
    nonlinearity_of,
)
from .params import Params

# The model interface: what every layer above the engine may use (tests/test_house.py
# checks it). The bases, feature kernels and table classes below are the engine's own:
# importable, documented in docs/api.md as internal, without a promise.
__all__ = [
    "COMPONENTS",
    "HESSIAN_PAIRS",
    "RiskTable",
    "components",
    "feature_bounds",
    "gradient",
    "hessian",
    "hessian_matrices",
    "manifold_nullcline",
    "table",
    "value_and_gradient",
]

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
_A, _QH, _QL, _RH, _RL, _ISQ, _IR, _Z0 = range(8)
_ZS = slice(8, 8 + ZETA_SERIES_TERMS)
_PN = slice(_ZS.stop, _ZS.stop + PLACKETT_NODES)
_PW = slice(_PN.stop, _PN.stop + PLACKETT_NODES)
_PAIRS = _PW.stop  # 1.0 when the table has the terms of informative pairs (s > 1)
#: Length of a row of ``EngineTable.constants``.
N_CONSTANTS = _PAIRS + 1


# --- the algebra: expressions are {(power of x, basis): coefficient} --------------------


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


def _coefficient_scalars(params: Params, lam, sigma: Nonlinearity | None) -> dict:
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


def _stacked_entries(s: dict, orders: tuple[int, ...]):
    """The entries of several orders, their rows stacked in the order given."""
    offset = 0
    for o in orders:
        for row, key, c in entries(s, o):
            yield row + offset, key, c
        offset += _ROWS[o]


@cache
def _plan(orders: tuple[int, ...], pairs: bool = False, closed: bool = True) -> _Plan:
    probe = _coefficient_scalars(
        Params(d=4, L=3, lam=1.0, gamma=1.0, s=2 if pairs else 1),
        1.0,
        None if closed else nonlinearity_of("tanh"),
    )
    bases = BASES if closed else MOMENT_BASES
    cols: dict = {}
    for _row, key, _c in _stacked_entries(probe, orders):
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


@runtime_checkable
class RiskTable(Protocol):
    """What a model's table offers the layers above the engine: the model interface.

    :func:`table` returns one for every model ``Params`` describes (the closed forms of
    ``erf``, or quadrature for any other nonlinearity); the dynamics, the geometry, the
    locator and the figures use these members only, so a new model is a new table kind
    and nothing above it changes.

    Attributes
    ----------
    order : int or tuple
        0 (the components :data:`COMPONENTS`), 1 (the five partials), 2 (the Hessian
        entries of :data:`HESSIAN_PAIRS`), or a tuple stacking several.
    C : ndarray, shape ``(..., rows, K)``
        Coefficients; the leading shape is that of the temperatures.
    constants : ndarray
        What the features need of each temperature (opaque above the engine).

    Notes
    -----
    The methods, each on validated overlaps ``ov5`` of shape ``(5, n)``:

    - ``table(ov5)``: the rows ``(rows, n)`` at one temperature;
    - ``features(ov5, constants=None)``: ``Phi`` ``(K, n)`` with ``rows = C @ Phi``,
      so a loop over several temperatures or parameter groups can share one product;
    - ``at(j)``: the table of the `j`-th temperature of a table built for several;
    - ``scaled_part(ov5)``: ``(C, Phi)`` of the columns carrying a factor that underflows
      before its terms do (the locator's plateau test), or ``None`` when there are none;
    - ``features_and_sizes(ov5)``: ``Phi`` and ``(K, n)`` the size of the terms each
      feature is made of, from one evaluation: ``|Phi|`` where every feature is an
      expectation of one sign, larger where an integrand changes sign (what a partial
      that vanishes by cancellation is zero against);
    - ``manifold_gradient(kn)``: ``(dR/dkappa, dR/dnu)`` ``(2, n)`` on M;
    - ``pairs``: whether the rows include the informative pairs of ``s > 1``;
    - ``prepared()``: the same table, readied for a loop that evaluates it again and
      again (a table by quadrature then serves every batch from its interpolant in
      ``kappa``; a closed-form table is already ready);
    - ``enclosure(lo, hi)``: an :class:`Enclosure` of every feature over the slabs
      ``lo <= kappa <= hi`` of the feasible set (certified bounds, e.g. on
      ``sup ||Hess R||``).

    Two optional hooks, whose defaults here return None (a table class that subclasses
    the protocol inherits them; the caller then takes the general way):

    - ``loop_kernel()``: the :class:`LoopKernel` of an order-1 table of one temperature,
      a long run's gradient (the closed forms of ``erf`` have one);
    - ``placed(rows, scale)``: the same table with its rows placed as `rows` says (an
      index per output row, None for a zero row) and times `scale`, so that a loop's step
      reads its gradient in one product.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import RiskTable, table
    >>> all(isinstance(table(Params.paper().replace(nonlinearity=s), 0.1, 1), RiskTable)
    ...     for s in ("erf", "tanh"))
    True
    """

    order: int | tuple
    C: np.ndarray
    constants: np.ndarray

    def __call__(self, ov5: np.ndarray) -> np.ndarray: ...

    def features(self, ov5: np.ndarray, constants: np.ndarray | None = None) -> np.ndarray: ...

    def at(self, j: int) -> RiskTable: ...

    def scaled_part(self, ov5: np.ndarray): ...

    def features_and_sizes(self, ov5: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def manifold_gradient(self, kn: np.ndarray) -> np.ndarray: ...

    @property
    def pairs(self) -> bool: ...

    def prepared(self) -> RiskTable: ...

    def enclosure(self, lo: np.ndarray, hi: np.ndarray) -> Enclosure: ...

    def loop_kernel(self) -> LoopKernel | None:
        """The loop kernel of an order-1 table of one temperature, or None (the default)."""
        return None

    def placed(self, rows, scale: float = 1.0) -> RiskTable | None:
        """The table with its rows placed as `rows` says and times `scale`, or None
        (the default)."""
        return None


@dataclass(frozen=True)
class Enclosure:
    """Interval enclosures of a table's features over slabs ``lo <= kappa <= hi``.

    Every feature is a sum of two parts, each a monomial in ``(nu, theta, eta, rho)``
    times a function of ``kappa``: ``Phi_c = m_c f_c(kappa) + m'_c g_c(kappa)``. For a
    basis affine in ``nu``, ``m'_c = nu m_c``; for a column whose monomial carries
    ``delta = nu rho - eta`` (``m delta``, the basis free of ``nu``), ``m_c = eta m``,
    ``f_c = -b``, ``m'_c = nu rho m``, ``g_c = b``. On slab ``i``, ``f_c(kappa)`` lies in
    ``mid[0, c, i] +- rad[0, c, i]`` for every ``kappa`` of the slab (in exact arithmetic;
    the values carry the rounding of a few operations, ``~1e-15`` relative), and likewise
    ``g``.

    Attributes
    ----------
    exponents : ndarray of int, shape ``(2, K, 4)``
        The exponents of ``(nu, theta, eta, rho)`` in the monomial of each part.
    mid, rad : ndarray, shape ``(2, K, n)``
        Centre and radius of each part on each slab (``rad >= 0``).
    """

    exponents: np.ndarray
    mid: np.ndarray
    rad: np.ndarray


def _part_exponents(cols) -> np.ndarray:
    """``(2, K, 4)``: the monomials of the two parts of each column (:class:`Enclosure`)."""
    e = np.array([m for m, _p, _b in cols], dtype=np.int64).reshape(len(cols), 5)
    if np.any(e[:, 4] > 1) or any(m[4] and b in NU_BASES for m, _p, b in cols):
        raise ValueError("a column with delta^2, or delta times a basis with nu")
    d = e[:, 4] == 1
    e0, e1 = e[:, :4].copy(), e[:, :4].copy()
    e1[:, 0] += 1
    e0[d, 2] += 1  # delta m = -eta m + nu rho m
    e1[d, 3] += 1
    return np.stack([e0, e1])


def _delta_parts(cols, mid: np.ndarray, rad: np.ndarray) -> None:
    """Parts ``(f, g) = (-b, b)`` of the columns carrying ``delta`` (in place; part 0 holds
    ``b`` on entry, part 1 nothing)."""
    for c, (m, _p, _b) in enumerate(cols):
        if m[4]:
            mid[1, c], rad[1, c] = mid[0, c], rad[0, c]
            mid[0, c] = -mid[0, c]


def _times(a0, a1, b0, b1):
    """The interval product ``[a0, a1] * [b0, b1]`` (elementwise)."""
    p = np.stack([a0 * b0, a0 * b1, a1 * b0, a1 * b1])
    return p.min(axis=0), p.max(axis=0)


def _to_mid_rad(lo, hi):
    return 0.5 * (lo + hi), 0.5 * (hi - lo)


def closed_enclosure(cols, k: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Enclosure:
    """:meth:`EngineTable.enclosure` for the columns `cols` and one temperature's constants `k`.

    Each basis is monotone in ``x`` or in ``|x|`` (``zeta`` and ``1 + zeta`` rise with
    ``|x|`` by Anderson's inequality; ``e^{-x^2}``, ``e^{-x^2 - y^2}`` fall), so its range
    over a slab is its values at the ends, or at the smallest and largest ``|x|``; the
    two products, ``e^{-x^2} erf(y)`` and ``erf(x) e^{-x^2}``, and ``x^p`` times a basis, are
    interval products. ``W = (1 + zeta) - 2 nu erf(x)`` and ``exD = e^{-x^2} erf(y) - nu e^{-x^2}``
    are split into their parts.
    """
    a = k[_A] * k[_ISQ]
    x0, x1 = a * lo, a * hi
    m = np.where((x0 < 0.0) & (x1 > 0.0), 0.0, np.minimum(np.abs(x0), np.abs(x1)))
    M = np.maximum(np.abs(x0), np.abs(x1))
    ir2 = k[_IR] * k[_IR]
    zs = k[_ZS].T
    zeta_m = zeta_reduced(m, k[_IR], k[_Z0], zs)
    zeta_M = zeta_reduced(M, k[_IR], k[_Z0], zs)
    ex = (np.exp(-M * M), np.exp(-m * m))
    erfx = (erf(x0), erf(x1))
    one = (np.ones_like(lo), np.ones_like(lo))
    zero = (np.zeros_like(lo), np.zeros_like(lo))
    exu = _times(*ex, erf(k[_IR] * x0), erf(k[_IR] * x1))
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
        "erfex": (_times(*erfx, *ex), zero),
        "ex2": ((np.exp(-2 * M * M), np.exp(-2 * m * m)), zero),
    }
    mid = np.empty((2, len(cols), lo.size))
    rad = np.empty_like(mid)
    for c, (_mono, p, b) in enumerate(cols):
        xp = (x0**p, x1**p) if p % 2 else (m**p, M**p)
        for part in (0, 1):
            mid[part, c], rad[part, c] = _to_mid_rad(*_times(*xp, *parts[b][part]))
    _delta_parts(cols, mid, rad)
    return Enclosure(_part_exponents(cols), mid, rad)


@dataclass(frozen=True)
class EngineTable(RiskTable):
    """The coefficients and constants of one order at one or several temperatures.

    Attributes
    ----------
    order : int
        0 (the components), 1 (the five partials) or 2 (the Hessian entries of
        :data:`HESSIAN_PAIRS`).
    C : ndarray, shape ``(..., rows, K)``
        Coefficients; the leading shape is that of the temperatures.
    constants : ndarray, shape ``(..., N_CONSTANTS)``
        What :func:`features` needs of each temperature.
    """

    order: int | tuple
    C: np.ndarray
    constants: np.ndarray

    def __call__(self, ov5: np.ndarray) -> np.ndarray:
        """The rows ``(rows, n)`` at overlaps ``(5, n)`` (one temperature; unchecked)."""
        return self.C @ features(ov5, self.constants, self.order)

    def features(self, ov5: np.ndarray, constants: np.ndarray | None = None) -> np.ndarray:
        """``Phi`` ``(K, n)`` at overlaps ``(5, n)``; `constants` default: the table's own."""
        k = self.constants if constants is None else constants
        return features(ov5, k, self.order)

    def at(self, j: int) -> EngineTable:
        """The table of the `j`-th temperature of a table built for several."""
        return EngineTable(self.order, self.C[j], self.constants[j])

    def scaled_part(self, ov5: np.ndarray):
        """``(C, Phi)`` restricted to the columns carrying ``e^{-x^2}``, without that factor.

        Where ``x^2`` is large the factor underflows and a plateau's gradient is exactly
        0.0; the scaled part decides whether it vanishes before the factor
        (:func:`features` with ``scaled=True``). Order-1 tables only.
        """
        mask = gaussian_columns(self.order, self.pairs)
        return self.C[..., mask], features(ov5, self.constants, self.order, scaled=True)[mask]

    def features_and_sizes(self, ov5: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Phi`` and ``|Phi|``: every feature is an expectation of one sign (protocol:
        :class:`RiskTable`)."""
        phi = self.features(ov5)
        return phi, np.abs(phi)

    def manifold_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The coefficients of the two columns that survive on M (for :func:`manifold_gradient`)."""
        return self.column(0, (0, 0, 0, 0, 0), 0, "exD"), self.column(1, (0, 0, 0, 0, 0), 0, "erf")

    def manifold_gradient(self, kn: np.ndarray) -> np.ndarray:
        """``(dR/dkappa, dR/dnu)`` ``(2, n)`` on M at ``kn = (kappa, nu)`` (order-1 tables)."""
        return manifold_gradient(kn, self.constants, *self.manifold_columns())

    @property
    def pairs(self) -> bool:
        """Whether the table has the terms of informative pairs (``s > 1``)."""
        return bool(np.ravel(self.constants[..., _PAIRS])[0] != 0.0)

    def prepared(self) -> EngineTable:
        """Itself: the closed forms need no preparation for a loop."""
        return self

    def enclosure(self, lo: np.ndarray, hi: np.ndarray) -> Enclosure:
        """:class:`Enclosure` of the features over the slabs ``lo <= kappa <= hi`` (one temperature)."""
        cols = _plan(orders_of(self.order), self.pairs).columns
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        return closed_enclosure(cols, self.constants, lo, hi)

    def loop_kernel(self) -> LoopKernel:
        """:func:`loop_kernel` of this table (order 1, one temperature)."""
        return loop_kernel(self)

    def placed(self, rows, scale: float = 1.0) -> EngineTable:
        """The table whose row ``i`` is ``scale`` times row ``rows[i]`` (zero where
        ``rows[i]`` is None)."""
        at = np.array([i for i, r in enumerate(rows) if r is not None])
        src = np.array([r for r in rows if r is not None])
        C = np.zeros((*self.C.shape[:-2], len(rows), self.C.shape[-1]))
        C[..., at, :] = scale * self.C[..., src, :]
        return EngineTable(self.order, C, self.constants)

    def column(self, row: int, mono: tuple, power: int, basis: str) -> np.ndarray:
        """The coefficient of one feature in one row (e.g. for a specialised kernel)."""
        plan = _plan(orders_of(self.order), self.pairs)
        return self.C[..., row, plan.columns.index((mono, power, basis))]


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
        cols = _plan(orders, self.pairs, False).columns
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
                pair = (_times(*iv[b[:2]], *iv[b[2:]]), zero)
            else:
                pair = (iv[b], zero)
            for part in (0, 1):
                mid[part, c], rad[part, c] = _to_mid_rad(*pair[part])
        _delta_parts(cols, mid, rad)
        return Enclosure(_part_exponents(cols), mid, rad)

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
        plan = _plan(orders, self.pairs, False)
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
            if self.least is None and at.sum() <= SHARED_POINTS and top <= 2:
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


#: Batches up to this size share one direct evaluation of the gradient's and the
#: Hessian's terms (a Newton step asks both tables at the same point); larger ones
#: evaluate each table's own.
SHARED_POINTS = 64


def rows_on_m(table, kn: np.ndarray) -> np.ndarray:
    """A table's rows on M at ``kn = (kappa, nu)`` ``(2, n)`` (``theta = eta = rho = 0``)."""
    ov5 = np.zeros((5, kn.shape[1]))
    ov5[:2] = kn
    return table(ov5)


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
    return _plan(orders_of(order), pairs).columns


def table(params: Params, lam, order: int) -> RiskTable:
    """The table of `order` at temperature(s) `lam` (any shape) for the model `params`.

    Parameters
    ----------
    params : Params
        ``d``, ``L`` and ``gamma`` are used (``params.lam`` is not: pass `lam`).
    lam : float or array_like
        Positive temperatures.
    order : {0, 1, 2} or tuple of them
        A tuple stacks the rows of several orders over one set of features (e.g.
        ``(0, 1)``: the risk and its gradient, sharing every special function).

    Returns
    -------
    RiskTable
        The model's table (:meth:`slr_theory.models.Model.table`): :class:`EngineTable`
        (closed forms) for ``erf``, :class:`MomentTable` (quadrature) for any other
        nonlinearity, the softmax model's own for softmax; each is a :class:`RiskTable`,
        the one interface the layers above use.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import table
    >>> t = table(Params.paper(), 0.1, 1)
    >>> t.C.shape[:-1], t.constants.shape[-1] > 0
    ((5,), True)
    """
    orders_of(order)
    return params.model.table(params, np.asarray(lam, dtype=np.float64), order)


def closed_table(params: Params, lam: np.ndarray, order) -> EngineTable:
    """The :class:`EngineTable` of ``erf``'s closed forms (a model's :meth:`table` hook)."""
    return _pointwise_table(params, lam, order, None)


def moment_table(params: Params, lam: np.ndarray, order, sigma: Nonlinearity) -> MomentTable:
    """The :class:`MomentTable` of a pointwise `sigma` by quadrature (the default hook)."""
    return _pointwise_table(params, lam, order, sigma)


def _pointwise_table(params: Params, lam: np.ndarray, order, sigma):
    if (
        np.ndim(lam) == 0
    ):  # one temperature: the Newton loops ask for the same few, again and again
        return _one_table(
            params, float(lam), order if np.ndim(order) == 0 else tuple(order), sigma
        )
    return _build_table(params, lam, orders_of(order), order, sigma)


@lru_cache(maxsize=512)
def _one_table(params: Params, lam: float, order, sigma):
    """A pointwise table at one temperature, cached (its arrays are read-only)."""
    out = _build_table(params, np.float64(lam), orders_of(order), order, sigma)
    out.C.flags.writeable = False
    out.constants.flags.writeable = False
    return out


def _build_table(params: Params, lam: np.ndarray, orders: tuple, order, sigma):
    s = _coefficient_scalars(params, lam, sigma)
    plan = _plan(orders, s["pairs"], s["closed"])
    C = np.zeros((*lam.shape, plan.rows, len(plan.columns)))
    index = {k: i for i, k in enumerate(plan.columns)}
    for row, key, c in _stacked_entries(s, orders):
        C[..., row, index[key]] += c
    if not s["closed"]:
        k = np.stack(
            np.broadcast_arrays(lam * np.sqrt(params.d / 2.0), lam * params.gamma, s["pairs"]),
            axis=-1,
        ).astype(np.float64)
        return MomentTable(order, C, k, sigma)
    return EngineTable(order, C, _constants(params, lam))


def _constants(params: Params, lam: np.ndarray) -> np.ndarray:
    g = lam * params.gamma
    out = np.empty((*lam.shape, N_CONSTANTS))
    out[..., _A] = lam * np.sqrt(params.d / 2.0)
    out[..., _QH], out[..., _QL] = dd.one_plus_c_sq(g, 2.0)
    out[..., _RH], out[..., _RL] = dd.one_plus_c_sq(g, 4.0)
    out[..., _ISQ] = 1.0 / np.sqrt(out[..., _QH])
    out[..., _IR] = 1.0 / np.sqrt(out[..., _RH])
    out[..., _Z0] = (2.0 / np.pi) * np.arctan2(2.0 * g * g, np.sqrt(out[..., _RH]))
    out[..., _ZS] = zeta_series_coefficients(out[..., _RH])
    out[..., _PN], out[..., _PW] = plackett_rule(out[..., _RH])
    out[..., _PAIRS] = 1.0 if params.s > 1 else 0.0
    return out


def feature_bounds(params: Params, order: int) -> np.ndarray:
    """``sup |feature|`` over the feasible set for each column of the table of `order`.

    The model's (:meth:`slr_theory.models.Model.feature_bounds`). For ``erf``:
    ``sup |x^p b(x)|`` of each closed-form basis (``|erf| <= 1``,
    ``sup x^p e^{-x^2} = (p / 2e)^{p/2}``). For a nonlinearity by quadrature: the moments
    are bounded by the sups of the derivatives they average
    (:func:`slr_theory.nonlinearity.moment_sups`). The monomials by 1: ``delta = nu rho -
    eta = -k . (v* - nu v)`` and ``|v* - nu v| = sqrt(1 - nu^2)``, so ``|delta| <= 1`` too.

    Parameters
    ----------
    params : Params
    order : {1, 2}

    Returns
    -------
    ndarray, shape ``(K,)``
        In the order of the table's columns.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import feature_bounds, table
    >>> p = Params.paper()
    >>> feature_bounds(p, 1).shape == table(p, p.lam, 1).C.shape[-1:]
    True
    """
    return params.model.feature_bounds(params, order)


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
    cols = _plan(orders_of(order), params.s > 1, False).columns
    for _mono, _p, b in cols:
        out.append(sup[b[:2]] * sup[b[2:]] if len(b) == 4 else sup[b])
    return np.array(out)


# --- the loop kernel: one temperature's gradient as polynomials in kappa ----------------

#: Nodes per piece of a :class:`LoopKernel` (its polynomials have degree ``KERNEL_NODES - 1``).
KERNEL_NODES = 12
#: A kernel's polynomials agree with the features they interpolate to this many units of
#: ``2**-52`` of the size of their terms, checked between the nodes as they are built.
KERNEL_ULPS = 32.0
#: A kernel interpolates the components with their factor ``e^{-x^2}`` when ``x^2 <= KERNEL_FOLD``
#: for every ``kappa`` (the factor then changes a component's size by at most 64 times over
#: ``[-1, 1]``, nowhere near underflow); beyond, it computes the factor.
KERNEL_FOLD = math.log(64.0)
_KERNEL_MAX_PIECES = 1 << 14
_KW = 0.5 * np.cos(np.pi * (np.arange(KERNEL_NODES) + 0.5) / KERNEL_NODES)  # nodes in w
# probes: between neighbouring nodes and at the ends of a piece (w = +-1/2)
_KP = np.concatenate([[-0.5], 0.5 * (_KW[:-1] + _KW[1:]), [0.5]])


@cache
def _kernel_conversion() -> tuple[np.ndarray, np.ndarray]:
    """``(KERNEL_NODES, KERNEL_NODES)``: values at the nodes ``_KW`` -> coefficients of ``w^j``.

    Values to Chebyshev coefficients in ``t = 2w`` (a cosine transform, well conditioned),
    then ``T_k(2w)`` to powers of ``w`` (integers times powers of two, exact).
    """
    n = KERNEL_NODES
    dct = (2.0 / n) * np.cos(np.pi * np.outer(np.arange(n), np.arange(n) + 0.5) / n)
    dct[0] *= 0.5
    to_powers = np.zeros((n, n))
    for k in range(n):
        unit = np.zeros(n)
        unit[k] = 1.0
        powers = np.polynomial.chebyshev.cheb2poly(unit)  # trailing zeros trimmed
        to_powers[: powers.size, k] = powers * 2.0 ** np.arange(powers.size)
    return to_powers, dct


class LoopKernel:
    """The order-1 rows of one temperature as polynomials in ``kappa``: a PGD loop's gradient.

    Every feature of the order-1 table is a monomial in ``(nu, theta, eta, rho)`` times
    a function of ``kappa`` affine in ``nu`` (the parts of :class:`Enclosure`). Grouped by
    row, by monomial and by whether they carry ``e^{-x^2}``, they give ``F`` *components*
    ``c_f(kappa)``, and

    .. math:: \\text{row}_r = \\sum_f R_{fr}\\, m_f\\, c_f(\\kappa)\\, [e^{-x^2}]^{g_f}.

    Each component, without its Gaussian factor, is a polynomial of degree
    ``KERNEL_NODES - 1`` on each of ``pieces + 1`` pieces of width ``2 / pieces`` centred
    at ``2j / pieces``, ``|j| <= pieces / 2`` (they reach ``1/pieces`` past ``+-1``, so
    a ``kappa`` rounded past ``+-1`` needs no clipping), interpolating the engine's
    :func:`features` at Chebyshev nodes. Pieces
    are halved until, between the nodes and at the ends, every component agrees with
    the features to :data:`KERNEL_ULPS` ulp of the size of its terms on the piece. Where
    ``e^{-x^2}`` can become small (``x^2 > KERNEL_FOLD`` at ``kappa = 1``) the factor
    ``exp(-x2 kappa^2)`` is computed, not interpolated, so a component keeps its
    relative precision where the factor underflows; its rounding adds the engine's
    own ``2 x^2`` ulp. ``e^{-x^2} [erf(y) - nu]`` counts as two terms here: the
    kernel does not keep the relative precision of ``R_kappa`` at the optimum that the
    validated functions keep, which a PGD step cannot see (it multiplies ``R_kappa``
    by ``1 - kappa^2`` and ``alpha``, below an ulp of ``kappa``).

    A call costs about seventeen NumPy calls whatever the table (:func:`features`:
    about sixty), which is what a loop over a few tens of runs pays for. Build
    one with :func:`loop_kernel`.

    Attributes
    ----------
    coefficients : ndarray, shape ``(pieces + 1, F, KERNEL_NODES)``
        Coefficients of ``w^i`` on piece ``j`` (at row ``j mod (pieces + 1)``), ``w`` in
        ``[-1/2, 1/2]``, ``kappa = (2 / pieces) (j + w)``.
    gaussian : int
        The first `gaussian` components carry ``e^{-x^2}``.
    x2 : float
        ``x^2 / kappa^2 = a^2 / q``.
    monomials : ndarray of int, shape ``(F,)``
        Each component's monomial as ``36 i + 6 j + k``: the product ``e_i e_j e_k`` of
        the variables ``e = (1, kappa, eta, theta, nu, rho)`` (:func:`kernel_monomial`).
    rows : ndarray, shape ``(F, R)``
        ``R_{fr}``: what each component adds to each output row.
    """

    def __init__(self, coefficients, gaussian: int, x2: float, monomials, rows):
        self.coefficients = coefficients
        self.gaussian = gaussian
        self.x2 = x2
        self.monomials = monomials
        self.rows = rows
        # 0-d arrays: a product with one costs less than with a Python float (NumPy 2)
        self._scale = np.array(0.5 * (coefficients.shape[0] - 1))
        self._minus_x2 = np.array(-x2)
        first, rest = np.divmod(monomials, 36)
        second, third = np.divmod(rest, 6)
        # the factors a call multiplies by: as many as the largest degree needs (none for
        # monomials that are all 1)
        self._factors = [np.ascontiguousarray(f) for f in (first, second, third) if np.any(f)]
        self._powers = np.ones((0, KERNEL_NODES))

    @property
    def pieces(self) -> int:
        """``2 / width`` of a piece."""
        return self.coefficients.shape[0] - 1

    def __call__(self, ext: np.ndarray) -> np.ndarray:
        """The rows ``(n, R)`` at ``ext = (1, kappa, eta, theta, nu, rho)`` ``(n, 6)``.

        The order of `ext` is that of the coordinates ``(k_1, k_2, v_1, v_2)`` a PGD
        loop holds (:mod:`slr_theory.trajectory`), so it fills ``ext`` with one copy.

        (``ndarray.take`` serves every gather: a third of the cost of fancy indexing on
        arrays of a few tens of runs.)
        """
        n = ext.shape[0]
        if self._powers.shape[0] != n:
            self._powers = np.ones((n, KERNEL_NODES))
        w = self._powers
        kappa = ext[:, 1]
        u = kappa * self._scale
        r = np.rint(u)
        w[:, 1:] = (u - r)[:, None]
        np.multiply.accumulate(w, axis=1, out=w)
        block = self.coefficients.take(r.astype(np.intp), axis=0, mode="wrap")
        c = (block @ w[:, :, None])[:, :, 0]
        if self.gaussian:
            c[:, : self.gaussian] *= np.exp(np.square(kappa) * self._minus_x2)[:, None]
        for factor in self._factors:
            c *= ext.take(factor, axis=1)
        return c @ self.rows

    def permuted(self, rows, scale: float = 1.0) -> LoopKernel:
        """The same kernel with its output rows rearranged, times `scale`: row ``j`` is
        ``scale`` times the old row ``rows[j]``, or zero where ``rows[j]`` is None."""
        out = np.zeros((self.rows.shape[0], len(rows)))
        for j, r in enumerate(rows):
            if r is not None:
                out[:, j] = scale * self.rows[:, r]
        return LoopKernel(self.coefficients, self.gaussian, self.x2, self.monomials, out)

    def on_manifold(self) -> LoopKernel:
        """The kernel of ``(dR/dkappa, dR/dnu)`` on M: the components free of ``theta, eta, rho``.

        Its monomials read only ``1`` and ``nu``: on M, ``ext = (1, kappa, 0, 0, nu, 0)``.
        """
        on_m = {kernel_monomial(nus) for nus in ((), (4,), (4, 4), (4, 4, 4))}  # nu = e_4
        keep = np.isin(self.monomials, list(on_m)) & np.any(self.rows[:, :2] != 0, axis=1)
        return LoopKernel(
            np.ascontiguousarray(self.coefficients[:, keep]),
            int(np.count_nonzero(keep[: self.gaussian])),
            self.x2,
            self.monomials[keep],
            np.ascontiguousarray(self.rows[keep][:, :2]),
        )


def _kernel_parts(tab: EngineTable, kappa: np.ndarray, scaled: bool):
    """The parts ``(2, K, n)`` of the features (`scaled`: see :func:`features`) and their sizes.

    ``Phi_c(nu) = nu^e (f_c + nu g_c)`` (monomials at ``theta = eta = rho = 1``): from
    ``nu = 1`` and ``nu = 2``, ``g = Phi(2) / 2^e - Phi(1)`` and ``f = Phi(1) - g``; a basis
    without ``nu`` gives ``g = 0`` and ``f = Phi(1)`` exactly (the ratios are powers of 2).
    """
    n = kappa.size
    ov = np.ones((5, n))
    ov[0] = kappa
    one = features(ov, tab.constants, 1, scaled=scaled)
    ov[1] = 2.0
    two = features(ov, tab.constants, 1, scaled=scaled)
    e_nu = np.array([m[0] for m, _p, _b in columns(1, tab.pairs)], dtype=np.float64)
    g = two / (2.0**e_nu)[:, None] - one
    f = one - g
    size = np.abs(one) + np.abs(g)  # bounds |f| and |g| to rounding
    return np.stack([f, g]), np.stack([size, size])


def kernel_monomial(factors) -> int:
    """A :class:`LoopKernel` monomial's code ``36 i + 6 j + k`` from the indices of its
    (at most three) factors among ``e = (1, kappa, eta, theta, nu, rho)``."""
    idx = sorted(factors, reverse=True)
    if len(idx) > 3:
        raise ValueError(f"a monomial of degree {len(idx)} in the order-1 table")
    idx += [0] * (3 - len(idx))
    return 36 * idx[0] + 6 * idx[1] + idx[2]


def loop_kernel(tab: EngineTable) -> LoopKernel:
    """The :class:`LoopKernel` of an order-1 :class:`EngineTable` of one temperature.

    Parameters
    ----------
    tab : EngineTable
        ``order == 1``, one temperature.

    Returns
    -------
    LoopKernel
    """
    if tab.order != 1 or tab.C.ndim != 2:
        raise ValueError("`tab` must be an order-1 table of one temperature.")
    cols = columns(1, tab.pairs)
    x2 = float(_reduced(np.array([1.0]), tab.constants)[1][0])
    fold = x2 <= KERNEL_FOLD
    gauss = gaussian_columns(1, tab.pairs) & (not fold)
    exps = _part_exponents(cols)  # (2, K, 4)
    # components: (carries e^{-x^2}, monomial, row), Gaussian ones first
    keys: dict = {}
    entries = []
    for part in (0, 1):
        for c, (m, _p, b) in enumerate(cols):
            for r in range(tab.C.shape[0]):
                if tab.C[r, c] != 0.0 and (part == 0 or b in NU_BASES or m[4]):
                    key = (not gauss[c], tuple(exps[part, c]), r)
                    entries.append((key, part, c, tab.C[r, c]))
                    keys.setdefault(key, None)
    order = sorted(keys)
    index = {k: i for i, k in enumerate(order)}
    K = len(cols)
    W = np.zeros((len(order), 2 * K))
    for key, part, c, coef in entries:
        W[index[key], part * K + c] += coef
    absW = np.abs(W)

    def sample(pieces: int):  # piece j (centre 2j / pieces) at row j mod (pieces + 1)
        j = np.arange(pieces + 1)
        mid = (2.0 / pieces) * np.where(j <= pieces // 2, j, j - pieces - 1)
        nodes = (mid[:, None] + (2.0 / pieces) * _KW).ravel()
        probes = (mid[:, None] + (2.0 / pieces) * _KP).ravel()
        vals, size = _kernel_parts(tab, np.concatenate([nodes, probes]), scaled=not fold)
        vals = W @ vals.reshape(2 * K, -1)
        size = absW @ size.reshape(2 * K, -1)
        k = nodes.size
        return vals[:, :k], vals[:, k:], size[:, k:]

    to_powers, dct = _kernel_conversion()
    powers = _KP[:, None] ** np.arange(KERNEL_NODES)  # (probes, N)
    pieces = 2
    while True:
        at_nodes, exact, size = sample(pieces)
        F = at_nodes.shape[0]
        cheb = at_nodes.reshape(F, pieces + 1, KERNEL_NODES) @ dct.T
        coef = cheb @ to_powers.T  # (F, P + 1, N): coefficients of w^i
        approx = coef @ powers.T
        # held to the size of the terms on the piece: a component's zero (erf at
        # kappa = 0) is held to its neighbours' size, as any interpolant's must be
        local = size.reshape(F, pieces + 1, -1).max(axis=2, keepdims=True)
        excess = np.abs(approx - exact.reshape(approx.shape)) - KERNEL_ULPS * 2.0**-52 * local
        if np.all(excess <= 0.0):
            break
        if pieces >= _KERNEL_MAX_PIECES:
            raise ArithmeticError(f"no kernel of {pieces} pieces is within {KERNEL_ULPS} ulp")
        pieces *= 2
    var = dict(enumerate((4, 3, 2, 5)))  # nu, theta, eta, rho among e
    monomials = np.zeros(F, dtype=np.intp)
    for f, (_g, mono, _r) in enumerate(order):
        monomials[f] = kernel_monomial([var[v] for v, e in enumerate(mono) for _ in range(e)])
    rows = np.zeros((F, tab.C.shape[0]))
    for f, (_g, _mono, r) in enumerate(order):
        rows[f, r] = 1.0
    return LoopKernel(
        np.ascontiguousarray(np.moveaxis(coef, 0, 1)),
        sum(1 for g, _m, _r in order if not g),
        x2,
        monomials,
        rows,
    )


# --- features ---------------------------------------------------------------------------

# Columns per block of features: the temporaries of a block (a few ``(K, 4096)`` arrays,
# about 1 MB each) stay in cache. 32768 cost 20-30 % more time per value (benchmarks/engine.py).
_CHUNK = 1 << 12


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
        out[low] = zeta_reduced(x[low], kl[_IR], kl[_Z0], kl[_ZS].T)
    return out


def _reduced(kappa, k: np.ndarray):
    """``x``, ``x^2`` as ``hi + lo`` (to ``2^-61``, :func:`~slr_theory.doubledouble.near_sq_over`:
    the rounding of ``a kappa`` moves it by ``2^-52``) and ``s = sgn kappa`` (``k`` the
    constants, by row)."""
    m = k[_A] * kappa
    eh, el = dd.near_sq_over(m, k[_QH], k[_QL])
    return m * k[_ISQ], eh, el, np.copysign(1.0, kappa)


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
    x, eh, el, s = _reduced(kn[0], k)
    out = np.empty_like(kn)
    ex = dd.mul_exp_neg(1.0, eh, el)
    out[0] = c_kappa * ex * _bracket(s, kn[1], erfc(np.abs(x * k[_IR])))
    out[1] = c_nu * erf(x)
    return out


def manifold_nullcline(params: Params, kappa: np.ndarray) -> np.ndarray:
    """The ``nu`` at which ``dR/dkappa`` vanishes on M, at each ``kappa`` (the nullcline).

    ``R_kappa`` on M is proportional to ``E[sigma'(U) (sigma(U) - nu)]``, so the nullcline
    is ``nu = E[sigma' sigma] / E sigma'``: ``erf(a kappa / s)`` with
    ``s = sqrt((1 + 2 g^2)(1 + 4 g^2))`` for ``erf``; otherwise ``sgn(t) (1 - E[sigma' tau] / E sigma')``
    by quadrature (``tau = 1 - sgn(t) sigma``), exact where ``sigma`` saturates. For
    softmax attention ``R_kappa`` is affine in ``nu`` on M, and the nullcline is its root.

    Parameters
    ----------
    params : Params
    kappa : ndarray
        Values in ``[-1, 1]``.

    Returns
    -------
    ndarray
        Of `kappa`'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.engine import manifold_nullcline
    >>> float(manifold_nullcline(Params.paper(), np.array([0.0]))[0])
    0.0
    """
    return params.model.nullcline(params, np.asarray(kappa, dtype=np.float64))


_PSI_BOUND = 2.0 / math.sqrt(math.pi) * 2.0**54  # see features: where psi is below an ulp of W

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
    plan = _plan(orders_of(order), bool((k[_PAIRS] if k.ndim == 1 else k[_PAIRS, 0]) != 0.0))
    kappa, nu = ov5[0], ov5[1]
    n = kappa.shape[-1]
    if n > _CHUNK:  # blocks that stay in cache: the same values, fewer trips to memory
        out = np.empty((len(plan.columns), n))
        per_column = np.ndim(k) == 2
        for start in range(0, n, _CHUNK):
            sl = slice(start, start + _CHUNK)
            out[:, sl] = features(ov5[:, sl], k[:, sl] if per_column else k, order, scaled=scaled)
        return out
    x, eh, el, s = _reduced(kappa, k)
    need = plan.bases
    basis = np.empty((len(BASES), n))
    basis[0] = 1.0
    basis[1] = erf(x)
    ex = np.ones(n) if scaled else dd.mul_exp_neg(1.0, eh, el)
    basis[2] = ex
    y = x * k[_IR]
    if "exey" in need:
        if scaled:
            basis[3] = dd.mul_exp_neg(1.0, *dd.near_div(eh, el, k[_RH], k[_RL]))
        else:  # e^{-x^2 (1 + 1/r)}
            basis[3] = dd.mul_exp_neg(1.0, *dd.near_add_div(eh, el, k[_RH], k[_RL]))
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
            psi = erfc_sq_reduced(ax, eh, el, k[_RH], k[_RL], k[_PN].T, k[_PW].T, ecx)
        else:
            near = ~far
            psi = np.zeros(n)
            if near.any():
                kn = k[:, near] if np.ndim(k) == 2 else k
                psi[near] = erfc_sq_reduced(
                    ax[near], eh[near], el[near], kn[_RH], kn[_RL], kn[_PN].T, kn[_PW].T, ecx[near]
                )
        basis[7] = psi + rest
    if "zeta" in need:
        if psi is None:
            basis[6] = zeta_reduced(x, k[_IR], k[_Z0], k[_ZS].T)
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


def _evaluate(params: Params, ov5: np.ndarray, lam, order) -> np.ndarray:
    """``(rows, n)``: the table of `order` applied to overlaps ``(5, n)``.

    `lam` is a float (one table) or an array of shape ``(n,)`` (one temperature per column).
    """
    n = ov5.shape[1]
    lam = np.asarray(lam, dtype=np.float64)
    per_column = lam.ndim > 0
    if per_column:  # one table per distinct temperature (records share theirs by the run)
        distinct, at = np.unique(lam, return_inverse=True)
        if distinct.size == 1:
            return _evaluate(params, ov5, float(distinct[0]), order)
        tab = table(params, distinct, order)
    else:
        tab = table(params, lam, order)
    if n > _CHUNK:  # a batch the interpolants pay for: its last block too, not only the full ones
        tab = tab.prepared()
    out = np.empty((tab.C.shape[-2], n))
    for start in range(0, n, _CHUNK):
        sl = slice(start, min(start + _CHUNK, n))
        if per_column:
            phi = tab.features(ov5[:, sl], tab.constants[at[sl]].T)
            out[:, sl] = np.einsum("nrk,kn->rn", tab.C[at[sl]], phi)
        else:
            out[:, sl] = tab(ov5[:, sl])
    return out


def _prepare(params: Params, overlaps, lam):
    """Overlaps ``(5, n)``, the temperature (a float or one per column) and the batch shape."""
    arrays = [np.asarray(x, dtype=np.float64) for x in overlaps]
    if lam is not None and np.ndim(lam):
        arrays.append(np.asarray(lam, dtype=np.float64))
    arrays = np.broadcast_arrays(*arrays)
    shape = arrays[0].shape
    ov5 = np.stack([a.reshape(-1) for a in arrays[:5]])
    if lam is None:
        return ov5, params.lam, shape
    if len(arrays) == 6:
        return ov5, arrays[5].reshape(-1), shape
    return ov5, float(lam), shape


def components(params: Params, overlaps, lam=None) -> np.ndarray:
    """``(informative, distractors, interactions)`` at validated overlaps, shape ``(3, ...)``.

    Parameters
    ----------
    params : Params
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, broadcasting together; feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps (one per entry); default ``params.lam``.

    Returns
    -------
    ndarray, shape ``(3, ...)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import components
    >>> c = components(Params.paper(), (0.0, 0.0, 0.0, 0.0, 0.0), lam=[0.1, 0.2])
    >>> c.shape
    (3, 2)
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    return _evaluate(params, ov5, lam, 0).reshape(3, *shape)


def value_and_gradient(params: Params, overlaps, lam=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`components` and :func:`gradient` together, each special function evaluated once.

    Parameters and broadcasting as :func:`components`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps; default ``params.lam``.

    Returns
    -------
    components : ndarray, shape ``(3, ...)``
    gradient : ndarray, shape ``(..., 5)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import value_and_gradient
    >>> c, g = value_and_gradient(Params.paper(), (0.5, 0.5, 0.0, 0.0, 0.0))
    >>> c.shape, g.shape
    ((3,), (5,))
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    rows = _evaluate(params, ov5, lam, (0, 1))
    return rows[:3].reshape(3, *shape), np.moveaxis(rows[3:], 0, -1).reshape(*shape, 5)


def gradient(params: Params, overlaps, lam=None) -> np.ndarray:
    """The five partials ``dR/d(kappa, nu, theta, eta, rho)`` at validated overlaps, ``(..., 5)``.

    Parameters and broadcasting as :func:`components`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps; default ``params.lam``.

    Returns
    -------
    ndarray, shape ``(..., 5)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.engine import gradient
    >>> gradient(Params.paper(), (0.5, 0.5, 0.0, 0.0, 0.0)).shape
    (5,)
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    return np.moveaxis(_evaluate(params, ov5, lam, 1), 0, -1).reshape(*shape, 5)


def hessian(params: Params, overlaps, lam=None) -> np.ndarray:
    """The symmetric matrix of second partials at validated overlaps, ``(..., 5, 5)``.

    Parameters and broadcasting as :func:`components`.

    Parameters
    ----------
    params : Params
        Model parameters.
    overlaps : sequence of five array_like
        ``(kappa, nu, theta, eta, rho)``, feasible (unchecked).
    lam : float or array_like, optional
        Temperature(s), broadcasting with the overlaps; default ``params.lam``.

    Returns
    -------
    ndarray, shape ``(..., 5, 5)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.engine import hessian
    >>> h = hessian(Params.paper(), (0.5, 0.5, 0.0, 0.0, 0.0))
    >>> h.shape, bool(np.array_equal(h, h.T))
    ((5, 5), True)
    """
    ov5, lam, shape = _prepare(params, overlaps, lam)
    return hessian_matrices(_evaluate(params, ov5, lam, 2)).reshape(*shape, 5, 5)


def hessian_matrices(rows: np.ndarray) -> np.ndarray:
    """The symmetric matrices ``(n, 5, 5)`` of a Hessian table's rows ``(15, n)``.

    Parameters
    ----------
    rows : ndarray, shape ``(15, n)``
        Second partials in the order of :data:`HESSIAN_PAIRS` (an order-2 table's rows).

    Returns
    -------
    ndarray, shape ``(n, 5, 5)``

    Examples
    --------
    >>> import numpy as np
    >>> h = hessian_matrices(np.arange(15.0)[:, None])
    >>> h[0, 1, 0], h[0, 0, 1], h.shape
    (np.float64(1.0), np.float64(1.0), (1, 5, 5))
    """
    rows = np.asarray(rows, dtype=np.float64)
    out = np.empty((rows.shape[1], 5, 5))
    for row, (i, j) in enumerate(HESSIAN_PAIRS):
        out[:, i, j] = out[:, j, i] = rows[row]
    return out
