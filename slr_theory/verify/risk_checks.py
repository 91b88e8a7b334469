"""Checks of :mod:`slr_theory.risk`, registered on import.

The reference conditions ``V, W`` on ``U = X^T k`` (docs/theory.md §3) and
integrates the conditional second moments over ``U`` with mpmath; it uses no
closed-form lemma. The Monte Carlo side samples the data model itself.
"""

from __future__ import annotations

import functools

import mpmath as mp
import numpy as np

from ..params import OVERLAP_NAMES, Params
from ..risk import risk_components
from ..sampling import sample, squared_errors, vectors_from_overlaps
from .reference import MP_NONLINEARITIES, mp_expect
from .registry import CHECK_FOR_NONLINEARITY, Check, register

__all__ = [
    "mp_risk_components",
    "mp_risk_gradient",
    "mp_softmax1_risk_one_token",
    "mp_softmax_risk_two_tokens",
]


def _mp_five(overlaps) -> list[mp.mpf]:
    """The five overlaps as mpmath numbers (mpmath's are kept to their digits)."""
    return [x if isinstance(x, mp.mpf) else mp.mpf(float(x)) for x in overlaps]


@functools.lru_cache(maxsize=256)
def _distractor_moments(f, kinks: tuple, lam: mp.mpf, rho: mp.mpf, dps: int):
    """``E f^2 (rho^2 Z^2 + 1 - rho^2)`` and ``E f rho Z`` for ``f = sigma(lam Z)``: they
    depend on ``rho`` alone of the overlaps, so the differences of
    :func:`mp_risk_gradient` in the other four reuse them (kept per process)."""
    with mp.workdps(dps):
        s0 = mp_expect(
            lambda x: f(x) ** 2 * (rho**2 * (x / lam) ** 2 + 1 - rho**2),
            0,
            lam,
            dps,
            kinks=kinks,
        )
        m0 = mp_expect(
            lambda x: f(x) * rho * x / lam, 0, lam, dps, max_extra_digits=0, kinks=kinks
        )
    return s0, m0


def mp_risk_components(
    params: Params, overlaps, dps: int = 30, sigma: tuple | None = None
) -> dict[str, mp.mpf]:
    """``noise, informative, distractors, interactions, total`` by 1-D quadrature over ``U``.

    Parameters
    ----------
    params : Params
    overlaps : sequence of five numbers
        ``(kappa, nu, theta, eta, rho)``.
    dps : int
        Working digits.
    sigma : (callable, callable) or (callable, callable, tuple), optional
        ``sigma`` and ``tau(x, s) = 1 - s sigma(x)`` on mpmath numbers, and the kinks of
        a kinked ``sigma``; default the built-in named by ``params.nonlinearity``
        (:data:`MP_NONLINEARITIES`).

    Returns
    -------
    dict of str to mpmath.mpf
    """
    kappa, nu, theta, eta, rho = _mp_five(overlaps)
    with mp.workdps(dps):
        lam, gam = mp.mpf(params.lam), mp.mpf(params.gamma)
        G = gam**2
        B = mp.sqrt(mp.mpf(params.d) / 2)
        a, g = lam * B, lam * gam

        def d_of(x):  # lambda U = a kappa + lambda D
            return (x - a * kappa) / lam

        entry = MP_NONLINEARITIES[params.sigma_name] if sigma is None else sigma
        f, tail = entry[:2]
        kinks = tuple(entry[2]) if len(entry) > 2 else ()  # in x = lambda U (or lambda Z)
        # Written around e = sgn * (1 - tau) = sigma(x), tau = 1 - sgn sigma(x) (erfc(sgn x)
        # for erf), so that the conditional variance, exponentially small near the
        # optimum, carries full precision at `dps` digits.
        sgn = -1 if kappa < 0 else 1
        c0 = (1 - eta**2) - 2 * sgn * (nu - rho * eta) + (1 - rho**2)
        c1 = 2 * sgn * (nu - rho * eta) - 2 * (1 - rho**2)
        c2 = 1 - rho**2

        # the mean eta D - sigma (B theta + rho D), with sigma = sgn (1 - tau):
        # (eta - sgn rho) D - sgn B theta + sgn tau (B theta + rho D), which does not
        # lose tau's digits when 1 - tau rounds to 1 (on the edge, eta = sgn rho and
        # theta = 0: the mean is tau rho D, of the size of tau)
        lead = eta - sgn * rho

        def informative(x):
            ec, dd = tail(x, sgn), d_of(x)
            mean = lead * dd - sgn * B * theta + sgn * ec * (B * theta + rho * dd)
            return mean**2 + G * (c0 + ec * (c1 + ec * c2))

        L, S = params.L, params.s
        inf = mp_expect(informative, a * kappa, g, dps, max_extra_digits=0, kinks=kinks)
        # a moment whose coefficients below all vanish (no distractor, or one informative
        # token alone) is not integrated: it would be multiplied by an exact zero
        m1 = s0 = m0 = mp.mpf(0)
        if L > S or S > 1:
            m1 = mp_expect(
                lambda x: f(x) * (B * theta + rho * d_of(x)),
                a * kappa,
                g,
                dps,
                max_extra_digits=0,
                kinks=kinks,
            )
        if L > S:
            s0, m0 = _distractor_moments(f, kinks, lam, rho, dps)
        out = {  # s informative tokens: s of each, s(s - 1) pairs of them, s(L - s) mixed
            "noise": mp.mpf(params.eps) ** 2,
            "informative": S * inf,
            "distractors": (L - S) * s0,
            "interactions": 2 * S * (L - S) * m1 * m0
            + (L - S) * (L - S - 1) * m0**2
            + S * (S - 1) * m1**2,
        }
        out["total"] = sum(out.values())
        return out


def mp_risk_gradient(
    params: Params,
    overlaps,
    dps: int = 30,
    key: str = "total",
    sigma: tuple | None = None,
    reference=None,
) -> list[mp.mpf]:
    """The five partials of one of :func:`mp_risk_components`' entries, by differences.

    In ``nu, theta, eta, rho`` the risk is a polynomial of degree at most two (each
    overlap alone), so the central difference ``(R(x + h) - R(x - h)) / 2h`` is exact;
    with ``h = 2^-20`` the values stay of the size the derivative needs. In ``kappa``
    (through ``erf(a kappa + ...)``) a fourth-order stencil with ``h = 2^-20`` at `dps`
    digits: its truncation ``h^4 R^(5) / 30`` is below ``1e-20`` of the partial for
    ``|a| <= 100``. Nothing is shared with the engine: only the quadrature of
    :func:`mp_risk_components` at shifted overlaps.

    Parameters
    ----------
    params : Params
    overlaps : sequence of five numbers
        ``(kappa, nu, theta, eta, rho)``, any reals (the risk is a formula in them).
    dps : int
        Working digits of each quadrature.
    key : str
        The entry of :func:`mp_risk_components` to differentiate.
    sigma : (callable, callable), optional
        As for :func:`mp_risk_components`.
    reference : callable, optional
        ``reference(params, overlaps, dps) -> mpf``, another risk to differentiate (e.g.
        :func:`mp_softmax_risk_two_tokens`, also of degree two in each of ``nu, theta,
        eta, rho``); `key` and `sigma` are then unused.

    Returns
    -------
    list of five mpmath.mpf
    """
    with mp.workdps(dps):
        x0 = [mp.mpf(float(v)) for v in overlaps]
        h = mp.ldexp(1, -20)

        def at(i, step):
            x = list(x0)
            x[i] += step
            if reference is not None:
                return reference(params, x, dps)
            return mp_risk_components(params, x, dps, sigma)[key]

        out = [(8 * (at(0, h) - at(0, -h)) - (at(0, 2 * h) - at(0, -2 * h))) / (12 * h)]
        out += [(at(i, h) - at(i, -h)) / (2 * h) for i in range(1, 5)]
        return out


def mp_softmax_risk_two_tokens(params: Params, overlaps, dps: int = 30) -> mp.mpf:
    """The risk of softmax attention on ``L = 2`` tokens by 1-D quadrature, without Laplace.

    With two tokens the weights are ``p_1 = 1 / (1 + e^{-lambda Delta})``, a function of
    the keys' difference ``Delta = U_1 - U_2`` only. Conditioned on the keys, the risk is
    a polynomial of degree two in the centred keys ``D_1, D_2`` (docs/theory.md, softmax
    attention); given ``Delta`` they are Gaussian with known moments, which leaves one
    integral over ``Delta`` for mpmath. Nothing is shared with the engine's terms.

    Parameters
    ----------
    params : Params
        ``L = 2``, ``s`` 1 or 2; its ``d, lam, gamma, eps`` are read (its attention is
        not: the risk is softmax attention's, by construction).
    overlaps : sequence of five numbers
    dps : int

    Returns
    -------
    mpmath.mpf
        The total risk.
    """
    if params.L != 2:
        raise ValueError(f"`params` must have L = 2 tokens, got {params!r}.")
    kappa, nu, theta, eta, rho = _mp_five(overlaps)
    with mp.workdps(dps):
        lam, G = mp.mpf(params.lam), mp.mpf(params.gamma) ** 2
        B = mp.sqrt(mp.mpf(params.d) / 2)
        inf = [True, params.s == 2]  # token 1 is informative; token 2 if s = 2
        mean = [B * kappa, B * kappa if inf[1] else mp.mpf(0)]
        var = [G, G if inf[1] else mp.mpf(1)]
        tot = var[0] + var[1]
        c = var[0] * var[1] / tot  # Var(D_i | Delta) = Cov(D_1, D_2 | Delta)

        # what does not depend on Delta, formed once: D_i's weight in E[D_i | Delta], the
        # coefficients of eta D_i and of the value p_i a_i, and of 1, p_i and p_i^2 in
        # Var(W_i - p_i V_i | U) (informative) or p_m^2 Var(V_m | U)
        shift = mean[0] - mean[1]
        weight = [var[0] / tot, -var[1] / tot]
        own = [eta if inf[i] else 0 for i in range(2)]
        value_of = [B * theta if inf[i] else 0 for i in range(2)]
        var_1 = sum(G * (1 - eta**2) for i in range(2) if inf[i])
        var_p = [-2 * G * (nu - rho * eta) if inf[i] else 0 for i in range(2)]
        var_pp = [G * (1 - rho**2) if inf[i] else 1 - rho**2 for i in range(2)]

        def given(delta):  # E[(Y - T)^2 | Delta]
            z = delta - shift
            e = mp.exp(-lam * delta)
            p = [1 / (1 + e)]
            p.append(e * p[0])  # 1 / (1 + e^{lam delta})
            # E[(Y - T) | U] = sum_i in J eta D_i - sum_l p_l (a_l + rho D_l), linear in D
            lin = [own[i] - p[i] * rho for i in range(2)]  # coefficients of D_1, D_2
            e_lin = lin[0] * weight[0] * z + lin[1] * weight[1] * z
            e_lin -= p[0] * value_of[0] + p[1] * value_of[1]
            var_lin = c * (lin[0] + lin[1]) ** 2
            cond_var = var_1
            for i in range(2):
                cond_var += p[i] * (var_p[i] + p[i] * var_pp[i])
            return cond_var + e_lin**2 + var_lin

        sd = mp.sqrt(tot)
        mu = mean[0] - mean[1]
        value = mp_expect(given, mu, sd, dps, max_extra_digits=0)
        return mp.mpf(params.eps) ** 2 + value


def mp_softmax1_risk_one_token(params: Params, overlaps, dps: int = 30) -> mp.mpf:
    """The risk of softmax-1 attention on one token by 1-D quadrature, without Laplace.

    With one (informative) token beside the sink its weight is
    ``p = e^{lambda U} / (1 + e^{lambda U})``, the sigmoid of its own key: softmax-1 over
    one token is pointwise sigmoid attention over one token (softmax would give it weight
    1). The reference is therefore :func:`mp_risk_components`' with ``sigma`` the sigmoid,
    one integral over ``U`` conditioned in closed form; nothing is shared with the
    engine's Laplace-transform terms.

    Parameters
    ----------
    params : Params
        ``L = 1``; its ``d, lam, gamma, eps`` are read (its attention is not: the risk is
        softmax-1 attention's, by construction).
    overlaps : sequence of five numbers
    dps : int

    Returns
    -------
    mpmath.mpf
        The total risk.
    """
    if params.L != 1:
        raise ValueError(f"`params` must have L = 1 token, got {params!r}.")
    return mp_risk_components(params, overlaps, dps, MP_NONLINEARITIES["sigmoid"])["total"]


def _draw(rng: np.random.Generator) -> dict:
    x, y = rng.standard_normal(6), rng.standard_normal(6)
    k, v = x / np.linalg.norm(x), y / np.linalg.norm(y)
    ov = (k[0], v[1], v[0], k[1], k @ v)
    p = {
        "d": int(rng.integers(4, 60)),
        "L": int(rng.integers(1, 8)),
        "lam": float(10 ** rng.uniform(-1, 0.3)),
        "gamma": float(rng.uniform(0.3, 1.5)),
        "eps": float(rng.uniform(0, 0.3)),
    }
    return {**p, **dict(zip(OVERLAP_NAMES, map(float, ov), strict=True))}


_SOFTMAX = {"attention": "softmax"}  # the softmax check's model
_SOFTMAX1 = {"attention": "softmax1"}


def _draw_softmax(rng: np.random.Generator) -> dict:
    """A random point of the softmax check: L = 2 tokens, one or both informative."""
    return {**_draw(rng), "L": 2, "s": int(rng.integers(1, 3))}


def _split(p, model: dict | None = None):
    """The model and the overlaps of a check's point; `model`: the keywords of ``Params``
    that name the check's model (default the paper's)."""
    params = Params(
        **{k: p[k] for k in ("d", "L", "lam", "gamma", "eps")},
        s=int(p.get("s", 1)),
        **(model or {}),
    )
    return params, [p[n] for n in OVERLAP_NAMES]


def _closed(p, model: dict | None = None):
    params, ov = _split(p, model)
    return risk_components(params, *ov)


def _mc(rng, n, model: dict | None = None, **p):
    params, ov = _split(p, model)
    k, v, ks, vs = vectors_from_overlaps(ov, params.d)
    out = np.empty(n)
    per = max(1, 2_000_000 // (params.L * params.d))
    for start in range(0, n, per):
        m = min(per, n - start)
        out[start : start + m] = squared_errors(params, k, v, ks, vs, m, rng)
    return out


_DEFAULT = {
    "d": 20,
    "L": 4,
    "lam": 0.5,
    "gamma": 0.7,
    "eps": 0.1,
    "kappa": 0.6,
    "nu": 0.5,
    "theta": 0.2,
    "eta": -0.3,
    "rho": 0.25,
}

register(
    Check(
        name="risk.total",
        description="closed-form risk vs 1-D quadrature over U (conditioned) vs the data model",
        closed_form=lambda **p: _closed(p).total,
        reference=lambda **p: mp_risk_components(*_split(p))["total"],
        monte_carlo=_mc,
        params=_DEFAULT,
        draw=_draw,
        rtol=1e-12,
    )
)


for _sigma in (
    "tanh",
    "algebraic",
    "arctan",
    "sigmoid",
    "identity",
    "relu",
    "leaky_relu",
    "hardtanh",
):  # quadrature (kinked: panels and masses at the kinks), same references
    register(
        Check(
            name=f"risk.total_{_sigma}",
            description=f"risk with sigma = {_sigma} (its Gaussian moments) vs 1-D quadrature "
            "over U (conditioned, mpmath) vs the data model",
            closed_form=lambda _s=_sigma, **p: _closed(p, {"nonlinearity": _s}).total,
            reference=lambda _s=_sigma, **p: mp_risk_components(*_split(p, {"nonlinearity": _s}))[
                "total"
            ],
            monte_carlo=lambda rng, n, _s=_sigma, **p: _mc(rng, n, {"nonlinearity": _s}, **p),
            params=_DEFAULT,
            draw=_draw,
            rtol=1e-12,
            model={"nonlinearity": _sigma},
        )
    )


def risk_check_for(params: Params) -> Check | None:
    """The risk's check for pointwise attention with a nonlinearity of one's own (not
    registered: built when asked), or None for a model without a pointwise ``sigma``.

    Its reference is the conditioned one-dimensional quadrature of the other checks, at
    30 digits, of the user's own functions: ``sigma`` in double precision at each node,
    ``1 - s sigma`` from :meth:`Nonlinearity.tail` (its ``complement`` where given), the
    kinks where the panels end. An independent computation of the same integral (not of
    the quadrature the risk uses), with the Monte Carlo of the data model beside it.

    Parameters
    ----------
    params : Params
        Its model is the check's.

    Returns
    -------
    Check or None
        Named ``risk.total_<name>``.
    """
    sigma = params.model.sigma
    if sigma is None:
        return None

    def at_float(fn):
        return lambda x: mp.mpf(float(np.asarray(fn(np.array(float(x))))))

    def tail(x, s):
        return mp.mpf(float(np.asarray(sigma.tail(np.array(float(x)), np.array(float(s))))))

    entry = (at_float(sigma.f), tail, tuple(sigma.kinks))
    model = {"attention": params.attention, "nonlinearity": sigma}
    return Check(
        name=f"risk.total_{sigma.name}",
        description=f"risk with sigma = {sigma.name} (its Gaussian moments) vs 1-D quadrature "
        "over U of its own functions (conditioned, mpmath) vs the data model",
        closed_form=lambda **p: _closed(p, model).total,
        reference=lambda **p: mp_risk_components(*_split(p, model), 30, entry)["total"],
        monte_carlo=lambda rng, n, **p: _mc(rng, n, model, **p),
        params=_DEFAULT,
        draw=_draw,
        rtol=1e-12,
        model=model,
    )


CHECK_FOR_NONLINEARITY.append(risk_check_for)


register(
    Check(
        name="risk.total_softmax",
        description="softmax attention's risk (Laplace-transform terms) vs 1-D quadrature "
        "over the keys' difference at L = 2 (mpmath) vs the data model (at a model's "
        "parameters: L = 2, at most 2 informative tokens)",
        closed_form=lambda **p: _closed(p, _SOFTMAX).total,
        reference=lambda **p: mp_softmax_risk_two_tokens(*_split(p, _SOFTMAX)),
        monte_carlo=lambda rng, n, **p: _mc(rng, n, _SOFTMAX, **p),
        params={**_DEFAULT, "L": 2},
        draw=_draw_softmax,
        rtol=1e-11,
        fixed={"L": 2},
        model=_SOFTMAX,
    )
)


def _mc_informative(rng, n, **p):
    params, ov = _split(p)
    # the informative token alone: (W - f(X_1))^2 with X_1 ~ N(sqrt(d/2) k*, gamma^2 I)
    k, v, ks, vs = vectors_from_overlaps(ov, params.d)
    from scipy.special import erf

    x = np.sqrt(params.d / 2) * ks + params.gamma * rng.standard_normal((n, params.d))
    return params.s * (x @ vs - erf(params.lam * (x @ k)) * (x @ v)) ** 2  # s such tokens


register(
    Check(
        name="risk.informative",
        description="informative-token component s (gamma^2 - 2 c1 + s1)",
        closed_form=lambda **p: _closed(p).informative,
        reference=lambda **p: mp_risk_components(*_split(p))["informative"],
        monte_carlo=_mc_informative,
        params=_DEFAULT,
        draw=_draw,
        rtol=1e-12,
    )
)


def _tangent_setup(p):
    params, ov = _split(p)
    k, v, ks, vs = vectors_from_overlaps(ov, params.d)
    rng = np.random.default_rng(int(p["direction_seed"]))
    uk, uv = rng.standard_normal((2, params.d))
    uk -= (uk @ k) * k
    uv -= (uv @ v) * v
    return params, k, v, ks, vs, uk, uv


def _mp_total(params, kk, vv, ks, vs):
    """The risk (40-digit conditioned quadrature) at mpmath vectors ``kk, vv``."""

    def dot(a, b):
        return mp.fsum(x * mp.mpf(float(y)) for x, y in zip(a, b, strict=True))

    ov = (
        dot(kk, ks),
        dot(vv, vs),
        dot(vv, ks),
        dot(kk, vs),
        mp.fsum(x * y for x, y in zip(kk, vv, strict=True)),
    )
    return mp_risk_components(params, ov, dps=40)["total"]


def _dd_closed(**p):
    from ..risk import risk_grad_at

    params, k, v, ks, vs, uk, uv = _tangent_setup(p)
    gk, gv = risk_grad_at(params, k, v, ks, vs, riemannian=True)
    return float(gk @ uk + gv @ uv)


def _dd_reference(**p):
    params, k, v, ks, vs, uk, uv = _tangent_setup(p)
    with mp.workdps(40):
        h = mp.mpf("1e-12")

        def total(sign):
            kk = [
                mp.mpf(float(a)) + sign * h * mp.mpf(float(b)) for a, b in zip(k, uk, strict=True)
            ]
            vv = [
                mp.mpf(float(a)) + sign * h * mp.mpf(float(b)) for a, b in zip(v, uv, strict=True)
            ]
            nk = mp.sqrt(mp.fsum(x * x for x in kk))
            nv = mp.sqrt(mp.fsum(x * x for x in vv))
            return _mp_total(params, [x / nk for x in kk], [x / nv for x in vv], ks, vs)

        return (total(1) - total(-1)) / (2 * h)


def _dd_mc(rng, n, **p):
    from scipy.special import erf

    params, k, v, ks, vs, uk, uv = _tangent_setup(p)
    out = np.empty(n)
    per = max(1, 2_000_000 // (params.L * params.d))
    lam = params.lam
    for start in range(0, n, per):
        m = min(per, n - start)
        X, y, _ = sample(params, m, rng, ks, vs)
        xk, xv = X @ k, X @ v
        resid = y - np.sum(erf(lam * xk) * xv, axis=-1)
        erfp = 2 / np.sqrt(np.pi) * np.exp(-((lam * xk) ** 2))
        dT = np.sum(erfp * lam * (X @ uk) * xv + erf(lam * xk) * (X @ uv), axis=-1)
        out[start : start + m] = -2 * resid * dT
    return out


register(
    Check(
        name="risk.riemannian_gradient",
        description="tangent directional derivative: closed-form gradient vs mpmath difference vs pathwise MC",
        closed_form=_dd_closed,
        reference=_dd_reference,
        monte_carlo=_dd_mc,
        params={**_DEFAULT, "direction_seed": 7},
        draw=lambda rng: {**_draw(rng), "direction_seed": int(rng.integers(0, 2**31))},
        rtol=1e-9,
    )
)


def _manifold_formula(**p):
    # docs/theory.md §5 written out independently of slr_theory.risk (Owen's T form of zeta)
    from scipy.special import erf, owens_t

    params, (kappa, nu, *_) = _split(p)
    a = params.lam * np.sqrt(params.d / 2)
    g = params.lam * params.gamma
    c = a / np.sqrt(1 + 2 * g * g)

    def zeta(t, s):
        return 1 - 8 * owens_t(np.sqrt(2) * t / np.sqrt(1 + 2 * s * s), 1 / np.sqrt(1 + 4 * s * s))

    return float(
        params.eps**2
        + (params.L - params.s) * zeta(0.0, params.lam)
        + params.s * params.gamma**2 * (1 - 2 * nu * erf(c * kappa) + zeta(a * kappa, g))
    )


_ON_M = {**_DEFAULT, "theta": 0.0, "eta": 0.0, "rho": 0.0}


def _draw_on_m(rng):
    return {
        **_draw(rng),
        "kappa": float(rng.uniform(-1, 1)),
        "nu": float(rng.uniform(-1, 1)),
        "theta": 0.0,
        "eta": 0.0,
        "rho": 0.0,
    }


register(
    Check(
        name="risk.manifold",
        description="docs/theory.md §5 (Owen's T form) vs conditioned quadrature vs the data model on M",
        closed_form=_manifold_formula,
        reference=lambda **p: mp_risk_components(*_split(p))["total"],
        monte_carlo=_mc,
        params=_ON_M,
        draw=_draw_on_m,
        rtol=1e-12,
    )
)


def _hess_closed(**p):
    from ..geometry import hessian_form

    params, k, v, ks, vs, uk, uv = _tangent_setup(p)
    return hessian_form(params, k, v, ks, vs, uk, uv)


def _geodesic(x, u, t):
    """The point at time ``t`` on the great circle through ``x`` with velocity ``u`` (mpmath)."""
    speed = mp.sqrt(mp.fsum(mp.mpf(float(c)) ** 2 for c in u))
    return [
        mp.cos(speed * t) * mp.mpf(float(xi)) + mp.sin(speed * t) * mp.mpf(float(ui)) / speed
        for xi, ui in zip(x, u, strict=True)
    ]


def _hess_reference(**p):
    params, k, v, ks, vs, uk, uv = _tangent_setup(p)
    with mp.workdps(40):
        h = mp.mpf("1e-10")

        def total(t):
            return _mp_total(params, _geodesic(k, uk, t), _geodesic(v, uv, t), ks, vs)

        return (total(h) - 2 * total(0) + total(-h)) / (h * h)


def _hess_mc(rng, n, **p):
    """Pathwise second derivative of the squared loss along the geodesic, per sample."""
    from scipy.special import erf

    params, k, v, ks, vs, uk, uv = _tangent_setup(p)
    out = np.empty(n)
    per = max(1, 2_000_000 // (params.L * params.d))
    lam = params.lam
    a2, b2 = uk @ uk, uv @ uv
    for start in range(0, n, per):
        m = min(per, n - start)
        X, y, _ = sample(params, m, rng, ks, vs)
        u, w = X @ k, X @ v
        du, dw = X @ uk, X @ uv
        ddu, ddw = -a2 * u, -b2 * w
        e0 = erf(lam * u)
        e1 = 2 / np.sqrt(np.pi) * np.exp(-((lam * u) ** 2))
        e2 = -2 * lam * u * e1
        T = np.sum(e0 * w, axis=-1)
        dT = np.sum(lam * e1 * du * w + e0 * dw, axis=-1)
        ddT = np.sum(
            lam * lam * e2 * du * du * w + lam * e1 * ddu * w + 2 * lam * e1 * du * dw + e0 * ddw,
            axis=-1,
        )
        out[start : start + m] = 2 * dT * dT - 2 * (y - T) * ddT
    return out


register(
    Check(
        name="risk.riemannian_hessian",
        description="Hessian quadratic form along a geodesic: closed form vs mpmath second difference vs pathwise MC",
        closed_form=_hess_closed,
        reference=_hess_reference,
        monte_carlo=_hess_mc,
        params={**_DEFAULT, "direction_seed": 11},
        draw=lambda rng: {**_draw(rng), "direction_seed": int(rng.integers(0, 2**31))},
        rtol=1e-9,
    )
)


register(
    Check(
        name="risk.total_softmax1",
        description="softmax-1 attention's risk (Laplace-transform terms with the sink's "
        "factor) vs 1-D quadrature over the key at L = 1, where the weight is logistic "
        "(mpmath) vs the data model",
        closed_form=lambda **p: _closed(p, _SOFTMAX1).total,
        reference=lambda **p: mp_softmax1_risk_one_token(*_split(p, _SOFTMAX1)),
        monte_carlo=lambda rng, n, **p: _mc(rng, n, _SOFTMAX1, **p),
        params={**_DEFAULT, "L": 1},
        draw=lambda rng: {**_draw(rng), "L": 1},
        rtol=1e-11,
        fixed={"L": 1},
        model=_SOFTMAX1,
    )
)
