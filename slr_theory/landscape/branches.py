"""The result of a continuation in the temperature: its branches and the events between them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..results import html_table, text_table

__all__ = ["Branch", "Continuation"]


@dataclass
class Branch:
    """One critical point followed in ``lambda``.

    Attributes
    ----------
    lam : ndarray, shape (m,)
        Increasing temperatures (a contiguous part of the grid).
    overlaps : ndarray, shape (m, 5)
    risk : ndarray, shape (m,)
    index : ndarray of int, shape (m,)
    kind : list of str
    start, end : str
        Why the branch stops at its smallest and largest ``lambda``: ``"range"`` (the end
        of the range), ``"meets"`` (it runs into a more symmetric branch, a pitchfork),
        ``"fold"`` (``lambda`` turns back along it) or ``"lost"`` (it could be followed
        neither in ``lambda`` nor in arc length).
    seed : float
        The ``lambda`` at which the search found the point the branch was followed from.
    vectors : ndarray, shape (m, 2, 4), optional
        The representative ``(k, v)`` in ``R^4`` at each temperature.
    """

    lam: np.ndarray
    overlaps: np.ndarray
    risk: np.ndarray
    index: np.ndarray
    kind: list
    start: str
    end: str
    seed: float
    vectors: np.ndarray | None = None


@dataclass
class Continuation:
    """Branches of critical points over a range of ``lambda``, and the events between them.

    Attributes
    ----------
    branches : list of Branch
    events : list of dict
        ``{"lam", "branch", "type", "bracket", ...}`` with type ``"index change"``,
        ``"meets"``, ``"fold"`` or ``"lost"``; ``"bracket"`` is the interval that holds
        the event and ``"lam"`` its middle.

        - An index change is located by bisection on the index (along the branch in arc
          length where the grid points are far apart) to ``LOCATE_TOL`` (1e-7); the
          index is ``"from"`` at the bracket's left end and ``"to"`` at its right end.
        - ``"meets"``: where ``lambda`` turns back along a branch because it runs into its
          own mirror image through a more symmetric point, a pitchfork off the branch
          through that point (``"at"``, its overlaps; ``"other"``, that branch's index in
          ``branches`` or None). ``"lam"`` is extrapolated to the meeting (Richardson in
          the flipped coordinate, in which ``lambda`` is even); the bracket is its error,
          about 1e-11. The symmetric branch's index change is the same event, located
          independently.
        - ``"fold"``: ``lambda`` turns back without a symmetry; ``"lam"`` is the extremum
          of ``lambda`` along the branch (Brent), the bracket its error.
        - ``"lost"``: the branch could be followed no further; the bracket is from the
          last ``lambda`` reached to the next temperature of the grid.

        Meetings, folds and losses have ``"side"``: whether the branch ends as
        ``lambda`` decreases (``"start"``) or increases (``"end"``). A ``"meets"`` without
        ``"side"`` is two branches found at the same point at a temperature of the grid.
        Every located event is within ``FOLD_TOL`` (1e-6) of the truth.
    not_followed : list of dict
        ``{"lam", "count"}``: degenerate critical points found at a seed temperature
        (zero modes beyond the symmetry orbits: a continuum of critical points, not
        isolated branches), which are not followed.
    """

    branches: list[Branch]
    events: list
    not_followed: list = field(default_factory=list)

    def optimum_branch(self) -> Branch | None:
        """The branch of ``(k*, v*)`` (the longest, if it was followed in pieces), or None.

        Returns
        -------
        Branch or None
        """
        at = [
            br
            for br in self.branches
            if np.allclose(br.overlaps, [1.0, 1.0, 0.0, 0.0, 0.0], atol=1e-9)
        ]
        return max(at, key=lambda br: br.lam.size) if at else None

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.bifurcation_figure` of these branches.

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``quantity``, ``names``, ``dpi``, ``ax`` of
            :func:`~slr_theory.plotting.bifurcation_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from ..plotting.branches import bifurcation_figure

        return bifurcation_figure(self, path, **options)

    def _table(self) -> tuple:
        lams = np.concatenate([b.lam for b in self.branches]) if self.branches else np.zeros(0)
        span = f" over λ in [{lams.min():g}, {lams.max():g}]" if lams.size else ""
        caption = f"{len(self.branches)} branches{span}, {len(self.events)} events" + (
            f"; {sum(n['count'] for n in self.not_followed)} degenerate points not followed"
            if self.not_followed
            else ""
        )
        rows = []
        for e in sorted(self.events, key=lambda e: e["lam"]):
            width = e["bracket"][1] - e["bracket"][0] if "bracket" in e else None
            if e["type"] == "index change":
                what = f"index {e['from']} -> {e['to']}"
            elif e["type"] == "meets":
                other = e.get("other")
                what = f"meets b{other}" if other is not None else "meets a point no branch holds"
            else:
                what = e["type"]
            rows.append(
                [
                    f"{e['lam']:.10g}",
                    f"{width:.0e}" if width is not None else "grid",
                    f"b{e['branch']}",
                    what,
                ]
            )
        return ["λ", "located to", "branch", "event"], rows, caption

    def _repr_html_(self) -> str:
        """What a notebook shows: the events, in order of λ, under how many branches."""
        return html_table(*self._table())

    def __repr__(self) -> str:
        """The same table as text (the branches are one attribute away)."""
        header, rows, caption = self._table()
        return text_table(header, rows, "Continuation: " + caption)
