"""The flow on M drawn from results: basins, stability maps, the phase portrait."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .canvas import OKABE_ITO, drop_colliding, figure_and_axes, finish, new_figure

__all__ = [
    "ALL_PORTRAIT_LAYERS",
    "PORTRAIT_LAYERS",
    "basins_figure",
    "draw_portrait",
    "draw_stability",
    "portrait_layers",
]


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
    fig, ax = figure_and_axes(ax, (5.6, 5.0))
    colours = ["#BBBBBB", *OKABE_ITO[:5]]  # -1 (none) first
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
    return finish(fig, path, dpi)


def draw_stability(maps, path: str | Path | None = None, *, dpi: int = 120):
    """Draw :func:`slr_theory.plotting.stability_figure` from stability maps (nothing is
    computed).

    Parameters
    ----------
    maps : sequence of slr_theory.landscape.StabilityMap
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    dpi : int

    Returns
    -------
    Path or matplotlib.figure.Figure
    """
    from matplotlib.colors import TwoSlopeNorm

    for m in maps:
        if not all(hasattr(m, a) for a in ("lead", "kappa", "nu", "attracting_share")):
            raise ValueError(
                "`maps` must be StabilityMap results (slr_theory.landscape.stability_map; "
                f"slr_theory.plotting.stability_figure computes them from a Params), got {m!r}."
            )
    fig = new_figure(figsize=(4.2 * len(maps) + 0.8, 4.2), constrained_layout=True)
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
    return finish(fig, path, dpi)


_KIND_MARKERS = {
    "minimum": ("o", OKABE_ITO[2]),
    "saddle": ("X", OKABE_ITO[3]),
    "maximum": ("^", OKABE_ITO[4]),
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


#: Contour spacings (decades of flow time) the arrival layer of a portrait chooses from:
#: none finer than 0.01 decade (2 % of a time), which a figure does not resolve.
_SPACINGS = tuple(m * 10.0**e for e in range(-2, 3) for m in (1, 2, 5))


def _arrival_layer(ax, data) -> list:
    """The flow time from each cell to its minimum on M, as contours of ``log10 t``.

    The levels are the finest of :data:`_SPACINGS` that the fates' errors resolve (ten
    times the largest relative error of a time, in decades) with at most eight levels in
    the range; where no level falls inside it (every cell arrives at the same time, to
    what the errors and a 0.01-decade spacing resolve: at ``lam = 0.5`` the times differ
    by 1e-6 decades, all spent on the plateau), the legend gives that time instead.
    """
    t = data.basin_time
    if t is None:
        return []
    fin = np.isfinite(t) & (t > 0)
    if not fin.any():
        return []
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
        texts = []
        for cs in sets:
            texts += list(ax.clabel(cs, fontsize=6, fmt=lambda v: f"$10^{{{v:.{digits}f}}}$"))
        ax.plot(
            [], [], "-.", color="k", lw=0.8,
            label=f"flow time to the minimum on M ($10^x$; every {spacing:g} decades)",
        )  # fmt: skip
    else:
        where = (
            f"10^{lo:.{digits}f}"
            if round(lo, digits) == round(hi, digits)
            else (f"10^{lo:.{digits}f} to 10^{hi:.{digits}f}")
        )
        ax.plot([], [], " ", label=f"flow time to the minimum on M: {where} from every cell")
        return []
    return texts


#: The portrait's layers, in drawing order. :data:`PORTRAIT_LAYERS` are drawn by default
#: (at most five: a figure a paper would print); the others on request.
ALL_PORTRAIT_LAYERS = (
    "basins",
    "risk",
    "arrival",
    "streamlines",
    "nullclines",
    "separatrix",
    "flows",
    "pgd",
    "points",
)
PORTRAIT_LAYERS = ("basins", "streamlines", "nullclines", "separatrix", "points")


def portrait_layers(layers) -> tuple:
    """`layers` checked: names among :data:`ALL_PORTRAIT_LAYERS`, in drawing order.

    Parameters
    ----------
    layers : iterable of str or str
        Names, or one string of names separated by commas.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from slr_theory.plotting.manifold import portrait_layers
    >>> portrait_layers("points,basins")
    ('basins', 'points')
    """
    names = layers.split(",") if isinstance(layers, str) else list(layers)
    bad = [n for n in names if n not in ALL_PORTRAIT_LAYERS]
    if bad or not names:
        raise ValueError(
            f"`layers` must be names among {', '.join(ALL_PORTRAIT_LAYERS)}, got {layers!r}."
        )
    return tuple(n for n in ALL_PORTRAIT_LAYERS if n in names)


def _perimeter(p) -> float:
    """Position of a point of the square's boundary along it, counter-clockwise from
    ``(-1, -1)``: the bottom edge is ``[0, 2]``, the right ``[2, 4]``, the top ``[4, 6]``."""
    x, y = float(np.clip(p[0], -1, 1)), float(np.clip(p[1], -1, 1))
    side = int(np.argmin([abs(y + 1), abs(x - 1), abs(y - 1), abs(x + 1)]))
    return (x + 1, 2 + (y + 1), 4 + (1 - x), 6 + (1 - y))[side]


_CORNERS = ((0.0, (-1.0, -1.0)), (2.0, (1.0, -1.0)), (4.0, (1.0, 1.0)), (6.0, (-1.0, 1.0)))


def _separatrix_regions(data):
    """The two regions of the square the separatrix splits it into, each with the basin
    label its cells agree on, or None where the cells do not bear it out.

    The separatrix runs from boundary to boundary; each region is it closed along the
    boundary one way round. A region takes a label when every cell whose centre it holds
    and which lies farther than a cell's diagonal from the separatrix ends there: the
    regions then draw the basins exactly (no staircase of cells), and the cells, each
    followed to its end, are what vouches for them.
    """
    from matplotlib.path import Path as Polygon

    if data.separatrix is None:  # left out of the data: the cells alone draw the basins
        return None
    sep = np.asarray(data.separatrix, dtype=float)
    edges, label = data.basin_edges, data.basin_label
    if label is None or len(sep) < 2 or np.any(label < 0):
        return None
    ends = [sep[0], sep[-1]]
    if any(np.max(np.abs(e)) < 1.0 - 1e-4 for e in ends):  # not boundary to boundary
        return None
    s0, s1 = _perimeter(ends[0]), _perimeter(ends[1])
    centres = 0.5 * (edges[:-1] + edges[1:])
    K, N = np.meshgrid(centres, centres)
    xy = np.column_stack([K.ravel(), N.ravel()])
    diag = float(np.max(np.diff(edges))) * np.sqrt(2.0)
    near = np.min(np.hypot(*(xy[:, None, :] - sep[None, ::4, :]).transpose(2, 0, 1)), axis=1)
    out = []
    for forward in (True, False):  # from the separatrix's end back to its start, each way
        a, b = (s1, s0) if forward else (s0, s1)
        walk = sorted(
            ((c - a) % 8.0, xy_c) for c, xy_c in _CORNERS if 0 < (c - a) % 8.0 < (b - a) % 8.0
        )
        ring = [*sep, *[c for _, c in walk]] if forward else [*sep[::-1], *[c for _, c in walk]]
        poly = np.asarray(ring, dtype=float)
        inside = Polygon(poly).contains_points(xy) & (near > diag)
        labels = np.unique(label.ravel()[inside])
        if labels.size != 1:
            return None
        out.append((poly, int(labels[0])))
    return out


def draw_portrait(
    data,
    path: str | Path | None = None,
    *,
    dpi: int = 120,
    ax=None,
    layers=PORTRAIT_LAYERS,
):
    """Draw :func:`slr_theory.plotting.phase_portrait` from a
    :class:`slr_theory.landscape.PortraitData` (nothing is computed).

    Parameters
    ----------
    data : slr_theory.landscape.PortraitData
    path : str or Path, optional
        Output file, PNG, SVG or PDF (from the suffix); None: the figure is returned.
    dpi : int
    layers : iterable of str, default :data:`PORTRAIT_LAYERS`
        What to draw, among :data:`ALL_PORTRAIT_LAYERS`: ``basins`` (shaded; bounded by
        the separatrix where the cells bear it out), ``streamlines``, ``nullclines``,
        ``separatrix``, ``points`` (the critical points by kind) by default; ``risk``
        (contours), ``arrival`` (contours of the flow time to the minimum), ``flows``
        (sample trajectories) and ``pgd`` (iterates) on request.
    ax : matplotlib.axes.Axes, optional
        Draw on these axes (of a figure of yours) instead of a new figure; with no `path`
        the axes' figure is returned.

    Returns
    -------
    Path or matplotlib.figure.Figure
    """
    if not all(hasattr(data, a) for a in ("params", "field", "points", "point_kinds")):
        raise ValueError(
            "`data` must be a PortraitData (slr_theory.landscape.portrait_data; "
            f"slr_theory.plotting.phase_portrait computes one from a Params), got {data!r}."
        )
    from matplotlib.colors import ListedColormap

    params = data.params
    layers = portrait_layers(layers)
    given = ax is not None
    fig, ax = figure_and_axes(ax, (9.6, 6.6))
    if data.basin_label is not None and "basins" in layers:
        names = _basin_names(data)
        colours = [names[i][0] for i in range(len(names))]
        regions = _separatrix_regions(data)
        if regions is not None:  # exact boundaries: the separatrix, which the cells bear out
            for poly, lab in regions:
                ax.fill(poly[:, 0], poly[:, 1], color=colours[lab + 1], lw=0, zorder=0)
        else:
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
    labels = []  # contour labels: those that would collide are dropped at the end
    if data.basin_label is not None and "arrival" in layers:
        labels += _arrival_layer(ax, data)
    K, N = np.meshgrid(data.grid, data.grid)
    R = data.risk
    if "risk" in layers:
        labels += _risk_layer(ax, K, N, R)
    if "streamlines" in layers:
        _streamlines(ax, K, N, data.field)
    _rest_of_portrait(ax, data, layers)
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
        + ")"
        + (
            ";\nstreamlines drawn at any speed, the fastest on the grid "
            f"|(κ′, ν′)| = {data.max_speed:.2g}"
            if "streamlines" in layers
            else ""
        ),
        fontsize=10,
    )
    if given:  # the caller's figure: the legend on its axes
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:  # beside the square, never on it
        fig.legend(fontsize=8, loc="outside right center")
    drop_colliding(fig, labels)
    return finish(fig, path, dpi)


def _risk_layer(ax, K, N, R) -> list:
    """Dotted contours of the risk on M, labelled where the labels do not collide."""
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
    texts = ax.clabel(cs, fontsize=6, fmt="%.3g")
    ax.plot([], [], ":", color="0.55", lw=0.6, label="risk on M (contours)")
    return list(texts)


def _streamlines(ax, K, N, F) -> None:
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


def _rest_of_portrait(ax, data, layers) -> None:
    """The nullclines, critical lines, separatrix, trajectories, iterates and points."""
    from ..critical import plural_kind

    if "nullclines" in layers and np.any(np.isfinite(data.nullcline[:, 1])):
        ax.plot(
            data.nullcline[:, 0],
            data.nullcline[:, 1],
            color=OKABE_ITO[0],
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
    if "nullclines" in layers and len(inner) == 1:  # R_nu vanishes on the saddle's kappa
        ax.axvline(inner[0][0], color=OKABE_ITO[1], lw=1.4, label=r"$\nu$-nullcline", zorder=3)
    sep = data.separatrix
    if "separatrix" in layers and sep is not None and len(sep):  # M's saddle's stable manifold
        ax.plot(sep[:, 0], sep[:, 1], "k-", lw=2.0, label="separatrix", zorder=4)
    for i, f in enumerate(data.flows if "flows" in layers else ()):
        ax.plot(
            f[:, 0],
            f[:, 1],
            color=OKABE_ITO[5],
            lw=1.2,
            label=f"flow trajectories (t ≤ {data.t_max:g})" if i == 0 else None,
            zorder=5,
        )
    if data.pgd is not None and "pgd" in layers:
        for i in range(data.pgd.shape[1]):
            ax.plot(
                data.pgd[:, i, 0],
                data.pgd[:, i, 1],
                ".",
                color=OKABE_ITO[4],
                ms=3,
                label=f"PGD iterates, α = {data.pgd_alpha:g}" if i == 0 else None,
                zorder=6,
            )
    seen = set()
    for (k, n), kind in zip(
        data.points if "points" in layers else (), data.point_kinds, strict=False
    ):
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
