"""The report's saved results, field by field: the schema's version and the records a study holds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SCHEMA", "Event", "Lipschitz", "Point", "Proof", "RiskRow"]


#: Version of the ``results.json`` schema (the fields of :class:`Study`).
SCHEMA = 1


@dataclass
class RiskRow:
    """The risk and its parts at one point.

    Attributes
    ----------
    name : str
    overlaps : ndarray, shape (5,)
    total, informative, distractors, interactions : float
    """

    name: str
    overlaps: np.ndarray
    total: float
    informative: float
    distractors: float
    interactions: float


@dataclass
class Point:
    """One critical point of the full space (one per symmetry orbit), classified.

    Attributes
    ----------
    name : str
        What it is, in words (:func:`describe`).
    overlaps : ndarray, shape (5,)
    risk, grad_norm : float
    index, nullity : int
    kind : str
    on_manifold : bool
    global_minimum : bool
        The lowest risk among the points found.
    map_conclusion : str
        The PGD map at the study's step (:func:`slr_theory.pgd_map_spectrum`).
    map_unstable : int
        Dimension of the PGD map's unstable subspace there.
    local_diffeomorphism : bool
        The PGD map's Jacobian is invertible there.
    largest_eigenvalue : float
        The largest Hessian eigenvalue: PGD is stable at a minimum only for
        ``alpha < 2 / largest_eigenvalue``.
    """

    name: str
    overlaps: np.ndarray
    risk: float
    grad_norm: float
    index: int
    nullity: int
    kind: str
    on_manifold: bool
    global_minimum: bool
    map_conclusion: str
    map_unstable: int
    local_diffeomorphism: bool
    largest_eigenvalue: float


@dataclass
class Lipschitz:
    """Bounds on the Lipschitz constant of the Riemannian gradient, and the step condition.

    Attributes
    ----------
    lower, upper : float
    lower_at : ndarray, shape (5,)
    alpha : float
    condition : str
        ``alpha < 1/Lip``: ``"holds"``, ``"fails"`` or ``"undecided"``.
    """

    lower: float
    upper: float
    lower_at: np.ndarray
    alpha: float
    condition: str


@dataclass
class Escape:
    """Escape from M's interior saddle: measured against linearised times.

    Attributes
    ----------
    mu : float
    r0, measured, predicted : ndarray
    at : ndarray, shape (5,), or None
        The saddle's overlaps (the origin for an odd ``sigma``); None in results saved
        before it was kept (the origin then).
    """

    mu: float
    r0: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray
    at: np.ndarray | None = None


@dataclass
class Event:
    """One event of the continuation in ``lambda``, on a named branch.

    Attributes
    ----------
    lam : float
    type : str
        ``"index change"``, ``"meets"`` (a branch is born at, or ends on, another at a
        pitchfork), ``"fold"``, or ``"lost"`` (the branch could not be followed further).
    branch : int
    branch_name : str
    detail : str
        ``"index 1 → 0"``, or what happens to the branch, in words.
    width : float
        Width of the interval in ``lambda`` that holds the event.
    other : int or None
        For ``"meets"``: the branch met (None if no branch holds the point).
    """

    lam: float
    type: str
    branch: int
    branch_name: str
    detail: str
    width: float
    other: int | None = None

    @property
    def lam_text(self) -> str:
        """``lam`` with the decimals its bracket supports (3 to 10); a bracket wider than
        ``1e-3`` (an event the bisection could not narrow) as its two ends, ``lo–hi``.

        Returns
        -------
        str

        Examples
        --------
        >>> from slr_theory.study import Event
        >>> Event(0.0708876, "index change", 0, "b0", "index 0 → 398", 8.6e-8).lam_text
        '0.0708876'
        >>> Event(0.074, "index change", 0, "b0", "index 0 → 399", 0.01).lam_text
        '0.069–0.079'
        """
        w = max(float(self.width), 1e-16)
        if w > 1e-3:
            digits = max(3, int(np.ceil(-np.log10(w))) + 1)
            lo, hi = self.lam - 0.5 * w, self.lam + 0.5 * w
            return f"{lo:.{digits}f}–{hi:.{digits}f}"
        return f"{self.lam:.{min(10, max(3, int(np.floor(-np.log10(w)))))}f}"

    @property
    def lam_phrase(self) -> str:
        """Where the event is, for a sentence: ``"at λ = 0.0708876"``, or ``"between λ =
        0.069 and 0.079"`` where its bracket is wider than ``1e-3``.

        Returns
        -------
        str
        """
        if float(self.width) > 1e-3:
            lo, hi = self.lam_text.split("–")
            return f"between λ = {lo} and {hi}"
        return f"at λ = {self.lam_text}"


@dataclass
class Proof:
    """What a census certificate, re-verified, says about the full-space list
    (:func:`slr_theory.certify_critical_points`, :func:`slr_theory.certify.check_certificate`).

    Attributes
    ----------
    source : str
        The certificate's file name (or ``"given"`` for a census passed as an object).
    checked : bool
        The checker re-verified every box, zero and index.
    complete : bool
        Checked, and no box open: the census's list is every critical point.
    points, indices, boxes : int
        Points up to symmetry, how many with their index proved, leaves checked.
    check_seconds : float
        The checker's wall time here.
    missing, extra, differ : list
        Canonical overlaps of census points the search did not find, of search points the
        census does not have, and of points whose index or nullity differ.
    failures : list of str
        What the checker found wrong (empty when ``checked``).
    """

    source: str
    checked: bool
    complete: bool
    points: int
    indices: int
    boxes: int
    check_seconds: float
    missing: list
    extra: list
    differ: list
    failures: list

    @property
    def proves_search(self) -> bool:
        """The search's list is complete by proof: a checked complete census with the same
        points, indices and nullities."""
        return self.complete and not (self.missing or self.extra or self.differ)
