"""Ensembles of runs drawn from results: their distance to M, and when they arrive."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .canvas import CLIP_DECADES_BELOW, end_colours, figure_and_axes, finish, point_text

__all__ = [
    "arrival_figure",
    "draw_off_manifold",
]


def draw_off_manifold(basins, path: str | Path | None = None, *, dpi: int = 120, ax=None):
    """Draw :func:`slr_theory.plotting.off_manifold_figure` from a
    :class:`slr_theory.landscape.Basins` ensemble (nothing is computed).

    Parameters
    ----------
    basins : slr_theory.landscape.Basins
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    dpi : int
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
    """
    if not all(hasattr(basins, a) for a in ("trace_distance", "trace_step", "minima", "label")):
        raise ValueError(
            "`basins` must be a Basins ensemble (slr_theory.landscape.basins; "
            "slr_theory.plotting.off_manifold_figure runs one from a Params), "
            f"got {basins!r}."
        )
    b = basins
    dist = b.trace_distance
    given = ax is not None
    fig, ax = figure_and_axes(ax, (7.8, 5.2))
    finite = dist[np.isfinite(dist)]
    positive = finite[finite > 0]
    top = float(finite.max()) if finite.size else 1.0
    lowest = float(positive.min()) if positive.size else 1e-16
    floor = max(lowest, top * CLIP_DECADES_BELOW, 1e-300)
    dashed = False  # a minimum off M has its distance to M drawn dashed
    colours = end_colours(b.minima)
    # the runs at no minimum: stopped where they stood a round before (`stalled`, only ever
    # a run at no minimum), or run to the budget
    still = np.asarray(b.stalled, dtype=bool)
    groups = [(np.flatnonzero((b.label < 0) & ~still), "0.6", -1)]
    groups += [(np.flatnonzero(still), "0.3", -2)]
    groups += [(np.flatnonzero(b.label == j), colours[j], j) for j in range(len(b.names))]
    for members, colour, j in groups:  # j: a minimum, or -1 (to the budget), -2 (stopped)
        if not members.size:
            continue
        if j < 0:
            near = b.distance[members]
            spread = f"distance to the nearest minimum {near.min():.2g} to {near.max():.2g}"
            if j == -2:
                ran = b.steps_run[members]
                after = f"{ran.min()}" + (f" to {ran.max()}" if ran.max() > ran.min() else "")
                label = (
                    f"{members.size} of {b.n} runs at no minimum, stopped after {after} steps: "
                    f"back where they stood {b.steps} steps before\n(a cycle or fixed point of "
                    f"the PGD map; {spread})"
                )
            else:
                label = (
                    f"{members.size} of {b.n} runs at no minimum within the budget of "
                    f"{b.max_steps} steps ({spread})"
                )
        else:
            label = f"{members.size} of {b.n} runs at {point_text(b.minima[j])}: {b.names[j]}"  # one per orbit
        for r, i in enumerate(members):
            ax.plot(
                b.trace_step,
                np.where(dist[:, i] > 0, dist[:, i], np.nan),  # below the cut: off the axes
                color=colour,
                lw=0.8,
                alpha=0.7,
                label=label if r == 0 else None,
            )
        if j >= 0:
            level = float(np.sqrt(np.sum(b.minima[j][2:] ** 2)))
            if level > 0:
                ax.axhline(level, color=colour, ls="--", lw=1)
                dashed = True
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, min(2.0, top * 2))
    first = float(b.trace_step[1]) if len(b.trace_step) > 1 else 1.0
    # linear to the first record, logarithmic beyond: the runs that leave M do so early
    ax.set_xscale("symlog", linthresh=max(first, 1.0), linscale=0.3)
    ax.set_xlim(0, float(b.trace_step[-1]))
    ax.set(
        xlabel="PGD step (logarithmic beyond the first record)",
        ylabel=r"distance to M, $\sqrt{\theta^2+\eta^2+\rho^2}$",
    )
    cut = f"; axis cut at {floor:.0e} (the runs go on to {lowest:.0e})" if floor > lowest else ""
    title = f"{b.n} runs from uniform initialisations (α = {b.alpha:g}); each stops at a minimum"
    if still.any():
        title += f"\nor back where it stood {b.steps} steps before"
    if dashed:
        title += (
            "; " if still.any() else ";\n"
        ) + "dashed: the distance to M of each minimum off M"
    ax.set_title(title + cut, fontsize=9)
    if given:
        ax.legend(fontsize=7, loc="lower left")
    else:  # beside the data, never on it
        fig.legend(fontsize=7, loc="outside lower center")
    return finish(fig, path, dpi)


def arrival_figure(
    fates, path: str | Path | None = None, *, budget: float | None = None, dpi: int = 120, ax=None
):
    """When runs arrive, grouped by where they end: the share at each minimum after ``N`` steps.

    One curve per minimum that runs reach, ``Fates.within(N)`` against ``N`` on a log
    axis from the first arrival to the last; the runs that end elsewhere (at a saddle, on
    its stable manifold; at a point the critical points did not list; undecided) are
    counted in the legend. With `budget`, a dashed line marks it: what a run of that many
    steps sees.

    Parameters
    ----------
    fates : slr_theory.longrun.Fates
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    budget : float, optional
        A step budget to mark (e.g. the budgeted runs' ``max_steps``).
    dpi : int
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    f = fates
    unit = "steps" if f.alpha is not None else "flow time"
    given = ax is not None
    fig, ax = figure_and_axes(ax, (7.8, 5.0))
    finite = f.steps[np.isfinite(f.steps) & (f.label >= 0)]
    if finite.size:
        lo = max(float(finite.min()), 1e-300)
        hi = max(float(finite.max()), lo * 10.0)
        if budget is not None:  # the marked budget is on the axis too
            lo, hi = min(lo, float(budget)), max(hi, float(budget))
        grid = np.geomspace(lo / 2.0, hi * 2.0, 400)
        colours = end_colours(f.points)
        for j, name in enumerate(f.names):
            if not f.minimum[j] or not np.any(f.label == j):
                continue
            share = np.array([f.within(n)[j] for n in grid])
            colour = colours[j]
            q = f.quantiles([0.5], j)[0]
            ax.step(
                grid,
                share,
                where="post",
                color=colour,
                label=f"{int(np.sum(f.label == j))} of {f.n} runs reach {name} "
                f"(median $10^{{{q:.1f}}}$ {unit})",
            )
        ax.set_xscale("log")
        ax.set_xlim(grid[0], grid[-1])
    other = [
        f"{int(np.sum(f.label == j))} end at {name}"
        for j, name in enumerate(f.names)
        if not f.minimum[j] and np.any(f.label == j)
    ]
    if np.any(f.label < 0):
        other.append(
            f"{int(np.sum(f.label < 0))} undecided after {f.max_exact_steps:.3g} exact steps"
        )
    for text in other:
        ax.plot([], [], " ", label=text)
    if budget is not None and finite.size:
        ax.axvline(budget, color="0.3", ls="--", lw=1, label=f"a budget of {budget:.3g} {unit}")
    if not finite.size:  # no arrival to draw: say so, on an axis that spans the work done
        ax.set_xscale("log")
        top = max(float(np.max(f.exact_steps)) if f.exact_steps.size else 1.0, 10.0)
        ax.set_xlim(1.0, top)
        ax.text(0.5, 0.5, "no run reaches a minimum", transform=ax.transAxes, ha="center")
    ax.set_ylim(0.0, 1.0)
    ax.set_xlabel(f"{unit} (log scale)")
    ax.set_ylabel("share of runs arrived")
    ax.set_title(f"{f.n} runs: arrival in the {f.tol:g}-ball of their minimum", fontsize=10)
    if given:
        ax.legend(fontsize=7, loc="upper left")
    else:  # beside the data, never on it
        fig.legend(fontsize=7, loc="outside lower center")
    return finish(fig, path, dpi)
