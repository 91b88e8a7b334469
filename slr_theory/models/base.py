"""The contract of a model: what every layer above :mod:`slr_theory.models` asks of it."""

from __future__ import annotations

import abc
from functools import lru_cache

import numpy as np

from ..engine import RiskTable
from ..geometry import overlap_velocity
from ..params import DOMAIN, Params

#: Points per side of the grid of M on which invariance is computed (edges included).
INVARIANCE_GRID = 21
#: Feasible points off M at which :meth:`Model.key_free` computes the key's partials.
KEY_FREE_POINTS = 256


class Model(abc.ABC):
    """An attention model of single-location regression: all the toolkit needs of it.

    The layers above :mod:`slr_theory.models` never ask which model they hold: they ask
    the model. A model is a stateless, hashable value (tables are cached per
    :class:`slr_theory.Params`, and ``Params`` holds its model); its methods take the
    ``Params`` whose ``d, L, gamma, s`` fix the law of the tokens. A model provides:

    1. :attr:`name`, its name in the registry (``Params(attention=name)``), and
       :attr:`sigma`, the pointwise nonlinearity it applies (a
       :class:`slr_theory.Nonlinearity`), or None for an attention that couples the
       tokens.
    2. :meth:`check`: a ``ValueError`` naming the parameters outside the model's own
       domain (inside :data:`slr_theory.params.DOMAIN`, which ``Params`` checks first),
       and :meth:`lam_max`, the largest temperature it takes.
    3. :meth:`table`: the term table of the population risk (an
       :class:`slr_theory.engine.RiskTable`) at an array of temperatures; and
       :meth:`feature_bounds`, a bound of each of its features over the feasible set.
    4. :meth:`forward`: the predictor ``T`` from the tokens' projections ``U = X k`` and
       ``V = X v`` at temperature ``lam``, with its partials in ``U`` and in ``V`` (what
       SGD's per-sample gradient needs): the forward map, written once.
    5. :attr:`odd_weights`: whether ``T`` changes sign with ``(U, V) -> (-U, -V)``, so that
       ``(k, v) -> (-k, -v)`` leaves the risk unchanged; *verified* (for a pointwise
       ``sigma``, established when it was built), never assumed. The symmetry group
       (:func:`slr_theory.critical.symmetries`) is derived from it.
    6. Facts on M (``k, v`` in ``span{k*, v*}``): :meth:`manifold_invariant` and
       :meth:`origin_critical`, *computed* from the table (provided here for every model);
       :meth:`nullcline`, the ``nu`` where ``dR/dkappa`` vanishes;
       :meth:`manifold_certificate`, what is proved (or, where no proof applies, what was
       searched and how) of M's critical points, step by step with its numbers;
       :meth:`manifold_summary`, that statement in one sentence when the model has an
       argument of its own; and :meth:`key_free`, whether the risk depends on the key at
       all, *computed* from the table (softmax over one token: every key is critical).
    7. Labels for text and figures: :attr:`predictor`, :attr:`tag`, :attr:`label`.
    8. What is proved, asked of the model, never read off its kind:
       :meth:`five_points_proved` (M's critical points are the origin and the four
       corners, by the model's own argument) and :attr:`feature_bounds_proved`
       (:meth:`feature_bounds` are bounds proved rather than sups sampled).
       Optional hooks return None and the caller takes the general way:
       :meth:`rigorous_table` here, ``loop_kernel()`` and ``placed()`` on the table
       (:class:`slr_theory.engine.RiskTable`).

    A new attention is one file in ``slr_theory/models/`` with a subclass, and one line
    registering it (:func:`slr_theory.models.register_model`); ``docs/models.md`` writes
    one.
    """

    #: The model's name in the registry.
    name: str = ""
    #: The pointwise nonlinearity, or None.
    sigma = None
    #: Whether :meth:`feature_bounds` are proved bounds (closed forms, analysis or
    #: intervals) rather than sups sampled by quadrature; what a model does not claim is not.
    feature_bounds_proved: bool = False

    def __plain__(self) -> str:
        """Refused: ``Params`` stores a model the registry builds by its names, so a model
        object left in a result is one no saved file could name (it would be read back as
        another model)."""
        raise TypeError(
            f"a model object the registry does not build ({self!r}) cannot be saved: "
            "register it (slr_theory.models.register_model) and give Params its name."
        )

    # 2. the domain ------------------------------------------------------------------------
    def check(self, params: Params) -> None:  # noqa: B027  (nothing beyond DOMAIN by default)
        """Raise ``ValueError`` naming the parameters outside the model's own domain."""

    def lam_max(self, params: Params) -> float:
        """The largest temperature the model takes at ``params``' other values."""
        return float(DOMAIN["lam"][1])

    # 3. the risk --------------------------------------------------------------------------
    @abc.abstractmethod
    def table(self, params: Params, lam: np.ndarray, order) -> RiskTable:
        """The table of `order` (0, 1, 2 or a tuple of them) at temperatures `lam`."""

    @abc.abstractmethod
    def feature_bounds(self, params: Params, order) -> np.ndarray:
        """``sup |feature|`` over the feasible set, per column of the table of `order`."""

    def rigorous_table(self, params: Params):
        """Rigorous interval enclosures of the partials and Hessian over boxes of overlaps
        (:class:`slr_theory.rigorous.RigorousTable`), or None where the model has none."""
        return None

    # 4. the forward map -------------------------------------------------------------------
    @abc.abstractmethod
    def forward(
        self, U: np.ndarray, V: np.ndarray, lam: float, derivatives: bool = False
    ) -> tuple:
        """``(T,)`` or ``(T, dT/dU, dT/dV)`` from ``U = X k``, ``V = X v`` ``(..., L)``.

        ``T`` has shape ``(...)``, the partials ``(..., L)``.
        """

    # 5. the symmetry ----------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def odd_weights(self) -> bool:
        """Whether ``(k, v) -> (-k, -v)`` leaves the risk unchanged (verified)."""

    # 6. facts on M ------------------------------------------------------------------------
    def manifold_invariant(self, params: Params) -> bool:
        """Whether the gradient flow leaves M invariant, computed: the velocities of
        ``theta, eta, rho`` (:func:`slr_theory.geometry.overlap_velocity`) vanish, to
        ``1e-12`` of the gradient's scale, at every point of a grid of
        ``INVARIANCE_GRID**2`` points of M, edges included."""
        return _on_m(self, params)[0]

    def origin_critical(self, params: Params) -> bool:
        """Whether the origin of M (``k ⊥ k*, v ⊥ v*``) is a critical point, computed: the
        gradient there vanishes to ``1e-12`` of the gradient's scale on M."""
        return _on_m(self, params)[1]

    def key_free(self, params: Params) -> bool:
        """Whether the risk does not depend on the key ``k``, computed: ``dR/dkappa``,
        ``dR/deta`` and ``dR/drho`` vanish, to ``1e-12`` of the gradient's scale, at
        :data:`KEY_FREE_POINTS` feasible points (the overlaps of seeded uniform unit
        vectors of ``R^6``) and on the grid of M (where a key partial on M's grid already
        exceeds ``1e-12`` of a bound of every partial, the table's ``|C|`` times
        :meth:`feature_bounds`, the answer is known there: no). Then each critical ``v``
        stands for a critical manifold ``S^{d-1} x {v}`` and the locator says so
        (:func:`slr_theory.critical.critical_points`)."""
        return _key_free(self, params)

    def state_overlaps(self, params: Params) -> np.ndarray:
        """The overlaps the risk depends on, as indices into ``(kappa, nu, theta, eta,
        rho)``: all five, or ``(nu, theta)`` where it is :meth:`key_free`. Where a run is,
        and which critical point it has reached, is read on these."""
        return np.array([1, 2]) if self.key_free(params) else np.arange(5)

    @abc.abstractmethod
    def nullcline(self, params: Params, kappa: np.ndarray) -> np.ndarray:
        """The ``nu`` where ``dR/dkappa`` vanishes on M, at each ``kappa`` (same shape)."""

    @abc.abstractmethod
    def manifold_certificate(self, params: Params) -> list[str]:
        """What is proved or searched of M's critical points, step by step."""

    def five_points_proved(self, params: Params) -> bool:
        """Whether M's critical points are proved to be the origin and the four corners
        (:meth:`manifold_certificate` then gives the proof); False where the model has no
        such argument (the default)."""
        return False

    def manifold_summary(self, params: Params) -> str | None:
        """M's critical points in one sentence, when the model has an argument of its own
        (None: the caller states what it located)."""
        return None

    # 7. labels ----------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def label(self) -> str:
        """A short name for legends and tables, e.g. ``"erf"`` or ``"softmax"``."""

    @property
    @abc.abstractmethod
    def predictor(self) -> str:
        """The predictor as text, e.g. ``T(X) = Σ_ℓ erf(λ X_ℓ·k) X_ℓ·v``."""

    @property
    @abc.abstractmethod
    def tag(self) -> str:
        """How the model differs from the paper's, for titles (``""`` for the paper's)."""


def _m_grid() -> np.ndarray:
    """Overlaps ``(5, INVARIANCE_GRID**2)`` of a grid of M, edges and origin included."""
    side = np.linspace(-1.0, 1.0, INVARIANCE_GRID)  # odd: the origin is a node
    kn = np.stack(np.meshgrid(side, side, indexing="ij")).reshape(2, -1)
    ov5 = np.zeros((5, kn.shape[1]))
    ov5[:2] = kn
    return ov5


@lru_cache(maxsize=256)
def _grid_gradient(model: Model, params: Params) -> np.ndarray:
    """The gradient table on M's grid (:func:`_m_grid`), read-only: what :func:`_on_m` and
    :func:`_key_free` read, computed once per model and parameters."""
    g = model.table(params, np.asarray(params.lam, dtype=np.float64), 1)(_m_grid())
    g.flags.writeable = False
    return g


@lru_cache(maxsize=256)
def _on_m(model: Model, params: Params) -> tuple[bool, bool]:
    """``(M invariant, origin critical)`` from the gradient table on a grid of M."""
    ov5 = _m_grid()
    kn = ov5[:2]
    g = _grid_gradient(model, params)
    scale = float(np.max(np.abs(g))) or 1.0
    off = overlap_velocity(ov5, g)[2:]
    origin = int(np.flatnonzero((kn[0] == 0.0) & (kn[1] == 0.0))[0])
    return (
        bool(np.all(np.abs(off) <= 1e-12 * scale)),
        bool(np.all(np.abs(g[:, origin]) <= 1e-12 * scale)),
    )


@lru_cache(maxsize=256)
def _key_free(model: Model, params: Params) -> bool:
    """Whether the key's three partials vanish on M's grid and at feasible points off M."""
    tab = model.table(params, np.asarray(params.lam, dtype=np.float64), 1)
    if _key_moves_on_m(model, params, tab):
        return False
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 6, KEY_FREE_POINTS))
    k, v = x / np.linalg.norm(x, axis=0), y / np.linalg.norm(y, axis=0)
    off = np.array([k[0], v[1], v[0], k[1], (k * v).sum(axis=0)])
    g = np.concatenate([_grid_gradient(model, params), tab(off)], axis=1)  # M's grid: kept
    scale = float(np.max(np.abs(g))) or 1.0
    return bool(np.all(np.abs(g[[0, 3, 4]]) <= 1e-12 * scale))


def _key_moves_on_m(model: Model, params: Params, tab) -> bool:
    """Whether a key partial on M's grid already exceeds ``1e-12`` of a bound of every
    partial over the feasible set (the table's ``|C|`` times :meth:`Model.feature_bounds`,
    with a margin of ``1e-6`` for rounding): then it exceeds ``1e-12`` of the largest
    partial over any points, so :func:`_key_free`'s test over every point fails too, and
    the points off M need not be computed. False where the model gives no finite bound
    (an unbounded ``sigma``): the whole test decides."""
    try:
        bounds = np.asarray(model.feature_bounds(params, 1), dtype=np.float64)
    except (ValueError, NotImplementedError):  # no bound: nothing to decide early
        return False
    C = np.abs(np.asarray(tab.C, dtype=np.float64))
    if C.ndim != 2 or C.shape[1] != bounds.shape[-1] or not np.all(np.isfinite(bounds)):
        return False
    top = float(np.max(C @ bounds)) * (1.0 + 1e-6)
    if not np.isfinite(top):
        return False
    g = _grid_gradient(model, params)  # M's grid, as the invariance check reads it
    return bool(np.max(np.abs(g[[0, 3, 4]])) > 1e-12 * top)
