r"""Softmax attention: Gaussian expectations of products of softmax weights.

With softmax attention the predictor is ``T(X) = sum_l p_l X_l^T v``,
``p = softmax(lambda U)``, ``U_l = X_l^T k``. Conditioning ``V_l = X_l^T v`` and
``W_l = X_l^T v*`` on ``U = (U_1, ..., U_L)`` (docs/theory.md, "Softmax attention")
leaves expectations of the form

.. math::

    \mathbb E\Big[\prod_{l \in I} h_l(U_l)\, e_l^{j_l} \Big/ S^p\Big], \qquad
    e_l = e^{\lambda U_l},\; S = \sum_l e_l,\; p = \sum_l j_l \in \{1, 2\},

with ``h_l`` a monomial in the token's centred key and ``I`` at most two or three tokens.
The Laplace transform ``S^{-p} = \Gamma(p)^{-1} \int_0^\infty t^{p-1} e^{-tS} dt`` splits
``e^{-tS}`` over the independent tokens; with ``t = e^\sigma`` every term becomes

.. math::

    \frac{1}{\Gamma(p)} \int_{-\infty}^{\infty} \prod_{l \in I} \mathbb E\big[h_l\,
    g_{j_l}(\sigma + \lambda U_l)\big]\; \Phi_I(\sigma)^{n_I}\, \Phi_D(\sigma)^{n_D}\, d\sigma,
    \qquad g_j(w) = e^{jw - e^w},

where ``Phi = E g_0`` is the transform of a token not in ``I`` (informative or
distractor) and ``n_I``, ``n_D`` count them. Every factor is bounded (``g_j <= (j/e)^j``),
so nothing overflows at any temperature, and the cost does not depend on ``d``.

The rule
--------
Both integrals are trapezoid rules on the real line, which converge geometrically for
integrands analytic in a strip: ``g_j(w)`` is analytic and bounded for
``|Im w| < pi/2``, so a step of ``0.2`` in ``sigma`` (and in ``lambda U``) leaves an
error ``~ e^{-2 pi (pi/2 - 0.1) / 0.2} ~ 1e-20`` of the term's scale, and the Gaussian
weight a step of at most ``0.5`` in the standardised variable (``e^{-2 pi^2 / 0.25}``).
The standardised variable runs over ``[-10, 10 + 2 g]`` (``g`` the scale of ``lambda U``:
the weight ``e_l^2`` tilts the Gaussian by ``2g``); ``sigma`` over the window outside
which every term is below ``e^{-38}`` of its scale. ``Phi^n`` is ``exp(n log Phi)`` with
``log Phi = log1p(-E[1 - g_0])``, so ``L`` up to ``1e12`` keeps its relative precision.

Terms
-----
A term is ``(p, info, distr)``: ``info`` and ``distr`` are sorted tuples of factors
``(j, i)``, each ``E[D^i g_j(sigma + lambda U)]`` of one informative token
(``D = U - sqrt(d/2) kappa``, ``N(0, gamma^2)``) or of one distractor (``D = U``,
``N(0, 1)``); a token absent from the tuples contributes ``Phi``. The risk of softmax
attention and its derivatives are polynomials in ``(nu, theta, eta, rho)`` with such terms
as coefficients (:func:`risk_expression`); a derivative in ``kappa`` is ``sqrt(d/2)`` times
one in the informative tokens' mean ``mu``, which by Stein's identity raises and lowers
the powers of ``D``: ``d/dmu E[D^i g] = E[D^{i+1} g] / gamma^2 - i E[D^{i-1} g]``
(:func:`d_mu`).

A sink
------
An attention with a sink (softmax-1, ``p_l = e_l / (1 + S)``) has a token with the
fixed logit 0 and no value: ``(1 + S)^{-p}`` has the same transform, with one more
factor ``g_{j_0}(sigma)`` for the sink's weight ``p_0 = 1 / (1 + S)`` raised to ``j_0``
(``g_0``, ``e^{-t}``, when the term does not weigh it). Its terms are
``(p, info, distr, j_0)`` when ``j_0 > 0`` (``p`` counts ``j_0``), and the functions take
``sink=True``; without a sink every term has three entries.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

from ...chebyshev import Pieces, build_pieces

__all__ = [
    "SOFTMAX_DOMAIN",
    "d_mu",
    "risk_expression",
    "term_bound",
    "term_integrals",
    "term_interpolant",
]

#: Bounds of softmax attention's numerics: ``lam * sqrt(d / 2)`` (the informative token's
#: mean logit) and ``lam * max(1, gamma)`` (the logits' spread).
SOFTMAX_DOMAIN = {"mean_logit": 1e3, "spread": 10.0}

#: The step in ``sigma = log t`` and in ``lambda U``.
_H = 0.2
#: Largest step of the standardised Gaussian variable.
_HX = 0.5
#: Terms are dropped where below ``e^{-_TAIL}`` of their scale.
_TAIL = 38.0

# A factor (j, i) is E[D^i g_j]; the free factor (0, 0) is left out of the tuples.
Factor = tuple[int, int]
Term = tuple  # (p, info, distr) or (p, info, distr, j_0) with a sink's weight


def _norm(factors) -> tuple[Factor, ...]:
    return tuple(sorted(f for f in factors if f != (0, 0)))


def _term(p: int, info, distr, sink_power: int = 0) -> Term:
    """A term in its one spelling: the sink's power only when it weighs the sink."""
    base = (p, _norm(info), _norm(distr))
    return (*base, sink_power) if sink_power else base


def _sink_power(term: Term) -> int:
    """The power ``j_0`` of the sink's weight in `term` (0 without one)."""
    return term[3] if len(term) > 3 else 0


def d_mu(term: Term, s: int, gamma: float) -> dict[Term, float]:
    """The derivative of `term` in the informative tokens' mean ``mu``, as a sum of terms.

    Parameters
    ----------
    term : tuple
        ``(p, info, distr)`` (module docstring).
    s : int
        Informative tokens (those absent from ``info`` contribute ``Phi_I``).
    gamma : float
        Their spread.

    Returns
    -------
    dict
        Term to coefficient.

    Examples
    --------
    >>> from slr_theory.softmax import d_mu
    >>> d_mu((1, ((1, 0),), ()), 1, 1.0)
    {(1, ((1, 1),), ()): 1.0}
    """
    p, info, distr = term[:3]
    j0 = _sink_power(term)
    out: dict[Term, float] = {}

    def add(new, c):
        key = _term(p, new, distr, j0)
        out[key] = out.get(key, 0.0) + c

    g2 = gamma * gamma
    for idx, (j, i) in enumerate(info):
        rest = info[:idx] + info[idx + 1 :]
        add((*rest, (j, i + 1)), 1.0 / g2)
        if i:
            add((*rest, (j, i - 1)), -float(i))
    free = s - len(info)
    if free > 0:
        add((*info, (0, 1)), free / g2)
    return {k: v for k, v in out.items() if v != 0.0}


def risk_expression(
    d: int, L: int, gamma: float, s: int, *, stable: bool = False, sink: bool = False
) -> list[tuple[int, float, tuple, Term]]:
    """The risk of softmax attention minus ``eps^2``, term by term.

    ``R = eps^2 + sum c * nu^a theta^b eta^c rho^e * T`` over the returned
    ``(component, c, (a, b, c, e), T)``, with ``T`` a term (module docstring) or ``None``
    for the constant 1, and ``component`` an index into ``(informative, distractors,
    interactions)``: each informative token alone (``E (W_i - p_i V_i)^2``), each
    distractor alone (``E p_m^2 V_m^2``), and every product of two different tokens.

    With ``stable=True`` the same risk in a form without cancellation near the optimum,
    where the expanded one is a difference of numbers of order one: monomials have six
    exponents, of ``(nu, theta, eta, rho, u, w)`` with ``u = 1 - nu`` and
    ``w = eta - rho``, and every weight of a token that should carry the attention appears
    as ``1 - p_i = sum_{l != i} p_l`` (:func:`_stable_expression`; with a sink the sum
    has the sink's weight too). Its terms are small
    where the risk is, so the risk and its derivatives keep their relative precision.

    Parameters
    ----------
    d, L : int
    gamma : float
    s : int
        Informative tokens, ``1 <= s <= L``.
    stable : bool
        The cancellation-free form (six exponents per monomial).
    sink : bool
        Weights with a sink (softmax-1, module docstring): the expanded form is the same
        (it holds for any weights), the stable one weighs the sink in ``1 - p_i``.

    Returns
    -------
    list of (int, float, tuple, term or None)

    Examples
    --------
    >>> from slr_theory.softmax import risk_expression
    >>> rows = risk_expression(400, 10, 0.5, 1)
    >>> rows[0]  # s gamma^2, the informative token's variance
    (0, 0.25, (0, 0, 0, 0), None)
    """
    B = math.sqrt(d / 2.0)
    G = gamma * gamma
    if stable:
        return _stable_expression(B, G, L, s, sink)
    D = L - s
    ss = s * (s - 1)
    NU, TH, ET, RH = (1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1)

    def m(*monos):
        return tuple(map(sum, zip((0, 0, 0, 0), *monos, strict=True)))

    t1 = (1, ((1, 0),), ())
    t1x = (1, ((1, 1),), ())
    t1xx = (1, ((1, 2),), ())
    t2 = (2, ((2, 0),), ())
    t2x = (2, ((2, 1),), ())
    t2xx = (2, ((2, 2),), ())
    d2 = (2, (), ((2, 0),))
    d2zz = (2, (), ((2, 2),))
    rows = [
        # informative: s E (W - p V)^2
        (0, s * G, m(), None),
        (0, -2 * s * G, m(NU), t1),
        (0, 2 * s * G, m(ET, RH), t1),
        (0, -2 * s * B, m(TH, ET), t1x),
        (0, -2 * s, m(ET, RH), t1xx),
        (0, s * B * B, m(TH, TH), t2),
        (0, s * G, m(), t2),
        (0, -s * G, m(RH, RH), t2),
        (0, 2 * s * B, m(TH, RH), t2x),
        (0, s, m(RH, RH), t2xx),
        # distractors: (L - s) E p_m^2 V_m^2
        (1, D, m(), d2),
        (1, -D, m(RH, RH), d2),
        (1, D, m(RH, RH), d2zz),
        # interactions: products of two different tokens
        (2, -2 * ss * B, m(TH, ET), (1, ((0, 1), (1, 0)), ())),
        (2, -2 * ss, m(ET, RH), (1, ((0, 1), (1, 1)), ())),
        (2, -2 * s * D, m(ET, RH), (1, ((0, 1),), ((1, 1),))),
        (2, ss * B * B, m(TH, TH), (2, ((1, 0), (1, 0)), ())),
        (2, 2 * ss * B, m(TH, RH), (2, ((1, 0), (1, 1)), ())),
        (2, ss, m(RH, RH), (2, ((1, 1), (1, 1)), ())),
        (2, 2 * s * D * B, m(TH, RH), (2, ((1, 0),), ((1, 1),))),
        (2, 2 * s * D, m(RH, RH), (2, ((1, 1),), ((1, 1),))),
        (2, D * (D - 1), m(RH, RH), (2, (), ((1, 1), (1, 1)))),
    ]
    return [r for r in rows if r[1] != 0]


#: Largest ratio of the ``sigma`` step to the ``lambda U`` step for the shared grid.
_MAX_RATIO = 16


#: The label of a q-slot that falls on the sink (:func:`_expect`).
_SINK = -1


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def _gauss_moment(i: int, var: float) -> float:
    """``E D^i`` for ``D ~ N(0, var)``."""
    return 0.0 if i % 2 else var ** (i // 2) * float(math.prod(range(i - 1, 0, -2)))


def _expect(anchors, qslots, s: int, L: int, G: float, sink: bool = False) -> dict:
    """``E[prod_a p_a^{j_a} D_a^{i_a} prod_k p_{t_k}]`` summed over ``t_k != anchor e_k``.

    `anchors` are distinct tokens ``(informative?, j, i)``; each q-slot ``e_k`` is the
    index of the anchor its token must differ from (the weight ``1 - p_{e_k}``). Every
    way the q-slots' tokens fall on the anchors or on new tokens (informative or
    distractor, coinciding among themselves or not), or with `sink` on the sink, is a
    term with its count.

    Returns ``{term or None: count}`` (``None``: a Gaussian moment, no weight).
    """
    n_inf = sum(1 for a in anchors if a[0])
    n_dis = len(anchors) - n_inf
    out: dict = {}

    def assign(k, labels, n_new):
        if k == len(qslots):
            j0 = labels.count(_SINK)
            for roles in itertools.product((True, False), repeat=n_new):
                ki, kd = sum(roles), n_new - sum(roles)
                count = _falling(s - n_inf, ki) * _falling(L - s - n_dis, kd)
                if count == 0:
                    continue
                j = [a[1] for a in anchors] + [0] * n_new
                for lab in labels:
                    if lab != _SINK:
                        j[lab] += 1
                info = [(j[x], anchors[x][2]) for x in range(len(anchors)) if anchors[x][0]]
                dis = [(j[x], anchors[x][2]) for x in range(len(anchors)) if not anchors[x][0]]
                for y, r in enumerate(roles):
                    (info if r else dis).append((j[len(anchors) + y], 0))
                if sum(j) + j0 == 0:
                    value = 1.0
                    for _jj, ii in info:
                        value *= _gauss_moment(ii, G)
                    for _jj, ii in dis:
                        value *= _gauss_moment(ii, 1.0)
                    out[None] = out.get(None, 0.0) + count * value
                    continue
                key = _term(sum(j) + j0, info, dis, j0)
                out[key] = out.get(key, 0.0) + count
            return
        for x in range(len(anchors)):  # the token is an anchor other than the excluded one
            if x != qslots[k]:
                assign(k + 1, [*labels, x], n_new)
        if sink:  # the sink, never an anchor
            assign(k + 1, [*labels, _SINK], n_new)
        for y in range(n_new + 1):  # an earlier new token, or a new one
            assign(k + 1, [*labels, len(anchors) + y], max(n_new, y + 1))

    assign(0, [], 0)
    return out


def _stable_expression(B: float, G: float, L: int, s: int, sink: bool = False) -> list:
    """The risk minus ``eps^2`` without cancellation near the optimum (:func:`risk_expression`).

    Given the keys, ``Y - T = sum_l X_l`` over independent tokens with
    ``X_i = W_i - p_i V_i`` (informative) and ``X_m = -p_m V_m``, so
    ``E (Y - T)^2 = sum_l E X_l^2 + sum_{l != l'} E[m_l m_l']``, ``m_l = E[X_l | U]``:

    - ``E[X_i^2 | U] = gamma^2 (2u - w^2 - 2 (u + rho w) q_i + (1 - rho^2) q_i^2) + m_i^2``,
      ``m_i = (w + rho q_i) D_i - B theta p_i``, ``q_i = 1 - p_i = sum_{l != i} p_l``;
    - ``E[X_m^2 | U] = p_m^2 (1 - rho^2 + rho^2 D_m^2)``, ``m_m = -rho p_m D_m``;

    the three components (informative, distractors, interactions) of
    :class:`slr_theory.RiskComponents`. Monomials are in ``(nu, theta, eta, rho, u, w)``.
    With a `sink`, ``q_i = p_0 + sum_{l != i} p_l`` (``p_0 = 1 / (1 + S)``).
    """
    D = L - s
    TH, RH, U, W = 1, 3, 4, 5
    rows: list = []

    def mono(*idx):
        e = [0] * 6
        for k in idx:
            e[k] += 1
        return tuple(e)

    def emit(comp, coef, m, anchors, qslots):
        if coef == 0:
            return
        for term, count in _expect(anchors, qslots, s, L, G, sink).items():
            if count:
                rows.append((comp, coef * count, m, term))

    # a token's conditional mean, as (coefficient, monomial, j, i, q-slots on itself)
    def piece(inf):
        if inf:  # (w + rho q) D - B theta p
            return [(1.0, mono(W), 0, 1, 0), (1.0, mono(RH), 0, 1, 1), (-B, mono(TH), 1, 0, 0)]
        return [(-1.0, mono(RH), 1, 1, 0)]  # - rho p D

    if s:  # informative: s E X_1^2
        var = [
            (2 * G, mono(U), 0),
            (-G, mono(W, W), 0),
            (-2 * G, mono(U), 1),
            (-2 * G, mono(RH, W), 1),
            (G, mono(), 2),
            (-G, mono(RH, RH), 2),
        ]
        for c, m, nq in var:
            emit(0, s * c, m, [(True, 0, 0)], [0] * nq)
        for c1, m1, j1, i1, q1 in piece(True):
            for c2, m2, j2, i2, q2 in piece(True):
                m = tuple(x + y for x, y in zip(m1, m2, strict=True))
                emit(0, s * c1 * c2, m, [(True, j1 + j2, i1 + i2)], [0] * (q1 + q2))
    if D:  # distractors: (L - s) E p_m^2 (1 - rho^2 + rho^2 D_m^2)
        emit(1, D, mono(), [(False, 2, 0)], [])
        emit(1, -D, mono(RH, RH), [(False, 2, 0)], [])
        emit(1, D, mono(RH, RH), [(False, 2, 2)], [])
    # interactions: every ordered pair of different tokens, E[m_l m_l']
    for inf_a, inf_b, count in (
        (True, True, s * (s - 1)),
        (True, False, 2 * s * D),
        (False, False, D * (D - 1)),
    ):
        if count == 0:
            continue
        for c1, m1, j1, i1, q1 in piece(inf_a):
            for c2, m2, j2, i2, q2 in piece(inf_b):
                m = tuple(x + y for x, y in zip(m1, m2, strict=True))
                emit(
                    2, count * c1 * c2, m, [(inf_a, j1, i1), (inf_b, j2, i2)], [0] * q1 + [1] * q2
                )
    merged: dict = {}
    for comp, c, m, t in rows:
        merged[(comp, m, t)] = merged.get((comp, m, t), 0.0) + c
    return [(comp, c, m, t) for (comp, m, t), c in merged.items() if c != 0.0]


def _nodes(scale: float) -> tuple[np.ndarray, float, int]:
    """Trapezoid nodes of the standardised Gaussian variable for logits of spread `scale`.

    Returns the nodes, their step and ``q``: when ``q > 0`` the step of ``scale x`` is
    ``_H / q``, so the nodes of every ``sigma`` lie on one grid of ``w = sigma + scale x``.
    """
    q = math.ceil(_H / (_HX * scale) - 1e-12)
    if q <= _MAX_RATIO:
        h = _H / (q * scale)
    else:
        q, h = 0, min(_HX, _H / scale)
    lo, hi = -10.0, 10.0 + 2.0 * scale
    return np.arange(math.floor(lo / h), math.ceil(hi / h) + 1) * h, h, q


@lru_cache(maxsize=64)
def _weighted_nodes(scale: float, imax: int) -> tuple[np.ndarray, float, int, np.ndarray]:
    """:func:`_nodes` and the quadrature's weights times ``x^i``, ``i <= imax`` ``(N_x, I)``:
    the same at every call of one temperature."""
    x, h, q = _nodes(scale)
    wts = h * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    W = np.stack([wts * x**i for i in range(imax + 1)], axis=-1)
    x.flags.writeable = W.flags.writeable = False
    return x, h, q, W


def _kernels(w: np.ndarray) -> np.ndarray:
    """``(1 - g_0, g_0, g_1, g_2)`` at `w`: shape ``(4, *w.shape)``."""
    np.minimum(w, 700.0, out=w)
    ew = np.exp(w)
    G = np.empty((4, *w.shape))
    np.expm1(-ew, out=G[0])
    np.negative(G[0], out=G[0])
    np.exp(-ew, out=G[1])
    np.exp(w - ew, out=G[2])
    np.exp(2.0 * w - ew, out=G[3])
    return G


def _moments(sig: np.ndarray, shift: np.ndarray, scale: float, imax: int) -> np.ndarray:
    """``E[x^i g_j(sig + shift + scale x)]``, ``x ~ N(0, 1)``: shape ``(4, imax+1, n, N)``.

    Index 0 of the first axis is ``E[x^i (1 - g_0)]`` (the complement, exact in the tail
    where ``g_0 -> 1``), then ``j = 0, 1, 2``. `sig` is a uniform grid of step ``_H``.
    When the nodes share one grid in ``w`` (:func:`_nodes`), the kernels are evaluated once
    per point on that grid and every ``sigma`` reads a window of it.
    """
    x, h, q, W = _weighted_nodes(float(scale), imax)
    n, N, nx = shift.size, sig.size, x.size
    out = np.empty((4, imax + 1, n, N))
    if q:
        delta = _H / q
        r = np.arange((N - 1) * q + nx) * delta + (sig[0] + scale * x[0])
        per = max(1, 2_000_000 // (N * nx))
        for a in range(0, n, per):
            b = min(a + per, n)
            G = _kernels(shift[a:b, None] + r)  # (4, m, R)
            win = np.lib.stride_tricks.sliding_window_view(G, nx, axis=-1)[:, :, ::q]
            out[:, :, a:b] = np.moveaxis(win @ W, -1, 1)
        return out
    per = max(1, 2_000_000 // (N * nx))
    for a in range(0, n, per):
        b = min(a + per, n)
        G = _kernels((sig[None, :, None] + shift[a:b, None, None]) + scale * x)
        out[:, :, a:b] = np.moveaxis(G @ W, -1, 1)
    return out


@lru_cache(maxsize=64)
def _sink_kernels(lo: int, hi: int) -> np.ndarray:
    """The sink's factors ``(g_0, g_1, g_2)`` at ``sigma = k * _H``, ``lo <= k < hi`` (its
    logit is 0): ``(3, hi - lo)``, read-only, the same at every call of one window."""
    out = _kernels(np.arange(lo, hi) * _H)[1:]
    out.flags.writeable = False
    return out


@lru_cache(maxsize=64)
def _distractor_moments(lam: float, lo: int, hi: int, imax: int) -> np.ndarray:
    """:func:`_moments` of a distractor (``lambda U = lam Z``) on ``sigma = k * _H``, ``lo <= k < hi``."""
    sig = np.arange(lo, hi) * _H
    out = _moments(sig, np.zeros(1), lam, imax)[:, :, 0]
    out.flags.writeable = False
    return out


def _window(lam: float, g: float, ak: np.ndarray, L: int) -> tuple[int, int]:
    """Grid indices ``[lo, hi)`` of ``sigma = k * _H`` covering every term at these ``a kappa``."""
    top = max(float(np.max(ak)) + g * (8.0 + 2.0 * g), lam * (8.0 + 2.0 * lam))
    bottom = min(float(np.min(ak)) - 9.0 * g, -9.0 * lam)
    lo = math.floor((-_TAIL - math.log(L) - top) / _H)
    hi = math.ceil((4.0 - bottom) / _H) + 1
    return lo, hi


def term_integrals(
    terms: list[Term],
    kappa: np.ndarray,
    *,
    lam: float,
    gamma: float,
    d: int,
    L: int,
    s: int,
    sink: bool = False,
) -> np.ndarray:
    """Every term (module docstring) at each ``kappa``: shape ``(len(terms), n)``.

    Parameters
    ----------
    terms : list of tuple
        ``(p, info, distr)``, or ``(p, info, distr, j_0)`` with a sink;
        ``len(info) <= s``, ``len(distr) <= L - s``.
    kappa : ndarray, shape ``(n,)``
        ``k . k*`` in ``[-1, 1]``.
    lam, gamma : float
        Temperature and the informative tokens' spread.
    d, L, s : int
        Dimension, tokens and informative tokens.
    sink : bool
        Weights with a sink, ``p_l = e_l / (1 + S)`` (softmax-1): every term has the
        sink's factor ``g_{j_0}(sigma)``.

    Returns
    -------
    ndarray, shape ``(len(terms), n)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.softmax import term_integrals
    >>> # E p_1 for L = 2 i.i.d. tokens is 1/2 by symmetry (kappa = 0, gamma = 1)
    >>> got = term_integrals([(1, ((1, 0),), ())], np.array([0.0]),
    ...                      lam=0.7, gamma=1.0, d=400, L=2, s=1)
    >>> abs(float(got[0, 0]) - 0.5) < 1e-15
    True
    >>> # with a sink over one token, its weight and the token's sum to one: E p_0 + E p_1 = 1
    >>> got = term_integrals([(1, (), (), 1), (1, ((1, 0),), ())], np.array([0.3]),
    ...                      lam=0.7, gamma=1.0, d=8, L=1, s=1, sink=True)
    >>> abs(float(got[:, 0].sum()) - 1.0) < 1e-15
    True
    """
    kappa = np.asarray(kappa, dtype=np.float64).reshape(-1)
    n = kappa.size
    a = lam * math.sqrt(d / 2.0)
    g = lam * gamma
    ak = a * kappa
    imax_i = max([i for t in terms for _j, i in t[1]] + [1])
    imax_d = max([i for t in terms for _j, i in t[2]] + [1])
    for term in terms:
        if s - len(term[1]) < 0 or (L - s) - len(term[2]) < 0:
            raise ValueError(f"term {term!r} needs more tokens than L={L}, s={s}.")
        if _sink_power(term) and not sink:
            raise ValueError(f"term {term!r} weighs a sink, and `sink` is False.")
    if n == 0 or not terms:
        return np.empty((len(terms), n))
    lo, hi = _window(lam, g, ak, L)
    glo, ghi = _window(lam, g, np.array([-a, a]), L)
    sig = np.arange(lo, hi) * _H
    mi = _moments(sig, ak, g, imax_i)  # (4, I, n, N)
    md = _distractor_moments(lam, glo, ghi, imax_d)[:, :, lo - glo : hi - glo]  # (4, I, N)
    powers_i = gamma ** np.arange(imax_i + 1)

    def log_phi(m):
        c0, g0 = m[0, 0], m[1, 0]
        out = np.empty_like(c0)
        small = c0 < 0.5
        out[small] = np.log1p(-c0[small])
        out[~small] = np.log(np.maximum(g0[~small], 1e-300))
        return out

    lpi, lpd = log_phi(mi), log_phi(md)
    # the sink's factors g_j(sigma) (its logit is 0), or none
    sink_g = _sink_kernels(lo, hi) if sink else None
    # the terms in the order of _term_plan, each integrand the same products either way
    order, keys, which, sink_powers, factors, scale = _term_plan(tuple(terms), s, L)
    exps = []
    for ni, nd in keys:
        e = np.zeros((n, sig.size))
        if ni:
            e += ni * lpi
        if nd:
            e += nd * lpd
        exps.append(np.exp(e))
    exps = np.stack(exps)  # (keys, n, N)
    out = np.empty((len(terms), n))
    if n <= _AT_ONCE:  # a few points (a Newton step's): every term at once
        f = exps[which]  # (terms, n, N)
        if sink:
            f *= sink_g[sink_powers][:, None, :]
        for informative, lo, hi, js, powers in factors:
            if informative:
                f[lo:hi] *= powers_i[powers][:, None, None] * mi[js, powers]
            else:
                f[lo:hi] *= md[js, powers][:, None, :]
        out[order] = _H * f.sum(axis=2) / scale[:, None]
        return out
    for row, r in enumerate(order):  # many: term by term, each factor a view (no gather)
        _p, info, distr = terms[r][:3]
        f = exps[which[row]].copy()
        if sink:
            f *= sink_g[sink_powers[row]]
        for j, i in info:
            f *= powers_i[i] * mi[j + 1, i]
        for j, i in distr:
            f *= md[j + 1, i]
        out[r] = _H * f.sum(axis=1) / scale[row]
    return out


@lru_cache(maxsize=64)
def _term_plan(terms: tuple, s: int, L: int) -> tuple:
    """The order and factors in which :func:`term_integrals` multiplies the terms' integrands.

    Each term's integrand is its ``(ni, nd)`` exponential, times the sink's factor, its
    informative factors, then its distractors', in that order, as one term at a time
    would multiply them (the same numbers). The terms are taken in an order (most
    informative factors first, then most distractors) where the terms with an ``m``-th
    factor of a kind are a few runs of consecutive rows, each multiplied in place when a
    few points take every term at once.

    Returns
    -------
    tuple
        ``(order, keys, which, sink_powers, factors, scale)``: the terms' order (the
        rows of the result), the ``(ni, nd)`` of the exponentials, each term's, its sink
        power, the runs ``(informative, lo, hi, j + 1, i)`` and ``Gamma(p)``.
    """
    order = sorted(range(len(terms)), key=lambda r: (-len(terms[r][1]), -len(terms[r][2]), r))
    ts = [terms[r] for r in order]
    keys = sorted({(s - len(t[1]), (L - s) - len(t[2])) for t in ts})
    which = np.array([keys.index((s - len(t[1]), (L - s) - len(t[2]))) for t in ts])
    sink_powers = np.array([_sink_power(t) for t in ts])
    factors = []
    for slot in (1, 2):
        for m in range(max(len(t[slot]) for t in ts)):
            rows = np.flatnonzero([len(t[slot]) > m for t in ts])
            js = np.array([ts[r][slot][m][0] + 1 for r in rows])
            powers = np.array([ts[r][slot][m][1] for r in rows])
            cuts = np.flatnonzero(np.diff(rows) != 1) + 1
            for run, j, i in zip(*(np.split(x, cuts) for x in (rows, js, powers)), strict=True):
                factors.append((slot == 1, int(run[0]), int(run[-1]) + 1, j, i))
    scale = np.array([math.gamma(t[0]) for t in ts])
    return np.array(order), keys, which, sink_powers, tuple(factors), scale


def _abs_moment(i: int, sd: float) -> float:
    """``E |D|^i`` for ``D ~ N(0, sd^2)``."""
    return sd**i * 2 ** (i / 2) * math.gamma((i + 1) / 2) / math.sqrt(math.pi)


def term_bound(term: Term | None, gamma: float) -> float:
    """``sup |term|`` over every ``kappa`` and temperature (``None``: the constant 1).

    ``prod_l e_l^{j_l} / S^p <= 1`` (``sum j_l = p`` and every ``e_l <= S``; with a sink
    ``S`` has its ``1`` too), so ``|term| <= prod_l E |D_l|^{i_l}``, the tokens being
    independent.

    Parameters
    ----------
    term : tuple or None
    gamma : float
        The informative tokens' spread.

    Returns
    -------
    float

    Examples
    --------
    >>> from slr_theory.softmax import term_bound
    >>> round(term_bound((2, ((1, 2),), ((1, 0),)), 0.5), 15)  # E D^2 = gamma^2
    0.25
    """
    if term is None:
        return 1.0
    _p, info, distr = term[:3]
    out = 1.0
    for _j, i in info:
        out *= _abs_moment(i, gamma)
    for _j, i in distr:
        out *= _abs_moment(i, 1.0)
    return out


#: Up to this many points, :func:`term_integrals` multiplies every term's integrand at
#: once (a Newton step's point: the cost is the calls); beyond, term by term (the cost is
#: the arithmetic, and gathering every term's factors would add a pass).
_AT_ONCE = 4

#: The interpolant's check: ``1e-14`` of each term's bound (:func:`term_bound`).
_INTERP_TOL = 1e-14
_MAX_DEPTH = 8


@lru_cache(maxsize=64)
def term_interpolant(
    terms: tuple, lam: float, gamma: float, d: int, L: int, s: int, sink: bool = False
) -> tuple[Pieces, float]:
    """The terms as functions of ``t = lam sqrt(d/2) kappa`` on ``[-a, a]``, piecewise Chebyshev.

    For loops that ask at every step (PGD, the flows): pieces start at width
    ``max(1, lam gamma) / 2`` in ``t`` and are halved until, between the nodes, every
    term agrees with :func:`term_integrals` to ``1e-14`` of its bound. Cached per
    argument tuple.

    Parameters
    ----------
    terms : tuple of terms
    lam, gamma : float
    d, L, s : int
    sink : bool
        As for :func:`term_integrals`.

    Returns
    -------
    pieces : slr_theory.chebyshev.Pieces
        Its ``direct`` pieces (never seen in :data:`SOFTMAX_DOMAIN`) are left to
        :func:`term_integrals`.
    a : float
        ``lam sqrt(d/2)``.
    """
    a = lam * math.sqrt(d / 2.0)
    bound = np.array([term_bound(t, gamma) for t in terms])[:, None]
    width = 0.5 * max(1.0, lam * gamma)
    n0 = max(1, math.ceil(a / width))
    edges = np.linspace(0.0, a, n0 + 1)
    start = [(-hi, -lo) for lo, hi in itertools.pairwise(edges)][::-1]
    start += list(itertools.pairwise(edges))

    def evaluate(t):
        values = term_integrals(list(terms), t / a, lam=lam, gamma=gamma, d=d, L=L, s=s, sink=sink)
        return values, np.broadcast_to(bound, values.shape)

    return build_pieces(evaluate, start, tol=_INTERP_TOL, depth=_MAX_DEPTH), a
