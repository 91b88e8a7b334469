"""Derive E h(X), X ~ N(mu, sigma^2), for h in {erf, erf', erf'', x erf, x erf', x^2 erf}.

Steps (docs/theory.md §4):
1. Completing the square: E erf'(mu + sigma Z) is a Gaussian integral.
2. Differentiation under the integral: d/dmu E erf(X) = E erf'(X), and
   E erf(X) is odd in mu, so E erf(X) = int_0^mu E erf'(m) dm.
3. E erf''(X) = d/dmu E erf'(X).
4. Stein's lemma E[Z h(mu + sigma Z)] = sigma E h'(X) and
   E[Z^2 h] = E h + sigma^2 E h'' give the x-moments.

Run ``python derivations/gaussian_erf.py`` to print every step.
"""

from __future__ import annotations

import sympy as sp

mu = sp.Symbol("mu", real=True)
sigma = sp.Symbol("sigma", positive=True)
z = sp.Symbol("z", real=True)
m = sp.Symbol("m", real=True)

q = 1 + 2 * sigma**2


def derive(verbose: bool = False) -> dict[str, sp.Expr]:
    """Return the closed forms keyed by the names of :mod:`slr_theory.gaussian`."""
    say = print if verbose else (lambda *a: None)
    density = sp.exp(-(z**2) / 2) / sp.sqrt(2 * sp.pi)
    erfp = 2 / sp.sqrt(sp.pi) * sp.exp(-((mu + sigma * z) ** 2))

    # 1. completing the square
    e_erfp = sp.simplify(sp.integrate(erfp * density, (z, -sp.oo, sp.oo)))
    say("1. E erf'(mu + sigma Z) =", e_erfp)
    target = 2 / sp.sqrt(sp.pi * q) * sp.exp(-(mu**2) / q)
    assert sp.simplify(e_erfp - target) == 0
    e_erfp = target

    # 2. integrate in mu from 0 (E erf(X) is odd in mu)
    e_erf = sp.integrate(e_erfp.subs(mu, m), (m, 0, mu))
    e_erf = sp.simplify(e_erf)
    say("2. E erf(X) = int_0^mu E erf'(m) dm =", e_erf)
    assert sp.simplify(e_erf - sp.erf(mu / sp.sqrt(q))) == 0
    e_erf = sp.erf(mu / sp.sqrt(q))

    # 3. differentiate
    e_erfpp = sp.simplify(sp.diff(e_erfp, mu))
    say("3. E erf''(X) = d/dmu E erf'(X) =", e_erfpp)

    # 4. Stein's lemma; X = mu + sigma Z
    e_x_erf = sp.simplify(mu * e_erf + sigma**2 * e_erfp)
    e_x_erfp = sp.simplify(mu * e_erfp + sigma**2 * e_erfpp)
    e_x2_erf = sp.simplify(
        (mu**2 + sigma**2) * e_erf + 2 * mu * sigma**2 * e_erfp + sigma**4 * e_erfpp
    )
    say("4. E X erf(X)   =", e_x_erf)
    say("   E X erf'(X)  =", e_x_erfp)
    say("   E X^2 erf(X) =", e_x2_erf)
    # the simplified forms used by slr_theory.gaussian
    assert (
        sp.simplify(
            e_x_erfp - 2 * mu * sp.exp(-(mu**2) / q) / (sp.sqrt(sp.pi) * q ** sp.Rational(3, 2))
        )
        == 0
    )
    assert sp.simplify(e_x_erfp + e_erfpp / 2) == 0
    form = (mu**2 + sigma**2) * e_erf + 4 * mu * sigma**2 * (1 + sigma**2) / (
        sp.sqrt(sp.pi) * q ** sp.Rational(3, 2)
    ) * sp.exp(-(mu**2) / q)
    assert sp.simplify(e_x2_erf - form) == 0
    say(
        "   = (mu^2+sigma^2) erf(mu/sqrt q) + 4 mu sigma^2 (1+sigma^2) e^{-mu^2/q} / (sqrt(pi) q^{3/2})"
    )
    return {
        "mean_erf": e_erf,
        "mean_erf_prime": e_erfp,
        "mean_erf_second": e_erfpp,
        "mean_x_erf": e_x_erf,
        "mean_x_erf_prime": e_x_erfp,
        "mean_x2_erf": e_x2_erf,
    }


if __name__ == "__main__":
    derive(verbose=True)
