"""What every figure shares: the Agg figure, saving without time stamps, the axes a
caller may hand in, the colours of end points, a point as text."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "CLIP_DECADES_BELOW",
    "OKABE_ITO",
    "colliding_texts",
    "drop_colliding",
    "end_colours",
    "figure_and_axes",
    "finish",
    "new_figure",
    "point_text",
    "save_figure",
    "spread_tags",
    "thin_tick_labels",
    "visible_texts",
]


#: A log axis of distances shows at most down to this fraction of its largest value
#: (12 decades): runs converging to M exponentially reach 1e-66, which would crush the
#: rest into a corner; the figure says where its axis is cut.
CLIP_DECADES_BELOW = 1e-12


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


def visible_texts(fig) -> list:
    """Every text a reader sees in `fig` (titles, labels, tick labels, tags, contour
    labels, legend entries), with its box in display coordinates: ``(text, bbox)``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure

    Returns
    -------
    list of (matplotlib.text.Text, matplotlib.transforms.Bbox)
    """
    from matplotlib.text import Text

    fig.canvas.draw()  # the layout as it will be saved
    renderer = fig.canvas.get_renderer()
    undrawn = set()  # tick labels of ticks outside the view: an axis draws none of them
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            slack = 1e-9 * (hi - lo)
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not lo - slack <= tick.get_loc() <= hi + slack:
                    undrawn.update((tick.label1, tick.label2))
    out = []
    for t in fig.findobj(Text):
        if t in undrawn or not t.get_visible() or not t.get_text().strip():
            continue
        box = _text_box(t, renderer)
        clip = t.get_clip_box() if t.get_clip_on() else None
        if clip is not None and not box.overlaps(clip):  # clipped away: not seen
            continue
        out.append((t, box))
    return out


def _text_box(t, renderer):
    """The box of a text's letters (an annotation's leader line is not text)."""
    from matplotlib.text import Annotation, Text

    if isinstance(t, Annotation):
        t.update_positions(renderer)
    return Text.get_window_extent(t, renderer)


def colliding_texts(fig, pad: float = 0.0) -> list:
    """Pairs of visible texts of `fig` whose boxes overlap (by more than `pad` pixels):
    what a figure must not have (:func:`visible_texts`).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    pad : float
        Overlap tolerated, in pixels (anti-aliased edges).

    Returns
    -------
    list of (str, str)
        The two texts of each colliding pair.
    """
    boxes = visible_texts(fig)
    out = []
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[:i]:
            if (
                min(ba.x1, bb.x1) - max(ba.x0, bb.x0) > pad
                and min(ba.y1, bb.y1) - max(ba.y0, bb.y0) > pad
            ):
                out.append((a.get_text(), b.get_text()))
    return out


def thin_tick_labels(ax, axis: str = "y", keep=(0.0,)) -> None:
    """Hide tick labels of `axis` that would overlap a neighbour's (a symmetric log axis
    puts ``±linthresh`` beside 0), keeping the ticks at the values `keep` first."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ticks = (ax.yaxis if axis == "y" else ax.xaxis).get_major_ticks()
    shown = [t for t in ticks if t.label1.get_visible() and t.label1.get_text().strip()]
    shown.sort(key=lambda t: (t.get_loc() not in keep, abs(t.get_loc())))
    kept: list = []
    for t in shown:
        box = t.label1.get_window_extent(renderer)
        if any(box.overlaps(k) for k in kept):
            t.label1.set_visible(False)
        else:
            kept.append(box)


def spread_tags(ax, ends, fontsize: float = 6.0, colour: str = "0.3") -> list:
    """Write each tag ``(x, y, text)`` beside its point, moved vertically just enough that
    no two tags (nor a tag and a tick label) overlap; a moved tag is joined to its point
    by a thin leader line. Returns the annotations.

    Tags are placed bottom to top: each at its point, or just above the highest box it
    would overlap. Offsets are in points, so the layout holds at any dpi.
    """
    fig = ax.figure
    fig.canvas.draw()  # the final limits and scales, for display coordinates
    renderer = fig.canvas.get_renderer()
    per_point = fig.dpi / 72.0  # display pixels per point
    ticks = [t.label1.get_window_extent(renderer) for t in ax.yaxis.get_major_ticks()]
    ticks = [b for b in ticks if b.width > 0 and b.height > 0]
    placed: list = []
    out = []
    for x, y, text in sorted(ends, key=lambda e: e[1]):
        py = float(ax.transData.transform((x, y))[1])
        note = ax.annotate(
            text,
            (x, y),
            xytext=(4.0, 0.0),
            textcoords="offset points",
            fontsize=fontsize,
            va="center",
            color=colour,
            annotation_clip=False,
            arrowprops={"arrowstyle": "-", "color": "0.75", "lw": 0.4, "shrinkA": 0, "shrinkB": 2},
        )
        note.set_in_layout(False)  # placed in the final layout, which it must not change
        lift = 0.0
        for _ in range(len(placed) + len(ticks) + 1):  # each move clears one box
            box = _text_box(note, renderer)
            hit = [b for b in placed + ticks if box.overlaps(b)]
            if not hit:
                break
            lift = max(b.y1 for b in hit) + 0.5 * box.height + 1.0 - py
            note.set_position((4.0, lift / per_point))
        placed.append(_text_box(note, renderer))
        out.append(note)
    return out


def drop_colliding(fig, labels) -> int:
    """Remove those of `labels` (contour labels, say) whose text would overlap another
    text of `fig` or a label kept before them; returns how many were removed. Called once
    the layout is final (after the legend)."""
    labels = list(labels)
    others = [box for t, box in visible_texts(fig) if t not in labels]
    renderer = fig.canvas.get_renderer()
    removed = 0
    for t in labels:
        box = _text_box(t, renderer)
        if any(box.overlaps(b) for b in others):
            t.remove()
            removed += 1
        else:
            others.append(box)
    return removed
