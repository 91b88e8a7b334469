"""What every figure shares: the Agg figure, saving without time stamps, the axes a
caller may hand in, the colours of end points, a point as text."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "OKABE_ITO",
    "end_colours",
    "figure_and_axes",
    "finish",
    "new_figure",
    "point_text",
    "save_figure",
]


def new_figure(**kw):
    """A :class:`matplotlib.figure.Figure` on the Agg canvas (the user's pyplot state and
    backend are never touched)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(**kw)
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig, path, dpi: int) -> None:
    """Save without time stamps, so the same figure gives the same bytes (PNG, SVG, PDF)."""
    import matplotlib

    suffix = Path(path).suffix.lower()
    metadata = {".pdf": {"CreationDate": None, "ModDate": None}, ".svg": {"Date": None}}
    with matplotlib.rc_context({"svg.hashsalt": "slr-theory"}):  # fixed ids in SVG, locally
        fig.savefig(
            path, dpi=dpi, metadata=metadata.get(suffix), format=suffix.lstrip(".") or None
        )


def finish(fig, path, dpi: int):
    """Save `fig` to `path` and return the path; without a path, return the Figure itself
    (a notebook shows it)."""
    if path is None:
        return fig
    save_figure(fig, path, dpi)
    return Path(path)


def figure_and_axes(ax, figsize):
    """A new figure with one axes, or the figure of the axes `ax` a caller gave."""
    if ax is None:
        fig = new_figure(figsize=figsize, constrained_layout=True)
        return fig, fig.subplots()
    if not hasattr(ax, "figure") or not hasattr(ax, "plot"):
        raise ValueError(f"`ax` must be a matplotlib Axes, got {ax!r}.")
    return ax.figure, ax


def point_text(o, group: np.ndarray | None = None) -> str:
    """An end point as text to 2 decimals (its representative under `group`, if given)."""
    from ..critical import canonical, overlaps_text

    return overlaps_text(o if group is None else canonical(o, group), 2)


#: Okabe-Ito colours (colour-blind safe), by role.
OKABE_ITO = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)


def end_colours(points) -> list[str]:
    """One colour per end point, the same object in the same colour in every figure and
    report: ``(k*, v*)`` (or a symmetric image, ``|kappa| = |nu| = 1`` on M) always the
    first colour, the other points the next ones in their order."""
    rest = iter(OKABE_ITO[1:] * 4)
    out = []
    for o in points:
        o = np.asarray(o, dtype=np.float64)
        optimum = np.allclose(np.abs(o[:2]), 1.0, atol=1e-6) and np.allclose(o[2:], 0.0)
        optimum = optimum and o[0] * o[1] > 0  # (k*, v*) or (-k*, -v*), not a corner
        out.append(OKABE_ITO[0] if optimum else next(rest))
    return out
