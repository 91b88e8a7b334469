"""Checks of :mod:`slr_theory.gaussian`, registered on import."""

from __future__ import annotations

import numpy as np
from scipy.special import erf, erfc

from .. import gaussian
from .reference import CHECK_DPS, MP_FUNCTIONS, mp_cancellation_scale, mp_erf_pair, mp_expect
from .registry import Check, register


def _erfp(x):
    return 2.0 / np.sqrt(np.pi) * np.exp(-x * x)


_NUMPY_INTEGRANDS = {
    "mean_erf": erf,
    "mean_erf_prime": _erfp,
    "mean_erf_second": lambda x: -2.0 * x * _erfp(x),
    "mean_erf_third": lambda x: (4.0 * x * x - 2.0) * _erfp(x),
    "mean_x_erf": lambda x: x * erf(x),
    "mean_x_erf_prime": lambda x: x * _erfp(x),
    "mean_x2_erf": lambda x: x * x * erf(x),
    "zeta": lambda x: erf(x) ** 2,
    "zeta_c": lambda x: 1.0 - erf(x) ** 2,
    "zeta_t": lambda x: 2.0 * erf(x) * _erfp(x),
    "zeta_tt": lambda x: 2.0 * _erfp(x) ** 2 - 4.0 * x * erf(x) * _erfp(x),
    "zeta_ttt": lambda x: -12.0 * x * _erfp(x) ** 2 + (8.0 * x * x - 4.0) * erf(x) * _erfp(x),
    "mean_erfc_sq": lambda x: erfc(x) ** 2,
}

_DESCRIPTIONS = {
    "mean_erf": "E erf(mu + sigma Z) = erf(mu / sqrt(1 + 2 sigma^2))",
    "mean_erf_prime": "E erf'(X) = erf'(mu / sqrt(q)) / sqrt(q)",
    "mean_erf_second": "E erf''(X) = -4 mu exp(-mu^2/q) / (sqrt(pi) q^1.5)",
    "mean_erf_third": "E erf'''(X) = -4 (1 - 2 mu^2/q) exp(-mu^2/q) / (sqrt(pi) q^1.5)",
    "mean_x_erf": "E X erf(X) = mu E erf(X) + sigma^2 E erf'(X)  (Stein)",
    "mean_x_erf_prime": "E X erf'(X) = 2 mu exp(-mu^2/q) / (sqrt(pi) q^1.5)",
    "mean_x2_erf": "E X^2 erf(X) = (mu^2+sigma^2) E erf + 2 mu sigma^2 E erf' + sigma^4 E erf''",
    "zeta": "zeta(t, s) = E erf(t + s Z)^2  (= 1 - 8 T(h, a), Owen's T)",
    "zeta_c": "1 - zeta(t, s), tail integral",
    "zeta_t": "d zeta/dt = 2 E erf(X) erf'(X)",
    "zeta_tt": "d^2 zeta/dt^2 = E[2 erf'(X)^2 + 2 erf(X) erf''(X)]",
    "zeta_ttt": "d^3 zeta/dt^3 = E[6 erf'(X) erf''(X) + 2 erf(X) erf'''(X)]",
    "mean_erfc_sq": "E erfc(t + s Z)^2 = 1 - 2 E erf(X) + zeta(t, s), tail integral",
}

# Default points: moderate values where Monte Carlo resolves the expectation.
_POINTS = {
    "mean_erf": (0.7, 1.3),
    "mean_erf_prime": (0.7, 1.3),
    "mean_erf_second": (0.7, 1.3),
    "mean_erf_third": (0.4, 0.8),
    "mean_x_erf": (-0.4, 2.0),
    "mean_x_erf_prime": (0.9, 0.6),
    "mean_x2_erf": (0.5, 1.5),
    "zeta": (0.3, 0.5),
    "zeta_c": (1.2, 0.8),
    "zeta_t": (0.6, 0.9),
    "zeta_tt": (0.2, 0.7),
    "zeta_ttt": (0.9, 0.6),
    "mean_erfc_sq": (0.8, 0.5),
}


def _make(name: str) -> Check:
    fn = getattr(gaussian, name)
    integrand = _NUMPY_INTEGRANDS[name]
    args = ("t", "s") if name.startswith("zeta") or name == "mean_erfc_sq" else ("mu", "sigma")
    mp_h = MP_FUNCTIONS[name]

    def closed(**p):
        return fn(p[args[0]], p[args[1]])

    def reference(**p):
        return mp_expect(mp_h, p[args[0]], p[args[1]], CHECK_DPS)

    def monte_carlo(rng, n, **p):
        return integrand(p[args[0]] + p[args[1]] * rng.standard_normal(n))

    def draw(rng):
        return {args[0]: float(rng.uniform(-2, 2)), args[1]: float(rng.uniform(0.05, 2))}

    mu, sigma = _POINTS[name]
    return Check(
        name=f"gaussian.{name}",
        description=_DESCRIPTIONS[name],
        closed_form=closed,
        reference=reference,
        monte_carlo=monte_carlo,
        params={args[0]: mu, args[1]: sigma},
        draw=draw,
        error_scale=(lambda **p: mp_cancellation_scale(name, p[args[0]], p[args[1]])),
    )


for _name in _NUMPY_INTEGRANDS:
    register(_make(_name))


def _pair_mc(rng, n, mu1, mu2, var1, cov, var2):
    cov_m = np.array([[var1, cov], [cov, var2]])
    chol = np.linalg.cholesky(cov_m + 1e-300 * np.eye(2))
    x = rng.standard_normal((n, 2)) @ chol.T + np.array([mu1, mu2])
    return erf(x[:, 0]) * erf(x[:, 1])


def _pair_draw(rng):
    a = rng.normal(size=(2, 2)) * rng.uniform(0.2, 1.5)
    s = a @ a.T
    return {
        "mu1": float(rng.uniform(-1.5, 1.5)),
        "mu2": float(rng.uniform(-1.5, 1.5)),
        "var1": float(s[0, 0]),
        "cov": float(s[0, 1]),
        "var2": float(s[1, 1]),
    }


def _pair_scale(mu1, mu2, var1, cov, var2):
    # The two terms of the Plackett form are bounded by 1 in magnitude.
    return float(
        abs(gaussian.mean_erf(mu1, np.sqrt(var1)) * gaussian.mean_erf(mu2, np.sqrt(var2)))
    )


register(
    Check(
        name="gaussian.erf_pair",
        description="E erf(X1) erf(X2), bivariate Gaussian (Plackett / Owen's T)",
        closed_form=lambda **p: gaussian.erf_pair(**p),
        reference=lambda **p: mp_erf_pair(**p, dps=CHECK_DPS),
        monte_carlo=_pair_mc,
        params={"mu1": 0.4, "mu2": -0.8, "var1": 0.9, "cov": 0.5, "var2": 1.2},
        draw=_pair_draw,
        error_scale=_pair_scale,
    )
)
register(
    Check(
        name="gaussian.erf_pair_centred",
        description="E erf(U) erf(V), centred: (2/pi) arcsin(2 S12 / sqrt((1+2 S11)(1+2 S22)))",
        closed_form=lambda **p: gaussian.erf_pair(**p),
        reference=lambda **p: mp_erf_pair(**p, dps=CHECK_DPS),
        monte_carlo=_pair_mc,
        params={"mu1": 0.0, "mu2": 0.0, "var1": 1.5, "cov": -1.1, "var2": 1.0},
        draw=lambda rng: {**_pair_draw(rng), "mu1": 0.0, "mu2": 0.0},
    )
)
