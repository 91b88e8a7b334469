"""Helpers shared by the derivation scripts."""

from __future__ import annotations

import random

import sympy as sp


def assert_same(
    a: sp.Expr, b: sp.Expr, symbols: dict[sp.Symbol, tuple[float, float]], n: int = 8
) -> None:
    """Assert ``a == b``: symbolically if SymPy can, else at `n` random rational points to 30 digits."""
    if sp.simplify(a - b) == 0:
        return
    rng = random.Random(12345)
    for _ in range(n):
        point = {
            s: sp.Rational(rng.randint(int(lo * 1000), int(hi * 1000)), 1000)
            for s, (lo, hi) in symbols.items()
        }
        va, vb = sp.N(a.subs(point), 30), sp.N(b.subs(point), 30)
        assert abs(va - vb) <= sp.Float("1e-25") * max(abs(va), abs(vb), 1), (point, va, vb)
