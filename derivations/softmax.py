"""Derive the risk of softmax attention as a sum of Laplace-transform terms (docs/theory.md).

Steps:
1. Each informative token's (U, V, W) = (X^T k, X^T v, X^T v*) is Gaussian with mean
   (B kappa, B theta, 0), B = sqrt(d/2), covariance G [[1, rho, eta], [rho, 1, nu],
   [eta, nu, 1]], G = gamma^2; a distractor's has mean 0 and G = 1. Gaussian
   conditioning gives E[(V, W) | U] and Cov((V, W) | U), with D = U - B kappa
   (informative) or D = U (distractor).
2. The weights p = softmax(lambda U) are functions of U only, and the tokens are
   independent given U, so
   E[(Y - T)^2 | U] = sum_i Var(W_i - p_i V_i | U) + sum_m p_m^2 Var(V_m | U)
                      + (sum_i E[W_i | U] - sum_l p_l E[V_l | U])^2,
   a polynomial in the p_l and the D_l.
3. Each monomial prod_l p_l^{j_l} D_l^{i_l} with some j_l > 0 is a term
   (sum j, informative factors (j, i), distractor factors (j, i)) of slr_theory.softmax;
   by exchangeability every monomial of the same signature is the same term. Monomials
   without a weight are Gaussian moments of D (E D^2 = G).
4. Collected over monomials in (nu, theta, eta, rho), the result is
   slr_theory.softmax.risk_expression (checked for several (L, s)), and every monomial has
   degree 0 or 2 in (theta, eta, rho): M is invariant.
5. The Laplace transform S^{-p} = int_0^inf t^{p-1} e^{-tS} dt / Gamma(p), checked by
   SymPy's integrator, splits each term over the tokens (module docstring of
   slr_theory.softmax).
6. A sink (softmax-1, p_l = e_l / (1 + S)): steps 1-4 hold for any weights, so the
   expansion is the same; the transform of (1 + S)^{-p} has one more factor e^{-t}, the
   sink's g_0 (a token of logit 0), and the stable form's 1 - p_i = p_0 + sum_{l != i} p_l
   with p_0 = 1 / (1 + S), the sink's weight (both checked by SymPy).
"""

from __future__ import annotations

import sympy as sp

kappa, nu, theta, eta, rho = sp.symbols("kappa nu theta eta rho", real=True)
B, G = sp.symbols("B G", positive=True)
OVERLAPS = (nu, theta, eta, rho)


def _conditional(informative: bool):
    """(E[V|U], E[W|U], Var(V|U), Var(W|U), Cov(V,W|U)) in terms of D."""
    D = sp.Symbol("D", real=True)
    g = G if informative else sp.Integer(1)
    cov = g * sp.Matrix([[1, rho, eta], [rho, 1, nu], [eta, nu, 1]])
    mean = sp.Matrix([0, B * theta if informative else 0, 0])  # U's mean cancels in D
    s_vw_u = cov[1:, 0]
    cmean = mean[1:, 0] + s_vw_u * D / cov[0, 0]
    ccov = (cov[1:, 1:] - s_vw_u * s_vw_u.T / cov[0, 0]).applyfunc(sp.simplify)
    return D, cmean[0], cmean[1], ccov[0, 0], ccov[1, 1], ccov[0, 1]


def conditional_risk(L: int, s: int) -> tuple[sp.Expr, list, list]:
    """E[(Y - T)^2 | U] minus eps^2 for tokens 0..s-1 informative; with the p and D symbols."""
    p = sp.symbols(f"p0:{L}", positive=True)
    Ds = sp.symbols(f"D0:{L}", real=True)
    out = 0
    mean_err = 0
    for ell in range(L):
        D, ev, ew, vv, vw, cvw = _conditional(ell < s)
        ev, ew, vv, vw, cvw = (x.subs(D, Ds[ell]) for x in (ev, ew, vv, vw, cvw))
        if ell < s:
            out += vw - 2 * p[ell] * cvw + p[ell] ** 2 * vv
            mean_err += ew - p[ell] * ev
        else:
            out += p[ell] ** 2 * vv
            mean_err -= p[ell] * ev
    return sp.expand(out + mean_err**2), list(p), list(Ds)


def collect(L: int, s: int) -> dict:
    """``{(monomial exponents of (nu, theta, eta, rho), term or None): coefficient}``."""
    expr, p, Ds = conditional_risk(L, s)
    out: dict = {}
    gens = [*p, *Ds, *OVERLAPS]
    poly = sp.Poly(expr, *gens)
    for monom, coef in zip(poly.monoms(), poly.coeffs(), strict=True):
        js, is_, mono = monom[:L], monom[L : 2 * L], tuple(monom[2 * L :])
        if sum(js) == 0:  # a Gaussian moment of the D's: E D^2 = G (informative), 1
            value = coef
            for ell, i in enumerate(is_):
                if i % 2:
                    value = 0
                elif i:
                    g = G if ell < s else 1
                    value *= sp.factorial2(i - 1) * g ** (i // 2)
            key = (mono, None)
        else:
            info = tuple(
                sorted((j, i) for j, i in zip(js[:s], is_[:s], strict=True) if (j, i) != (0, 0))
            )
            distr = tuple(
                sorted((j, i) for j, i in zip(js[s:], is_[s:], strict=True) if (j, i) != (0, 0))
            )
            key, value = (mono, (sum(js), info, distr)), coef
        out[key] = sp.expand(out.get(key, 0) + value)
    return {k: v for k, v in out.items() if v != 0}


def laplace_identity() -> bool:
    """``S^{-p} = int_0^inf t^{p-1} e^{-tS} dt / Gamma(p)`` for p = 1, 2 (S > 0)."""
    t, S = sp.symbols("t S", positive=True)
    return all(
        sp.simplify(
            sp.integrate(t ** (q - 1) * sp.exp(-t * S), (t, 0, sp.oo)) / sp.gamma(q) - S ** (-q)
        )
        == 0
        for q in (1, 2)
    )


def sink_identities() -> bool:
    """With a sink: ``(1 + S)^{-p}``'s transform has the factor ``e^{-t}`` (p = 1, 2), and
    ``1 - p_i = p_0 + sum_{l != i} p_l`` for three tokens, ``p_l = e_l / (1 + S)``."""
    t, S = sp.symbols("t S", positive=True)
    transform = all(
        sp.simplify(
            sp.integrate(t ** (q - 1) * sp.exp(-t) * sp.exp(-t * S), (t, 0, sp.oo)) / sp.gamma(q)
            - (1 + S) ** (-q)
        )
        == 0
        for q in (1, 2)
    )
    e = sp.symbols("e1:4", positive=True)
    total = 1 + sum(e)
    p = [x / total for x in e]
    p0 = 1 / total
    weights = all(
        sp.simplify(1 - p[i] - p0 - sum(p[m] for m in range(3) if m != i)) == 0 for i in range(3)
    )
    return transform and weights


def derive(verbose: bool = False) -> dict:
    """Return the collected risk for a few (L, s) and check the invariance of M."""
    say = print if verbose else (lambda *a: None)
    assert laplace_identity()
    assert sink_identities()
    out = {}
    for L, s in ((2, 1), (4, 1), (4, 2), (5, 3)):
        terms = collect(L, s)
        for mono, _term in terms:
            assert sum(mono[1:]) in (0, 2), mono  # M is invariant
        out[(L, s)] = terms
        say(f"L={L}, s={s}: {len(terms)} (monomial, term) pairs")
    return out


if __name__ == "__main__":
    derive(verbose=True)
