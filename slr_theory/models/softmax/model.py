"""Softmax attention ``T(X) = sum_l softmax(lam X k)_l X_l.v``: the weights coupled
through their normalisation.

The risk is a polynomial in ``(nu, theta, eta, rho)`` whose coefficients are
Laplace-transform terms of ``kappa`` (:func:`slr_theory.softmax.risk_expression`); its
table (:class:`SoftmaxTable`) has the engine's rows and one feature per monomial times
term, each term by :func:`slr_theory.softmax.term_integrals`.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np

from ... import engine
from ...manifold import EDGE_SCAN, edge_roots
from ...nonlinearity import INTERPOLATE_FROM
from ...params import DOMAIN, Params
from ..base import Model
from .laplace import (
    SOFTMAX_DOMAIN,
    d_mu,
    risk_expression,
    term_bound,
    term_integrals,
    term_interpolant,
)

__all__ = ["Softmax", "SoftmaxTable"]

_OVERLAP_VARS = 5


def _softmax_expressions(
    d: int, L: int, gamma: float, S: int, orders: tuple, sink: bool = False
) -> list[dict]:
    """Per row: ``{(monomial of (nu, theta, eta, rho, 1 - nu, eta - rho), term): coefficient}``.

    Order 0 has the three :data:`COMPONENTS`, in the cancellation-free form of
    :func:`slr_theory.softmax.risk_expression` (the derivatives differentiate that form:
    near the optimum its terms are small where the risk is, so the gradient keeps its
    relative precision too), but for ``R_nu``, a single term of the expanded form; order 1
    the five partials; order 2 the entries of :data:`slr_theory.engine.HESSIAN_PAIRS`. A partial in ``kappa`` is ``sqrt(d/2)`` times one in
    the informative mean (:func:`slr_theory.softmax.d_mu`); the others act on monomials.
    `sink`: the weights have a sink (softmax-1).
    """
    rows0: list[dict] = [{}, {}, {}]
    total: dict = {}
    for comp, c, mono, term in risk_expression(d, L, gamma, S, stable=True, sink=sink):
        engine.add_term(rows0[comp], (mono, term), c)
        engine.add_term(total, (mono, term), c)
    B = math.sqrt(d / 2.0)
    # d/d(overlap) of the monomial's variables (nu, theta, eta, rho, u = 1 - nu,
    # w = eta - rho): the variable's index and the chain factor
    chain = {
        1: ((0, 1.0), (4, -1.0)),
        2: ((1, 1.0),),
        3: ((2, 1.0), (5, 1.0)),
        4: ((3, 1.0), (5, -1.0)),
    }

    def diff(expr: dict, var: int) -> dict:
        """The partial in overlap `var` (0 kappa, 1 nu, 2 theta, 3 eta, 4 rho)."""
        out: dict = {}
        for (mono, term), c in expr.items():
            if var == 0:
                if term is None:
                    continue
                for t2, c2 in d_mu(term, S, gamma).items():
                    engine.add_term(out, (mono, t2), B * c * c2)
                continue
            for k, f in chain[var]:
                if mono[k]:
                    m2 = list(mono)
                    m2[k] -= 1
                    engine.add_term(out, (tuple(m2), term), c * f * mono[k])
        return {k: v for k, v in out.items() if v != 0.0}

    # R_nu is one term of the expanded form, -2 s gamma^2 E p_1 (nu appears nowhere
    # else): exact to its own digits where E p_1 is tiny (kappa -> -1 at a large
    # temperature), where the stable form's -2 gamma^2 (1 - q_1) cancels to 0
    expanded: dict = {}
    for _comp, c, mono, term in risk_expression(d, L, gamma, S, sink=sink):
        engine.add_term(expanded, ((*mono, 0, 0), term), c)
    first = [diff(total, v) for v in range(_OVERLAP_VARS)]
    first[1] = diff(expanded, 1)
    rows: list[dict] = []
    for o in orders:
        if o == 0:
            rows.extend(rows0)
        elif o == 1:
            rows.extend(first)
        else:  # an entry with nu: the other partial of R_nu
            rows.extend(
                diff(first[1], j if i == 1 else i) if 1 in (i, j) else diff(first[i], j)
                for i, j in engine.HESSIAN_PAIRS
            )
    return rows


@lru_cache(maxsize=64)
def _softmax_plan(
    d: int, L: int, gamma: float, S: int, orders: tuple, sink: bool = False
) -> tuple[tuple, np.ndarray]:
    """The columns ``(monomial, term)`` and the coefficients ``(rows, K)`` of a softmax table."""
    rows = _softmax_expressions(d, L, gamma, S, orders, sink)
    cols = sorted({key for row in rows for key in row}, key=repr)
    index = {key: i for i, key in enumerate(cols)}
    C = np.zeros((len(rows), len(cols)))
    for r, row in enumerate(rows):
        for key, c in row.items():
            C[r, index[key]] = c
    C.flags.writeable = False
    return tuple(cols), C


@lru_cache(maxsize=64)
def _softmax_bases(
    d: int, L: int, gamma: float, S: int, orders: tuple, sink: bool = False
) -> tuple:
    """The terms the columns of a softmax table need, sorted: ``(terms, row of each)``."""
    terms = sorted(
        {t for _m, t in _softmax_plan(d, L, gamma, S, orders, sink)[0] if t is not None},
        key=repr,
    )
    return tuple(terms), {t: r for r, t in enumerate(terms)}


#: Bytes of term values :func:`_direct_terms` keeps (the least recently asked go first):
#: the scans of M ask one ``kappa`` grid at three ``nu`` (:mod:`slr_theory.manifold`), and a
#: Newton step asks the gradient's and the Hessian's terms at one point.
DIRECT_KEPT_BYTES = 32 * 2**20

_DIRECT: OrderedDict = OrderedDict()  # key -> (values, bytes)
_DIRECT_BYTES = [0]
_DIRECT_LOCK = threading.Lock()


def _direct_terms(params: Params, kappa: np.ndarray, lam: float, sink: bool, orders: tuple):
    """The terms of the tables of `orders` (rows: :func:`_softmax_bases`) at ``kappa``
    and ``lam``, by :func:`slr_theory.softmax.term_integrals` once per distinct ``kappa``
    (a grid of M repeats each ``kappa`` along ``nu``); the values read-only, and kept
    (:data:`DIRECT_KEPT_BYTES`) for the next call at the same points.

    Each point's terms do not depend on the other points of the batch (but through the
    quadrature's window in ``sigma``, which the batch's extremes fix, and those are kept),
    so the distinct points give the same numbers, bit for bit."""
    p = params
    key = (p.d, p.L, p.gamma, p.s, orders, sink, lam, kappa.tobytes())
    with _DIRECT_LOCK:
        kept = _DIRECT.get(key)
        if kept is not None:
            _DIRECT.move_to_end(key)
            return kept[0]
    terms = list(_softmax_bases(p.d, p.L, p.gamma, p.s, orders, sink)[0])
    kw = {"lam": lam, "gamma": p.gamma, "d": p.d, "L": p.L, "s": p.s, "sink": sink}
    first = inverse = None
    if kappa.size > 1:  # the distinct bit patterns, then spread back
        _bits, first, inverse = np.unique(
            kappa.view(np.int64), return_index=True, return_inverse=True
        )
    if first is None or first.size == kappa.size:
        values = term_integrals(terms, kappa, **kw)
    else:
        values = term_integrals(terms, kappa[first], **kw)[:, inverse.ravel()]
    values.flags.writeable = False
    size = values.nbytes + len(key[-1]) + 512
    with _DIRECT_LOCK:
        if key not in _DIRECT and size <= DIRECT_KEPT_BYTES:
            _DIRECT[key] = (values, size)
            _DIRECT_BYTES[0] += size
            while _DIRECT_BYTES[0] > DIRECT_KEPT_BYTES:
                _DIRECT_BYTES[0] -= _DIRECT.popitem(last=False)[1][1]
    return values


@lru_cache(maxsize=64)
def _union_rows(d: int, L: int, gamma: float, S: int, orders: tuple, sink: bool) -> np.ndarray:
    """The rows of a table's terms (its `orders`) among those of orders 1 and 2 together
    (:func:`_direct_terms` of a Newton step), read-only."""
    where = _softmax_bases(d, L, gamma, S, (1, 2), sink)[1]
    rows = np.array([where[t] for t in _softmax_bases(d, L, gamma, S, orders, sink)[0]])
    rows.flags.writeable = False
    return rows


@lru_cache(maxsize=64)
def _softmax_products(
    d: int, L: int, gamma: float, S: int, orders: tuple, sink: bool = False
) -> tuple[np.ndarray, tuple]:
    """How each column of a softmax table is its term times its monomial: the term's row of
    each column (``len(terms)``: the column of ones, a monomial alone), and per variable of
    the monomials, in order, ``(variable, exponent, columns)`` for each exponent used. A
    column's product is its term times the powers of its variables in their order, as one
    column at a time would form it: the same numbers, a few whole-array operations."""
    cols = _softmax_plan(d, L, gamma, S, orders, sink)[0]
    terms, where = _softmax_bases(d, L, gamma, S, orders, sink)
    rows = np.array([len(terms) if t is None else where[t] for _m, t in cols], dtype=np.intp)
    steps = []
    exps = np.array([m for m, _t in cols], dtype=np.intp).reshape(len(cols), -1)
    for var in range(exps.shape[1]):
        for e in np.unique(exps[:, var]):
            if e:
                steps.append((var, int(e), np.flatnonzero(exps[:, var] == e)))
    return rows, tuple(steps)


@dataclass(frozen=True)
class SoftmaxTable(engine.RiskTable):
    """The table of softmax attention: the same rows, features ``monomial x term``.

    The risk is a polynomial in ``(nu, theta, eta, rho)`` whose coefficients are the
    Laplace-transform terms of :mod:`slr_theory.softmax`, functions of ``kappa``
    (:func:`slr_theory.softmax.risk_expression`); each column is one monomial times one
    term, evaluated by :func:`slr_theory.softmax.term_integrals` (relative error
    ``~1e-14`` of the term's scale), or after :meth:`prepared`, and for a batch of at
    least :data:`slr_theory.nonlinearity.INTERPOLATE_FROM` points at one temperature (the
    policy of the quadrature models), by their interpolant in ``kappa`` (``1e-14`` of each
    term's bound; built once per temperature, then about 3 passes of the closed forms).

    Attributes
    ----------
    order : int or tuple
    C : ndarray, shape ``(..., rows, K)``
    constants : ndarray, shape ``(..., 1)``
        The temperature.
    params : Params
        The model (``d, L, gamma, s``; its ``lam`` is not used).
    interpolated : bool
        Whether every batch is served by the terms' interpolant (:meth:`prepared`).
    sink : bool
        Whether the weights have a sink, ``p_l = e_l / (1 + S)`` (softmax-1).
    """

    order: int | tuple
    C: np.ndarray
    constants: np.ndarray
    params: Params
    interpolated: bool = False
    sink: bool = False

    def _plan_args(self) -> tuple:
        p = self.params
        return (p.d, p.L, p.gamma, p.s, engine.orders_of(self.order), self.sink)

    @property
    def columns(self) -> tuple:
        """The columns ``(monomial, term)`` in the order of ``C``'s last axis."""
        return _softmax_plan(*self._plan_args())[0]

    def __call__(self, ov5: np.ndarray) -> np.ndarray:
        """The rows ``(rows, n)`` at overlaps ``(5, n)`` (one temperature; unchecked)."""
        return self.C @ self.features(ov5)

    @property
    def pairs(self) -> bool:
        """Whether the model has informative pairs (``s > 1``)."""
        return self.params.s > 1

    def at(self, j: int) -> SoftmaxTable:
        """The table of the `j`-th temperature of a table built for several."""
        return SoftmaxTable(
            self.order, self.C[j], self.constants[j], self.params, self.interpolated, self.sink
        )

    def prepared(self) -> SoftmaxTable:
        """The table serving every batch from the terms' interpolant in ``kappa``
        (:func:`slr_theory.softmax.term_interpolant`, built once per temperature)."""
        return SoftmaxTable(self.order, self.C, self.constants, self.params, True, self.sink)

    def scaled_part(self, ov5: np.ndarray):
        """None: no feature carries a factor that underflows before its terms do."""
        return None

    def features_and_sizes(self, ov5: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Phi`` and ``|Phi|``: every feature is an expectation of one sign (protocol:
        :class:`slr_theory.engine.RiskTable`)."""
        phi = self.features(ov5)
        return phi, np.abs(phi)

    def manifold_gradient(self, kn: np.ndarray) -> np.ndarray:
        """``(dR/dkappa, dR/dnu)`` ``(2, n)`` on M at ``kn = (kappa, nu)`` (order-1 tables)."""
        return engine.rows_on_m(self, kn)[:2]

    def _bases(self) -> list:
        """The terms the columns need."""
        return list(_softmax_bases(*self._plan_args())[0])

    def _terms(self, kappa: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """:meth:`_bases` at each ``kappa`` with its temperature: ``(len(bases), n)``."""
        terms = self._bases()
        T = np.empty((len(terms), kappa.size))
        p = self.params
        one = lam.size > 0 and bool(np.all(lam == lam[0]))  # a table's own temperature
        temps = lam[:1] if one else np.unique(lam)
        for value in temps:
            at = slice(None) if one else lam == value
            kap = kappa[at]
            if self.interpolated or kap.size >= INTERPOLATE_FROM:  # a loop's, or a large batch
                args = (float(value), p.gamma, p.d, p.L, p.s, self.sink)
                pieces, a = term_interpolant(tuple(terms), *args)
                t = np.minimum(np.maximum(a * kap, -a), a)  # np.clip's values, less dispatch
                if kap.size == kappa.size:  # one temperature: the series writes in place
                    pieces.series(t, out=T)
                else:
                    T[:, at] = pieces.series(t)
                if not pieces.any_direct:  # every piece checked: no point to integrate
                    continue
                slow = pieces.direct[pieces.piece(t)]
                if np.any(slow):
                    T[:, np.flatnonzero(slow) if one else np.flatnonzero(at)[slow]] = (
                        term_integrals(
                            terms,
                            kap[slow],
                            lam=args[0],
                            gamma=p.gamma,
                            d=p.d,
                            L=p.L,
                            s=p.s,
                            sink=self.sink,
                        )
                    )
                continue
            if kap.size <= engine.contract.SHARED_POINTS and set(engine.orders_of(self.order)) <= {
                1,
                2,
            }:
                # a Newton step's: the terms of the gradient and the Hessian at once
                values = _direct_terms(p, kap, float(value), self.sink, (1, 2))
                T[:, at] = values[_union_rows(*self._plan_args())]
                continue
            orders = engine.orders_of(self.order)
            T[:, at] = _direct_terms(p, kap, float(value), self.sink, orders)
        return T

    def features(self, ov5: np.ndarray, constants: np.ndarray | None = None) -> np.ndarray:
        """``Phi`` ``(K, n)`` at overlaps ``(5, n)``; `constants` default: the table's own.

        `constants` may be transposed, ``(1, n)``: one temperature per column.
        """
        k = self.constants if constants is None else constants
        n = ov5.shape[1]
        lam = np.broadcast_to(np.asarray(k, dtype=np.float64)[0], (n,))
        rows, steps = _softmax_products(*self._plan_args())
        T = self._terms(ov5[0], lam)
        # the monomials' variables: nu, theta, eta, rho, and 1 - nu, eta - rho, exact
        x = np.concatenate([ov5[1:], [1.0 - ov5[1], ov5[3] - ov5[4]]])
        out = np.concatenate([T, np.ones((1, n))])[rows]
        for var, e, cols in steps:
            out[cols] *= x[var] ** e
        return out

    def enclosure(self, lo: np.ndarray, hi: np.ndarray) -> engine.Enclosure:
        """:class:`slr_theory.engine.Enclosure` of the features over the slabs ``lo <= kappa <= hi`` (one temperature).

        Each term at the slab's centre, plus or minus the half-width times ``sqrt(d/2)``
        times a bound of its derivative in ``mu`` (:func:`slr_theory.softmax.d_mu`, each
        term bounded by ``prod E |D|^i``), plus ``1e-12`` of its own bound for the
        quadrature.
        """
        cols = self.columns
        p = self.params
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        lam = np.full(lo.size, float(np.ravel(self.constants)[0]))
        where = {t: r for r, t in enumerate(self._bases())}
        T = self._terms(0.5 * (lo + hi), lam)
        half = 0.5 * (hi - lo) * float(np.sqrt(p.d / 2.0))
        exps = np.zeros((2, len(cols), 4), dtype=int)
        mid = np.zeros((2, len(cols), lo.size))
        rad = np.zeros_like(mid)
        for c, (mono, term) in enumerate(cols):
            exps[0, c] = mono[:4]
            exps[1, c] = mono[:4]
            exps[1, c, 0] += 1
            if term is None:
                f, r = np.ones(lo.size), np.zeros(lo.size)
            else:
                slope = sum(
                    abs(c2) * term_bound(t2, p.gamma)
                    for t2, c2 in d_mu(term, p.s, p.gamma).items()
                )
                f, r = T[where[term]], half * slope + 1e-12 * term_bound(term, p.gamma)
            if mono[4] or mono[5]:  # |1 - nu|, |eta - rho| <= 2: an interval about 0
                mid[0, c], rad[0, c] = 0.0, 2.0 ** (mono[4] + mono[5]) * (np.abs(f) + r)
            else:
                mid[0, c], rad[0, c] = f, r
        return engine.Enclosure(exps, mid, rad)


@dataclass(frozen=True)
class Softmax(Model):
    """Softmax attention: positive weights summing to one, no nonlinearity of its own.

    Its numerics need ``lam sqrt(d/2) <= 1e3`` and ``lam max(1, gamma) <= 10``
    (:data:`slr_theory.softmax.SOFTMAX_DOMAIN`).

    Attributes
    ----------
    name : str
        ``"softmax"``, its name in the registry.

    Examples
    --------
    >>> from slr_theory import Params
    >>> m = Params.paper().replace(attention="softmax").model
    >>> m.label, m.odd_weights, round(m.lam_max(Params.paper()), 4)
    ('softmax', False, 10.0)
    """

    name: ClassVar[str] = "softmax"
    #: The terms' bounds are analytic (:func:`slr_theory.softmax.term_bound`).
    feature_bounds_proved: ClassVar[bool] = True
    #: Whether the weights have a sink, ``p_l = e_l / (1 + S)``: a token of logit 0 and no
    #: value (softmax-1, :mod:`slr_theory.models.softmax1`).
    sink: ClassVar[bool] = False

    def check(self, params: Params) -> None:
        mean = params.lam * np.sqrt(params.d / 2.0)
        spread = params.lam * max(1.0, params.gamma)
        if mean > SOFTMAX_DOMAIN["mean_logit"] or spread > SOFTMAX_DOMAIN["spread"]:
            raise ValueError(
                f"{self.label} attention needs `lam` * sqrt(`d`/2) <= "
                f"{SOFTMAX_DOMAIN['mean_logit']:g} and `lam` * max(1, `gamma`) <= "
                f"{SOFTMAX_DOMAIN['spread']:g}, got lam={params.lam!r}, d={params.d!r}, "
                f"gamma={params.gamma!r}."
            )

    def lam_max(self, params: Params) -> float:
        """``DOMAIN["lam"]``'s bound and those of :data:`slr_theory.softmax.SOFTMAX_DOMAIN`."""
        hi = DOMAIN["lam"][1]
        root, wide = float(np.sqrt(params.d / 2.0)), max(1.0, params.gamma)
        hi = min(hi, SOFTMAX_DOMAIN["mean_logit"] / root, SOFTMAX_DOMAIN["spread"] / wide)
        # the quotient may round up: step down to a temperature the model accepts
        while hi * root > SOFTMAX_DOMAIN["mean_logit"] or hi * wide > SOFTMAX_DOMAIN["spread"]:
            hi = float(np.nextafter(hi, 0.0))
        return float(hi)

    def table(self, params: Params, lam: np.ndarray, order) -> SoftmaxTable:
        orders = engine.orders_of(order)
        _cols, C = _softmax_plan(params.d, params.L, params.gamma, params.s, orders, self.sink)
        C = np.broadcast_to(C, (*lam.shape, *C.shape))
        return SoftmaxTable(order, C, lam[..., None].astype(np.float64), params, sink=self.sink)

    def feature_bounds(self, params: Params, order) -> np.ndarray:
        p = params
        cols = _softmax_plan(p.d, p.L, p.gamma, p.s, engine.orders_of(order), self.sink)[0]
        return np.array([2.0 ** (m[4] + m[5]) * term_bound(t, params.gamma) for m, t in cols])

    def forward(self, U, V, lam: float, derivatives: bool = False) -> tuple:
        """``p = softmax(lam U)``, ``T = sum p V``; ``dT/dU_m = lam p_m (V_m - T)``.

        With a :attr:`sink` the normaliser has its ``e^0 = 1`` (its logit does not move,
        so the partials keep their form)."""
        z = lam * U
        top = np.max(z, axis=-1, keepdims=True)
        if self.sink:
            top = np.maximum(top, 0.0)
        p = np.exp(z - top)
        total = np.sum(p, axis=-1, keepdims=True)
        if self.sink:
            total += np.exp(-top)
        p /= total
        T = np.sum(p * V, axis=-1)
        if not derivatives:
            return (T,)
        return T, lam * p * (V - T[..., None]), p

    @property
    def odd_weights(self) -> bool:
        """False: ``softmax(-z) != -softmax(z)``."""
        return False

    def nullcline(self, params: Params, kappa: np.ndarray) -> np.ndarray:
        """``R_kappa`` is affine in ``nu`` on M: its root in ``nu``."""
        k = kappa.reshape(-1)
        ov5 = np.zeros((5, 2 * k.size))
        ov5[0] = np.concatenate([k, k])
        ov5[1, k.size :] = 1.0
        r = engine.table(params, params.lam, 1)(ov5)[0]
        at0, slope = r[: k.size], r[k.size :] - r[: k.size]
        if self.key_free(params):  # R_kappa = 0 on all of M: no line of its zeros
            return np.full(kappa.shape, np.nan)
        return (-at0 / np.where(slope != 0.0, slope, np.inf)).reshape(kappa.shape)

    def manifold_certificate(self, params: Params) -> list[str]:
        """``R_nu < 0`` on all of M; the edges' critical points by scans."""
        return _certificate(self, params)

    def manifold_summary(self, params: Params) -> str:
        return (
            f"On M `R_ν < 0` everywhere ({self.label} weights are positive), so the origin is not "
            "critical and every critical point of M lies on the edges `ν = ±1` (the argument, "
            "below)."
        )

    @property
    def label(self) -> str:
        return "softmax"

    @property
    def predictor(self) -> str:
        return "T(X) = Σ_ℓ softmax(λ X k)_ℓ X_ℓ·v"

    @property
    def tag(self) -> str:
        return ", softmax attention"


def _certificate(model: Softmax, params: Params) -> list[str]:
    """What is proved about the critical points of M under softmax attention (with or
    without a sink), with numbers."""
    S, L = params.s, params.L
    sg = "gamma^2" if S == 1 else "S gamma^2"
    low = float(
        engine.table(params, params.lam, 1).manifold_gradient(np.array([[-1.0], [0.0]]))[1, 0]
    )
    where = {
        nu: ", ".join(f"{r:.6g}" for r in roots) if roots.size else "none"
        for nu in (1.0, -1.0)
        for roots in [edge_roots(params, nu)]
    }
    return [
        "On M the Riemannian gradient is ((1 - kappa^2) R_kappa, (1 - nu^2) R_nu) with "
        f"R_nu = -2 {sg} E p_1(kappa) under {model.label} attention (p_1 the weight of an "
        "informative token)" + ("." if S == 1 else f", with S = {S} informative tokens."),
        "E p_1 > 0 and increases with kappa (the informative tokens' total weight increases "
        "with each informative key, whose mean is sqrt(d/2) kappa), so R_nu <= "
        f"R_nu(kappa = -1) = {low:.6g} < 0 on all of M (the quadrature's value, relative "
        "error ~1e-13).",
        "Hence no critical point with |nu| < 1: unlike pointwise attention the origin is not "
        f"critical, because the {model.label} weights are positive, so the predictor cannot "
        "switch the value off.",
        (
            "The risk does not depend on the key (computed: its partials in kappa, eta, rho "
            "vanish to 1e-12 of the gradient's scale"
            + ("; over one token its weight is 1" if L == 1 and not model.sink else "")
            + "): R_kappa = 0 on all of M, so each edge nu = +-1 is a line of critical points, "
            f"listed at its corner kappa = 1. The {model.label} weights are not odd, so "
            "(k, v) -> (-k, -v) is no symmetry: each edge is its own."
            if params.model.key_free(params)
            else "On the edges nu = +-1, (1 - kappa^2) R_kappa vanishes at the corners and at "
            f"the roots of R_kappa(kappa, +-1) in (-1, 1): {where[1.0]} on nu = 1, "
            f"{where[-1.0]} on nu = -1 (a scan of {EDGE_SCAN} points and Brent's method, "
            f"L = {L}). The {model.label} weights are not odd, so (k, v) -> (-k, -v) is no "
            "symmetry: each edge is its own."
        ),
    ]
