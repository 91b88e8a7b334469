"""Cost of the Gaussian moments of a nonlinearity by quadrature: one interpolant's build and a
direct batch of 2000 points, per nonlinearity and scale.

    python benchmarks/quadrature.py

The interpolant (:func:`slr_theory.nonlinearity.moment_interpolant`, order 2, span 14.14:
the paper's ``a = lambda sqrt(d/2)`` at ``lambda = 1``) is what the engine builds once per
temperature; the direct batch is what small batches and the interpolant's checks cost.
Small scales take Gauss-Hermite (the built-ins with a strip of analyticity), large ones the
composite panels; erf is integrated here only as a reference (the engine uses its closed
forms). Best of five for the batch.
"""

from __future__ import annotations

import platform
import time

import numpy as np

from slr_theory.nonlinearity import gaussian_moments, moment_interpolant, nonlinearity_of

CASES = (("tanh", 0.0707), ("tanh", 0.64), ("arctan", 0.0707), ("sigmoid", 0.0707), ("erf", 0.64))


def main() -> None:
    print(f"{platform.processor() or platform.machine()}, NumPy {np.__version__}")
    print(f"{'sigma':>8} {'g':>7} {'interpolant build, ms':>22} {'2000-point batch, ms':>21}")
    t = np.linspace(-14.0, 14.0, 2000)
    for name, g in CASES:
        sig = nonlinearity_of(name)
        start = time.perf_counter()
        moment_interpolant(sig, g, 14.14, 2)
        build = time.perf_counter() - start
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            gaussian_moments(name, t, g, 2)
            runs.append(time.perf_counter() - start)
        print(f"{name:>8} {g:>7g} {build * 1e3:>22.1f} {min(runs) * 1e3:>21.1f}")


if __name__ == "__main__":
    main()
