"""The study: every number of the report, saved as one JSON file and loaded back checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..experiments import ExperimentResult
from ..landscape import Basins, Continuation, PortraitData, StabilityMap
from ..manifold import five_points_proved
from ..params import Params
from ..results import FieldError, dumps, loads
from ..study_check import check_study
from ..survey import Atlas
from ..verify import CheckResult
from .schema import SCHEMA, Escape, Event, Lipschitz, Point, Proof, RiskRow

__all__ = ["Study"]


@dataclass
class Study:
    """Everything the report shows, computed at one set of parameters.

    Attributes
    ----------
    schema : int
    version : str
    params : Params
    alpha : float
    seed : int
    full : bool
    verification : list of CheckResult
        Every registered check; those of the model at `params`.
    risk_rows : list of RiskRow
    lam_star : float
        The temperature minimising the risk at ``(k*, v*)``.
    manifold_certificate, search_certificate : list of str
    points : list of Point
    lipschitz : Lipschitz or None
        None where ``sigma`` is unbounded (linear attention): no bound is certified.
    portrait : PortraitData
    stability : StabilityMap
    basins : Basins
    escape : Escape or None
    lam_range : tuple of float
    continuation : Continuation
    branch_names : list of str
    events : list of Event
    experiments : list of ExperimentResult
        The paper's configurations (fixed parameters, not `params`).
    statistics : list of dict
        The paper's section 4 at ``gamma, eps, s`` and the attention of `params`.
    seconds : dict
        Wall time of each part.
    findings : list of str
    atlas : Atlas or None
        The atlas the report shows, when one was given.
    manifold_proved : bool
        Whether M's critical points are proved to be the origin and the four corners
        (:func:`slr_theory.manifold.five_points_proved`): computed when the study is
        built, and when results saved before it was kept are read.
    manifold_invariant : bool
        Whether the gradient flow leaves M invariant, computed by the model
        (:meth:`slr_theory.models.Model.manifold_invariant`), likewise.
    proof : Proof or None
        A census certificate given with the study, re-verified and compared with the
        search (:func:`check_proof`).
    """

    schema: int
    version: str
    params: Params
    alpha: float
    seed: int
    full: bool
    verification: list[CheckResult]
    risk_rows: list[RiskRow]
    lam_star: float
    manifold_certificate: list[str]
    search_certificate: list[str]
    points: list[Point]
    lipschitz: Lipschitz | None
    portrait: PortraitData
    stability: StabilityMap
    basins: Basins
    escape: Escape | None
    lam_range: tuple[float, float]
    continuation: Continuation
    branch_names: list[str]
    events: list[Event]
    experiments: list[ExperimentResult]
    statistics: list[dict]
    seconds: dict[str, float] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    atlas: Atlas | None = None
    manifold_proved: bool | None = None
    manifold_invariant: bool | None = None
    proof: Proof | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.params, Params):
            return
        if self.manifold_proved is None:
            self.manifold_proved = five_points_proved(self.params)
        if self.manifold_invariant is None:
            self.manifold_invariant = self.params.model.manifold_invariant(self.params)

    def save(self, path: str | Path) -> Path:
        """Write the study as JSON to `path` (plain write: use an output Destination).

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        Path
        """
        Path(path).write_text(dumps(self) + "\n")
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> Study:
        """Read a study written by :meth:`save`.

        Parameters
        ----------
        path : str or Path

        Returns
        -------
        Study

        Raises
        ------
        ValueError
            When the file is not a study of this schema, or a field it holds lies outside
            its domain (naming the field: an edited ``alpha = -1`` was drawn as 'PGD step
            alpha = -1'; :func:`slr_theory.study_check.check_study`).
        """
        import json

        text = Path(path).read_text()
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"`{path}` is not JSON: {exc}.") from None
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            got = data.get("schema") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"`{path}` must hold a study of schema {SCHEMA}, got {got!r}.")
        try:
            study = loads(cls, text)
        except FieldError as exc:
            raise ValueError(f"`{path}` field `{exc.field}`: {exc.reason}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"`{path}` is not a complete study: {exc!r}.") from None
        _check_fields(study, path)
        check_study(study, str(path))
        return study


def _check_fields(s: Study, path) -> None:
    """The study's own parameters inside their domains, each named as its field
    (``params`` is checked by :class:`Params` when it is rebuilt)."""
    from ..params import temperature_range
    from ..trajectory import MAX_ALPHA
    from ..validate import positive_int, positive_real

    checks = (
        ("alpha", lambda: positive_real(s.alpha, "alpha", upper=MAX_ALPHA)),
        ("seed", lambda: positive_int(s.seed, "seed", allow_zero=True)),
        ("lam_star", lambda: positive_real(s.lam_star, "lam_star")),
        ("lam_range", lambda: temperature_range(list(s.lam_range), "lam_range")),
    )
    for name, check in checks:
        try:
            check()
        except ValueError as exc:
            raise ValueError(f"`{path}` field `{name}`: {exc}") from None
