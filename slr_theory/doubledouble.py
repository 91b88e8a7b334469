"""Double-double helpers: exact products and sums for exponents of Gaussians.

``exp(-m**2)`` has condition number ``2 m**2`` in ``m``: at the underflow edge
(``m**2`` ~ 700) one rounding in ``m**2`` costs ~300 ulp. These helpers carry
the exponent as an unevaluated sum ``hi + lo`` (Dekker, 1971), so that
``exp(-(hi + lo))`` is correct to a few ulp.

The ``near_`` helpers give the same sums to a relative ``2**-61`` only, which is what
an argument that is itself rounded needs (the risk engine's ``x = a kappa / sqrt q``,
whose rounding moves ``x**2`` by ``2**-52``): in the platform's extended precision
where it has one (:data:`EXTENDED`), a few NumPy calls where double-double takes
forty; through double-double where not.

The two doors agree by construction on the high part: it is the same plain double
expression in both (``x * x / den_hi``, ``a_hi / b_hi``, ``a_hi + a_hi / b_hi``, within
two ulp of the value), and the door computes only the exact rest, the low part. So
``exp(-hi)`` is the same number, bit for bit, whichever door a platform has, and the
doors differ only through ``exp(-lo)`` of two low parts ``2**-60`` of the sum apart.
"""

from __future__ import annotations

import numpy as np

_SPLITTER = 134217729.0  # 2**27 + 1
_SAFE = 1e150  # beyond this Dekker's split overflows; exponents are then huge anyway


def two_sum(a, b):
    """``a + b = s + err`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    t = _SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a, b):
    """``a * b = p + err`` exactly (Dekker), for ``|a|, |b| < 1e150``."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sq(a):
    """:func:`two_prod` of ``a`` with itself, splitting once (the same expression)."""
    p = a * a
    ah, al = _split(a)
    return p, ((ah * ah - p) + ah * al + al * ah) + al * al


def dd_mul(ah, al, bh, bl):
    """Double-double product."""
    p, e = two_prod(ah, bh)
    e = e + (ah * bl + al * bh)
    return two_sum(p, e)


def dd_div(ah, al, bh, bl):
    """Double-double quotient ``(ah + al) / (bh + bl)``."""
    q1 = ah / bh
    p, e = two_prod(q1, bh)
    r = ((ah - p) - e + al) - q1 * bl
    return two_sum(q1, r / bh)


def one_plus_c_sq(s, c):
    """``1 + c s**2`` as a double-double, for ``c`` a power of two."""
    p, e = two_prod(s, s)
    hi, lo = two_sum(1.0, c * p)
    return hi, lo + c * e


def sq_over(x, den_hi, den_lo):
    """``x**2 / den`` as a double-double, robust to huge ``x`` (then returns inf)."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    safe = ax < _SAFE
    if safe.all():  # the common case, without the masks (the same operations, bit for bit)
        return dd_div(*_two_sq(x), den_hi, den_lo)
    xs = np.where(safe, x, 0.0)
    p, e = _two_sq(xs)
    hi, lo = dd_div(p, e, den_hi, den_lo)
    with np.errstate(over="ignore"):
        plain = (x / np.sqrt(den_hi)) ** 2
    return np.where(safe, hi, plain), np.where(safe, lo, 0.0)


#: ``np.longdouble`` has at least 64 significant bits (x86-64's extended precision): the
#: ``near_`` helpers then round once to 64 bits in place of the double-double arithmetic.
EXTENDED = np.finfo(np.longdouble).nmant >= 63
_LD = np.longdouble


def rebase(head, hi, lo):
    """The double-double ``hi + lo`` with the high part `head`: ``(head, (hi - head) + lo)``.

    For a `head` within a factor 2 of `hi` (then ``hi - head`` is exact, Sterbenz), the
    sum is the same up to one rounding of the new low part, ``2**-53`` of ``|hi - head| +
    |lo|``. A `head` computed from inputs that do not depend on the door (:data:`EXTENDED`)
    makes ``exp(-head)`` door-independent.
    """
    return head, (hi - head) + lo


def _rest_near(v, head):
    """``v - head`` rounded to double, for a longdouble `v` and a double `head` within a
    factor 2 of it (the difference is exact in longdouble, Sterbenz)."""
    return (v - head).astype(np.float64)


def near_sq_over(x, den_hi, den_lo):
    """``x**2 / den`` as ``hi + lo`` to a relative ``2**-61``, for ``|x| < 1e150``.

    What a rounded ``x`` needs: its own rounding already moves ``x**2`` by ``2**-52``
    relative, a thousand times more. ``hi = x * x / den_hi`` in plain double (the same
    bits through both doors, within two ulp of the value); ``lo`` is the rest, in
    extended precision (:data:`EXTENDED`: a few NumPy calls where :func:`sq_over`
    takes about forty) or, on a platform without it, from :func:`sq_over`.
    """
    x = np.asarray(x, dtype=np.float64)
    head = x * x / den_hi
    if not EXTENDED:
        return rebase(head, *sq_over(x, den_hi, den_lo))
    xl = np.asarray(x, _LD)
    return head, _rest_near(xl * xl / (np.asarray(den_hi, _LD) + np.asarray(den_lo, _LD)), head)


def near_div(ah, al, bh, bl):
    """``(ah + al) / (bh + bl)`` as ``hi + lo`` to a relative ``2**-61``: ``hi = ah / bh``
    in plain double, ``lo`` the rest in extended precision where the platform has it, else
    from :func:`dd_div` (:func:`near_sq_over`)."""
    head = ah / bh
    if not EXTENDED:
        return rebase(head, *dd_div(ah, al, bh, bl))
    num = np.asarray(ah, _LD) + np.asarray(al, _LD)
    return head, _rest_near(num / (np.asarray(bh, _LD) + np.asarray(bl, _LD)), head)


def near_add_div(ah, al, bh, bl):
    """``a + a / b`` as ``hi + lo`` to a relative ``2**-61`` (``a = ah + al``, ``b = bh + bl``,
    ``b >= 1``): ``hi = ah + ah / bh`` in plain double, ``lo`` the rest in extended
    precision where the platform has it, else from :func:`dd_div` and :func:`two_sum`
    (:func:`near_sq_over`)."""
    head = ah + ah / bh
    if not EXTENDED:
        qh, ql = dd_div(ah, al, bh, bl)
        sh, sl = two_sum(ah, qh)
        return rebase(head, sh, sl + (al + ql))
    a = np.asarray(ah, _LD) + np.asarray(al, _LD)
    return head, _rest_near(a + a / (np.asarray(bh, _LD) + np.asarray(bl, _LD)), head)


# Cody-Waite split of ln 2: LN2_HI has 32 significant bits, so k * LN2_HI is exact.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_RESCALE_AT = 600.0
_RESCALE_K = 64
_INV_LN2 = 1.4426950408889634
_MAX_K = 2.0**20  # k * _LN2_HI stays exact (32 + 21 bits)
_EXP_CUT = 7.0e5  # e^-700000 times any finite factor is 0


def mul_exp_neg(factor, hi, lo):
    """``factor * exp(-(hi + lo))`` without an intermediate subnormal.

    When ``exp(-hi)`` would be subnormal (or nearly so) it is computed as
    ``2**-k * exp(-(hi - k ln 2))`` with an exact Cody-Waite reduction, ``k`` chosen
    so that ``hi - k ln 2`` is about 560: the only rounding into the subnormal range
    is the final one, and a large ``factor`` (up to ``1e200``) meeting a tiny
    exponential still gives the right, possibly normal, product.
    """
    hi = np.asarray(hi, dtype=np.float64)
    # no rescaling (k = 0): the same result, bit for bit (a NaN maximum takes the general
    # branch, as np.all(hi <= _RESCALE_AT) would; one reduction costs half of that test)
    if hi.size and hi.max() <= _RESCALE_AT:
        return factor * (np.exp(-hi) * np.exp(-lo))
    lo = np.where(hi < _EXP_CUT, lo, 0.0)  # beyond, the result is 0 and lo may be huge
    t = np.fmin(np.fmax((hi - _RESCALE_AT) * _INV_LN2, 0.0), _MAX_K)  # NaN -> 0
    k = np.where(hi > _RESCALE_AT, t.astype(np.int64) + _RESCALE_K, 0)
    y = np.exp(-(hi - k * _LN2_HI)) * np.exp(-(lo - k * _LN2_LO))
    return np.ldexp(factor * y, -k)
