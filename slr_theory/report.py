"""``slr-theory report``: one self-contained Markdown report with its figures, on any parameters.

Sections: the verification table, the risk and its decomposition, the critical points on
M (with the proof) and in the full space (with the evidence) and the center-stable
manifold conclusion, the phase portrait, the global picture (stability of M, basin
fractions, escape times, the continuation in ``lambda``), the paper's experiments, and
the statistics of the paper's section 4.

The report is written under the output discipline of :mod:`slr_theory.output`: built in
a staging folder, committed by rename when complete (an error, Ctrl-C or SIGTERM leaves
the directory as it was), and ``force`` replaces only what an earlier report wrote.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .output import Destination
from .params import Params, check_params
from .trajectory import MAX_ALPHA
from .validate import boolean, positive_real

__all__ = ["write_report"]


def _md_table(header, rows) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return out


def _num(x, digits=4) -> str:
    x = float(x)
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def write_report(
    out: str | Path,
    params: Params | None = None,
    *,
    alpha: float = 4e-3,
    seed: int = 0,
    full: bool = False,
    force: bool = False,
    progress: bool = False,
) -> Path:
    """Compute everything and write ``report.md`` with its figures into the directory `out`.

    Parameters
    ----------
    out : str or Path
        Output directory; created (its parent must exist). A non-empty one is refused
        unless `force` (:class:`slr_theory.output.Destination` with ``exclusive=True``).
    params : Params, optional
        Default: the paper's ``d = 400, L = 10, gamma^2 = 1/2, lambda = 0.1``. The
        report searches the full space, so ``d >= 4``.
    alpha : float
        PGD step size for the dynamics and the center-stable manifold check,
        ``0 < alpha <= 1e100``.
    seed : int
        Seed of every random draw.
    full : bool
        The paper's experiments with all 30 repeats and full SGD (several minutes);
        by default 5 repeats and a tenth of the SGD steps.
    force : bool
        Replace the files an earlier report wrote in `out` (listed in its marker and
        unchanged since); files the user put there are never replaced or deleted.
    progress : bool
        A progress bar on stderr.

    Returns
    -------
    Path
        The report file.
    """
    from tqdm.auto import tqdm

    params = Params.paper() if params is None else params
    check_params(params)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}.")
    alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    if params.d < 4:
        raise ValueError(
            f"`params.d` must be >= 4 for the report (it searches the full space, where k, v, "
            f"k*, v* span four dimensions), got {params.d}."
        )
    full = boolean(full, "full")
    sections = [
        _header,
        _verification,
        _risk,
        _critical,
        _portrait,
        _landscape,
        _experiments,
        _statistics,
    ]
    with Destination(out, force=force, exclusive=True, expect=["report.md"]) as dest:
        lines: list[str] = []
        ctx = {"params": params, "alpha": alpha, "seed": seed, "full": full, "dir": dest.staging}
        with tqdm(total=len(sections), desc="report", unit="section", disable=not progress) as bar:
            for section in sections:
                t0 = time.perf_counter()
                lines += section(ctx)
                lines.append(f"<sub>({time.perf_counter() - t0:.1f} s)</sub>")
                lines.append("")
                bar.update(1)
        dest.file("report.md").write_text("\n".join(lines) + "\n")
    return dest.directory / "report.md"


def _header(ctx) -> list[str]:
    from . import __version__

    p = ctx["params"]
    return [
        "# Single-location regression: the report",
        "",
        f"slr-theory {__version__}. Parameters: `d = {p.d}`, `L = {p.L}`, `λ = {p.lam:g}`, "
        f"`γ = {p.gamma:.6g}` (`γ² = {p.gamma**2:.4g}`), `ε = {p.eps:g}`; PGD step "
        f"`α = {ctx['alpha']:g}`; seed {ctx['seed']}.",
        "",
        "The model: tokens `X_ℓ ∈ R^d`, one of them informative (`N(√(d/2) k*, γ² I)`), the "
        "label `Y = X_{J0}·v* + ξ`, the predictor `T(X) = Σ_ℓ erf(λ X_ℓ·k) X_ℓ·v` with unit "
        "`k, v`; its risk depends on five overlaps `(κ, ν, θ, η, ρ) = (k·k*, v·v*, v·k*, "
        "k·v*, k·v)`. See `docs/theory.md`.",
        "",
    ]


def _verification(ctx) -> list[str]:
    from .verify import run_checks

    results = run_checks(samples=20_000, seed=ctx["seed"])
    rows = [
        (
            r.name,
            f"{r.value:.12g}",
            f"{r.rel_error:.1e}",
            f"{r.z:+.2f}",
            "ok" if r.passed else "FAIL",
        )
        for r in results
    ]
    n_fail = sum(not r.passed for r in results)
    return [
        "## 1. Every closed form, checked two independent ways",
        "",
        "Each identity against a high-precision mpmath quadrature of its defining "
        "expectation (relative error) and a Monte Carlo estimate (z-score, 20 000 draws). "
        f"{len(results) - n_fail} passed, {n_fail} failed.",
        "",
        *_md_table(("check", "closed form", "rel. error", "z", ""), rows),
        "",
    ]


def _risk(ctx) -> list[str]:
    from .risk import risk_components
    from .statistics import optimal_lambda

    p = ctx["params"]
    points = [
        ("the optimum (1, 1)", (1.0, 1.0, 0, 0, 0)),
        ("the origin", (0.0, 0.0, 0, 0, 0)),
        ("on M, (0.5, 0.5)", (0.5, 0.5, 0, 0, 0)),
        ("off M, (0.5, 0.5, 0.2, -0.2, 0.1)", (0.5, 0.5, 0.2, -0.2, 0.1)),
    ]
    rows = []
    for name, ov in points:
        c = risk_components(p, *ov)
        rows.append(
            (
                name,
                _num(c.total, 8),
                _num(c.informative),
                _num(c.distractors),
                _num(c.interactions),
            )
        )
    lam_star = optimal_lambda(p)
    return [
        "## 2. The risk",
        "",
        "`R = ε² + informative + distractors + interactions`; the interactions vanish on M "
        "and the informative part is computed to relative precision even where it is "
        "exponentially small.",
        "",
        *_md_table(("point", "risk", "informative", "distractors", "interactions"), rows),
        "",
        f"At `(k*, v*)` the risk is smallest at `λ* = {lam_star:.4g}` for these `d, L, γ, ε`.",
        "",
    ]


def _critical(ctx) -> list[str]:
    from .critical import critical_points, lipschitz_bound, pgd_map_spectrum

    p, alpha = ctx["params"], ctx["alpha"]
    on_m = critical_points(p, "manifold")
    pts = critical_points(p, rng=ctx["seed"])
    ctx["points"] = pts
    bound = lipschitz_bound(p, rng=ctx["seed"])
    rows = []
    for q in pts:
        s = pgd_map_spectrum(q, alpha)
        rows.append(
            (
                "(" + ", ".join(f"{(0.0 if abs(x) < 5e-5 else x):.4f}" for x in q.overlaps) + ")",
                _num(q.risk, 6),
                q.index,
                q.nullity,
                q.kind,
                s.conclusion,
            )
        )
    minima = [q for q in pts if q.index == 0]
    return [
        "## 3. Critical points",
        "",
        "### On M: complete by proof",
        "",
        *[f"- {line}" for line in on_m.certificate],
        "",
        "### On the spheres: complete with evidence",
        "",
        *[f"- {line}" for line in pts.certificate],
        "",
        *_md_table(
            ("overlaps", "risk", "index", "nullity", "kind", f"PGD map at α = {alpha:g}"), rows
        ),
        "",
        f"{len(minima)} minima (one per symmetry orbit). Index and nullity count Hessian "
        f"eigenvalues with their multiplicities at `d = {p.d}`; zero modes along an orbit of "
        "the rotations fixing `k*, v*` are listed in the kind.",
        "",
        "**The center-stable manifold argument.** Every saddle above is strict at this step "
        "(its unstable subspace is non-trivial), so gradient descent reaches it from a set of "
        "initialisations of measure zero, provided the PGD map is a global diffeomorphism, "
        f"which the theorem gets from `α < 1/Lip`. Here `{bound.lower:.4g} ≤ Lip ≤ "
        f"{bound.upper:.4g}`, so `α < 1/Lip` **{bound.step_condition(alpha)}** at "
        f"`α = {alpha:g}`.",
        "",
    ]


def _portrait(ctx) -> list[str]:
    from .plotting import phase_portrait

    phase_portrait(ctx["params"], ctx["dir"] / "portrait.png", pgd_alpha=ctx["alpha"])
    return [
        "## 4. The flow on M",
        "",
        "![phase portrait](portrait.png)",
        "",
        "Streamlines of the flow on M, its nullclines, the critical points by kind, the "
        "separatrix (the saddle's stable manifold), flow trajectories and PGD iterates, the "
        "basins and the risk contours.",
        "",
    ]


def _landscape(ctx) -> list[str]:
    from .landscape import basin_fractions, continuation, manifold_stability, saddle_escape
    from .plotting import bifurcation_figure, off_manifold_figure, stability_figure

    p, alpha, seed, d = ctx["params"], ctx["alpha"], ctx["seed"], ctx["dir"]
    t = np.linspace(-1, 1, 123)[1:-1]
    K, N = np.meshgrid(t, t)
    share = float((manifold_stability(p, K, N)[..., 0].real < 0).mean())
    stability_figure([p], d / "stability.png", grid=81)
    lines = [
        "## 5. The global picture",
        "",
        f"**Stability of M.** M attracts transversally on {share:.1%} of the open square "
        "(the leading transverse eigenvalue of the overlap flow is negative there):",
        "",
        "![stability of M](stability.png)",
        "",
    ]
    if p.d >= 4:
        steps = 20_000
        b = basin_fractions(p, 100, rng=seed, alpha=alpha, steps=steps, points=ctx["points"])
        rows = [
            (
                "(" + ", ".join(f"{(0.0 if abs(x) < 5e-5 else x):.3f}" for x in a.overlaps) + ")",
                f"{f:.2f} ± {se:.2f}",
            )
            for a, f, se in zip(b.attractors, b.fractions, b.stderr, strict=True)
        ]
        rows.append(("none reached", f"{b.none_fraction:.2f}"))
        off_manifold_figure(p, d / "off_manifold.png", n=30, alpha=alpha, steps=steps, rng=seed)
        lines += [
            f"**Basins.** 100 runs of PGD (`α = {alpha:g}`, {steps} steps) from initialisations "
            "uniform on the spheres; the fraction that each minimum attracts:",
            "",
            *_md_table(("minimum", "fraction ± s.e."), rows),
            "",
            "![distance to M](off_manifold.png)",
            "",
        ]
    saddles = [q for q in ctx["points"] if q.index >= 1 and q.on_manifold and not q.overlaps.any()]
    if saddles:
        e = saddle_escape(p, saddles[0], [1e-4, 1e-6, 1e-8])
        lines += [
            f"**Escape from the saddle at the origin** (unstable rate `μ = {e.mu:.4g}`): flow "
            "time to leave a 0.01-neighbourhood from distance 1e-4, 1e-6, 1e-8: measured "
            f"{', '.join(f'{x:.2f}' for x in e.measured)}; linearised `log(r/r₀)/μ`: "
            f"{', '.join(f'{x:.2f}' for x in e.predicted)}.",
            "",
        ]
    c = continuation(p, (0.02, 2.0), steps=30, seeds=3)
    bifurcation_figure(c, d / "bifurcation.png")
    # each event once (branches related by a symmetry change index at the same lambda);
    # index changes are located to 1e-7 in lambda, folds to the continuation's last step
    events = {
        (e["type"], round(e["lam"], 6)): e
        for e in c.events
        if e["type"] in ("index change", "fold")
    }
    lines += [
        f"**Continuation in λ** over [0.02, 2]: {len(c.branches)} branches; "
        + "; ".join(
            f"index change at λ = {e['lam']:.6f}"
            if e["type"] == "index change"
            else f"fold at λ ≈ {e['lam']:.4g}"
            for e in events.values()
        )
        + ".",
        "",
        "![bifurcation diagram](bifurcation.png)",
        "",
    ]
    return lines


def _experiments(ctx) -> list[str]:
    from .experiments import experiments, run
    from .plotting import experiment_figure
    from .render import write_trajectory_csv

    full = ctx["full"]
    repeats = None if full else 5
    gd = [n for n, e in experiments().items() if e.method == "pgd"]
    results = run(gd, seed=ctx["seed"], repeats=repeats)
    results.update(
        run(
            "sgd_sphere_schedule",
            seed=ctx["seed"],
            repeats=repeats,
            steps_scale=1.0 if full else 0.1,
        )
    )
    lines = [
        "## 6. The paper's experiments",
        "",
        (
            "All 30 repeats at the paper's step counts."
            if full
            else "5 repeats each, the SGD experiment at a tenth of its steps (`--full` for the paper's "
            "30 repeats and all steps)."
        ),
        "",
    ]
    for name, res in results.items():
        experiment_figure(res, ctx["dir"] / f"{name}.png")
        write_trajectory_csv(res.trajectory, ctx["dir"] / f"{name}.csv", eps=res.experiment.eps)
        tr = res.trajectory
        lines += [
            f"### {name}",
            "",
            f"{res.experiment.description}. Final risk − ε²: median "
            f"{float(np.median(tr.risk[-1] - res.experiment.eps**2)):.4g} over "
            f"{tr.overlaps.shape[1]} runs. Data: [{name}.csv]({name}.csv).",
            "",
            f"![{name}]({name}.png)",
            "",
        ]
    return lines


def _statistics(ctx) -> list[str]:
    from .statistics import statistics_table

    p = ctx["params"]
    rows = statistics_table(
        p.gamma, p.eps, None, [100, 1000, 10_000], 20_000, np.random.default_rng(ctx["seed"])
    )
    table = []
    for r in rows:
        bayes = r["bayes"]
        bayes_txt = (
            "< 2.2e-308"
            if bayes == 0 and r["bayes_se"] == 0
            else f"{bayes:.3e} ± {r['bayes_se']:.1e}"
        )
        table.append(
            (
                r["d"],
                r["L"],
                f"{r['lam_opt']:.4g}",
                f"{r['attention']:.4e}",
                bayes_txt,
                f"{r['linear']:.4f}",
            )
        )
    return [
        "## 7. Attention against the Bayes and linear risks (the paper's section 4)",
        "",
        "Risk − ε² with `L = ⌈√d⌉`: the attention predictor at `(k*, v*)` and its best "
        "temperature, the Bayes risk (Monte Carlo, 20 000 draws) and the best linear "
        "predictor.",
        "",
        *_md_table(("d", "L", "λ*", "attention", "Bayes (MC)", "linear"), table),
        "",
    ]
