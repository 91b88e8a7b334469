r"""Rigorous enclosures of the risk's partials and Hessian over boxes of overlaps (erf).

The engine writes every partial of the risk as a sum of coefficients times features
(:mod:`slr_theory.engine`); the same term algebra (:func:`slr_theory.engine.entries`),
run on :class:`slr_theory.interval.Interval` scalars, gives coefficients that enclose
the exact ones. The features over a box are enclosed from their monotone bases at the
box's exact float endpoints, each evaluated in python-flint's ball arithmetic
(``arb``, 128 bits):

- ``erf`` rises; ``e^{-x^2}`` and ``e^{-x^2 (1 + r^{-1})}`` fall with ``|x|``;
- ``zeta(t, g) = E erf(t + gZ)^2`` rises with ``|t|`` (its ``t``-derivative has the sign
  of ``t``), and is ``1 - 8 T(h, a)`` with Owen's ``T`` a rigorous integral of an entire
  function over ``[0, 1]`` (``acb.integral``);
- ``erf(y) - nu``, which cancels where ``nu`` is near ``+-1`` and ``erf`` saturates, is
  also enclosed as ``(1 - nu) - erfc(y)`` (``y >= 0``) or ``erfc(-y) - (1 + nu)``, and the
  two enclosures intersected (on the edge ``nu = +-1`` of M this decides the sign of
  ``R_kappa`` where it is ``10^-54``);
- products, powers and the monomials in ``(nu, theta, eta, rho, delta)`` are interval
  arithmetic.

The temperature-dependent constants (``q^{-1/2}``, ``r^{-1/2}``, ``2/sqrt(pi)``,
``E erf'(lambda Z)``, ``zeta(0, lambda)`` and ``zeta_tt(0, lambda) = 8 / (pi q sqrt(r))``
at ``g = lambda``) are ``arb`` balls. The parameters are the floats of
:class:`slr_theory.Params`, taken as exact numbers.

python-flint is the optional extra ``slr-theory[certify]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ... import engine
from ...interval import Interval, arb_bounds, from_arb
from ...params import Params

__all__ = ["RigorousTable"]

#: Working precision of the balls (bits).
PRECISION = 128


def flint_context():
    """python-flint's ``(arb, acb, ctx)``, or an ``ImportError`` naming the extra."""
    try:
        from flint import acb, arb, ctx
    except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
        raise ImportError(
            "certified enclosures need python-flint: pip install 'slr-theory[certify]'"
        ) from exc
    return arb, acb, ctx


#: Values evaluated since the last merge that :class:`BallCache` keeps in a dict before it merges
#: them into its sorted arrays (or a :data:`BALLS_SHARE`-th of the arrays, if more).
BALLS_MERGE = 256

#: The dict of fresh values is merged into the arrays once it holds this fraction of them
#: (a merge inserts into the sorted arrays, a copy; a fresh value is looked up in Python).
BALLS_SHARE = 64


class BallCache:
    """Point evaluations in ``arb`` at exact floats, cached: ``f(x) -> (lo, hi)`` floats.

    The cache is sorted arrays of the points evaluated and their bounds, looked up for a
    whole array in one search, and a dict of the points evaluated since they were last
    merged into the arrays (at :data:`BALLS_MERGE`, or a :data:`BALLS_SHARE`-th of the
    arrays). A point's bounds are those of its first evaluation, however it is looked up
    (``-0.0`` is ``0.0``).
    """

    def __init__(self, function) -> None:
        self.function = function
        self.keys = np.empty(0)
        self.lower = np.empty(0)
        self.upper = np.empty(0)
        self.fresh: dict = {}

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat = np.ravel(x)
        lower, upper = self._bounds(np.concatenate([flat, flat]), flat.size)
        return lower.reshape(np.shape(x)), upper.reshape(np.shape(x))

    def between(self, lo: np.ndarray, hi: np.ndarray) -> Interval:
        """``[lower bound of f(lo), upper bound of f(hi)]``, both ends looked up at once:
        the enclosure of ``f`` over each interval where it is least at `lo` and greatest
        at `hi` (a monotone function's ends, in the order it rises)."""
        lower, upper = self._bounds(np.concatenate([np.ravel(lo), np.ravel(hi)]), np.size(lo))
        return Interval(lower.reshape(np.shape(lo)), upper.reshape(np.shape(hi)))

    def _bounds(self, flat: np.ndarray, cut: int) -> tuple[np.ndarray, np.ndarray]:
        """The lower bounds of ``f`` at ``flat[:cut]`` and its upper bounds at ``flat[cut:]``:
        one search of the arrays, one evaluation of each point they miss."""
        keys = self.keys
        if keys.size:
            at = np.searchsorted(keys, flat)
            np.minimum(at, keys.size - 1, out=at)
            lower, upper = self.lower.take(at[:cut]), self.upper.take(at[cut:])
            miss = np.flatnonzero(keys.take(at) != flat)
        else:
            lower, upper = np.empty(cut), np.empty(flat.size - cut)
            miss = np.arange(flat.size)
        if miss.size:
            values, inverse = np.unique(flat[miss], return_inverse=True)
            fresh, function = self.fresh, self.function
            bounds = []
            for v in values.tolist():
                got = fresh.get(v)
                if got is None:
                    got = fresh[v] = arb_bounds(function(v))
                bounds.append(got)
            evaluated = np.array(bounds, dtype=np.float64).reshape(-1, 2)[inverse]
            low = miss < cut
            lower[miss[low]] = evaluated[low, 0]
            upper[miss[~low] - cut] = evaluated[~low, 1]
            if len(fresh) >= max(BALLS_MERGE, keys.size // BALLS_SHARE):
                self._merge()
        return lower, upper

    def _merge(self) -> None:
        """Insert the dict's points into the sorted arrays (none of them is there already)."""
        new = np.array(list(self.fresh), dtype=np.float64)
        bounds = np.array(list(self.fresh.values()), dtype=np.float64)
        order = np.argsort(new)
        new = new[order]
        at = np.searchsorted(self.keys, new)  # sorted: inserted in order where equal
        self.keys = np.insert(self.keys, at, new)
        self.lower = np.insert(self.lower, at, bounds[order, 0])
        self.upper = np.insert(self.upper, at, bounds[order, 1])
        self.fresh = {}


@dataclass
class RigorousTable:
    """Interval enclosures of the partials (order 1) and Hessian entries (order 2) of the
    risk of pointwise ``erf`` attention, over boxes of overlaps.

    Parameters
    ----------
    params : Params
        The model; its ``lam`` is the temperature.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, risk_grad
    >>> from slr_theory.interval import Interval
    >>> from slr_theory.rigorous import RigorousTable
    >>> p = Params.paper()
    >>> t = RigorousTable(p)
    >>> o = (0.3, 0.5, 0.1, -0.2, 0.05)
    >>> g = t.partials([Interval(x) for x in o])
    >>> exact = risk_grad(p, *o)
    >>> all(bool(g[i].lo <= exact[i] <= g[i].hi) for i in range(5))
    True
    """

    params: Params
    rows: dict = field(init=False, repr=False)
    constants: dict = field(init=False, repr=False)

    def __reduce__(self):
        # python-flint's balls do not pickle: a copy is the table of the same parameters,
        # built once per process (:func:`table_of`), its cache of balls kept between copies
        return table_of, (self.params,)

    def __post_init__(self) -> None:
        arb, acb, ctx = flint_context()
        old, ctx.prec = ctx.prec, PRECISION
        try:
            p = self.params
            lam, gam = arb(p.lam), arb(p.gamma)
            B = (arb(p.d) / 2).sqrt()
            g = lam * gam
            q, r = 1 + 2 * g * g, 1 + 4 * g * g
            K2 = 2 / arb.pi().sqrt()
            ql, rl = 1 + 2 * lam * lam, 1 + 4 * lam * lam
            P = lam * K2 / ql.sqrt()
            S0 = 2 / arb.pi() * (2 * lam * lam / ql).asin()
            S2 = lam * lam * 8 / (arb.pi() * ql * rl.sqrt())
            iv = {
                "one": Interval(1.0),
                "isq": from_arb(1 / q.sqrt()),
                "ir": from_arb(1 / r.sqrt()),
                "K2": from_arb(K2),
            }
            s = engine.table_scalars(
                p,
                Interval(p.lam),
                Interval(p.gamma),
                from_arb(B),
                iv,
                (from_arb(P), from_arb(S0), from_arb(S2)),
                True,
            )
            self.constants = {
                "cx": s["cx"],
                "ir": iv["ir"],
                "a": from_arb(lam * B),
            }
            ir, h2 = 1 / r.sqrt(), 2 / q
            ir2 = ir * ir  # the ball the integrand would compute at each call
            e1 = 1 + 1 / r

            def zeta(t: float):
                # zeta(t, g) = 1 - 8 T(h, a), h^2 = 2 t^2 / q, a = r^{-1/2};
                # T = (a / 2 pi) int_0^1 exp(-h^2 (1 + a^2 u^2) / 2) / (1 + a^2 u^2) du
                minus_c = -(h2 * arb(t) * arb(t) / 2)

                def f(u, _analytic):
                    w = 1 + ir2 * u * u
                    return (minus_c * w).exp() / w

                integral = acb.integral(f, 0, 1).real
                return 1 - 8 * ir * integral / (2 * arb.pi())

            self._erf = BallCache(lambda x: arb(x).erf())
            self._erfc = BallCache(lambda x: arb(x).erfc())
            self._ex = BallCache(lambda x: (-arb(x) * arb(x)).exp())
            self._exey = BallCache(lambda x: (-arb(x) * arb(x) * e1).exp())
            self._zeta = BallCache(zeta)
            self._ctx = ctx
        finally:
            ctx.prec = old
        self.rows = {}
        for order in (1, 2):
            rows: dict = {}
            for row, key, c in engine.entries(s, order):
                engine.add_term(rows.setdefault(row, {}), key, c)
            self.rows[order] = rows

    # --- features --------------------------------------------------------------------------
    def _monotone(self, balls: BallCache, x: Interval, rising: bool) -> Interval:
        old, self._ctx.prec = self._ctx.prec, PRECISION
        try:
            if rising:
                return balls.between(x.lo, x.hi)
            a = x.abs()  # falls with |x|
            return balls.between(a.hi, a.lo)
        finally:
            self._ctx.prec = old

    def _erf_minus(self, y: Interval, nu: Interval, erfy: Interval) -> Interval:
        """``erf(y) - nu``, tight where it nearly cancels (``nu`` near ``+-1``, ``|y|`` large):
        there it is ``(1 - nu) - erfc(y)`` (``y >= 0``) or ``erfc(-y) - (1 + nu)``
        (``y <= 0``), each term enclosed apart (as the engine's ``_bracket`` computes it)."""
        plain = erfy - nu
        close = plain.contains_zero() & ((y.lo >= 0.0) | (y.hi <= 0.0))
        if not np.any(close):
            return plain
        old, self._ctx.prec = self._ctx.prec, PRECISION
        try:
            ys, ns = y[close], nu[close]
            pos = ys.lo >= 0.0
            a = np.where(pos, ys.lo, -ys.hi)  # |y| falls from a to b over the box
            b = np.where(pos, ys.hi, -ys.lo)
            e = self._erfc.between(b, a)  # erfc(|y|), falling from a to b
        finally:
            self._ctx.prec = old
        minus, plus = 1.0 - ns, ns + 1.0  # no product, whose rounding would cost 1e-16
        gap = Interval._new(np.where(pos, minus.lo, plus.lo), np.where(pos, minus.hi, plus.hi))
        alt = gap - e
        alt = Interval._new(np.where(pos, alt.lo, -alt.hi), np.where(pos, alt.hi, -alt.lo))
        lo, hi = np.array(plain.lo, dtype=np.float64), np.array(plain.hi, dtype=np.float64)
        lo[close] = np.maximum(lo[close], alt.lo)
        hi[close] = np.minimum(hi[close], alt.hi)
        return Interval._new(lo, hi)

    def _bases(self, ov: list[Interval]) -> dict:
        kappa, nu = ov[0], ov[1]
        x = self.constants["cx"] * kappa
        y = self.constants["ir"] * x
        erfx = self._monotone(self._erf, x, True)
        ex = self._monotone(self._ex, x, False)
        erfy = self._monotone(self._erf, y, True)
        t = (self.constants["a"] * kappa).abs()
        zeta = self._monotone(self._zeta, t, True)
        return {
            "x": x,
            "1": Interval(np.ones(kappa.shape)),
            "erf": erfx,
            "ex": ex,
            "exey": self._monotone(self._exey, x, False),
            "exu": ex * erfy,
            "exD": ex * self._erf_minus(y, nu, erfy),
            "zeta": zeta,
            "W": 1.0 + zeta - 2.0 * nu * erfx,
            "erf2": erfx**2,
            "erfex": erfx * ex,
            "ex2": ex**2,
        }

    def _rows(self, orders: tuple, ov: list) -> tuple[list[dict], Interval]:
        """The rows of each order in `orders` over the boxes, sharing the bases, monomials,
        powers of ``x`` and their products (one evaluation of each per call; a product in
        several rows is computed once), and a zero of the boxes' shape."""
        ov = [o if isinstance(o, Interval) else Interval(o) for o in ov]
        bases = self._bases(ov)
        ext = [ov[1], ov[2], ov[3], ov[4], ov[1] * ov[4] - ov[3]]
        powers: dict = {}
        monos: dict = {}
        scaled: dict = {}  # (p, b): x^p times the base
        products: dict = {}  # (mono, p, b): the monomial times that
        out = []
        for order in orders:
            rows = {}
            for row, terms in self.rows[order].items():
                total = None
                for key, c in terms.items():
                    f = products.get(key)
                    if f is None:
                        mono, p, b = key
                        if mono not in monos:
                            m = None
                            for v, e in zip(ext, mono, strict=True):
                                if e:
                                    m = v**e if m is None else m * v**e
                            monos[mono] = m
                        f = scaled.get((p, b))
                        if f is None:
                            if p not in powers:
                                powers[p] = bases["x"] ** p if p else None
                            f = bases[b] if powers[p] is None else powers[p] * bases[b]
                            scaled[p, b] = f
                        if monos[mono] is not None:
                            f = monos[mono] * f
                        products[key] = f
                    term = c * f
                    total = term if total is None else total + term
                rows[row] = total
            out.append(rows)
        return out, Interval(np.zeros(ov[0].shape))

    @staticmethod
    def _partials_of(rows: dict, zero: Interval) -> list[Interval]:
        return [rows.get(i, zero) for i in range(5)]

    @staticmethod
    def _hessian_of(rows: dict, zero: Interval) -> list[list[Interval]]:
        H = [[zero] * 5 for _ in range(5)]
        for row, (i, j) in enumerate(engine.HESSIAN_PAIRS):
            H[i][j] = H[j][i] = rows.get(row, zero)
        return H

    def partials(self, ov: list) -> list[Interval]:
        """Enclosures of ``(R_kappa, R_nu, R_theta, R_eta, R_rho)`` over the box `ov`.

        Parameters
        ----------
        ov : list of 5 Interval (or floats)
            ``kappa, nu, theta, eta, rho``, each an interval array of one shape.

        Returns
        -------
        list of 5 Interval
        """
        (rows,), zero = self._rows((1,), ov)
        return self._partials_of(rows, zero)

    def hessian(self, ov: list) -> list[list[Interval]]:
        """Enclosures of the 5 x 5 Hessian of ``R`` in the overlaps over the box `ov`.

        Parameters
        ----------
        ov : list of 5 Interval (or floats)

        Returns
        -------
        list of 5 lists of 5 Interval
        """
        (rows,), zero = self._rows((2,), ov)
        return self._hessian_of(rows, zero)

    def partials_and_hessian(self, ov: list) -> tuple[list[Interval], list[list[Interval]]]:
        """:meth:`partials` and :meth:`hessian` over the same boxes, the bases evaluated once.

        Parameters
        ----------
        ov : list of 5 Interval (or floats)

        Returns
        -------
        tuple
            The partials and the Hessian.
        """
        (first, second), zero = self._rows((1, 2), ov)
        return self._partials_of(first, zero), self._hessian_of(second, zero)


#: Tables (with their caches of balls) kept per process, the most recently used.
KEPT_TABLES = 2


@lru_cache(maxsize=KEPT_TABLES)
def table_of(params: Params) -> RigorousTable:
    """The table of `params` in this process: built at the first call, the same object after
    (a census, its check and a worker's copies of one table share its balls, each evaluated
    once). What the model gives (:meth:`slr_theory.models.Erf.rigorous_table`) and what a
    pickled table is rebuilt by (:meth:`RigorousTable.__reduce__`). The last `KEPT_TABLES`
    are kept: a survey over many temperatures does not hold the balls of them all."""
    return RigorousTable(params)
