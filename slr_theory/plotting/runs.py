"""The paper's experiments: risk, overlaps and distance to M over the steps, grouped by
where the runs end."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .canvas import CLIP_DECADES_BELOW, end_colours, finish, new_figure, point_text

__all__ = ["experiment_figure"]


def _group_label(
    ov: np.ndarray,
    g: np.ndarray,
    steps: np.ndarray,
    moving: np.ndarray,
    group: np.ndarray | None = None,
) -> str:
    """A group's label: its size, whether its runs settled, where, and any folding.

    `moving` is the result's own verdict per run
    (:meth:`slr_theory.experiments.ExperimentResult.still_moving`): the figure says what
    the report says. Runs whose end points differ but are images of one
    another under the risk's symmetries `group` (default: pointwise attention's,
    :data:`slr_theory.critical.SYMMETRIES`) are drawn as one group, and the label says so.
    """
    if group is None:
        from ..critical import SYMMETRIES

        group = SYMMETRIES
    end = ov[-1, g]
    still = int(np.sum(moving[g]))
    images = len({tuple(np.round(o, 2) + 0.0) for o in end})
    # always the representative under the group: one point, one label, in every figure
    where = point_text(end[0], group)
    n, R = len(g), ov.shape[1]
    notes = []
    if still:
        who = "" if still == n else f"{still} "  # the head says how many there are
        notes.append(f"{who}still moving at step {int(steps[-1])}")
    if images > 1:
        notes.append(f"{images} symmetric images folded")
    head = f"{n} of {R} runs {'near' if still else 'settle at'} {where}"
    return head + ("\n" + "; ".join(notes) if notes else "")


def experiment_figure(result, path: str | Path | None = None, *, dpi: int = 110):
    """The paper's four panels for one experiment, 2 x 2, runs grouped by where they end.

    Runs that end at the same point (up to the risk's symmetries) form a group, drawn
    with its median and its min-max band and labelled with its size, its end point,
    whether its runs have settled there (:meth:`~slr_theory.experiments.ExperimentResult.still_moving`) or are still moving, and
    whether symmetric end points were folded together; a band is never drawn across runs
    that ended in different places. Log axes are clipped to the data; every label comes
    from the run (repeats, steps, temperatures).

    Parameters
    ----------
    result : slr_theory.experiments.ExperimentResult
    path : str or Path, optional
        Output file (format from the suffix); None: the figure is returned.
    dpi : int

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from matplotlib.ticker import MaxNLocator

    e, tr = result.experiment, result.trajectory
    ov = tr.overlaps  # (n_rec, R, 5)
    steps = tr.step
    R = ov.shape[1]
    from ..critical import end_groups, symmetries

    group = symmetries(e.params)
    groups = end_groups(ov[-1], group)
    moving = result.still_moving()  # the report's rule, asked of the result
    fig = new_figure(figsize=(11.5, 10.0), constrained_layout=True)
    entries = []  # (colour, label): one legend for the four panels
    (a_risk, a_abs), (a_path, a_dist) = fig.subplots(2, 2)
    excess = tr.risk - e.eps**2
    at_target = result.optimum_excess()
    positive = excess[excess > 0]
    lo = float(min(positive.min(), at_target.min())) if positive.size else float(at_target.min())
    hi = float(max(excess.max(), at_target.max()))
    dist = np.sqrt(np.sum(ov[..., 2:] ** 2, axis=-1))
    colours = end_colours([ov[-1, g[0]] for g in groups])
    for j, g in enumerate(groups):
        colour = colours[j]
        label = _group_label(ov, g, steps, moving, group)
        final = np.median(excess[-1, g])  # ends a few 1e-3 apart read apart in the legend
        for ax, y in ((a_risk, excess[:, g]), (a_dist, dist[:, g])):
            if len(g) == 1:
                ax.plot(steps, y[:, 0], color=colour, lw=1.2)
            else:
                ax.plot(steps, np.median(y, axis=1), color=colour, lw=1.4)
                ax.fill_between(
                    steps, y.min(axis=1), y.max(axis=1), color=colour, alpha=0.25, lw=0
                )
        # one legend entry per group, beside the panels: the same label in all four
        entries.append((colour, f"{label}; risk − ε² at the end {final:.6g}"))
        for c, ls in enumerate(("-", "--")):
            y = np.abs(ov[:, g, c])
            a_abs.plot(steps, np.median(y, axis=1), color=colour, ls=ls, lw=1.3)
            if len(g) > 1:
                a_abs.fill_between(
                    steps, y.min(axis=1), y.max(axis=1), color=colour, alpha=0.15, lw=0
                )
        for i in g:
            a_path.plot(ov[:, i, 0], ov[:, i, 1], color=colour, lw=0.8, alpha=0.8)
            a_path.plot(ov[0, i, 0], ov[0, i, 1], "o", color="k", ms=2)
    a_risk.plot(steps, at_target, "k--", lw=1)
    if hi > 10.0 * lo:  # a log axis where the data span a decade, else a linear one
        a_risk.set(yscale="log", ylim=(lo / 1.5, hi * 1.5))
    else:  # that fits the data (a log axis over 2-8 hid a 3.8-4.7 range)
        pad = 0.05 * (hi - lo) if hi > lo else 0.05 * abs(hi) or 1.0
        a_risk.set(ylim=(lo - pad, hi + pad))
    a_risk.set(xlabel="step", title=r"risk $-\ \varepsilon^2$ (dashed: at $(k^*, v^*)$)")
    a_abs.set(
        xlabel="step",
        ylim=(0, 1.02),
        title=r"$|\kappa|$ (solid) and $|\nu|$ (dashed), median and range",
    )
    a_path.set(
        xlim=(-1.05, 1.05),
        ylim=(-1.05, 1.05),
        xlabel=r"$\kappa$",
        ylabel=r"$\nu$",
        aspect="equal",
        title=rf"$(\kappa, \nu)$ paths of all {R} runs",
    )
    dist_title = r"distance to M, $\sqrt{\theta^2+\eta^2+\rho^2}$"
    if np.all(dist == 0):
        dist_title += ": exactly 0 (M is invariant)"
        a_dist.set(ylim=(-1.0, 1.0))
    else:
        pos = dist[dist > 0]
        top = float(dist.max())
        floor = max(float(pos.min()), top * CLIP_DECADES_BELOW)
        a_dist.set(yscale="log", ylim=(floor / 2, top * 2))
        if floor > float(pos.min()):  # what lies below is said, not drawn into a corner
            dist_title += f"\n(axis cut at {floor:.0e}: the runs go on to {float(pos.min()):.0e})"
    a_dist.set(xlabel="step", title=dist_title)
    for ax in (a_risk, a_abs, a_dist):
        ax.xaxis.set_major_locator(MaxNLocator(5))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 4))
    lam_txt = (
        f"λ0 = {e.lam0:g}"
        if tr.lam[0] == tr.lam[-1]
        else f"λ from {tr.lam[0]:g} to {tr.lam[-1]:.3g}"
    )
    fig.suptitle(
        f"{e.name}: {e.description}\nd = {e.d}, L = {e.L}, {lam_txt}, α = {e.alpha:g}, "
        f"{R} runs × {int(steps[-1])} steps",
        fontsize=10,
    )
    from matplotlib.lines import Line2D

    fig.legend(
        [Line2D([], [], color=c, lw=2) for c, _ in entries],
        [text for _, text in entries],
        loc="outside lower center",
        ncols=2 if len(entries) > 1 else 1,
        fontsize=7,
        title="runs grouped by where they end (up to the risk's symmetries): median, range",
        title_fontsize=7,
    )
    return finish(fig, path, dpi)
