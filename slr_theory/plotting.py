"""Figures. The only module that imports matplotlib, and only when a figure is drawn.

Figures are drawn on a :class:`matplotlib.figure.Figure` with the Agg canvas and
saved to a file: the user's pyplot state and backend are never touched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from . import engine

__all__ = [
    "SETTLED_SPEED",
    "UNCONVERGED_MARK",
    "arrival_figure",
    "atlas_figure",
    "basins_figure",
    "bifurcation_figure",
    "experiment_figure",
    "off_manifold_figure",
    "phase_portrait",
    "stability_figure",
]


def _new_figure(**kw):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kw)
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path, dpi: int) -> None:
    """Save without time stamps, so the same figure gives the same bytes (PNG, SVG, PDF)."""
    import matplotlib

    suffix = Path(path).suffix.lower()
    metadata = {".pdf": {"CreationDate": None, "ModDate": None}, ".svg": {"Date": None}}
    with matplotlib.rc_context({"svg.hashsalt": "slr-theory"}):  # fixed ids in SVG, locally
        fig.savefig(
            path, dpi=dpi, metadata=metadata.get(suffix), format=suffix.lstrip(".") or None
        )


def _finish(fig, path, dpi: int):
    """Save `fig` to `path` and return the path; without a path, return the Figure itself
    (a notebook shows it)."""
    if path is None:
        return fig
    _save(fig, path, dpi)
    return Path(path)


def _figure_and_axes(ax, figsize):
    """A new figure with one axes, or the figure of the axes `ax` a caller gave."""
    if ax is None:
        fig = _new_figure(figsize=figsize, constrained_layout=True)
        return fig, fig.subplots()
    if not hasattr(ax, "figure") or not hasattr(ax, "plot"):
        raise ValueError(f"`ax` must be a matplotlib Axes, got {ax!r}.")
    return ax.figure, ax


def _fmt(o, group: np.ndarray | None = None) -> str:
    """An end point as text to 2 decimals (its representative under `group`, if given)."""
    from .critical import canonical, overlaps_text

    return overlaps_text(o if group is None else canonical(o, group), 2)


#: A run still moving more than this per step at its last record has not settled.
SETTLED_SPEED = 1e-9


def _group_label(
    ov: np.ndarray, g: np.ndarray, steps: np.ndarray, group: np.ndarray | None = None
) -> str:
    """A group's label: its size, whether its runs settled, where, and any folding.

    A run has settled when its overlaps moved less than :data:`SETTLED_SPEED` per step
    over the last recorded interval; runs whose end points differ but are images of one
    another under the risk's symmetries `group` (default: pointwise attention's,
    :data:`slr_theory.critical.SYMMETRIES`) are drawn as one group, and the label says so.
    """
    if group is None:
        from .critical import SYMMETRIES

        group = SYMMETRIES
    end = ov[-1, g]
    gap = float(steps[-1] - steps[-2]) if len(steps) > 1 else 1.0
    speed = np.max(np.abs(ov[-1, g] - ov[-2, g]), axis=-1) / gap if len(steps) > 1 else 0 * g
    still = int(np.sum(speed >= SETTLED_SPEED))
    images = len({tuple(np.round(o, 2) + 0.0) for o in end})
    # one end point: shown as it is; several images of one point: their representative
    where = _fmt(end[0], group) if images > 1 else _fmt(end[0])
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
    whether its runs have settled there (:data:`SETTLED_SPEED`) or are still moving, and
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
    from .critical import end_groups, symmetries

    group = symmetries(e.params)
    groups = end_groups(ov[-1], group)
    fig = _new_figure(figsize=(11.5, 8.4), constrained_layout=True)
    (a_risk, a_abs), (a_path, a_dist) = fig.subplots(2, 2)
    excess = tr.risk - e.eps**2
    one, zero = np.ones(len(steps)), np.zeros(len(steps))
    at_target = engine.components(e.params, (one, one, zero, zero, zero), lam=tr.lam).sum(axis=0)
    positive = excess[excess > 0]
    lo = float(min(positive.min(), at_target.min())) if positive.size else float(at_target.min())
    hi = float(max(excess.max(), at_target.max()))
    dist = np.sqrt(np.sum(ov[..., 2:] ** 2, axis=-1))
    colours = _end_colours([ov[-1, g[0]] for g in groups])
    for j, g in enumerate(groups):
        colour = colours[j]
        label = _group_label(ov, g, steps, group)
        final = np.median(excess[-1, g])  # ends a few 1e-3 apart read apart in the legend
        for ax, y, text in (
            (a_risk, excess[:, g], f"{label}; risk − ε² at the end {final:.6g}"),
            (a_dist, dist[:, g], label),
        ):
            label_here = text
            if len(g) == 1:
                ax.plot(steps, y[:, 0], color=colour, lw=1.2, label=label_here)
            else:
                ax.plot(steps, np.median(y, axis=1), color=colour, lw=1.4, label=label_here)
                ax.fill_between(
                    steps, y.min(axis=1), y.max(axis=1), color=colour, alpha=0.25, lw=0
                )
        for c, (name, ls) in enumerate(((r"$|\kappa|$", "-"), (r"$|\nu|$", "--"))):
            y = np.abs(ov[:, g, c])
            a_abs.plot(
                steps,
                np.median(y, axis=1),
                color=colour,
                ls=ls,
                lw=1.3,
                label=f"{name}, {len(g)} runs, end {_fmt(ov[-1, g[0]], group)}",
            )
            if len(g) > 1:
                a_abs.fill_between(
                    steps, y.min(axis=1), y.max(axis=1), color=colour, alpha=0.15, lw=0
                )
        for i in g:
            a_path.plot(ov[:, i, 0], ov[:, i, 1], color=colour, lw=0.8, alpha=0.8)
            a_path.plot(ov[0, i, 0], ov[0, i, 1], "o", color="k", ms=2)
    a_risk.plot(steps, at_target, "k--", lw=1, label=r"at $(k^*, v^*)$, this step's $\lambda$")
    if hi > 10.0 * lo:  # a log axis where the data span a decade, else a linear one
        a_risk.set(yscale="log", ylim=(lo / 1.5, hi * 1.5))
    else:  # that fits the data (a log axis over 2-8 hid a 3.8-4.7 range)
        pad = 0.05 * (hi - lo) if hi > lo else 0.05 * abs(hi) or 1.0
        a_risk.set(ylim=(lo - pad, hi + pad))
    a_risk.set(xlabel="step", title=r"risk $-\ \varepsilon^2$")
    a_risk.legend(fontsize=7)
    a_abs.set(
        xlabel="step", ylim=(0, 1.02), title=r"$|\kappa|$ and $|\nu|$ by end point (median, range)"
    )
    a_abs.legend(fontsize=6, ncol=1)
    a_path.set(
        xlim=(-1.05, 1.05),
        ylim=(-1.05, 1.05),
        xlabel=r"$\kappa$",
        ylabel=r"$\nu$",
        aspect="equal",
        title=rf"$(\kappa, \nu)$ paths of all {R} runs",
    )
    if np.all(dist == 0):
        a_dist.text(
            0.5,
            0.5,
            "exactly 0: M is invariant",
            ha="center",
            va="center",
            transform=a_dist.transAxes,
        )
    else:
        pos = dist[dist > 0]
        a_dist.set(yscale="log", ylim=(float(pos.min()) / 2, float(dist.max()) * 2))
        a_dist.legend(fontsize=7)
    a_dist.set(xlabel="step", title=r"distance to M, $\sqrt{\theta^2+\eta^2+\rho^2}$")
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
    return _finish(fig, path, dpi)


#: Okabe-Ito colours (colour-blind safe), by role.
_OKABE_ITO = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)


def _end_colours(points) -> list[str]:
    """One colour per end point, the same object in the same colour in every figure and
    report: ``(k*, v*)`` (or a symmetric image, ``|kappa| = |nu| = 1`` on M) always the
    first colour, the other points the next ones in their order."""
    rest = iter(_OKABE_ITO[1:] * 4)
    out = []
    for o in points:
        o = np.asarray(o, dtype=np.float64)
        optimum = np.allclose(np.abs(o[:2]), 1.0, atol=1e-6) and np.allclose(o[2:], 0.0)
        optimum = optimum and o[0] * o[1] > 0  # (k*, v*) or (-k*, -v*), not a corner
        out.append(_OKABE_ITO[0] if optimum else next(rest))
    return out


def _branch_name(b: int, overlaps: np.ndarray) -> str:
    """A short label: the point's name when it is one of M's critical points, else ``b<i>``."""
    o = np.round(np.asarray(overlaps, dtype=float), 3) + 0.0
    if not np.any(o[2:]):
        names = {
            (1, 1): "optimum",
            (-1, -1): "optimum (−)",
            (0, 0): "origin",
            (1, -1): "corner (1, −1)",
            (-1, 1): "corner (−1, 1)",
        }
        name = names.get((o[0], o[1]))
        if name:
            return f"b{b} {name}"
    return f"b{b}"


def _short_name(name: str) -> str:
    """A branch name short enough for the margin: its point's first clause, no kind."""
    point = name.rsplit(" (", 1)[0] if name.endswith(")") and " of index " in name else name
    if point.startswith("(k*, v*)"):
        return "optimum (k*, v*)"
    if point.startswith("the corner") or point.startswith("the origin"):
        return point.split(" (k,")[0]
    if " off M at " in point:  # named by its overlaps: too long for the margin
        return point.split(" at ")[0]
    short = point.split(", ")[0]
    return short if len(short) <= 24 else short[:23] + "…"


def _label_ends(ax, ends, gap: float = 8.0) -> None:
    """Write each label at its point, moved up just enough that labels do not overlap."""
    ax.figure.canvas.draw()  # the final limits and scales, for display coordinates
    to_display, to_data = ax.transData, ax.transData.inverted()
    placed: list[tuple[float, float]] = []
    for x, y, text in sorted(ends, key=lambda e: e[1]):
        px, py = to_display.transform((x, y))
        for qx, qy in placed:
            if abs(qx - px) < 40 and py < qy + gap:
                py = qy + gap
        placed.append((px, py))
        tx, ty = to_data.transform((px + 4, py))
        ax.annotate(
            text,
            (x, y),
            xytext=(tx, ty),
            textcoords="data",
            fontsize=6,
            va="center",
            color="0.3",
            annotation_clip=False,
            arrowprops={"arrowstyle": "-", "color": "0.8", "lw": 0.4},
        )


#: How a branch ends inside the range (:attr:`slr_theory.landscape.Branch.end`): legend
#: label, marker, colour.
_BRANCH_ENDS = {
    "meets": ("branch born at, or ending on, another (pitchfork)", "o", "k"),
    "fold": ("fold", "x", "k"),
    "lost": ("could not be followed further", "x", "0.5"),
}


def bifurcation_figure(
    result,
    path: str | Path | None = None,
    *,
    quantity: str = "risk",
    names: list[str] | None = None,
    dpi: int = 120,
    ax=None,
    mark: float | None = None,
):
    """Branches of critical points against ``lambda``, coloured by their Morse index class.

    Each branch is tagged ``b<i>`` at its last ``lambda`` (tags moved apart where they
    would overlap) and named in the legend.

    Parameters
    ----------
    result : slr_theory.landscape.Continuation
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    quantity : str
        ``"risk"``, ``"gap"`` (the risk minus that of the optimum ``(k*, v*)`` at the same
        ``lambda``, on a symmetric log axis: the branches that compete with it, below
        and above) or an overlap name (``"kappa"``, ``"nu"``, ...).
    names : list of str, optional
        A name for each branch (e.g. :attr:`slr_theory.study.Study.branch_names`); by
        default the branches that are critical points of M are named by their point.
    dpi : int
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.
    mark : float, optional
        A temperature to mark (the report's own ``lambda``).

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from .params import OVERLAP_NAMES

    if quantity not in ("risk", "gap") and quantity not in OVERLAP_NAMES:
        raise ValueError(
            f"`quantity` must be 'risk', 'gap' or one of {OVERLAP_NAMES}, got {quantity!r}."
        )
    optimum = None
    if quantity == "gap":
        optimum = result.optimum_branch()
        if optimum is None:
            raise ValueError(
                "`quantity` 'gap' needs the branch of (k*, v*), which is not followed."
            )
    given = ax is not None
    fig, ax = _figure_and_axes(ax, (8.6, 5.0))
    classes = (
        ("minimum (index 0)", _OKABE_ITO[0]),
        ("saddle, index 1", _OKABE_ITO[1]),
        ("saddle, index > 1", _OKABE_ITO[3]),
        ("maximum", _OKABE_ITO[4]),
    )
    seen = set()
    values, ends, tags = [], [], []
    for b, br in enumerate(result.branches):
        if quantity == "gap":  # against the optimum's risk at the same temperatures
            y = br.risk - np.interp(np.log(br.lam), np.log(optimum.lam), optimum.risk)
        elif quantity == "risk":
            y = br.risk
        else:
            y = br.overlaps[:, OVERLAP_NAMES.index(quantity)]
        values.append(y)
        is_max = np.array(["maximum" in k for k in br.kind])
        cls = np.where(is_max, 3, np.where(br.index == 0, 0, np.where(br.index == 1, 1, 2)))
        ax.plot(
            br.lam,
            y,
            "-",
            color="0.75",
            lw=0.6,
            zorder=0,
            label="a branch, followed in λ" if b == 0 else None,
        )
        for c in range(len(classes)):
            mask = cls == c
            if not mask.any():
                continue
            label = classes[c][0] if c not in seen else None
            seen.add(c)
            ax.plot(br.lam[mask], y[mask], ".", color=classes[c][1], ms=4, label=label)
        for end, at in (("start", 0), ("end", -1)):
            how = getattr(br, end)
            if how in _BRANCH_ENDS:
                label, marker, colour = _BRANCH_ENDS[how]
                ax.plot(
                    br.lam[at],
                    y[at],
                    marker,
                    color=colour,
                    mfc="none",
                    ms=6,
                    zorder=3,
                    label=label if how not in seen else None,
                )
                seen.add(how)
        label = _branch_name(b, br.overlaps[-1])
        if names is not None:
            label = f"b{b} {_short_name(names[b])}"
        ends.append((br.lam[-1], y[-1], f"b{b}"))
        tags.append(f"b{b}: {label.split(' ', 1)[1]}" if " " in label else f"b{b}")
    for ev in result.events:
        if ev["type"] in ("meets", "index change"):
            ax.axvline(
                ev["lam"],
                color="0.85",
                lw=0.5,
                zorder=-1,
                label="index change or meeting" if "v" not in seen else None,
            )
            seen.add("v")
    marked = None
    if mark is not None:
        marked = f"λ = {mark:g} (the report's)"
        ax.axvline(mark, color="k", ls="--", lw=0.8, zorder=-1, label=marked)
    ax.set_xscale("log")
    allv = np.concatenate(values)
    if quantity == "risk" and allv.min() > 0 and allv.max() / allv.min() > 100:
        ax.set_yscale("log")
    if quantity == "gap":
        nonzero = np.abs(allv[allv != 0.0])
        ax.set_yscale("symlog", linthresh=float(np.min(nonzero)) if nonzero.size else 1e-3)
        ax.axhline(0.0, color="0.5", lw=0.6, zorder=-1)
    ax.set_xlabel(r"temperature $\lambda$")
    ax.set_ylabel(
        "risk − the optimum's (symmetric log scale)"
        if quantity == "gap"
        else ("risk" if quantity == "risk" else quantity)
    )
    ax.set_title(
        f"critical points followed in $\\lambda$ ({len(result.branches)} branches, "
        "tagged at their last $\\lambda$)",
        fontsize=10,
    )
    _label_ends(ax, ends)
    for tag in tags:  # the branches' names, in the legend: the margin has no room
        ax.plot([], [], " ", label=tag)
    order = [c[0] for c in classes] + [
        "a branch, followed in λ",
        *[v[0] for v in _BRANCH_ENDS.values()],
        "index change or meeting",
        *([marked] if marked else []),
        *tags,
    ]
    handles, labels = ax.get_legend_handles_labels()
    pairs = sorted(zip(labels, handles, strict=True), key=lambda p: order.index(p[0]))
    (ax if given else fig).legend(
        [h for _, h in pairs],
        [lab for lab, _ in pairs],
        fontsize=7 if not given else 6,
        loc="best" if given else "outside right upper",
    )
    return _finish(fig, path, dpi)


def basins_figure(
    basins, path: str | Path | None = None, *, separatrix=None, dpi: int = 120, ax=None
):
    """The basin map on M over the square, with the separatrix if given.

    Parameters
    ----------
    basins : slr_theory.landscape.ManifoldBasins
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    separatrix : ndarray, shape ``(m, 2)``, optional
        From :func:`slr_theory.landscape.separatrix`.
    dpi : int
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from matplotlib.colors import ListedColormap

    names = ["origin", "(1, 1)", "(-1, -1)", "(1, -1)", "(-1, 1)"]
    fig, ax = _figure_and_axes(ax, (5.6, 5.0))
    colours = ["#BBBBBB", *_OKABE_ITO[:5]]  # -1 (none) first
    cmap = ListedColormap(colours)
    ax.pcolormesh(
        basins.kappa,
        basins.nu,
        basins.label + 1,
        cmap=cmap,
        vmin=-0.5,
        vmax=len(colours) - 0.5,
        shading="nearest",
    )
    for j in sorted(set(basins.label.ravel().tolist())):
        if j >= 0:
            ax.plot([], [], "s", color=colours[j + 1], label=f"reaches {names[j]}")
    if separatrix is not None:
        ax.plot(separatrix[:, 0], separatrix[:, 1], "k-", lw=1.5, label="separatrix")
    ax.plot(basins.targets[:, 0], basins.targets[:, 1], "ko", ms=4)
    ax.set(xlim=(-1, 1), ylim=(-1, 1), aspect="equal", xlabel=r"$\kappa$", ylabel=r"$\nu$")
    ax.set_title(f"basins on M ({basins.dynamics})")
    ax.legend(fontsize=8, loc="lower right")
    return _finish(fig, path, dpi)


def stability_figure(maps, path: str | Path | None = None, *, grid: int = 121, dpi: int = 120):
    """Maps of the leading transverse eigenvalue of the flow on M, one panel per map.

    Purple where M attracts (negative real part), orange where it repels; the zero
    contour in black. Each side of zero spans its half of the colour map, so the
    attracting region shows however weakly it attracts.

    Parameters
    ----------
    maps : sequence of StabilityMap or Params
        :func:`slr_theory.landscape.stability_map` results; a ``Params`` is computed
        first at `grid`.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    grid : int
        Points per side for the entries given as ``Params``.
    dpi : int

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from matplotlib.colors import TwoSlopeNorm

    from .landscape import StabilityMap, stability_map

    maps = [m if isinstance(m, StabilityMap) else stability_map(m, grid) for m in maps]
    fig = _new_figure(figsize=(4.2 * len(maps) + 0.8, 4.2), constrained_layout=True)
    axes = np.atleast_1d(fig.subplots(1, len(maps)))
    for ax, m in zip(axes, maps, strict=True):
        lead = m.lead
        # each side of zero gets the whole of its half of the colour map, so a weakly
        # attracting region is as visible as a strongly repelling one
        lo = min(float(lead.min()), -1e-300)
        hi = max(float(lead.max()), 1e-300)
        mesh = ax.pcolormesh(
            m.kappa,
            m.nu,
            lead,
            cmap="PuOr_r",
            shading="nearest",
            norm=TwoSlopeNorm(0.0, lo, hi),
        )
        if lead.min() < 0 < lead.max():
            ax.contour(m.kappa, m.nu, lead, levels=[0.0], colors="k", linewidths=1)
        ax.set(
            aspect="equal",
            xlabel=r"$\kappa$",
            ylabel=r"$\nu$",
            title=f"$\\lambda$ = {m.params.lam:g}: M attracts on {m.attracting_share:.0%}",
        )
        ticks = [t for t in (lo, lo / 2, 0.0, hi / 2, hi) if t == 0 or abs(t) > 1e-200]
        bar = fig.colorbar(mesh, ax=ax, shrink=0.8, ticks=ticks)
        bar.ax.set_yticklabels([f"{t:.2g}" if t else "0" for t in ticks])
        bar.set_label("leading transverse eigenvalue, real part\n(purple < 0: M attracts)")
    return _finish(fig, path, dpi)


_KIND_MARKERS = {
    "minimum": ("o", _OKABE_ITO[2]),
    "saddle": ("X", _OKABE_ITO[3]),
    "maximum": ("^", _OKABE_ITO[4]),
}


def _basin_names(data) -> dict[int, tuple[str, str]]:
    """Colour and legend of each basin label + 1 of a portrait: 0 for no critical point
    reached, then one per target, named by its kind on M (from the portrait's points)."""
    targets = data.basin_targets
    if targets is None:  # saved before the targets were kept: pointwise attention's five
        targets = np.array([[0.0, 0.0], [1, 1], [-1, -1], [1, -1], [-1, 1]])
    if data.basin_fates is None:  # saved before 0.3.1: the flow up to t_max
        names = {0: ("#F2F2F2", f"no critical point reached by t = {data.t_max:g}")}
    else:
        names = {0: ("#F2F2F2", "undecided (the integrator could not follow the flow)")}
    minima = iter(["#CFE8F7", "#FBE3C2", "#D5EDD9", "#F4D6E4"])
    for j, t in enumerate(targets, start=1):
        near = int(np.argmin(np.linalg.norm(np.asarray(data.points) - t, axis=1)))
        kind = data.point_kinds[near]
        where = "(" + ", ".join(f"{x:.3g}".replace("-", "−") for x in t) + ")"
        if kind == "minimum":
            names[j] = (next(minima, "#E8E8E8"), f"basin of {where}")
        elif kind == "saddle":
            names[j] = ("#DDDDDD", f"ends at the saddle {where}")
        else:
            names[j] = ("#F0F0F0", f"ends at {where}")
    return names


def phase_portrait(
    params,
    path: str | Path | None = None,
    *,
    grid: int = 41,
    basin_grid: int = 24,
    refine: int = 4,
    trajectories: int = 8,
    pgd_alpha: float | None = None,
    pgd_steps: int = 20_000,
    t_max: float = 600.0,
    dpi: int = 120,
    progress: bool | Callable[[int], object] = False,
    ax=None,
):
    """The flow on M over the closed square: everything at a glance.

    Streamlines of ``(kappa', nu')``, the nullclines (for ``nu``, ``kappa = kappa_0`` through
    M's interior saddle, where M has one; ``nu = erf(a kappa / s)`` for ``kappa``; and the
    edges), the critical points marked by their kind on M, the separatrix (the saddle's
    stable manifold), sample
    trajectories, the basins shaded and risk contours; with `pgd_alpha`, the iterates of
    PGD at that step from the same starts.

    Parameters
    ----------
    params : Params or slr_theory.landscape.PortraitData
        A ``PortraitData`` is drawn as it is (the computing options are then unused); a
        ``Params`` is first computed by :func:`slr_theory.landscape.portrait_data`.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    grid : int
        Streamline grid per side.
    basin_grid : int
        Basin-map grid per side (0: no shading).
    refine : int
        Cells where neighbours end apart are followed from ``refine x refine`` finer
        centres (1: none).
    trajectories : int
        Sample flow trajectories (from a ring of starts).
    pgd_alpha : float, optional
        Also draw PGD iterates at this step.
    pgd_steps : int
    t_max : float
        Flow time of the trajectories and the basin map.
    dpi : int
    progress : bool or callable
        ``True`` shows a tqdm bar over the stages (basins, field, separatrix,
        trajectories, critical points, saving); a callable is called with 1 per stage.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from .landscape import PortraitData, portrait_data
    from .trajectory import Progress

    if isinstance(params, PortraitData):
        return _draw_portrait(params, path, dpi, ax)
    with Progress(progress, 6, "portrait", unit="stage") as update:
        tick = update or (lambda _n: None)
        data = portrait_data(
            params,
            grid=grid,
            basin_grid=basin_grid,
            refine=refine,
            trajectories=trajectories,
            pgd_alpha=pgd_alpha,
            pgd_steps=pgd_steps,
            t_max=t_max,
            progress=tick,
        )
        if not basin_grid:
            tick(1)
        out = _draw_portrait(data, path, dpi, ax)
        tick(1)
    return out


#: Contour spacings (decades of flow time) the arrival layer of a portrait chooses from:
#: none finer than 0.01 decade (2 % of a time), which a figure does not resolve.
_SPACINGS = tuple(m * 10.0**e for e in range(-2, 3) for m in (1, 2, 5))


def _arrival_layer(ax, data) -> None:
    """The flow time from each cell to its minimum on M, as contours of ``log10 t``.

    The levels are the finest of :data:`_SPACINGS` that the fates' errors resolve (ten
    times the largest relative error of a time, in decades) with at most eight levels in
    the range; where no level falls inside it (every cell arrives at the same time, to
    what the errors and a 0.01-decade spacing resolve: at ``lam = 0.5`` the times differ
    by 1e-6 decades, all spent on the plateau), the legend gives that time instead.
    """
    t = data.basin_time
    if t is None:
        return
    fin = np.isfinite(t) & (t > 0)
    if not fin.any():
        return
    lt = np.where(fin, np.log10(np.where(fin, t, 1.0)), np.nan)
    lo, hi = float(np.nanmin(lt)), float(np.nanmax(lt))
    err = float(np.nanmax(data.basin_time_error[fin]))
    resolution = 10.0 * np.log10(1.0 + max(err, 1e-15))
    spacing = next((x for x in _SPACINGS if x >= resolution and (hi - lo) / x <= 8), _SPACINGS[-1])
    levels = np.arange(np.ceil(lo / spacing), np.floor(hi / spacing) + 1) * spacing
    levels = levels[(levels > lo) & (levels < hi)]
    digits = max(0, -int(np.floor(np.log10(spacing))))
    if levels.size:
        style = {"levels": levels, "colors": "k", "linewidths": 0.8, "linestyles": "dashdot"}
        sets = []
        if data.basin_grid is not None:  # the coarse grid's starts: its times vary slowly
            b = data.basin_grid
            xy = np.asarray(data.basin_starts)[: b * b].reshape(b, b, 2)
            t0 = data.basin_fates.steps[: b * b].reshape(b, b)
            ok = np.isfinite(t0) & (t0 > 0)
            # each basin on its own: times of runs that end apart are not interpolated
            image = data.start_images[: b * b].reshape(b, b)
            for j in np.unique(image[ok]):
                keep = ok & (image == j)
                z = np.ma.masked_array(np.log10(np.where(keep, t0, 1.0)), ~keep)
                sets.append(ax.contour(xy[..., 0], xy[..., 1], z, zorder=1, **style))
        else:  # saved before 0.3.2: one start per cell
            edges = data.basin_edges
            centres = 0.5 * (edges[:-1] + edges[1:])
            K, N = np.meshgrid(centres, centres)
            sets.append(ax.contour(K, N, np.ma.masked_invalid(lt), zorder=1, **style))
        for cs in sets:
            ax.clabel(cs, fontsize=6, fmt=lambda v: f"10^{v:.{digits}f}")
        ax.plot(
            [], [], "-.", color="k", lw=0.8,
            label=f"flow time to the minimum on M (10^x; every {spacing:g} decades)",
        )  # fmt: skip
    else:
        where = (
            f"10^{lo:.{digits}f}"
            if round(lo, digits) == round(hi, digits)
            else (f"10^{lo:.{digits}f} to 10^{hi:.{digits}f}")
        )
        ax.plot([], [], " ", label=f"flow time to the minimum on M: {where} from every cell")


def _draw_portrait(data, path, dpi: int, ax=None):
    """Draw :func:`phase_portrait` from a :class:`slr_theory.landscape.PortraitData`."""
    from matplotlib.colors import ListedColormap

    from .critical import plural_kind

    params = data.params
    given = ax is not None
    fig, ax = _figure_and_axes(ax, (7.4, 9.0))
    if data.basin_label is not None:
        names = _basin_names(data)
        colours = [names[i][0] for i in range(len(names))]
        ax.pcolormesh(
            data.basin_edges,
            data.basin_edges,
            data.basin_label + 1,
            cmap=ListedColormap(colours),
            vmin=-0.5,
            vmax=len(names) - 0.5,
            shading="flat",
            zorder=0,
        )
        for value in sorted(set(np.unique(data.basin_label + 1).tolist()) & set(names)):
            ax.plot([], [], "s", color=names[value][0], label=names[value][1])  # only what shows
        _arrival_layer(ax, data)
    K, N = np.meshgrid(data.grid, data.grid)
    R = data.risk
    cs = ax.contour(
        K,
        N,
        R,
        levels=np.unique(np.quantile(R, [0.05, 0.15, 0.3, 0.5, 0.7, 0.9])),
        colors="0.55",
        linewidths=0.6,
        linestyles=":",
        zorder=1,
    )
    ax.clabel(cs, fontsize=6, fmt="%.3g")
    F = data.field
    ax.streamplot(
        K,
        N,
        F[..., 0],
        F[..., 1],
        color="0.35",
        linewidth=0.5,
        density=1.1,
        arrowsize=0.7,
        zorder=2,
    )
    ax.plot([], [], "-", color="0.35", lw=0.5, label="streamlines of the flow on M")
    if np.any(np.isfinite(data.nullcline[:, 1])):  # none where R_kappa = 0 on all of M
        ax.plot(
            data.nullcline[:, 0],
            data.nullcline[:, 1],
            color=_OKABE_ITO[0],
            lw=1.4,
            label=r"$\kappa$-nullcline",
            zorder=3,
        )
    lines = data.critical_lines
    if lines is not None:  # the risk does not depend on k: whole edges are critical
        for nu, kind in zip(lines, data.point_kinds, strict=True):
            ax.axhline(
                nu,
                color=_KIND_MARKERS.get(kind, ("o", "0.3"))[1],
                lw=3.0,
                zorder=4,
                label=f"line of {plural_kind(kind)} on M (the risk does not depend on k)",
            )
    inner = np.asarray(data.points, dtype=float).reshape(-1, 2)[data.interior]
    if len(inner) == 1:  # R_nu depends on kappa only: it vanishes on the saddle's kappa
        ax.axvline(inner[0][0], color=_OKABE_ITO[1], lw=1.4, label=r"$\nu$-nullcline", zorder=3)
    sep = data.separatrix
    if len(sep):  # the stable manifold of M's interior saddle, where M has one
        ax.plot(sep[:, 0], sep[:, 1], "k-", lw=2.0, label="separatrix", zorder=4)
    for i, f in enumerate(data.flows):
        ax.plot(
            f[:, 0],
            f[:, 1],
            color=_OKABE_ITO[5],
            lw=1.2,
            label=f"flow trajectories (t ≤ {data.t_max:g})" if i == 0 else None,
            zorder=5,
        )
    if data.pgd is not None:
        for i in range(data.pgd.shape[1]):
            ax.plot(
                data.pgd[:, i, 0],
                data.pgd[:, i, 1],
                ".",
                color=_OKABE_ITO[4],
                ms=3,
                label=f"PGD iterates, α = {data.pgd_alpha:g}" if i == 0 else None,
                zorder=6,
            )
    seen = set()
    for (k, n), kind in zip(data.points, data.point_kinds, strict=True):
        marker, colour = _KIND_MARKERS[kind]
        ax.plot(
            k,
            n,
            marker,
            color=colour,
            ms=10,
            mec="k",
            clip_on=False,
            label=f"{kind} on M" if kind not in seen else None,
            zorder=7,
        )
        seen.add(kind)
    ax.set(
        xlim=(-1, 1),
        ylim=(-1, 1),
        aspect="equal",
        xlabel=r"$\kappa = k\cdot k^*$",
        ylabel=r"$\nu = v\cdot v^*$",
    )
    ax.set_title(
        f"gradient flow on M (d = {params.d}, L = {params.L}, λ = {params.lam:g}"
        + (f", s = {params.s}" if params.s > 1 else "")
        + params.attention_tag
        + ");\nstreamlines "
        f"drawn at any speed, the fastest on the grid |(κ′, ν′)| = {data.max_speed:.2g}",
        fontsize=10,
    )
    if given:  # the caller's figure: the legend on its axes
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:
        fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    return _finish(fig, path, dpi)


def off_manifold_figure(
    params,
    path: str | Path | None = None,
    *,
    n: int = 30,
    alpha: float = 4e-3,
    steps: int = 20_000,
    rng=0,
    dpi: int = 120,
    ax=None,
):
    """Distance to M over time for initialisations uniform on the spheres, grouped by end state.

    Each run's distance ``sqrt(theta^2 + eta^2 + rho^2)`` under exact PGD, coloured by the
    minimum it is at when it stops (:data:`slr_theory.landscape.AT_DISTANCE`,
    :data:`slr_theory.landscape.AT_GRADIENT`), grey when it is at none: those are "not
    converged", labelled with their steps and their distance to the nearest minimum.
    Each minimum's own distance to M is dashed where it is off M (the title says so only
    then). Runs stop when they arrive.

    Parameters
    ----------
    params : Params or slr_theory.landscape.Basins
        A ``Basins`` ensemble is drawn as it is (the other options are then unused); a
        ``Params`` first runs :func:`slr_theory.landscape.basins` with `n`, `alpha`, `steps`
        (up to ten times `steps` for runs not yet at a minimum) and `rng`.
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    n : int
        Runs.
    alpha : float
    steps : int
    rng : numpy.random.Generator or int
    dpi : int
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
        The file written, or the figure when `path` is None.
    """
    from .landscape import Basins, basins

    b = params
    if not isinstance(b, Basins):
        b = basins(params, n, alpha=alpha, steps=steps, max_steps=10 * steps, rng=rng)
    dist = b.trace_distance
    fig, ax = _figure_and_axes(ax, (7.8, 4.6))
    finite = dist[np.isfinite(dist)]
    positive = finite[finite > 0]
    floor = max(float(positive.min()) if positive.size else 1e-16, 1e-300)
    dashed = False  # a minimum off M has its distance to M drawn dashed
    end_colours = _end_colours(b.minima)
    for j in range(-1, len(b.names)):
        members = np.flatnonzero(b.label == j)
        if not members.size:
            continue
        colour = "0.6" if j < 0 else end_colours[j]
        if j < 0:
            near = b.distance[members]
            label = (
                f"{members.size} of {b.n} runs at no minimum within the budget of "
                f"{b.max_steps} steps (distance to the nearest minimum "
                f"{near.min():.2g} to {near.max():.2g})"
            )
        else:
            label = f"{members.size} of {b.n} runs at {_fmt(b.minima[j])}: {b.names[j]}"  # one per orbit
        for r, i in enumerate(members):
            ax.plot(
                b.trace_step,
                np.maximum(dist[:, i], floor),
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
    top = float(finite.max()) if finite.size else 1.0
    ax.set_ylim(floor / 2, min(2.0, top * 2))
    ax.set_xlim(0, float(b.trace_step[-1]))
    ax.set(xlabel="PGD step", ylabel=r"distance to M, $\sqrt{\theta^2+\eta^2+\rho^2}$")
    ax.set_title(
        f"{b.n} runs from uniform initialisations (α = {b.alpha:g}); each stops when at a "
        "minimum" + (";\ndashed: the distance to M of each minimum off M" if dashed else ""),
        fontsize=9,
    )
    ax.legend(fontsize=7, loc="lower left")
    return _finish(fig, path, dpi)


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

    from .survey import AXES

    numeric = [a for a in AXES if a != "nonlinearity"]
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
    colours = [_OKABE_ITO[2], _OKABE_ITO[1], _OKABE_ITO[4], "0.75"]
    labels = ["global minimum", "minimum, not global", "saddle", "not found"]
    fig = _new_figure(figsize=(14.0, 5.0), constrained_layout=True)
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
    return _finish(fig, path, dpi)


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
    fig, ax = _figure_and_axes(ax, (7.8, 4.4))
    finite = f.steps[np.isfinite(f.steps) & (f.label >= 0)]
    if finite.size:
        lo = max(float(finite.min()), 1e-300)
        hi = max(float(finite.max()), lo * 10.0)
        if budget is not None:  # the marked budget is on the axis too
            lo, hi = min(lo, float(budget)), max(hi, float(budget))
        grid = np.geomspace(lo / 2.0, hi * 2.0, 400)
        end_colours = _end_colours(f.points)
        for j, name in enumerate(f.names):
            if not f.minimum[j] or not np.any(f.label == j):
                continue
            share = np.array([f.within(n)[j] for n in grid])
            colour = end_colours[j]
            q = f.quantiles([0.5], j)[0]
            ax.step(
                grid,
                share,
                where="post",
                color=colour,
                label=f"{int(np.sum(f.label == j))} of {f.n} runs reach {name} "
                f"(median 10^{q:.1f} {unit})",
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
    ax.legend(fontsize=7, loc="upper left")
    return _finish(fig, path, dpi)
