"""The atlas's phase diagram over two of its axes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .canvas import OKABE_ITO, finish, new_figure

__all__ = [
    "UNCONVERGED_MARK",
    "atlas_figure",
]


#: Share of a cell's runs left unconverged above which the atlas figure marks the cell.
UNCONVERGED_MARK = 0.1


def atlas_figure(
    atlas, path: str | Path | None = None, *, x: str = "lam", y: str = "L", dpi: int = 120
):
    """The phase diagram of an atlas over two of its axes, three panels.

    Left: what ``(k*, v*)`` is in each cell (the global minimum, a minimum that is not
    global, a saddle, or not found), so the regions' boundaries are the colour changes.
    Middle: the share of uniform starts that PGD takes to ``(k*, v*)``, followed to their
    end (the fate columns) with the median steps it takes; for a table written before
    the fates, within the budget, a cross marking a cell where more than
    :data:`UNCONVERGED_MARK` of the runs did not converge (its share is a lower bound).
    Right: the share of M where M attracts transversally.

    Parameters
    ----------
    atlas : Atlas
        Of :func:`slr_theory.atlas`; every axis but `x` and `y` must hold one value.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    x, y : str
        Two different axes of :data:`slr_theory.survey.AXES` (numeric).
    dpi : int

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not isinstance(getattr(atlas, "axes", None), dict) or not hasattr(atlas, "rows"):
        raise ValueError(f"`atlas` must be an Atlas (slr_theory.atlas), got {atlas!r}.")
    # the atlas's own axes, in its cell order (slr_theory.survey.AXES)
    numeric = [a for a in atlas.axes if a != "nonlinearity"]
    for name, value in (("x", x), ("y", y)):
        if value not in numeric:
            raise ValueError(f"`{name}` must be one of {', '.join(numeric)}, got {value!r}.")
    if x == y:
        raise ValueError(f"`y` must differ from `x`, got {y!r} twice.")
    fixed = {a: v for a, v in atlas.axes.items() if a not in (x, y)}
    spread = [a for a, v in fixed.items() if len(v) > 1]
    if spread:
        raise ValueError(
            f"`x`, `y`: the atlas also spans {', '.join(spread)}; draw two of its axes "
            "whose others hold one value."
        )
    xs, ys = list(atlas.axes[x]), list(atlas.axes[y])
    shape = (len(ys), len(xs))
    status = np.full(shape, np.nan)
    basin = np.full(shape, np.nan)
    attract = np.full(shape, np.nan)
    unconverged = np.zeros(shape, dtype=bool)
    # the fates of the runs, where every row has them (a table written before reads NaN)
    fates = all(np.isfinite(r["fate_optimum_fraction"]) for r in atlas.rows)
    median = np.full(shape, np.nan)
    undecided = np.zeros(shape)
    for r in atlas.rows:
        i, j = ys.index(r[y]), xs.index(r[x])
        idx = r["optimum_index"]
        status[i, j] = 3 if idx < 0 else 0 if r["optimum_is_global"] else 1 if idx == 0 else 2
        attract[i, j] = r["m_attracting_fraction"]
        if fates:
            basin[i, j] = r["fate_optimum_fraction"]
            median[i, j] = r["optimum_log10_steps"]
            undecided[i, j] = r["fate_undecided_fraction"]
        else:
            basin[i, j] = r["optimum_basin_fraction"]
            unconverged[i, j] = r["basin_unconverged_fraction"] > UNCONVERGED_MARK
    colours = [OKABE_ITO[2], OKABE_ITO[1], OKABE_ITO[4], "0.75"]
    labels = ["global minimum", "minimum, not global", "saddle", "not found"]
    fig = new_figure(figsize=(14.0, 5.0), constrained_layout=True)
    axes = fig.subplots(1, 3)
    grid_x, grid_y = np.arange(len(xs)), np.arange(len(ys))
    # Each cell a unit square around its index: edges given, not inferred from neighbours
    # (an axis of one value has none, and "nearest" shading then draws nothing).
    edges_x, edges_y = np.arange(len(xs) + 1) - 0.5, np.arange(len(ys) + 1) - 0.5
    cmap = ListedColormap(colours)
    axes[0].pcolormesh(
        edges_x,
        edges_y,
        status,
        cmap=cmap,
        norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5, 3.5], 4),
        shading="flat",
    )
    present = sorted({int(v) for v in status[~np.isnan(status)]})
    handles = [Patch(color=colours[k], label=labels[k]) for k in present]
    middle = (
        "share of uniform starts PGD takes to (k*, v*), followed to the end"
        if fates
        else "share of uniform starts PGD takes to (k*, v*)"
    )
    for ax, values, title in (
        (axes[1], basin, middle),
        (axes[2], attract, "share of M where M attracts"),
    ):
        mesh = ax.pcolormesh(
            edges_x, edges_y, values, cmap="viridis", vmin=0.0, vmax=1.0, shading="flat"
        )
        fig.colorbar(mesh, ax=ax, shrink=0.85)
        ax.set_title(title)
    annotate = basin.size <= 150
    if annotate:  # few cells: each share with its standard error, and what did not converge
        se = np.full(shape, np.nan)
        left = np.zeros(shape)
        for r in atlas.rows:
            se[ys.index(r[y]), xs.index(r[x])] = r[
                "fate_optimum_se" if fates else "optimum_basin_se"
            ]
            left[ys.index(r[y]), xs.index(r[x])] = r["basin_unconverged_fraction"]
        for i, j in zip(*np.nonzero(~np.isnan(basin)), strict=True):
            text = f"{basin[i, j]:.2f}\n± {se[i, j]:.2f}"
            if fates:
                text = f"{basin[i, j]:.2f}\n±{se[i, j]:.2f}".replace("±0.", "±.")
                if np.isfinite(median[i, j]):
                    text += f"\n1e{median[i, j]:.0f}"
                if undecided[i, j] > 0:
                    text += f"\n?{undecided[i, j]:.0%}"
            if unconverged[i, j]:
                text = f"≥{basin[i, j]:.2f}\n({left[i, j]:.0%})"
            axes[1].text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=6 if fates else 7,
                color="w" if basin[i, j] < 0.6 else "k",
            )
    axes[0].set_title("(k*, v*) is ...")
    if fates and annotate:
        note = "under each share ± s.e.: 1en, the median steps to reach (k*, v*), 10^n"
        if undecided.any():
            note += ";\n?n%: the runs left undecided (held in exact steps beyond the budget)"
        axes[1].text(0.5, -0.3, note, transform=axes[1].transAxes, ha="center", va="top")
    elif unconverged.any() and annotate:
        axes[1].text(
            0.5,
            -0.3,
            f"≥ p (n%): n% of the runs, more than {UNCONVERGED_MARK:.0%}, had not converged\n"
            f"after {atlas.settings['max_steps']} steps: the share p is a lower bound",
            transform=axes[1].transAxes,
            ha="center",
            va="top",
        )
    elif unconverged.any():
        i, j = np.nonzero(unconverged)
        axes[1].plot(j, i, "x", color="w", markersize=9, markeredgewidth=2)
        axes[1].legend(
            handles=[
                Line2D(
                    [],
                    [],
                    marker="x",
                    color="k",
                    linestyle="",
                    label=f"> {UNCONVERGED_MARK:.0%} of the runs unconverged",
                )
            ],
            loc="upper center",
            bbox_to_anchor=(0.5, -0.3),
            frameon=False,
        )
    axes[0].legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2, frameon=False
    )
    names = {"lam": r"$\lambda$", "gamma": r"$\gamma$", "L": "L", "d": "d", "s": "s"}
    for ax in axes:
        ax.set_xticks(
            grid_x,
            [f"{v:.2g}" if isinstance(v, float) else str(v) for v in xs],
            rotation=45 if len(xs) > 6 else 0,
        )
        ax.set_yticks(grid_y, [f"{v:.2g}" if isinstance(v, float) else str(v) for v in ys])
        ax.set_xlabel(names[x])
        ax.set_ylabel(names[y])
        if len(xs) > 12:
            for label in ax.get_xticklabels()[1::2]:
                label.set_visible(False)
    shown = {"lam": "λ", "gamma": "γ", "nonlinearity": "σ"}
    held = ", ".join(
        f"{shown.get(k, k)} = " + (f"{v[0]:.4g}" if isinstance(v[0], float) else str(v[0]))
        for k, v in fixed.items()
    )
    fig.suptitle(f"The atlas at {held}, {atlas.settings['basin_runs']} runs per cell")
    return finish(fig, path, dpi)
