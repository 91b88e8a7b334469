"""zeta(t, g) = E erf(t + g Z)^2 and its derivatives in t, evaluated without cancellation over the whole range."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import erf, erfc

from .. import doubledouble as _dd
from .means import TWO_OVER_SQRT_PI, laguerre_rule, prep, ret
from .series import erfc_sq_reduced, plackett_rule, zeta_reduced, zeta_series_coefficients

__all__ = ["mean_erfc_sq", "zeta", "zeta_c", "zeta_t", "zeta_tt", "zeta_ttt"]


def zeta_prep(t: ArrayLike, s: ArrayLike):
    t, s, qh, ql, eh, el = prep(t, s, "t", "s")
    rh, rl = _dd.one_plus_c_sq(s, 4.0)
    return t, s, qh, ql, rh, rl, eh, el


def _zeta_c_core(t, qh, rh, eh, el):
    # 1 - zeta = (2/sqrt(pi)) e^{-x^2} int_0^inf e^{-v} erf(sqrt((x^2+v)/r)) / sqrt(x^2+v) dv
    lag_x, lag_w = laguerre_rule()
    p = np.sqrt(eh[..., None] + lag_x)
    integral = np.sum(lag_w * (erf(p / np.sqrt(rh)[..., None]) / p), axis=-1)
    return _dd.mul_exp_neg(TWO_OVER_SQRT_PI * integral, eh, el)


def zeta_c(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""The complement ``1 - zeta(t, s) = E[1 - erf(t + s Z)**2]``, accurate when tiny.

    With ``x = |t| / sqrt(q)`` and ``r = 1 + 4 s**2``, integrating ``zeta_t``
    from ``|t|`` to infinity and substituting ``v = w**2 - x**2`` gives a
    positive integral, evaluated with 30-point Gauss-Laguerre:

    .. math:: 1 - \zeta(t, s) = \frac{2}{\sqrt\pi}\, e^{-x^2} \int_0^\infty e^{-v}\,
              \frac{\mathrm{erf}\big(\sqrt{(x^2+v)/r}\big)}{\sqrt{x^2+v}}\, dv

    Parameters
    ----------
    t : array_like
        Mean of the Gaussian argument.
    s : array_like
        Its standard deviation, ``s >= 0``.

    Returns
    -------
    ndarray or numpy scalar
        In ``(0, 1]``, even in `t`; full relative precision down to the
        smallest normal double (e.g. ``t ~ 26`` with ``s = 0``).

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_c
    >>> print(zeta_c(0.0, 0.0))
    1.0
    >>> print(zeta_c(10.0, 0.0))  # 1 - erf(10)^2 ~ 2 erfc(10)
    4.1769751675250885e-45
    """
    t, s, qh, ql, rh, rl, eh, el = zeta_prep(t, s)
    z = _zeta_small_and_large(t, s, qh, rh)
    out = np.array(1.0 - z, dtype=np.float64)
    tail = np.asarray(z >= 0.5)  # 1 - zeta <= 1/2: the positive tail integral keeps its digits
    if tail.any():
        out[tail] = _zeta_c_core(t[tail], qh[tail], rh[tail], eh[tail], el[tail])
    return ret(out)


def zeta(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``zeta(t, s) = E erf(t + s Z)**2``, with full relative precision everywhere.

    The paper's closed form is Owen's T:

    .. math:: \zeta(t, s) = 1 - 8\, T\!\left(\frac{\sqrt2\, t}{\sqrt{1+2s^2}},
              \frac{1}{\sqrt{1+4s^2}}\right),

    but ``1 - 8T`` loses all relative precision where ``zeta`` is small. This
    implementation (:func:`zeta_reduced`, shared with the risk engine) uses it
    where ``zeta >= 1/2`` and otherwise the series of the positive decomposition

    .. math:: \zeta(t, s) = \frac{2}{\pi}\arctan\frac{2s^2}{\sqrt{1+4s^2}}
              + 2\int_0^{|t|/\sqrt{q}} \mathrm{erf}(w/\sqrt r)\, \mathrm{erf}'(w)\, dw

    in powers of ``t**2 / q`` (:func:`zeta_series_coefficients`; there
    ``|t| / sqrt(q) < 0.74`` by Jensen's inequality).

    Parameters
    ----------
    t : array_like
        Mean.
    s : array_like
        Standard deviation, ``s >= 0``.

    Returns
    -------
    ndarray or numpy scalar
        In ``[0, 1)``, even in `t`, increasing in ``|t|``. Near the origin
        ``zeta ~ 4 (t**2 + s**2) / pi``, kept to full precision down to the
        smallest normal double.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta
    >>> print(zeta(0.0, 1.0))  # (2/pi) arcsin(2/3)
    0.46455905439753997
    >>> print(zeta(0.0, 1e-3))  # tiny: 1 - 8T would give rounding noise here
    1.2732369982620153e-06
    """
    t, s, qh, _ql, rh, _rl, _eh, _el = zeta_prep(t, s)
    return ret(_zeta_small_and_large(t, s, qh, rh))


def _zeta_small_and_large(t, s, qh, rh):
    z0 = (2.0 / np.pi) * np.arctan2(2.0 * s * s, np.sqrt(rh))
    coefficients = zeta_series_coefficients(rh)
    return np.asarray(zeta_reduced(np.abs(t) / np.sqrt(qh), 1.0 / np.sqrt(rh), z0, coefficients))


def mean_erfc_sq(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``E erfc(t + s Z)**2``, with full relative precision where it is tiny.

    This is the informative part of the risk at the optimum (``kappa = nu = 1``):
    ``1 - 2 E erf(X) + zeta(t, s)``, a difference of numbers near 1 that is
    exponentially small in ``t**2``. With ``x = |t| / sqrt(q)`` it is computed from
    positive terms only (:func:`erfc_sq_reduced`, shared with the risk engine):
    Plackett's angle integral for ``x < 3``,

    .. math:: \mathbb{E}\,\mathrm{erfc}(X)^2 = \mathrm{erfc}(x)^2
              + \frac{2}{\pi}\int_0^{A} e^{-2x^2/(1+\sin\theta)}\,d\theta,
              \qquad A = \arcsin\frac{2s^2}{1+2s^2},

    and beyond, with ``beta = 1 + 1/r``, the tail integral

    .. math:: \mathbb{E}\,\mathrm{erfc}(X)^2 = \frac{2}{\beta\sqrt\pi}\, e^{-\beta x^2}
              \int_0^\infty e^{-v}\, \frac{\mathrm{erfcx}\big(\sqrt{(x^2 + v/\beta)/r}\big)}{\sqrt{x^2 + v/\beta}}\, dv.

    For ``t < 0``, ``E erfc(X)**2 = 4 - 4 erfc(x) + E erfc(|t| + sZ)**2`` (all terms positive).

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``E erfc(t + sZ)**2`` in ``(0, 4)``, to full relative precision when tiny.

    Examples
    --------
    >>> from slr_theory.gaussian import mean_erfc_sq
    >>> print(mean_erfc_sq(0.0, 0.0))
    1.0
    >>> print(mean_erfc_sq(10.0, 0.0))  # erfc(10)^2
    4.361780387530313e-90
    """
    t, s, qh, _ql, rh, rl, eh, el = zeta_prep(t, s)
    x = np.abs(t) / np.sqrt(qh)
    out = erfc_sq_reduced(x, eh, el, rh, rl, *plackett_rule(rh))
    neg = t < 0
    if np.any(neg):
        out = np.where(neg, (4.0 - 4.0 * erfc(x)) + out, out)
    return ret(np.asarray(out, dtype=np.float64))


def zeta_t(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``d zeta / d t``, odd in `t`.

    .. math:: \partial_t \zeta(t, s) = \frac{2}{\sqrt q}\, \mathrm{erf}\!\left(\frac{t}{\sqrt{qr}}\right)
              \mathrm{erf}'\!\left(\frac{t}{\sqrt q}\right), \quad q = 1 + 2s^2,\ r = 1 + 4s^2

    (``2 E[erf(X) erf'(X)]``: complete the square in ``exp(-X**2)`` times the
    Gaussian density, then apply :func:`mean_erf`.)

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``d zeta / dt``, odd in `t`.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_t
    >>> print(zeta_t(1.0, 0.0))  # 2 erf(1) erf'(1)
    0.6996228344714137
    """
    t, s, qh, ql, rh, rl, eh, el = zeta_prep(t, s)
    x = t / np.sqrt(qh)
    factor = 2.0 * TWO_OVER_SQRT_PI * erf(x / np.sqrt(rh)) / np.sqrt(qh)
    return ret(_dd.mul_exp_neg(factor, eh, el))


def zeta_tt(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``d^2 zeta / d t^2``, even in `t`; changes sign once for ``t > 0``.

    .. math:: \partial_t^2 \zeta = \frac{4}{\sqrt\pi\, q}\, e^{-x^2}
              \left[\frac{2}{\sqrt{\pi r}} e^{-x^2/r} - 2x\,\mathrm{erf}(x/\sqrt r)\right],
              \quad x = t/\sqrt q

    Near its zero the relative error grows like the condition number of the
    bracket (both terms are accurate to a few ulp).

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``d^2 zeta / dt^2``, even in `t`.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_tt
    >>> print(zeta_tt(0.0, 0.0))  # 8 / pi
    2.546479089470325
    """
    t, s, qh, ql, rh, rl, eh, el = zeta_prep(t, s)
    x = t / np.sqrt(qh)
    e2h, e2l = _dd.dd_div(eh, el, rh, rl)
    sr = np.sqrt(rh)
    pre = 2.0 * TWO_OVER_SQRT_PI / qh
    sh, sl = _dd.two_sum(eh, e2h)
    first = _dd.mul_exp_neg(pre * TWO_OVER_SQRT_PI / sr, sh, sl + (el + e2l))
    second = _dd.mul_exp_neg(pre * 2.0 * x * erf(x / sr), eh, el)
    return ret(first - second)


def zeta_ttt(t: ArrayLike, s: ArrayLike) -> np.ndarray:
    r"""``d^3 zeta / d t^3``, odd in `t`.

    .. math:: \partial_t^3 \zeta = \frac{8}{\sqrt\pi\, q^{3/2}}\, e^{-x^2}
              \Big[(2x^2 - 1)\,\mathrm{erf}(x/\sqrt r) - x\Big(2 + \frac1r\Big)\frac{2}{\sqrt{\pi r}}e^{-x^2/r}\Big],
              \quad x = t/\sqrt q

    Parameters
    ----------
    t : array_like
        Mean, ``|t| <= 1e100``.
    s : array_like
        Standard deviation, ``0 <= s <= 1e100``; broadcasts with `t`.

    Returns
    -------
    ndarray or numpy scalar
        ``d^3 zeta / dt^3``, odd in `t`.

    Examples
    --------
    >>> from slr_theory.gaussian import zeta_ttt
    >>> print(zeta_ttt(0.0, 1.0))
    -0.0
    """
    t, s, qh, _ql, rh, rl, eh, el = zeta_prep(t, s)
    x = t / np.sqrt(qh)
    sr = np.sqrt(rh)
    e2h, e2l = _dd.dd_div(eh, el, rh, rl)
    sh, sl = _dd.two_sum(eh, e2h)
    pre = 4.0 * TWO_OVER_SQRT_PI / (qh * np.sqrt(qh))
    first = _dd.mul_exp_neg(pre * (2.0 * x * x - 1.0) * erf(x / sr), eh, el)
    second = _dd.mul_exp_neg(
        pre * x * (2.0 + 1.0 / rh) * TWO_OVER_SQRT_PI / sr, sh, sl + (el + e2l)
    )
    return ret(first - second)
