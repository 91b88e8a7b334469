"""The attentions side by side (docs/beyond.md, "The attentions compared").

At the paper's d = 400, L = 10, gamma^2 = 1/2, for each model and temperature: the risk
at (k*, v*) and at the lowest critical point the search finds (in log10 of the risk
minus eps^2 = 0, against the Bayes risk's log10, which no model changes), whether M is
invariant (computed by the model), M's critical points by kind, and where PGD from
uniform starts on the spheres ends (slr_theory.fate: each run followed to its end, at
alpha = min(4e-3, 1.9 / the largest Hessian eigenvalue of the minima)). A last row per
model is its best temperature for (k*, v*) (slr_theory.statistics.optimal_lambda).

    python benchmarks/compare.py [--models erf relu sigmoid identity softmax softmax1]
                                 [--lam 0.1 0.5 0.9 2] [--runs 200] [--starts 256]

Prints a Markdown table (one row per model and temperature) and the seconds per row.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from slr_theory import Params, critical_points, risk
from slr_theory.critical import describe, plural_kind
from slr_theory.dynamics import sample_initial_overlaps
from slr_theory.longrun import fate
from slr_theory.render import from_log10
from slr_theory.statistics import bayes_risk_mc, optimal_lambda

#: name -> the keywords of Params that build the model
MODELS = {
    "erf": {},
    "relu": {"nonlinearity": "relu"},
    "sigmoid": {"nonlinearity": "sigmoid"},
    "identity": {"nonlinearity": "identity"},
    "softmax": {"attention": "softmax"},
    "softmax1": {"attention": "softmax1"},
}


def _log10(x: float) -> str:
    return "0" if x <= 0 else f"{np.log10(x):.2f}"


def _row(p: Params, runs: int, starts: int, tag: str) -> list[str]:
    opt = float(risk(p, 1.0, 1.0, 0.0, 0.0, 0.0))
    on_m = critical_points(p, "manifold")
    kinds: dict = {}
    for q in on_m:
        key = q.kind.split(" (")[0]
        kinds[key] = kinds.get(key, 0) + 1
    m_text = ", ".join(f"{n} {plural_kind(k) if n > 1 else k}" for k, n in kinds.items())
    pts = critical_points(p, starts=starts, rng=0)
    best = min(pts, key=lambda q: q.risk)
    at_opt = bool(np.abs(best.overlaps - np.array([1, 1, 0, 0, 0])).max() < 1e-9)
    where = "(k*, v*)" if at_opt else describe(best.overlaps)
    ends = "not run"
    if runs:
        mins = [q for q in pts if q.index == 0]
        h_max = max(float(np.max(q.hessian_eigenvalues)) for q in mins)
        alpha = min(4e-3, 1.9 / h_max)
        init = sample_initial_overlaps(p, np.random.default_rng(0), runs)
        f = fate(p, init, alpha=alpha, points=pts)
        parts = [
            f"{describe(o)} {f.fractions[j]:.2f}"
            for j, o in enumerate(f.points)
            if np.any(f.label == j)
        ]
        if f.undecided:
            parts.append(f"undecided {f.undecided:.2f}")
        ends = "; ".join(parts)
    return [
        tag,
        f"{p.lam:.4g}",
        _log10(opt),
        f"{_log10(best.risk)} {where}",
        "yes" if p.model.manifold_invariant(p) else "no",
        m_text,
        ends,
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", choices=tuple(MODELS), default=list(MODELS))
    ap.add_argument("--lam", type=float, nargs="+", default=[0.1, 0.5, 0.9, 2.0])
    ap.add_argument("--runs", type=int, default=200, help="PGD runs per cell (0: none)")
    ap.add_argument("--starts", type=int, default=256, help="the locator's random starts")
    args = ap.parse_args()
    base = Params.paper()
    bayes = bayes_risk_mc(base, 20_000, np.random.default_rng(0))
    print(
        f"Bayes risk at d = {base.d}, L = {base.L}, gamma^2 = {base.gamma**2:.3g}: "
        f"{from_log10(bayes.log10_excess)} (log10 {bayes.log10_excess:.2f}, relative "
        f"standard error {bayes.rel_stderr:.1%}, {bayes.n} draws per kind of pair)"
    )
    head = (
        "model",
        "λ",
        "log10 R(k*, v*)",
        "log10 R at the lowest point found",
        "M invariant",
        "M's critical points",
        "PGD from uniform starts ends at",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in args.models:
        model = Params.paper().replace(**MODELS[name])
        lams = [lam for lam in args.lam if lam <= model.lam_max]
        best = optimal_lambda(model)
        for lam in [*lams, best]:
            t0 = time.perf_counter()
            p = model.replace(lam=lam)
            tag = name if lam != best else f"{name} (best λ)"
            row = _row(p, args.runs, args.starts, tag)
            print("| " + " | ".join(row) + f" |  [{time.perf_counter() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
