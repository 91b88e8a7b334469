"""Derive the pieces of the Bayes risk's importance sampling (slr_theory.statistics).

Steps:
1. One coordinate along k*: p = N(m, g^2), q = N(0, 1). sqrt(p q) is, after completing
   the square, Z_1 times the density of h = N(m / (1 + g^2), 2 g^2 / (1 + g^2)), with
   Z_1 = sqrt(2 g / (1 + g^2)) exp(-m^2 / (4 (1 + g^2))). The other d - 1 coordinates have
   m = 0; over R^d with m^2 = d/2: log Z = (d/2) log(2 g / (1 + g^2)) - d / (8 (1 + g^2)).
2. A posterior variance is a sum over pairs: for weights pi (summing to 1) and values B,
   sum pi B^2 - (sum pi B)^2 = 1/2 sum_{J, J'} pi_J pi_J' (B_J - B_J')^2 (three values).
3. The change of measure: with P_J the law where the tokens of J are informative and
   f = mean over J of P_J, E_f[pi_J pi_J' g] = int P_J P_J' g / (C^2 f), C the number of
   subsets. For a pair with r tokens swapped, P_J P_J' = prod_common p^2 prod_swapped (p q)
   prod_rest q^2; sampling the swapped tokens from h = sqrt(p q) / Z_token gives the ratio
   Z^(2r) exp((l_J + l_J') / 2 - log sum_K exp(l_K)) / C times g, with l the
   log-likelihood ratios log(p / q) (checked symbolically for one swapped token).
"""

from __future__ import annotations

import sympy as sp

x = sp.Symbol("x", real=True)
m = sp.Symbol("m", real=True)
g = sp.Symbol("g", positive=True)
d = sp.Symbol("d", positive=True)


def _normal(y, mean, var):
    return sp.exp(-((y - mean) ** 2) / (2 * var)) / sp.sqrt(2 * sp.pi * var)


def halfway() -> dict:
    """``Z_1``, the mean and the variance of ``h ~ sqrt(p q)`` on one coordinate."""
    p, q = _normal(x, m, g**2), _normal(x, 0, 1)
    root = sp.sqrt(p * q)
    z1 = sp.simplify(sp.integrate(sp.expand_power_base(root, force=True), (x, -sp.oo, sp.oo)))
    hm, hv = m / (1 + g**2), 2 * g**2 / (1 + g**2)
    want = sp.sqrt(2 * g / (1 + g**2)) * sp.exp(-(m**2) / (4 * (1 + g**2)))
    assert sp.simplify(z1 - want) == 0, z1
    # root / Z_1 is the density of N(hm, hv): equal logs
    diff = sp.expand_log(sp.log(root) - sp.log(want) - sp.log(_normal(x, hm, hv)), force=True)
    assert sp.simplify(diff) == 0, diff
    log_z = sp.expand_log(
        sp.log(want.subs(m, sp.sqrt(d / 2))) + (d - 1) * sp.log(want.subs(m, 0)), force=True
    )
    closed = (d / 2) * sp.log(2 * g / (1 + g**2)) - d / (8 * (1 + g**2))
    assert sp.simplify(sp.expand_log(log_z - closed, force=True)) == 0, log_z
    return {"Z1": want, "mean": hm, "var": hv, "logZ": closed}


def pair_identity() -> bool:
    """``sum pi B^2 - (sum pi B)^2 = 1/2 sum_{J,J'} pi_J pi_J' (B_J - B_J')^2`` (three values)."""
    w = sp.symbols("w0:3", positive=True)
    B = sp.symbols("B0:3", real=True)
    total = sum(w)
    pi = [wi / total for wi in w]
    var = sum(pi[i] * B[i] ** 2 for i in range(3)) - sum(pi[i] * B[i] for i in range(3)) ** 2
    pairs = sum(pi[i] * pi[j] * (B[i] - B[j]) ** 2 for i in range(3) for j in range(3)) / 2
    return sp.simplify(var - pairs) == 0


def change_of_measure() -> bool:
    """One swapped token (s = 1, L = 2): ``P_1 P_2 / (C^2 f)`` over the proposal
    ``h(x_1) h(x_2)`` is ``Z^2 exp((l_1 + l_2)/2 - log(e^l_1 + e^l_2)) / C`` (C = 2)."""
    p1, p2, q1, q2, Z = sp.symbols("p1 p2 q1 q2 Z", positive=True)
    h1, h2 = sp.sqrt(p1 * q1) / Z, sp.sqrt(p2 * q2) / Z
    P1, P2 = p1 * q2, p2 * q1
    f = (P1 + P2) / 2
    ratio = P1 * P2 / (4 * f) / (h1 * h2)
    l1, l2 = sp.log(p1 / q1), sp.log(p2 / q2)
    want = Z**2 * sp.exp((l1 + l2) / 2 - sp.log(sp.exp(l1) + sp.exp(l2))) / 2
    return sp.simplify(ratio - want) == 0


def derive(verbose: bool = False) -> dict:
    say = print if verbose else (lambda *a: None)
    out = halfway()
    assert pair_identity()
    assert change_of_measure()
    say("h ~ sqrt(p q): mean", out["mean"], " variance", out["var"])
    say("log Z =", out["logZ"])
    return out


if __name__ == "__main__":
    derive(verbose=True)
