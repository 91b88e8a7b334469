"""Derive the population risk as a function of the five overlaps (docs/theory.md §3).

Steps:
1. For the informative token, (U, V, W) = (X^T k, X^T v, X^T v*) is Gaussian with
   mean (B kappa, B theta, 0), B = sqrt(d/2), covariance G [[1, rho, eta], [rho, 1, nu], [eta, nu, 1]],
   G = gamma^2. Gaussian conditioning gives E[(V, W) | U] and Cov((V, W) | U).
2. Every moment is E[poly(D) h(lambda U)], D = U - B kappa, h in {erf, erf^2}. With
   lambda U = a kappa + g Z (a = lambda B, g = lambda gamma), D = gamma Z, Stein's lemma gives
   E[D h] = gamma g E h', E[D^2 h] = G (E h + g^2 E h'').
3. Distractors: the same with mean 0 and gamma = 1.
4. R = eps^2 + G - 2 c1 + s1 + (L-1) s0 + 2(L-1) m1 m0 + (L-1)(L-2) m0^2, and the
   informative part rearranged as G (1 - 2 nu E0 + Z0) + off-manifold terms (used for precision).
5. s informative tokens (positions a uniform s-subset J, Y = sum_{j in J} X_j^T v* + xi): the
   tokens are independent given J, so with D_j = W_j - f(X_j) (E D = -m1, E D^2 = G - 2 c1 + s1)
   and F_l = f(X_l) for the distractors,
   R = eps^2 + s E D^2 + s(s-1) m1^2 + (L-s) s0 + 2 s(L-s) m1 m0 + (L-s)(L-s-1) m0^2,
   checked by expanding (sum D - sum F + xi)^2 for small (L, s). m1 vanishes on M with its
   gradient (it is linear in theta, rho), so the new term s(s-1) m1^2 leaves M invariant.

E_j = E erf^(j)(lambda U), Z_j = d^j zeta / dt^j (a kappa, g) are kept as symbols.
"""

from __future__ import annotations

import sympy as sp

kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)
gamma, lam, B = sp.symbols("gamma lambda B", positive=True)
L, eps = sp.symbols("L epsilon", positive=True)
s = sp.Symbol("s", positive=True)  # informative tokens
E = sp.symbols("E0:3", real=True)
Z = sp.symbols("Z0:3", real=True)
P, S0, S2 = sp.symbols(
    "P S0 S2", real=True
)  # lambda E erf'(lambda Z0), zeta(0, lam), lam^2 zeta_tt(0, lam)
D = sp.Symbol("D", real=True)


def _stein(poly: sp.Expr, moments: tuple[sp.Expr, ...]) -> sp.Expr:
    """Replace D^k h by its expectation, k <= 2, given (E h, E h', E h'')."""
    g = lam * gamma
    h0, h1, h2 = moments
    table = {0: h0, 1: gamma * g * h1, 2: gamma**2 * (h0 + g**2 * h2)}
    poly = sp.Poly(sp.expand(poly), D)
    return sp.expand(
        sum(c * table[m[0]] for m, c in zip(poly.monoms(), poly.coeffs(), strict=True))
    )


def derive(verbose: bool = False) -> dict[str, sp.Expr]:
    """Return m1, c1, s1, m0, s0, the informative part, and the risk (in terms of E_j, Z_j)."""
    say = print if verbose else (lambda *a: None)
    G = gamma**2
    cov = G * sp.Matrix([[1, rho, eta], [rho, 1, nu], [eta, nu, 1]])
    mean = sp.Matrix([B * kappa, B * theta, 0])
    # 1. conditioning on U
    s_vw_u = cov[1:, 0]
    cond_mean = mean[1:, 0] + s_vw_u * D / cov[0, 0]
    cond_cov = sp.simplify(cov[1:, 1:] - s_vw_u * s_vw_u.T / cov[0, 0])
    ev, ew = [sp.simplify(x) for x in cond_mean]
    say("1. E[V|U] =", ev, "  E[W|U] =", ew, "  Cov((V,W)|U) =", cond_cov.tolist())
    # 2. moments
    m1 = _stein(ev, E)
    c1 = _stein(ev * ew + cond_cov[0, 1], E)
    s1 = _stein(ev**2 + cond_cov[0, 0], Z)
    say("2. m1 =", m1, "\n   c1 =", c1, "\n   s1 =", s1)
    # 3. distractors: U ~ N(0, 1), E[V|U] = rho U, Var = 1 - rho^2; Stein with gamma = 1
    m0 = rho * P
    s0 = S0 + rho**2 * S2
    say("3. m0 =", m0, "  s0 =", s0)
    informative = sp.expand(G - 2 * c1 + s1)
    g = lam * gamma
    stable = (
        G * (1 - 2 * nu * E[0] + Z[0])
        + B**2 * theta**2 * Z[0]
        + 2 * B * theta * gamma * g * (rho * Z[1] - eta * E[1])
        + G * g**2 * (rho**2 * Z[2] - 2 * rho * eta * E[2])
    )
    assert sp.expand(informative - stable) == 0
    say("4. gamma^2 - 2 c1 + s1 =", stable)
    risk = eps**2 + informative + (L - 1) * s0 + 2 * (L - 1) * m1 * m0 + (L - 1) * (L - 2) * m0**2
    on_m = sp.simplify(risk.subs({theta: 0, eta: 0, rho: 0}))
    say("   on M:", on_m)
    # 5. s informative tokens
    risk_s = (
        eps**2
        + s * informative
        + s * (s - 1) * m1**2
        + (L - s) * s0
        + 2 * s * (L - s) * m1 * m0
        + (L - s) * (L - s - 1) * m0**2
    )
    for n_tokens, n_inf in ((1, 1), (3, 1), (3, 2), (4, 2), (4, 4), (5, 3)):
        assert sp.expand(_second_moment(n_tokens, n_inf) - _token_formula(n_tokens, n_inf)) == 0
    assert sp.expand(risk_s.subs(s, 1) - risk) == 0
    on_m_s = sp.simplify(risk_s.subs({theta: 0, eta: 0, rho: 0}))
    transverse = [sp.diff(risk_s, x).subs({theta: 0, eta: 0, rho: 0}) for x in (theta, eta, rho)]
    assert all(sp.simplify(t) == 0 for t in transverse)  # M is invariant for every s
    say("5. s tokens:", risk_s, "\n   on M:", on_m_s)
    return {
        "m1": m1,
        "c1": c1,
        "s1": s1,
        "m0": m0,
        "s0": s0,
        "informative": informative,
        "risk": risk,
        "risk_s": risk_s,
    }


_ED, _ED2, _S0, _M0, _EPS2 = sp.symbols("ED ED2 s0 m0 eps2", real=True)


def _second_moment(n_tokens: int, n_inf: int) -> sp.Expr:
    """E (sum_j D_j - sum_l F_l + xi)^2 for independent tokens, expanded term by term."""
    Ds = sp.symbols(f"D0:{n_inf}", real=True)
    Fs = sp.symbols(f"F0:{n_tokens - n_inf}", real=True)
    xi = sp.Symbol("xi", real=True)
    expr = sp.expand((sum(Ds) - sum(Fs) + xi) ** 2)
    moment = {"D": (_ED, _ED2), "F": (_M0, _S0), "x": (0, _EPS2)}  # (E X, E X^2)
    out = 0
    for term in sp.Add.make_args(expr):
        coef, factors = term.as_coeff_mul()
        value = coef
        for f in factors:  # independent factors: the expectation splits
            base, power = f.as_base_exp()
            value *= moment[base.name[0]][int(power) - 1]
        out += value
    return sp.expand(out)


def _token_formula(n_tokens: int, n_inf: int) -> sp.Expr:
    """The closed form of step 5 with ``E D = ED``, ``E D^2 = ED2``."""
    S, Ln = n_inf, n_tokens
    return sp.expand(
        _EPS2
        + S * _ED2
        + S * (S - 1) * _ED**2
        + (Ln - S) * _S0
        - 2 * S * (Ln - S) * _ED * _M0
        + (Ln - S) * (Ln - S - 1) * _M0**2
    )


if __name__ == "__main__":
    derive(verbose=True)
