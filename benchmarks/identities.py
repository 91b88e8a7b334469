"""Cost of building a Nonlinearity: the point checks and the integral identities over
|u| <= 1e300 (slr_theory.identities), per built-in's functions, and Nonlinearity.from_sympy.

    python benchmarks/identities.py

Each built-in is built again from its own functions (a user's nonlinearity of the same
cost), best of three; the panels the identities took (more than the partition's 28 630
where a failing panel was halved) and the points evaluated are printed with it.
"""

from __future__ import annotations

import platform
import time

import numpy as np

from slr_theory import Nonlinearity
from slr_theory.identities import establish
from slr_theory.nonlinearity import BUILTIN_NONLINEARITIES

EXPRESSIONS = (
    "tanh(u)",
    "erf(u)",
    "Max(u, 0)",
    "u/sqrt(1 + u**2)",
    "tanh(u) - 7/5*exp(-(u-300)**2/8)",
)


def _best(fn, times: int = 3) -> float:
    runs = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return min(runs)


def main() -> None:
    print(f"{platform.processor() or platform.machine()}, NumPy {np.__version__}")
    print(f"{'sigma':>12} {'build, s':>9} {'identities, s':>14} {'panels':>8} {'points':>10}")
    for name, sig in BUILTIN_NONLINEARITIES.items():
        fs = [sig.derivative(j) for j in range(sig.order + 1)]
        labels = ["f", "df", "d2f", "d3f", "d4f"][: len(fs)]

        def build(sig=sig, name=name):
            Nonlinearity(
                name, sig.f, sig.df, sig.d2f, sig.d3f, d4f=sig.d4f,
                complement=sig.complement, strip=sig.strip, kinks=sig.kinks,
                closed_moments=sig.closed_moments,
            )  # fmt: skip

        facts = establish(name, fs, labels, sig.kinks)
        ident = _best(
            lambda fs=fs, labels=labels, sig=sig, n=name: establish(n, fs, labels, sig.kinks)
        )
        print(
            f"{name:>12} {_best(build):>9.3f} {ident:>14.3f} {facts.panels:>8} {facts.nodes:>10}"
        )
    print(f"\n{'from_sympy':>40} {'s':>7}")
    for expr in EXPRESSIONS:
        print(f"{expr:>40} {_best(lambda e=expr: Nonlinearity.from_sympy(e), 1):>7.2f}")


if __name__ == "__main__":
    main()
