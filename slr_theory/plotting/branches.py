"""Branches of critical points against the temperature (a continuation's result)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .canvas import OKABE_ITO, figure_and_axes, finish, spread_tags, thin_tick_labels

__all__ = [
    "bifurcation_figure",
]


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
    """A branch name short enough for the legend: its point's first clause, no kind; a
    point off M keeps its overlaps (the only thing that tells two such apart)."""
    point = name.rsplit(" (", 1)[0] if name.endswith(")") and " of index " in name else name
    if point.startswith("(k*, v*)"):
        return "optimum (k*, v*)"
    if point.startswith("the corner") or point.startswith("the origin"):
        return point.split(" (k,")[0]
    if " off M at " in point:  # "the saddle off M at (...)": the overlaps name it
        return point.removeprefix("the ")
    short = point.split(", ")[0] if len(point) > 24 else point
    return short if len(short) <= 24 else short[:23] + "…"


def _legend_names(names: list[str]) -> list[str]:
    """Each branch's short name, and where two would read the same, the whole name (its
    kind and index where it was named): no two entries of the legend say the same."""
    short = [_short_name(n) for n in names]
    return [n if short.count(s) > 1 else s for s, n in zip(short, names, strict=True)]


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

    Each branch is tagged ``b<i>`` at its last ``lambda`` (tags moved apart, with a
    leader line, where they would overlap) and named in the legend, where no two names
    read the same (a point off M by its overlaps; two that still agree, with their kind).

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
    from ..params import OVERLAP_NAMES

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
    fig, ax = figure_and_axes(ax, (8.6, 5.0))
    classes = (
        ("minimum (index 0)", OKABE_ITO[0]),
        ("saddle, index 1", OKABE_ITO[1]),
        ("saddle, index > 1", OKABE_ITO[3]),
        ("maximum", OKABE_ITO[4]),
    )
    seen = set()
    legend_names = _legend_names(list(names)) if names is not None else None
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
            label = f"b{b} {legend_names[b]}"
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
        linthresh = float(np.min(nonzero)) if nonzero.size else 1e-3
        ax.set_yscale("symlog", linthresh=linthresh, linscale=2.0)  # 0 a decade from ±linthresh
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
    # after the legend: the layout is final, and the tags are kept out of it
    spread_tags(ax, ends)
    if quantity == "gap":  # ±linthresh beside 0: a label that would still overprint goes
        thin_tick_labels(ax, "y", keep=(0.0,))
    return finish(fig, path, dpi)
