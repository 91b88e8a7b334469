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


def _end_groups(final: np.ndarray, tol: float = 0.05) -> list[np.ndarray]:
    """Runs grouped by their end point, up to the risk's symmetries (largest group first)."""
    from .critical import same_point

    groups: list[list[int]] = []
    for i, o in enumerate(final):
        for g in groups:
            if same_point(final[g[0]], o, tol=tol):
                g.append(i)
                break
        else:
            groups.append([i])
    return [np.array(g) for g in sorted(groups, key=len, reverse=True)]


def _fmt(o) -> str:
    """An end point as text: its symmetric representative, near-zeros shown as 0."""
    from .critical import canonical

    return "(" + ", ".join(f"{(0.0 if abs(x) < 5e-3 else x):.2f}" for x in canonical(o)) + ")"


def experiment_figure(result, path: str | Path, *, dpi: int = 110) -> Path:
    """The paper's four panels for one experiment, 2 x 2, runs grouped by where they end.

    Runs that end at the same point (up to the risk's symmetries) form a group, drawn
    with its median and its min-max band and labelled with its size and end point; a
    band is never drawn across runs that ended in different places. Log axes are clipped
    to the data; every label comes from the run (repeats, steps, temperatures).

    Parameters
    ----------
    result : slr_theory.experiments.ExperimentResult
    path : str or Path
        Output file (format from the suffix).
    dpi : int

    Returns
    -------
    Path
    """
    from matplotlib.ticker import MaxNLocator

    e, tr = result.experiment, result.trajectory
    ov = tr.overlaps  # (n_rec, R, 5)
    steps = tr.step
    R = ov.shape[1]
    groups = _end_groups(ov[-1])
    fig = _new_figure(figsize=(11.5, 8.4), constrained_layout=True)
    (a_risk, a_abs), (a_path, a_dist) = fig.subplots(2, 2)
    excess = tr.risk - e.eps**2
    one, zero = np.ones(len(steps)), np.zeros(len(steps))
    at_target = engine.components(e.params, (one, one, zero, zero, zero), lam=tr.lam).sum(axis=0)
    positive = excess[excess > 0]
    lo = float(min(positive.min(), at_target.min())) if positive.size else float(at_target.min())
    hi = float(max(excess.max(), at_target.max()))
    dist = np.sqrt(np.sum(ov[..., 2:] ** 2, axis=-1))
    for j, g in enumerate(groups):
        colour = _OKABE_ITO[j % len(_OKABE_ITO)]
        label = f"{len(g)} of {R} runs → {_fmt(ov[-1, g[0]])}"
        for ax, y in ((a_risk, excess[:, g]), (a_dist, dist[:, g])):
            if len(g) == 1:
                ax.plot(steps, y[:, 0], color=colour, lw=1.2, label=label)
            else:
                ax.plot(steps, np.median(y, axis=1), color=colour, lw=1.4, label=label)
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
                label=f"{name}, {len(g)} runs → {_fmt(ov[-1, g[0]])}",
            )
            if len(g) > 1:
                a_abs.fill_between(
                    steps, y.min(axis=1), y.max(axis=1), color=colour, alpha=0.15, lw=0
                )
        for i in g:
            a_path.plot(ov[:, i, 0], ov[:, i, 1], color=colour, lw=0.8, alpha=0.8)
            a_path.plot(ov[0, i, 0], ov[0, i, 1], "o", color="k", ms=2)
    a_risk.plot(steps, at_target, "k--", lw=1, label=r"at $(k^*, v^*)$, this step's $\lambda$")
    a_risk.set(
        yscale="log", ylim=(lo / 2, hi * 2), xlabel="step", title=r"risk $-\ \varepsilon^2$"
    )
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
    _save(fig, path, dpi)
    return Path(path)


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


def bifurcation_figure(
    result, path: str | Path, *, quantity: str = "risk", dpi: int = 120
) -> Path:
    """Branches of critical points against ``lambda``, coloured by their Morse index class.

    Parameters
    ----------
    result : slr_theory.landscape.Continuation
    path : str or Path
        Output file (PNG, SVG or PDF, from the suffix).
    quantity : str
        ``"risk"`` or an overlap name (``"kappa"``, ``"nu"``, ...).
    dpi : int

    Returns
    -------
    Path
    """
    from .params import OVERLAP_NAMES

    if quantity != "risk" and quantity not in OVERLAP_NAMES:
        raise ValueError(f"`quantity` must be 'risk' or one of {OVERLAP_NAMES}, got {quantity!r}.")
    fig = _new_figure(figsize=(8.6, 5.0), constrained_layout=True)
    ax = fig.subplots()
    classes = (
        ("minimum (index 0)", _OKABE_ITO[0]),
        ("saddle, index 1", _OKABE_ITO[1]),
        ("saddle, index > 1", _OKABE_ITO[3]),
        ("maximum", _OKABE_ITO[4]),
    )
    seen = set()
    values, ends = [], []
    for b, br in enumerate(result.branches):
        y = br.risk if quantity == "risk" else br.overlaps[:, OVERLAP_NAMES.index(quantity)]
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
            if getattr(br, end) == "fold":
                ax.plot(
                    br.lam[at],
                    y[at],
                    "x",
                    color="k",
                    ms=6,
                    zorder=3,
                    label="corrector stops (fold or branches meet)" if "x" not in seen else None,
                )
                seen.add("x")
        ends.append((br.lam[-1], y[-1], _branch_name(b, br.overlaps[-1])))
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
    ax.set_xscale("log")
    allv = np.concatenate(values)
    if quantity == "risk" and allv.min() > 0 and allv.max() / allv.min() > 100:
        ax.set_yscale("log")
    ax.set_xlabel(r"temperature $\lambda$")
    ax.set_ylabel("risk" if quantity == "risk" else quantity)
    ax.set_title(
        f"critical points followed in $\\lambda$ ({len(result.branches)} branches, "
        "labelled at their last $\\lambda$)",
        fontsize=10,
    )
    _label_ends(ax, ends)
    order = [c[0] for c in classes] + [
        "a branch, followed in λ",
        "corrector stops (fold or branches meet)",
        "index change or meeting",
    ]
    handles, labels = ax.get_legend_handles_labels()
    pairs = sorted(zip(labels, handles, strict=True), key=lambda p: order.index(p[0]))
    fig.legend(
        [h for _, h in pairs], [lab for lab, _ in pairs], fontsize=8, loc="outside right upper"
    )
    _save(fig, path, dpi)
    return Path(path)


def basins_figure(basins, path: str | Path, *, separatrix=None, dpi: int = 120) -> Path:
    """The basin map on M over the square, with the separatrix if given.

    Parameters
    ----------
    basins : slr_theory.landscape.ManifoldBasins
    path : str or Path
    separatrix : ndarray, shape ``(m, 2)``, optional
        From :func:`slr_theory.landscape.separatrix`.
    dpi : int

    Returns
    -------
    Path
    """
    from matplotlib.colors import ListedColormap

    names = ["origin", "(1, 1)", "(-1, -1)", "(1, -1)", "(-1, 1)"]
    fig = _new_figure(figsize=(5.6, 5.0), constrained_layout=True)
    ax = fig.subplots()
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
    _save(fig, path, dpi)
    return Path(path)


def stability_figure(params_list, path: str | Path, *, grid: int = 121, dpi: int = 120) -> Path:
    """Maps of the leading transverse eigenvalue of the flow on M, one panel per ``Params``.

    Blue where M attracts (negative real part), orange where it repels; the zero contour
    in black.

    Parameters
    ----------
    params_list : sequence of Params
        E.g. the paper's parameters at several temperatures.
    path : str or Path
    grid : int
        Points per side of the open square.
    dpi : int

    Returns
    -------
    Path
    """
    from matplotlib.colors import TwoSlopeNorm

    from .landscape import manifold_stability

    params_list = list(params_list)
    t = np.linspace(-1, 1, grid + 2)[1:-1]
    K, N = np.meshgrid(t, t)
    fig = _new_figure(figsize=(4.2 * len(params_list) + 0.8, 4.2), constrained_layout=True)
    axes = np.atleast_1d(fig.subplots(1, len(params_list)))
    for ax, p in zip(axes, params_list, strict=True):
        lead = manifold_stability(p, K, N)[..., 0].real
        scale = float(np.max(np.abs(lead))) or 1.0
        mesh = ax.pcolormesh(
            K, N, lead, cmap="PuOr_r", shading="nearest", norm=TwoSlopeNorm(0.0, -scale, scale)
        )
        if lead.min() < 0 < lead.max():
            ax.contour(K, N, lead, levels=[0.0], colors="k", linewidths=1)
        share = float((lead < 0).mean())
        ax.set(
            aspect="equal",
            xlabel=r"$\kappa$",
            ylabel=r"$\nu$",
            title=f"$\\lambda$ = {p.lam:g}: M attracts on {share:.0%}",
        )
        fig.colorbar(mesh, ax=ax, shrink=0.8, label="leading transverse Re")
    _save(fig, path, dpi)
    return Path(path)


_KIND_MARKERS = {
    "minimum": ("o", _OKABE_ITO[2]),
    "saddle": ("X", _OKABE_ITO[3]),
    "maximum": ("^", _OKABE_ITO[4]),
}


def _m_kind(eigs) -> str:
    if np.all(eigs > 0):
        return "minimum"
    if np.all(eigs < 0):
        return "maximum"
    return "saddle"


def phase_portrait(
    params,
    path: str | Path,
    *,
    grid: int = 41,
    basin_grid: int = 24,
    trajectories: int = 8,
    pgd_alpha: float | None = None,
    pgd_steps: int = 20_000,
    t_max: float = 600.0,
    dpi: int = 120,
    progress: bool | Callable[[int], object] = False,
) -> Path:
    """The flow on M over the closed square: everything at a glance.

    Streamlines of ``(kappa', nu')``, the nullclines (``kappa = 0`` for ``nu``;
    ``nu = erf(a kappa / s)`` for ``kappa``; and the edges), the critical points marked by
    their kind on M, the separatrix, sample trajectories, the basins shaded and risk
    contours; with `pgd_alpha`, the iterates of PGD at that step from the same starts.

    Parameters
    ----------
    params : Params
    path : str or Path
        PNG, SVG or PDF (from the suffix).
    grid : int
        Streamline grid per side.
    basin_grid : int
        Basin-map grid per side (0: no shading).
    trajectories : int
        Sample flow trajectories (from a ring of starts).
    pgd_alpha : float, optional
        Also draw PGD iterates at this step.
    pgd_steps : int
    t_max : float
        Flow time of the trajectories and the basin map.
    dpi : int
    progress : bool or callable
        ``True`` shows a tqdm bar over the stages (basins, field, separatrix, each
        trajectory, critical points, saving); a callable is called with 1 per stage.

    Returns
    -------
    Path
    """
    from .trajectory import Progress

    total = 4 + bool(basin_grid) + trajectories
    with Progress(progress, total, "portrait", unit="stage") as update:
        return _phase_portrait(
            params,
            path,
            grid=grid,
            basin_grid=basin_grid,
            trajectories=trajectories,
            pgd_alpha=pgd_alpha,
            pgd_steps=pgd_steps,
            t_max=t_max,
            dpi=dpi,
            tick=update or (lambda _n: None),
        )


def _phase_portrait(
    params, path, *, grid, basin_grid, trajectories, pgd_alpha, pgd_steps, t_max, dpi, tick
) -> Path:
    """The drawing of :func:`phase_portrait`, calling ``tick(1)`` after each stage."""
    from matplotlib.colors import ListedColormap
    from scipy.special import erf

    from .critical import critical_points
    from .flows import manifold_field, manifold_flow
    from .landscape import manifold_basins, separatrix
    from .risk import manifold_risk

    fig = _new_figure(figsize=(8.9, 6.6), constrained_layout=True)
    ax = fig.subplots()
    t = np.linspace(-1, 1, grid)
    K, N = np.meshgrid(t, t)
    if basin_grid:
        b = manifold_basins(params, grid=basin_grid, t_max=t_max)
        # cells that tile the closed square: the starts are interior, the map reaches the edges
        c = b.kappa[0]
        edges = np.concatenate([[-1.0], 0.5 * (c[:-1] + c[1:]), [1.0]])
        names = {
            0: ("#F2F2F2", f"no critical point reached by t = {t_max:g}"),
            1: ("#DDDDDD", "ends at the saddle (0, 0)"),
            2: ("#CFE8F7", "basin of (1, 1)"),
            3: ("#FBE3C2", "basin of (−1, −1)"),
            4: ("#F0F0F0", "ends at (1, −1)"),
            5: ("#F0F0F0", "ends at (−1, 1)"),
        }
        colours = ["#F2F2F2", "#DDDDDD", "#CFE8F7", "#FBE3C2", "#F0F0F0", "#F0F0F0"]
        ax.pcolormesh(
            edges,
            edges,
            b.label + 1,
            cmap=ListedColormap(colours),
            vmin=-0.5,
            vmax=5.5,
            shading="flat",
            zorder=0,
        )
        for value in sorted(set(np.unique(b.label + 1).tolist()) & set(names)):
            ax.plot([], [], "s", color=names[value][0], label=names[value][1])  # only what shows
        tick(1)
    R = manifold_risk(params, K, N)
    cs = ax.contour(
        K,
        N,
        R,
        levels=np.quantile(R, [0.05, 0.15, 0.3, 0.5, 0.7, 0.9]),
        colors="0.55",
        linewidths=0.6,
        linestyles=":",
        zorder=1,
    )
    ax.clabel(cs, fontsize=6, fmt="%.3g")
    F = manifold_field(params, K, N)
    speed = np.hypot(F[..., 0], F[..., 1])
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
    tick(1)
    a = params.lam * np.sqrt(params.d / 2)
    g = params.lam * params.gamma
    s = np.sqrt((1 + 2 * g * g) * (1 + 4 * g * g))
    kk = np.linspace(-1, 1, 400)
    ax.plot(
        kk, erf(a * kk / s), color=_OKABE_ITO[0], lw=1.4, label=r"$\kappa$-nullcline", zorder=3
    )
    ax.axvline(0.0, color=_OKABE_ITO[1], lw=1.4, label=r"$\nu$-nullcline", zorder=3)
    sep = separatrix(params)
    ax.plot(sep[:, 0], sep[:, 1], "k-", lw=2.0, label="separatrix", zorder=4)
    tick(1)
    ang = np.linspace(0, 2 * np.pi, trajectories, endpoint=False) + 0.4
    starts = 0.6 * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    for i, (k0, n0) in enumerate(starts):
        res = manifold_flow(params, float(k0), float(n0), t_max, dense_output=False)
        ax.plot(
            res.kappa,
            res.nu,
            color=_OKABE_ITO[5],
            lw=1.2,
            label="flow trajectories" if i == 0 else None,
            zorder=5,
        )
        if pgd_alpha is not None:
            from .dynamics import pgd

            tr = pgd(
                params,
                [k0, n0, 0, 0, 0],
                pgd_alpha,
                pgd_steps,
                record_every=max(1, pgd_steps // 40),
            )
            ax.plot(
                tr.overlaps[:, 0],
                tr.overlaps[:, 1],
                ".",
                color=_OKABE_ITO[4],
                ms=3,
                label=f"PGD, α = {pgd_alpha:g}" if i == 0 else None,
                zorder=6,
            )
        tick(1)
    pts = critical_points(params, "manifold")
    tick(1)
    seen = set()
    for q in pts:
        kind = _m_kind(q.manifold_eigenvalues)
        marker, colour = _KIND_MARKERS[kind]
        for o in [q.overlaps, *q.symmetry_copies]:
            ax.plot(
                o[0],
                o[1],
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
        f"gradient flow on M (d = {params.d}, L = {params.L}, λ = {params.lam:g})\n"
        f"largest speed on the grid |(κ′, ν′)| = {speed.max():.2g}",
        fontsize=10,
    )
    fig.legend(fontsize=8, loc="outside right upper")
    _save(fig, path, dpi)
    tick(1)
    return Path(path)


def off_manifold_figure(
    params,
    path: str | Path,
    *,
    n: int = 30,
    alpha: float = 4e-3,
    steps: int = 20_000,
    rng=0,
    dpi: int = 120,
) -> Path:
    """Distance to M over time for initialisations uniform on the spheres, grouped by end state.

    Each run's distance ``sqrt(theta^2 + eta^2 + rho^2)`` under exact PGD, coloured by the
    minimum it ends nearest to (up to symmetry); each minimum's own distance to M is marked.

    Parameters
    ----------
    params : Params
    path : str or Path
    n : int
        Runs.
    alpha : float
    steps : int
    rng : numpy.random.Generator or int
    dpi : int

    Returns
    -------
    Path
    """
    from .critical import critical_points, same_point
    from .dynamics import pgd, sample_initial_overlaps
    from .validate import random_generator

    gen = random_generator(rng)
    ov0 = sample_initial_overlaps(params.d, gen, n)
    tr = pgd(params, ov0, alpha, steps, record_every=max(1, steps // 400))
    minima = [q for q in critical_points(params, rng=0) if q.index == 0]
    final = tr.overlaps[-1]
    groups = np.full(n, -1)
    for j, q in enumerate(minima):
        for i in range(n):
            if groups[i] < 0 and same_point(final[i], q.overlaps, tol=0.05):
                groups[i] = j
    dist = np.sqrt(np.sum(tr.overlaps[..., 2:] ** 2, axis=-1))
    fig = _new_figure(figsize=(7.5, 4.6), constrained_layout=True)
    ax = fig.subplots()
    positive = dist[dist > 0]
    floor = max(float(positive.min()) if positive.size else 1e-16, 1e-300)
    for j in range(-1, len(minima)):
        members = np.flatnonzero(groups == j)
        if not members.size:
            continue
        colour = "0.6" if j < 0 else _OKABE_ITO[j % len(_OKABE_ITO)]
        name = (
            "no minimum reached"
            if j < 0
            else ("(" + ", ".join(f"{x:.2f}" for x in minima[j].overlaps) + ")")
        )
        for r, i in enumerate(members):
            ax.plot(
                tr.step,
                np.maximum(dist[:, i], floor),
                color=colour,
                lw=0.8,
                alpha=0.8,
                label=f"{len(members)} of {n} runs end at {name}" if r == 0 else None,
            )
        if j >= 0:
            level = float(np.sqrt(np.sum(minima[j].overlaps[2:] ** 2)))
            if level > 0:
                ax.axhline(level, color=colour, ls="--", lw=1)
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, min(2.0, float(dist.max()) * 2))
    ax.set(xlabel="PGD step", ylabel=r"distance to M, $\sqrt{\theta^2+\eta^2+\rho^2}$")
    ax.set_title(
        f"runs from uniform initialisations (d = {params.d}, λ = {params.lam:g}, "
        f"α = {alpha:g}); dashed: each minimum's distance to M",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    _save(fig, path, dpi)
    return Path(path)
