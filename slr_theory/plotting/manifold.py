"""The flow on M drawn from results: basins, stability maps, the phase portrait."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .canvas import OKABE_ITO, figure_and_axes, finish, new_figure

__all__ = [
    "basins_figure",
    "draw_portrait",
    "draw_stability",
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


def draw_portrait(data, path: str | Path | None = None, *, dpi: int = 120, ax=None):
    """Draw :func:`slr_theory.plotting.phase_portrait` from a
    :class:`slr_theory.landscape.PortraitData` (nothing is computed).

    Parameters
    ----------
    data : slr_theory.landscape.PortraitData
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
    if not all(hasattr(data, a) for a in ("params", "field", "points", "point_kinds")):
        raise ValueError(
            "`data` must be a PortraitData (slr_theory.landscape.portrait_data; "
            f"slr_theory.plotting.phase_portrait computes one from a Params), got {data!r}."
        )
    from matplotlib.colors import ListedColormap

    from ..critical import plural_kind

    params = data.params
    given = ax is not None
    fig, ax = figure_and_axes(ax, (7.4, 9.0))
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
    if len(inner) == 1:  # R_nu depends on kappa only: it vanishes on the saddle's kappa
        ax.axvline(inner[0][0], color=OKABE_ITO[1], lw=1.4, label=r"$\nu$-nullcline", zorder=3)
    sep = data.separatrix
    if len(sep):  # the stable manifold of M's interior saddle, where M has one
        ax.plot(sep[:, 0], sep[:, 1], "k-", lw=2.0, label="separatrix", zorder=4)
    for i, f in enumerate(data.flows):
        ax.plot(
            f[:, 0],
            f[:, 1],
            color=OKABE_ITO[5],
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
                color=OKABE_ITO[4],
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
    return finish(fig, path, dpi)
