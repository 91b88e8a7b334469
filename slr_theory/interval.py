r"""Rigorous interval arithmetic on NumPy arrays: the enclosures a certificate is built from.

An :class:`Interval` holds arrays ``lo <= hi`` of one shape; every operation returns an
interval that contains every result of the exact operation on numbers of its operands.
Each IEEE operation is correctly rounded, so its rounded result is within half an ulp
of the exact one; moving the lower bound one ulp down and the upper one ulp up
(``np.nextafter``) makes the enclosure rigorous. Plain floats and arrays are exact
operands (a float *is* a real number; what it was meant to approximate is the
caller's business: constants such as ``2/sqrt(pi)`` come as intervals from
:func:`from_arb`).

Special functions are not here: their enclosures come from python-flint's ball
arithmetic (``arb``) at exact float endpoints, where the function is monotone
(:mod:`slr_theory.rigorous`).

Examples
--------
>>> from slr_theory.interval import Interval
>>> x = Interval(0.1, 0.2)
>>> y = x * x - 0.01
>>> bool(y.lo <= 0.0 <= y.hi), bool(y.hi >= 0.03)
(True, True)
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["Interval", "arb_bounds", "from_arb"]


#: Arrays at least this long step to their neighbouring floats by integer arithmetic on
#: their bits (eight times ``np.nextafter``'s speed on long arrays, slower on short ones).
BITWISE_STEP = 512

_ONE = np.int64(1)

_F64 = np.dtype(np.float64)  # the descriptor every float64 array NumPy makes holds


def _step(x, down: bool):
    """``np.nextafter(x, -inf)`` (`down`) or ``np.nextafter(x, inf)``, bit for bit, on a
    result an operation just made (nobody else holds it: a long array is stepped in place).

    A finite nonzero float's neighbours are its bit pattern read as an integer plus or minus
    one (the sign bit picks which): ``b - (b >> 63 | 1)`` steps toward ``-inf``,
    ``b + (b >> 63 | 1)`` toward ``+inf``. The patterns that step wrong (the zero of the
    wrong sign, the infinity stepped outward, NaN) all land on NaN and are stepped again,
    from their own value, by ``np.nextafter``."""
    if type(x) is not np.ndarray or x.dtype is not _F64 or x.size < BITWISE_STEP:
        return np.nextafter(x, -np.inf if down else np.inf)  # (a 0-d array among them)
    b = x.view(np.int64)
    t = b >> 63
    t |= _ONE
    if down:
        b -= t
    else:
        b += t
    if math.isnan(np.maximum.reduce(x, axis=None)):  # NaN propagates: no mask unless needed
        odd = np.isnan(x)
        back = b[odd] + t[odd] if down else b[odd] - t[odd]
        x[odd] = np.nextafter(back.view(np.float64), -np.inf if down else np.inf)
    return x


def _down(x):
    return _step(x, True)


def _up(x):
    return _step(x, False)


def _signed_product(x: Interval, cl: float, ch: float) -> Interval | None:
    """``x * [cl, ch]`` for a constant of one strict sign, with two products per bound
    instead of four (one where ``cl == ch``, a float); None for a constant that holds zero
    or an infinity.

    A rounded product is monotone in each factor (rounding to nearest is), so for
    ``c > 0`` the products at ``x.lo`` lie below those at ``x.hi``, and for ``c < 0``
    above: the least and greatest of the four products are among those two, bit for bit
    the bounds of the general formula (whose ties differ only in the sign of a zero, which
    the outward step erases; no bound of an interval is NaN)."""
    if cl > 0.0 and ch < math.inf:
        near, far = x.lo, x.hi
    elif ch < 0.0 and cl > -math.inf:
        near, far = x.hi, x.lo
    else:
        return None
    if cl == ch:
        return Interval._new(_down(near * cl), _up(far * cl))
    lo = np.minimum(near * cl, near * ch)
    hi = np.maximum(far * cl, far * ch)
    return Interval._new(_down(lo), _up(hi))


class Interval:
    """Arrays of closed intervals ``[lo, hi]`` with outward-rounded arithmetic.

    Parameters
    ----------
    lo, hi : array_like
        Bounds (`hi` defaults to `lo`: a degenerate interval, an exact number).

    Raises
    ------
    ValueError
        If some ``lo > hi`` or a bound is NaN.
    """

    __slots__ = ("hi", "lo")
    __array_priority__ = 1000  # ndarray op Interval defers to the interval's reflected method

    def __init__(self, lo, hi=None) -> None:
        lo = np.asarray(lo, dtype=np.float64)
        hi = lo if hi is None else np.asarray(hi, dtype=np.float64)
        if not (lo <= hi).all():  # one pass: a NaN compares false
            raise ValueError(f"Interval needs lo <= hi without NaN, got lo={lo!r}, hi={hi!r}.")
        self.lo, self.hi = (lo, hi) if lo.shape == hi.shape else np.broadcast_arrays(lo, hi)

    @staticmethod
    def _of(x) -> Interval:
        return x if isinstance(x, Interval) else Interval(x)

    @classmethod
    def _new(cls, lo: np.ndarray, hi: np.ndarray) -> Interval:
        """An interval from bounds an operation produced (ordered by construction)."""
        out = object.__new__(cls)
        out.lo, out.hi = lo, hi
        return out

    @property
    def shape(self) -> tuple:
        """The arrays' shape."""
        return self.lo.shape

    @property
    def mid(self) -> np.ndarray:
        """A point of every interval (the rounded midpoint)."""
        return np.clip(0.5 * self.lo + 0.5 * self.hi, self.lo, self.hi)

    @property
    def width(self) -> np.ndarray:
        """``hi - lo`` (rounded up)."""
        return _up(self.hi - self.lo)

    def __getitem__(self, index) -> Interval:
        return self._new(self.lo[index], self.hi[index])

    def __repr__(self) -> str:
        return f"Interval({self.lo!r}, {self.hi!r})"

    def __neg__(self) -> Interval:
        return self._new(-self.hi, -self.lo)

    def __add__(self, other) -> Interval:
        if isinstance(other, Interval):
            lo, hi = self.lo + other.lo, self.hi + other.hi
        else:
            lo, hi = self.lo + other, self.hi + other
        return self._new(_down(lo), _up(hi))

    __radd__ = __add__

    def __sub__(self, other) -> Interval:
        if isinstance(other, Interval):
            lo, hi = self.lo - other.hi, self.hi - other.lo
        else:
            lo, hi = self.lo - other, self.hi - other
        return self._new(_down(lo), _up(hi))

    def __rsub__(self, other) -> Interval:
        return self._of(other) - self

    def __mul__(self, other) -> Interval:
        if isinstance(other, Interval):
            if other.lo.ndim == 0 and self.lo.ndim:  # an array times a constant
                signed = _signed_product(self, float(other.lo), float(other.hi))
                if signed is not None:
                    return signed
            elif self.lo.ndim == 0 and other.lo.ndim:
                signed = _signed_product(other, float(self.lo), float(self.hi))
                if signed is not None:
                    return signed
            a, b = self.lo * other.lo, self.lo * other.hi
            c, d = self.hi * other.lo, self.hi * other.hi
            if isinstance(a, np.ndarray) and a.ndim and a.shape == d.shape:
                lo = np.minimum(a, b)  # the same extremes, in the products' own arrays
                hi = np.maximum(a, b, out=a)
                np.minimum(lo, np.minimum(c, d, out=b), out=lo)
                np.maximum(hi, np.maximum(c, d, out=c), out=hi)
            else:
                lo = np.minimum(np.minimum(a, b), np.minimum(c, d))
                hi = np.maximum(np.maximum(a, b), np.maximum(c, d))
            return self._new(_down(lo), _up(hi))
        if isinstance(other, float):  # an exact number: of one sign, it orders the products
            signed = _signed_product(self, other, other)
            if signed is not None:
                return signed
        a, b = self.lo * other, self.hi * other
        return self._new(_down(np.minimum(a, b)), _up(np.maximum(a, b)))

    __rmul__ = __mul__

    def abs(self) -> Interval:
        """``|x|``: ``[min |x|, max |x|]``."""
        lo = np.where(
            (self.lo <= 0.0) & (self.hi >= 0.0), 0.0, np.minimum(abs(self.lo), abs(self.hi))
        )
        return self._new(lo, np.maximum(abs(self.lo), abs(self.hi)))

    def __pow__(self, n: int) -> Interval:
        if not isinstance(n, int | np.integer) or n < 0:
            raise ValueError(f"Interval ** n needs an integer n >= 0, got {n!r}.")
        if n == 0:
            return self._new(np.ones(self.shape), np.ones(self.shape))
        base = self.abs() if n % 2 == 0 else self
        out = base
        for _ in range(n - 1):  # monotone on [0, inf) (even n) or everywhere (odd n)
            out = (
                self._new(_down(out.lo * base.lo), _up(out.hi * base.hi))
                if n % 2 == 0
                else out * base
            )
        if n % 2 == 0:
            return self._new(np.maximum(out.lo, 0.0), out.hi)
        return out

    def contains_zero(self) -> np.ndarray:
        """Whether 0 lies in each interval."""
        return (self.lo <= 0.0) & (self.hi >= 0.0)

    def within(self, other: Interval) -> np.ndarray:
        """Whether each interval lies in the interior of `other`'s."""
        return (self.lo > other.lo) & (self.hi < other.hi)

    def intersect(self, lo, hi) -> Interval:
        """The intersection with ``[lo, hi]`` (known to meet it)."""
        return Interval(np.maximum(self.lo, lo), np.minimum(self.hi, hi))

    def reciprocal(self) -> Interval:
        """``1 / x`` for intervals of positive numbers."""
        if np.any(self.lo <= 0.0):
            raise ValueError("Interval.reciprocal needs lo > 0.")
        return self._new(_down(1.0 / self.hi), _up(1.0 / self.lo))

    def sqrt(self) -> Interval:
        """``sqrt(max(x, 0))`` (bounds rounded outward)."""
        lo, hi = np.maximum(self.lo, 0.0), np.maximum(self.hi, 0.0)
        return self._new(np.maximum(_down(np.sqrt(lo)), 0.0), _up(np.sqrt(hi)))


def arb_bounds(ball) -> tuple[float, float]:
    """The floats that enclose one ``arb`` ball ``[m - r, m + r]``, rounded outward (the
    bounds :func:`from_arb` gives it, without arrays: one ball at a time is the common case
    of a cache of evaluations).

    Parameters
    ----------
    ball : flint.arb

    Returns
    -------
    tuple of float
        ``(lo, hi)``.

    Examples
    --------
    >>> from flint import arb
    >>> lo, hi = arb_bounds(arb(2).sqrt())
    >>> lo < 2 ** 0.5 < hi or lo <= 2 ** 0.5 <= hi
    True
    """
    return (
        math.nextafter(float(ball.lower()), -math.inf),
        math.nextafter(float(ball.upper()), math.inf),
    )


def from_arb(x) -> Interval:
    """The interval of floats that encloses an ``arb`` ball (or a list of them).

    Parameters
    ----------
    x : flint.arb or list of flint.arb
        Balls ``[m - r, m + r]``.

    Returns
    -------
    Interval
        Bounds rounded outward to floats: a 0-d interval for one ball, 1-d for a list.
    """
    balls = x if isinstance(x, list | tuple) else [x]
    lo = _down(np.array([float(b.lower()) for b in balls]))
    hi = _up(np.array([float(b.upper()) for b in balls]))
    out = Interval(lo, hi)
    return out[0] if not isinstance(x, list | tuple) else out
