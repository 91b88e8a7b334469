"""Hypothesis strategies spanning whole parameter ranges, orders of magnitude included."""

from hypothesis import strategies as st


def magnitudes(lo_exp: float, hi_exp: float, zero: bool = True, signed: bool = False):
    """Floats ``10**U(lo_exp, hi_exp)``, optionally 0 and a random sign."""
    mag = st.floats(lo_exp, hi_exp).map(lambda e: 10.0**e)
    if signed:
        mag = st.tuples(mag, st.sampled_from([-1.0, 1.0])).map(lambda p: p[0] * p[1])
    if zero:
        mag = st.one_of(st.just(0.0), mag)
    return mag


#: Means over the documented domain |mu| <= 1e4 (log-spread, both signs, and moderate values).
means = st.one_of(magnitudes(-300, 4, signed=True), st.floats(-30, 30))
#: Standard deviations over 0 <= sigma <= 1e4.
sigmas = st.one_of(magnitudes(-300, 4), st.floats(0, 5))


def random_overlaps(rng, n, m=6):
    """Overlaps of ``n`` pairs of unit vectors uniform on ``S^(m-1)``, ``k* = e1``, ``v* = e2``."""
    import numpy as np

    from slr_theory.sampling import overlaps_of

    k, v = rng.standard_normal((2, n, m))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    e = np.eye(m)
    return overlaps_of(k, v, e[0], e[1])


def tangent_basis(x):
    """Orthonormal basis ``(m, m - 1)`` of the tangent space of the unit sphere at ``x``."""
    import numpy as np

    q, _ = np.linalg.qr(np.column_stack([x, np.eye(x.size)]))
    return q[:, 1 : x.size]


def retract(x, u):
    """The point at geodesic distance ``|u|`` from ``x`` along the tangent ``u``."""
    import numpy as np

    t = np.linalg.norm(u)
    return x if t == 0 else np.cos(t) * x + np.sin(t) * u / t


def geodesic_hessian(params, k, v, ks, vs, h):
    """The Riemannian Hessian of ``risk_at`` at explicit ``(k, v)`` by second differences
    along geodesics, in an orthonormal tangent basis: an independent check of the geometry."""
    import numpy as np

    from slr_theory import risk_at

    m = k.size
    T = np.zeros((2 * m, 2 * (m - 1)))
    T[:m, : m - 1] = tangent_basis(k)
    T[m:, m - 1 :] = tangent_basis(v)

    def f(xi):
        return float(risk_at(params, retract(k, xi[:m]), retract(v, xi[m:]), ks, vs))

    n = T.shape[1]
    H = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            a, b = T[:, i] * h, T[:, j] * h
            H[i, j] = H[j, i] = (f(a + b) - f(a - b) - f(b - a) + f(-a - b)) / (4 * h * h)
    return H


def assert_components_match(p, ov, sigma=None) -> None:
    """Each component of ``risk_components(p, *ov)`` within 1e-12 of the conditioned 30-digit
    quadrature (``mp_risk_components``; `sigma` a user's ``(sigma, tau)`` in mpmath). The
    interactions are relative to the larger of themselves and 1e-3 of the total (they
    cancel on M)."""
    import mpmath as mp

    from slr_theory import risk_components
    from slr_theory.verify.risk_checks import mp_risk_components

    from .references import remembered

    ref = remembered(mp_risk_components, p, ov, sigma=sigma)
    got = risk_components(p, *ov)
    for name in ("informative", "distractors", "interactions", "total"):
        r, v = ref[name], getattr(got, name)
        scale = max(abs(r), abs(ref["total"]) * 1e-3) if name == "interactions" else abs(r)
        assert abs(mp.mpf(float(v)) - r) <= 1e-12 * scale + 1e-300, (name, float(v), r)


def assert_derivatives_match_differences(p, ov, rel: float = 1e-8) -> None:
    """``risk_grad`` and ``risk_hessian`` at `ov` against central differences (step 1e-6) of
    ``risk`` and ``risk_grad``, each within `rel` of the largest entry plus the difference's
    own rounding, ``4 eps |f| / h`` (a risk large against its gradient, as sigmoid
    attention's, whose distractors all weigh about 1/2, rounds to 4e-9 here)."""
    import numpy as np

    from slr_theory import risk, risk_grad, risk_hessian

    g, H = risk_grad(p, *ov), risk_hessian(p, *ov)
    h = 1e-6
    eps = np.finfo(float).eps
    eye = np.eye(5)
    r = np.array([[risk(p, *(ov + sgn * h * e)) for e in eye] for sgn in (1, -1)])
    fd_g = (r[0] - r[1]) / (2 * h)
    gg = np.array([[risk_grad(p, *(ov + sgn * h * e)) for e in eye] for sgn in (1, -1)])
    fd_h = (gg[0] - gg[1]) / (2 * h)
    round_g = 4 * eps * np.abs(r).max() / h
    round_h = 4 * eps * np.abs(gg).max() / h
    np.testing.assert_allclose(fd_g, g, rtol=0, atol=rel * np.abs(g).max() + round_g)
    np.testing.assert_allclose(fd_h, H, rtol=0, atol=rel * np.abs(H).max() + round_h)


def skew_tanh():
    """``sigma(u) = tanh u + tanh(u)^2 / 2``: ``sigma(0) = 0``, increasing, not odd, from
    ``-1/2`` to ``3/2`` (it crosses 1, so ``1 - sigma`` changes sign)."""
    import numpy as np
    from scipy.special import expit

    from slr_theory import Nonlinearity

    def sech2(u):
        return 1 / np.cosh(np.clip(u, -300, 300)) ** 2

    t = np.tanh
    return Nonlinearity(
        "skew-tanh",
        lambda u: t(u) + 0.5 * t(u) ** 2,
        lambda u: sech2(u) * 2 * expit(2 * u),  # 1 + tanh u = 2 expit(2u): no cancellation
        lambda u: sech2(u) ** 2 - 2 * t(u) * sech2(u) * 2 * expit(2 * u),
    )


def shifted_erf():
    """``sigma(u) = erf u + 0.3 (1 - e^{-u^2})``: ``sigma(0) = 0``, not odd, not monotone
    (``sigma' < 0`` below ``u = -2 / (0.6 sqrt(pi))``), from ``-0.7`` to ``1.3``."""
    import numpy as np
    from scipy.special import erf

    from slr_theory import Nonlinearity

    k = 2 / np.sqrt(np.pi)

    def e(u):
        return np.exp(-(np.clip(u, -40, 40) ** 2))

    def c(u):
        return np.clip(u, -40, 40)  # e^{-u^2} is 0 beyond: no u * u overflow

    return Nonlinearity(
        "shifted-erf",
        lambda u: erf(u) + 0.3 * (1 - e(u)),
        lambda u: (k + 0.6 * c(u)) * e(u),
        lambda u: (-2 * k * c(u) + 0.6 * (1 - 2 * c(u) ** 2)) * e(u),
    )
