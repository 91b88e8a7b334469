"""The report's sections on the global picture: the landscape (stability, basins, continuation), the experiments, the statistics and the atlas."""

from __future__ import annotations

import numpy as np

from ..critical import overlaps_text
from ..render import bayes_text
from ..survey import found_text
from .tables import md_table, saddle_place, seconds
from .theory import arrival_section

__all__ = []


def landscape_section(s, dest) -> list[str]:
    from ..plotting import bifurcation_figure, off_manifold_figure, stability_figure

    stability_figure([s.stability], dest.file("stability.png"))
    b = s.basins
    rows = [
        (overlaps_text(m), name, f"{f:.2f} ± {se:.2f}")
        for m, name, f, se in zip(b.minima, b.names, b.fractions, b.stderr, strict=True)
    ]
    rows.append(
        (
            "—",
            f"at no minimum within the budget of {b.max_steps} steps",
            f"{b.unconverged / b.n:.2f}",
        )
    )
    off_manifold_figure(b, dest.file("off_manifold.png"))
    lines = [
        "## 6. The global picture",
        "",
        f"**Stability of M.** M attracts transversally on {s.stability.attracting_share:.1%} "
        "of the open square (the leading transverse eigenvalue of the overlap flow is "
        "negative there):",
        "",
        "![stability of M](stability.png)",
        "",
        f"**Basins.** {b.n} runs of PGD (`α = {b.alpha:g}`) from initialisations uniform on "
        f"the spheres, each run continued {b.steps} steps at a time until it is at a minimum "
        "(distance below 1e-3 and gradient norm below 1e-3), stops moving, or reaches "
        f"{b.max_steps} steps. The same runs are drawn below.",
        "",
        *md_table(("minimum", "what", "fraction ± s.e."), rows),
        "",
        "![distance to M](off_manifold.png)",
        "",
        *arrival_section(b, dest),
    ]
    if s.escape is not None:
        e = s.escape
        lines += [
            f"**Escape from the saddle {saddle_place(e.at)}** (unstable rate "
            f"`μ = {e.mu:.4g}`): flow "
            "time to leave a 0.01-neighbourhood from distance "
            f"{', '.join(f'{x:g}' for x in e.r0)}: measured "
            f"{', '.join(f'{x:.2f}' for x in e.measured)}; linearised `log(r/r₀)/μ`: "
            f"{', '.join(f'{x:.2f}' for x in e.predicted)}.",
            "",
        ]
    gap = s.continuation.optimum_branch() is not None
    bifurcation_figure(
        s.continuation,
        dest.file("bifurcation.png"),
        names=s.branch_names,
        quantity="gap" if gap else "risk",
        mark=s.params.lam,
    )
    rows = [
        (
            e.lam_text,
            e.type,
            e.detail,
            f"b{e.branch}: {e.branch_name}",
            f"{e.width:.0e}",
        )
        for e in s.events
    ]
    lines += [
        f"**Continuation in λ** over [{s.lam_range[0]:g}, {s.lam_range[1]:g}]: "
        f"{len(s.continuation.branches)} branches (each named by its point at the λ of its "
        f"grid nearest {s.params.lam:g}). Each branch is followed in λ and, where that "
        "fails, in arc length. Index changes are located by bisection on the index; a "
        "branch that meets a more symmetric one (a pitchfork) where λ turns back along it, "
        "by extrapolation to the meeting; a fold at the extremum of λ along the branch. "
        "Each event once, with the width of the interval that holds it; a pitchfork "
        "shows twice, as the meeting and as the index change of the symmetric branch, "
        "located independently.",
        "",
        *md_table(("λ", "event", "what", "branch", "located to"), rows),
        "",
        "![bifurcation diagram](bifurcation.png)",
        "",
        (
            "Each branch's risk minus the optimum's at the same λ (a symmetric log scale: "
            "below 0, the branches lower than `(k*, v*)`), its index class by colour, "
            f"the report's λ = {s.params.lam:g} dashed; the tags `b<i>` at the ends are "
            "named in the legend."
            if gap
            else "Each branch's risk, its index class by colour, the report's "
            f"λ = {s.params.lam:g} dashed; the tags `b<i>` at the ends are named in the legend."
        ),
        "",
        seconds(s, "stability", "basins", "continuation"),
    ]
    return lines


def experiments_section(s, dest) -> list[str]:
    from ..experiments import SETTLED_SPEED
    from ..plotting import experiment_figure
    from ..render import write_trajectory_csv

    lines = [
        "## 7. The paper's experiments",
        "",
        "The paper's configurations, at their own parameters (not the report's); "
        + (
            "all 30 repeats at the paper's step counts."
            if s.full
            else "5 repeats each, the SGD experiment at a tenth of its steps (`--full` for "
            "the paper's 30 repeats and all steps)."
        ),
        "",
    ]
    for res in s.experiments:
        e = res.experiment
        name = e.name
        experiment_figure(res, dest.file(f"{name}.png"))
        write_trajectory_csv(res.trajectory, dest.file(f"{name}.csv"), eps=e.eps)
        tr = res.trajectory
        moving, runs, steps = (
            int(res.still_moving(SETTLED_SPEED).sum()),
            tr.overlaps.shape[1],
            int(tr.step[-1]),
        )
        settled = (
            f"**{moving} of {runs} runs still moving** at the end of the budget of {steps} "
            f"steps (more than {SETTLED_SPEED:g} per step over the last record): not settled."
            if moving
            else f"All {runs} runs settled (moving less than {SETTLED_SPEED:g} per step at the end)."
        )
        lines += [
            f"### {name}",
            "",
            f"{e.description} (`d = {e.d}`, `L = {e.L}`, `λ₀ = {e.lam0:g}`, `α = {e.alpha:g}`, "
            f"{steps} steps). Final risk − ε²: median "
            f"{float(np.median(tr.risk[-1] - e.eps**2)):.4g} over "
            f"{runs} runs. {settled} Data: [{name}.csv]({name}.csv).",
            "",
            f"![{name}]({name}.png)",
            "",
        ]
    lines.append(seconds(s, "experiments"))
    return lines


def statistics_section(s, dest) -> list[str]:
    p = s.params
    table = []
    for r in s.statistics:
        bayes_txt = bayes_text(r)
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
        "## 8. Attention against the Bayes and linear risks (the paper's section 4)",
        "",
        f"Risk − ε² at the report's `γ = {p.gamma:.4g}`, `ε = {p.eps:g}`"
        + (f", `s = {p.s}`" if p.s != 1 else "")
        + ", over the paper's dimensions with `L = ⌈√d⌉`: the attention predictor "
        f"`{p.predictor}` at `(k*, v*)` and its best temperature, the Bayes risk ("
        + _bayes_method(s.statistics)
        + ") and the best linear predictor.",
        "",
        *md_table(("d", "L", "λ*", "attention", "Bayes (MC)", "linear"), table),
        "",
        seconds(s, "statistics"),
    ]


def _bayes_method(rows: list[dict]) -> str:
    """How the rows' Bayes risks were estimated, with their numbers."""
    if not rows or "bayes_n" not in rows[0]:  # saved before 0.5.0: the model's samples
        return (
            "Monte Carlo over samples of the model, as saved before 0.5.0: at large `d` it "
            "misses the rare samples that carry the Bayes risk and is far too low"
        )
    worst = max(r["bayes_rel_se"] for r in rows)
    return (
        f"importance sampling, {rows[0]['bayes_n']} draws per kind of pair of subsets, "
        f"relative standard error at most {worst:.1%}; printed from its logarithm, so below "
        "the double range too"
    )


def atlas_section(s, dest) -> list[str]:
    a = s.atlas
    if a is None:
        return []
    from ..plotting import atlas_figure
    from ..study import atlas_finding

    lines = [
        "## 9. The atlas over parameter space",
        "",
        "Given with the report, read and not computed here (`slr-theory atlas`). "
        + atlas_finding(a),
        "",
    ]
    spread = [k for k, v in a.axes.items() if len(v) > 1 and k != "nonlinearity"]
    flat = [k for k, v in a.axes.items() if len(v) == 1 and k != "nonlinearity"]
    if len(spread) <= 2 and len(a.axes["nonlinearity"]) == 1 and a.rows:
        x, y = [*spread, *flat, "L"][:2]
        if x == y:
            y = "d"
        atlas_figure(a, dest.file("atlas.png"), x=x, y=y)
        fates = all(np.isfinite(r["fate_optimum_fraction"]) for r in a.rows)
        middle = (
            "the share of uniform starts PGD takes to it, each run followed to its end, "
            "with its standard error and the median steps of their arrival (1en: 10^n)"
            if fates
            else "the share of uniform starts PGD takes to it within the budget, with its "
            "standard error (a share with ≥ and a percentage: more than a tenth of the "
            "cell's runs did not converge)"
        )
        lines += [
            "![The atlas](atlas.png)",
            "",
            f"Left: what `(k*, v*)` is in each cell. Middle: {middle}. Right: the share of "
            "M where M attracts transversally.",
            "",
        ]
    else:
        lines += [
            f"(No figure: the atlas spans {', '.join(spread)}; the table has every cell.)",
            "",
        ]
    table = [
        (
            r["cell"],
            f"{r['lam']:.4g}",
            r["L"],
            f"{r['gamma']:.4g}",
            r["d"],
            r["s"],
            r["nonlinearity"],
            found_text(r),
            r["optimum_index"],
            "yes" if r["optimum_is_global"] else "no",
            *_fate_cells(r),
            f"{1.0 - r['basin_unconverged_fraction']:.2f}",
            f"{r['m_attracting_fraction']:.2f}",
        )
        for r in a.rows
    ]
    lines += md_table(
        (
            "cell",
            "λ",
            "L",
            "γ",
            "d",
            "s",
            "σ",
            "critical points (found by search)",
            "index of (k*, v*)",
            "global",
            "to (k*, v*), followed to the end",
            "log10 steps to (k*, v*)",
            f"at a minimum after {a.settings.get('max_steps')} steps",
            "M attracts",
        ),
        table,
    )
    return lines


def _fate_cells(r: dict) -> tuple[str, str]:
    """An atlas row's share at ``(k*, v*)`` followed to the end and its median arrival;
    a dash for a table written before the fates (NaN)."""
    if not np.isfinite(r["fate_optimum_fraction"]):
        return "—", "—"
    return (
        f"{r['fate_optimum_fraction']:.2f} ± {r['fate_optimum_se']:.2f}",
        f"{r['optimum_log10_steps']:.1f}",
    )
