"""Where every run ends and when: the fates of an ensemble, their shares and quantiles."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from ..critical import CriticalPoint
from ..results import html_table, text_table
from ..validate import positive_real

__all__ = ["UNLISTED", "Fates"]


#: The kind :class:`Fates` gives a point where runs stopped at the horizon that is none of
#: the critical points it was given (a point the search missed, or a plateau).
UNLISTED = "end point not among the critical points given"


@dataclass(frozen=True)
class Fates:
    """Where every run ends and when it gets there (:func:`fate`).

    Attributes
    ----------
    points : ndarray, shape ``(m, 5)``
        The critical points runs are classified against (one representative of each
        orbit): the minima, then the saddles some run ends at, then where runs stopped at
        the horizon away from every point given (one per group of ends, kind
        :data:`UNLISTED`).
    kinds : list of str
        Their kinds (:attr:`slr_theory.critical.CriticalPoint.kind`).
    minimum : ndarray of bool, shape ``(m,)``
        Which points are minima (attractors).
    label : ndarray of int, shape ``(n,)``
        The point each run ends at (or at a symmetric image of), ``-1`` for a run held in
        exact steps beyond `max_exact_steps` (no flow stood for the map there: undecided), or a
        flow the integrator cannot follow (a step below the rounding of the time).
    steps : ndarray, shape ``(n,)``
        Steps (PGD) or flow time (``alpha`` None) to enter the `tol`-ball of its minimum;
        ``inf`` for a run that ends at a saddle (on its stable manifold it never reaches a
        minimum); NaN for a run at a point of kind :data:`UNLISTED` or with label ``-1``.
    relative_error : ndarray, shape ``(n,)``
        Estimated relative error of `steps`: the run's error in the overlaps (and the
        placing of its entry) over the rate at which its distance to the ball falls there,
        relative to the time; for a run whose time along the edge ``nu = +-1`` is a
        quadrature, its error in ``kappa`` over the drive where the quadrature starts, plus
        the quadrature's own error and the modified equation's defect over the way.
    error : ndarray, shape ``(n,)``
        Estimated error of the overlaps where each run stopped (:attr:`Advanced.error`).
    final : ndarray, shape ``(n, 5)``
        Where each run stopped.
    exact_steps : ndarray, shape ``(n,)``
        Steps each run took exactly (PGD; 0 for the flow).
    alpha : float or None
        The step size, None for the gradient flow.
    tol : float
        Radius of the balls (max-norm of the overlaps).
    horizon : float
        Where runs that reached no ball were stopped.
    max_exact_steps : float
        The budget of exact steps of a run.
    on_manifold : bool
        Runs on M, classified by the flow on M (:func:`fate` with ``on_manifold=True``):
        `minimum` then marks the minima of the flow on M and `kinds` are kinds on M.
    """

    points: np.ndarray
    kinds: list
    minimum: np.ndarray
    label: np.ndarray
    steps: np.ndarray
    relative_error: np.ndarray
    error: np.ndarray
    final: np.ndarray
    exact_steps: np.ndarray
    alpha: float | None
    tol: float
    horizon: float
    max_exact_steps: float
    on_manifold: bool = False

    @property
    def n(self) -> int:
        """Number of runs."""
        return int(self.label.size)

    @property
    def names(self) -> list[str]:
        """A name for each point: its kind and overlaps."""
        return [
            f"{kind} at ({', '.join(f'{x:.4g}' for x in np.where(np.abs(p) < 5e-5, 0.0, p))})"
            for kind, p in zip(self.kinds, self.points, strict=True)
        ]

    @property
    def fractions(self) -> np.ndarray:
        """Share of the runs that end at each point ``(m,)``."""
        return np.array([np.mean(self.label == j) for j in range(len(self.kinds))])

    @property
    def stderr(self) -> np.ndarray:
        """Binomial standard error of :attr:`fractions`, ``sqrt(p (1 - p) / n)``."""
        p = self.fractions
        return np.sqrt(p * (1.0 - p) / self.n)

    @property
    def undecided(self) -> float:
        """Share of the runs with label ``-1``."""
        return float(np.mean(self.label < 0))

    def quantiles(self, q: ArrayLike, point: int | None = None) -> np.ndarray:
        """Quantiles of ``log10`` of the finite arrival times (of the runs at `point`).

        Parameters
        ----------
        q : array_like
            Probabilities in ``[0, 1]``.
        point : int, optional
            Index into :attr:`points` (default: every run that reaches a minimum).

        Returns
        -------
        ndarray, the shape of `q`
            NaN where no run arrives.
        """
        q = np.asarray(q, dtype=np.float64)
        if np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
            raise ValueError(f"`q` must lie in [0, 1], got {q!r}.")
        keep = np.isfinite(self.steps) & (self.label >= 0)
        if point is not None:
            keep &= self.label == point
        if not np.any(keep):
            return np.full(q.shape, np.nan)
        return np.quantile(np.log10(np.maximum(self.steps[keep], 1.0)), q)

    def within(self, steps: float) -> np.ndarray:
        """Share of the runs at each point ``(m,)`` after `steps` steps (flow time).

        A run counts at its minimum once its arrival time is at most `steps`; a run that
        ends at a saddle counts there from its entry into the saddle's ball, which is not
        recorded, so only at the horizon. What is left, ``1 - within(N).sum()``, is the
        share *not converged after N steps*.

        Parameters
        ----------
        steps : float
            ``>= 0``.

        Returns
        -------
        ndarray, shape ``(m,)``
        """
        n_steps = positive_real(steps, "steps", allow_zero=True)
        there = (self.steps <= n_steps) | (np.isinf(self.steps) & (n_steps >= self.horizon))
        return np.array([np.mean(there & (self.label == j)) for j in range(len(self.kinds))])

    def join(self, other: Fates) -> Fates:
        """These runs followed by `other`'s: the fates of both sets of starts.

        Parameters
        ----------
        other : Fates
            Decided with the same step, ball, horizon and space (on M or not). Its ends
            are matched to these by their overlaps and kind; an end only `other` reached
            (a saddle, say) is added after these.

        Returns
        -------
        Fates
        """
        if not isinstance(other, Fates):
            raise ValueError(f"`other` must be a Fates, got {type(other).__name__}.")
        if (self.alpha, self.tol, self.horizon, self.on_manifold) != (
            other.alpha,
            other.tol,
            other.horizon,
            other.on_manifold,
        ):
            raise ValueError(
                "`other` must be decided with the same alpha, tol, horizon and space, got "
                f"{(other.alpha, other.tol, other.horizon, other.on_manifold)!r} against "
                f"{(self.alpha, self.tol, self.horizon, self.on_manifold)!r}."
            )
        points, kinds, minimum = list(self.points), list(self.kinds), list(self.minimum)
        where = np.empty(len(other.kinds), dtype=np.int64)
        ends = zip(other.points, other.kinds, other.minimum, strict=True)
        for j, (o, kind, m) in enumerate(ends):
            same = [i for i, q in enumerate(points) if kinds[i] == kind and np.array_equal(q, o)]
            if not same:
                points.append(o)
                kinds.append(kind)
                minimum.append(m)
            where[j] = same[0] if same else len(points) - 1
        label = np.where(other.label >= 0, where[np.maximum(other.label, 0)], other.label)
        runs = {
            f: np.concatenate([getattr(self, f), getattr(other, f)])
            for f in ("steps", "relative_error", "error", "final", "exact_steps")
        }
        return replace(
            self,
            points=np.array(points, dtype=np.float64).reshape(-1, 5),
            kinds=kinds,
            minimum=np.array(minimum, dtype=bool),
            label=np.concatenate([self.label, label]),
            max_exact_steps=max(self.max_exact_steps, other.max_exact_steps),
            **runs,
        )

    def _repr_html_(self) -> str:
        """What a notebook shows: each end with its runs, share and arrival quantiles."""
        return html_table(*self._table())

    def __repr__(self) -> str:
        """The same table as text (the arrays are one attribute away)."""
        header, rows, caption = self._table()
        return text_table(header, rows, "Fates: " + caption)

    def _table(self) -> tuple:
        unit = "steps" if self.alpha is not None else "flow time"
        rows = []
        for j, name in enumerate(self.names):
            n = int(np.sum(self.label == j))
            if not n:
                continue
            if self.minimum[j]:
                q = self.quantiles([0.1, 0.5, 0.9], j)
                when = " / ".join(f"{x:.2f}" for x in q)
            else:
                when = "never (a saddle's stable manifold)" if self.kinds[j] != UNLISTED else "—"
            rows.append([name, n, f"{self.fractions[j]:.3f} ± {self.stderr[j]:.3f}", when])
        left = int(np.sum(self.label < 0))
        if left:
            rows.append(["undecided", left, f"{self.undecided:.3f}", "—"])
        how = f"PGD at α = {self.alpha:g}" if self.alpha is not None else "the gradient flow"
        return (
            ["end", "runs", "share ± s.e.", f"log10 {unit}: 10 / 50 / 90 %"],
            rows,
            f"{self.n} runs, {how}, to balls of radius {self.tol:g}",
        )

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.arrival_figure` of these fates.

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``budget``, ``dpi``, ``ax`` of :func:`~slr_theory.plotting.arrival_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from ..plotting.ensembles import arrival_figure

        return arrival_figure(self, path, **options)


ALL = np.arange(5)


def check_points(points) -> None:
    """``ValueError`` naming `points` unless it is a sequence of critical points."""
    if isinstance(points, (str, bytes)) or not hasattr(points, "__iter__"):
        raise ValueError(f"`points` must be a list of CriticalPoint, got {points!r}.")
    for q in points:
        if not isinstance(q, CriticalPoint):
            raise ValueError(f"`points` must be a list of CriticalPoint, got an item {q!r}.")


def point_images(points) -> tuple[np.ndarray, np.ndarray]:
    """Every symmetric image ``(k, 5)`` of the points and the index of its point ``(k,)``."""
    rows, owner = [], []
    for j, q in enumerate(points):
        for o in (q.overlaps, *q.symmetry_copies):
            rows.append(np.asarray(o, dtype=np.float64))
            owner.append(j)
    return np.array(rows).reshape(-1, 5), np.array(owner, dtype=np.int64)


def nearest(ov: np.ndarray, images: np.ndarray, owner: np.ndarray, coords=ALL):
    """Nearest image (max-norm over the overlaps `coords`, the model's
    :meth:`~slr_theory.models.Model.state_overlaps`) of overlaps ``(..., 5, k)``: its
    point, the distance and the image's index (``-1``, ``inf``, ``-1`` without images)."""
    if images.shape[0] == 0:
        shape = ov.shape[:-2] + ov.shape[-1:]
        return np.full(shape, -1), np.full(shape, np.inf), np.full(shape, -1)
    ov, images = ov.take(coords, axis=-2), images.take(coords, axis=1)
    d = np.max(np.abs(ov[..., None, :, :] - images[:, :, None]), axis=-2)  # (..., k_img, k)
    j = np.argmin(d, axis=-2)
    return owner[j], np.take_along_axis(d, j[..., None, :], axis=-2)[..., 0, :], j
