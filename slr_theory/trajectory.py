r"""The trajectory engine shared by :func:`slr_theory.pgd`, :func:`slr_theory.sgd.sgd` and the experiments.

One step of the paper's projected gradient descent updates both unit vectors from
the same iterate, ``k <- normalize(k - alpha P_k grad_k R)``, likewise ``v``. Every
vector involved lies in ``span{k, v, k*, v*}``, so the step maps the five overlaps
to the next five exactly (:func:`overlap_step`). Equivalently, and this is how
:func:`run_pgd` runs, the iterates never leave the four-dimensional
``span{k0, v0, k*, v*}``: PGD in ``R^d`` *is* PGD in ``R^4`` on the coordinates of a
Cholesky factor of the initial Gram matrix (:func:`to_vectors`), ``d`` entering only
through the risk. A batch that starts on the invariant manifold runs the
two-dimensional map :func:`manifold_step`, which keeps ``|kappa|, |nu| <= 1`` exactly.

The gradient of every step comes from the risk engine (:mod:`slr_theory.engine`):
one coefficient table per temperature, tabulated in chunks under a schedule. A batch
at one fixed temperature of a closed-form model runs on that table's
:class:`~slr_theory.models.erf.kernel.LoopKernel` (its features as polynomials in ``kappa``,
within a few tens of ulp of the engine), about twenty-five NumPy calls a step instead
of eighty: at a few tens of runs a step costs its number of calls.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import engine
from .params import DOMAIN, Params, check_overlaps, check_params
from .results import html_table, text_table
from .validate import as_array, finite_real, positive_int, positive_real, progress_option

#: A run still moving more than this per step (max-norm of the overlaps) over its last
#: recorded interval has not settled: what the report and the figures say of it.
SETTLED_SPEED = 1e-9

#: Largest step size a run accepts (``alpha**2`` times a gradient must stay finite).
MAX_ALPHA = 1e100
#: Most steps a run accepts, and most records it keeps.
MAX_STEPS = 10**12
MAX_RECORDS = 10**8

# Public: the trajectories' result and schedule (what pgd and sgd return and take), and
# the coordinates the dynamics run on. The loop's building blocks (Group, Progress,
# run_pgd, price_records, the steps, temperatures, validate_run) serve the dynamics
# modules above and are documented in docs/api.md as internal.
__all__ = [
    "SETTLED_SPEED",
    "PGDResult",
    "PaperSchedule",
    "paper_schedule",
    "to_overlaps",
    "to_vectors",
]


class PaperSchedule:
    """The paper's temperature schedule ``lam_t = lam0 / (1 + c t)`` (vectorised over ``t``).

    Parameters
    ----------
    lam0 : float
        Initial temperature, ``> 0``.
    c : float, default 1e-4
        Decay rate, ``>= 0``.

    Examples
    --------
    >>> from slr_theory.trajectory import paper_schedule
    >>> s = paper_schedule(1.0)
    >>> print(s(0), s(10_000))
    1.0 0.5
    """

    def __init__(self, lam0: float, c: float = 1e-4):
        self.lam0 = positive_real(lam0, "lam0")
        self.c = finite_real(c, "c")
        if self.c < 0:
            raise ValueError(f"`c` must be >= 0, got {c!r}.")

    def __call__(self, t):
        out = self.lam0 / (1.0 + self.c * np.asarray(t, dtype=np.float64))
        return float(out) if np.ndim(out) == 0 else out

    def __repr__(self) -> str:
        return f"paper_schedule(lam0={self.lam0!r}, c={self.c!r})"


def paper_schedule(lam0: float, c: float = 1e-4) -> PaperSchedule:
    """The paper's temperature schedule ``lam_t = lam0 / (1 + c t)``.

    Parameters
    ----------
    lam0, c : float
        See :class:`PaperSchedule`.

    Returns
    -------
    PaperSchedule
    """
    return PaperSchedule(lam0, c)


def temperatures(schedule, steps: int, *, lam_max: float | None = None) -> np.ndarray | None:
    """Temperatures at steps ``0..steps`` (``None`` for no schedule), validated.

    Parameters
    ----------
    schedule : callable ``step -> lam`` or None
    steps : int
    lam_max : float, optional
        The model's largest temperature (:attr:`Params.lam_max`; default: the domain's).

    Returns
    -------
    ndarray of shape ``(steps + 1,)`` or None
    """
    if schedule is None:
        return None
    return temperatures_at(schedule, np.arange(steps + 1), lam_max=lam_max)


def temperatures_at(schedule, t: np.ndarray, *, lam_max: float | None = None) -> np.ndarray:
    """The temperatures of `schedule` at the steps `t` (any shape), validated.

    Parameters
    ----------
    schedule : callable ``step -> lam``
        A :class:`PaperSchedule` is evaluated on the whole array; any other callable once
        per step, with a Python ``int`` (a ``float`` beyond ``2**63``).
    t : ndarray
        Non-negative whole step numbers.
    lam_max : float, optional
        The model's largest temperature (:attr:`Params.lam_max`: softmax attention's is
        below the domain's); default: the domain's.

    Returns
    -------
    ndarray, the shape of `t`
        In the domain of ``lam`` (:data:`slr_theory.params.DOMAIN`, up to `lam_max`), else
        ``ValueError`` naming the first step outside it.
    """
    t = np.asarray(t)
    if isinstance(schedule, PaperSchedule):
        lam = np.asarray(schedule(t), dtype=np.float64).reshape(t.shape)
    elif callable(schedule):
        lam = np.empty(t.shape)
        for i, step in np.ndenumerate(t):
            step = int(step) if step < 2.0**63 else float(step)
            value = schedule(step)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(
                    f"`schedule` must return a real temperature, got {value!r} at step {step}."
                )
            lam[i] = float(value)
    else:
        raise ValueError(
            f"`schedule` must be None or a callable step -> lam, got {type(schedule).__name__}."
        )
    lo, hi = DOMAIN["lam"]
    if lam_max is not None and lam_max < hi:
        hi, what = float(lam_max), "the model's"
    else:
        what = "the domain of lam"
    bad = ~(np.isfinite(lam) & (lam >= lo) & (lam <= hi))
    if np.any(bad):
        i = np.unravel_index(int(np.argmax(bad)), bad.shape)
        step = t[i] if t.dtype.kind in "iu" else float(t[i])
        raise ValueError(
            f"`schedule` must return temperatures in [{lo:g}, {hi:g}] ({what}), "
            f"got {float(lam[i])!r} at step {step}."
        )
    return lam


def validate_run(params: Params, overlaps0, alpha, steps, record_every) -> np.ndarray:
    """Check the arguments every trajectory shares; return the overlaps as a float array.

    Parameters
    ----------
    params : Params
    overlaps0 : array_like, shape ``(..., 5)``
        Feasible initial overlaps.
    alpha : float
        Step size, ``0 < alpha <= 1e100`` (beyond, ``alpha**2`` overflows).
    steps : int
        ``0 <= steps <= 1e12``.
    record_every : int
        ``>= 1``; at most ``1e8`` records (``steps // record_every + 1``).

    Returns
    -------
    ndarray, shape ``(..., 5)``
    """
    check_params(params)
    ov = as_array(overlaps0, "overlaps0").copy()
    if ov.shape[-1:] != (5,):
        raise ValueError(f"`overlaps0` must have last dimension 5, got shape {ov.shape}.")
    ov = np.stack(check_overlaps(*np.moveaxis(ov, -1, 0), d=params.d), axis=-1)  # projected
    positive_real(alpha, "alpha", upper=MAX_ALPHA)
    steps = positive_int(steps, "steps", allow_zero=True, upper=MAX_STEPS)
    every = positive_int(record_every, "record_every")
    if steps // every + 1 > MAX_RECORDS:
        raise ValueError(
            f"`record_every` must keep the records (steps // record_every + 1) at most "
            f"{MAX_RECORDS:g}, got record_every={record_every!r} for steps={steps}."
        )
    return ov


class Progress:
    """Context manager giving an ``update(n)`` callable (a tqdm bar if ``progress is True``).

    Parameters
    ----------
    progress : bool, callable or None
        ``True``: a tqdm bar; a callable: called with the number of steps done.
    total : int
    desc : str
    unit : str
        What one count is (tqdm's ``unit``).
    """

    def __init__(self, progress, total: int, desc: str, unit: str = "step"):
        self.bar = None
        progress = progress_option(progress)
        self.update = progress if callable(progress) else None
        if progress is True:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit=unit, desc=desc)
            self.update = self.bar.update

    def __enter__(self):
        return self.update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


@dataclass(frozen=True)
class PGDResult:
    """Recorded trajectory (PGD or SGD).

    Attributes
    ----------
    step : ndarray, shape (n_records,)
        Step numbers ``0, record_every, ..., steps``.
    overlaps : ndarray, shape (n_records, ..., 5)
    risk : ndarray, shape (n_records, ...)
    lam : ndarray, shape (n_records,)
        Temperature used at each recorded step.
    """

    step: np.ndarray
    overlaps: np.ndarray
    risk: np.ndarray
    lam: np.ndarray

    #: Runs a text or HTML table shows (the first ones; the arrays hold every run).
    SHOWN = 10

    def table(self) -> tuple:
        """``(header, rows, caption)``: each run's end, at most :attr:`SHOWN` of them.

        Returns
        -------
        tuple
        """
        ends = self.overlaps[-1].reshape(-1, 5)
        risks = np.asarray(self.risk[-1]).reshape(-1)
        starts = np.asarray(self.risk[0]).reshape(-1)
        rows = [
            [i, *(f"{x:.4f}" if abs(x) >= 5e-5 else "0.0000" for x in o), f"{r0:.6g}", f"{r:.6g}"]
            for i, (o, r0, r) in enumerate(zip(ends, starts, risks, strict=True))
            if i < self.SHOWN
        ]
        runs = ends.shape[0]
        more = f"; the first {self.SHOWN} shown" if runs > self.SHOWN else ""
        lam = np.asarray(self.lam)
        temp = f"λ = {lam[0]:g}" if np.all(lam == lam[0]) else f"λ from {lam[0]:g} to {lam[-1]:g}"
        caption = (
            f"{runs} {'run' if runs == 1 else 'runs'}, {int(self.step[-1])} steps "
            f"({len(self.step)} records), {temp}{more}"
        )
        header = ["run", "kappa", "nu", "theta", "eta", "rho", "risk at 0", "risk at end"]
        return header, rows, caption

    def _repr_html_(self) -> str:
        """What a notebook shows: where each run ends and its risk there."""
        return html_table(*self.table())

    def __repr__(self) -> str:
        """The same table as text (the records are one attribute away)."""
        header, rows, caption = self.table()
        return text_table(header, rows, "PGDResult: " + caption)


def price_records(params: Params, rec, out, lam_rec, shape) -> PGDResult:
    """Package records ``(n_rec, 5, n)`` and price them in one vectorised engine call.

    Parameters
    ----------
    params : Params
    rec : ndarray ``(n_rec,)``
        Step numbers.
    out : ndarray ``(n_rec, 5, n)``
        Recorded overlaps.
    lam_rec : ndarray ``(n_rec,)``
        The temperature of each record.
    shape : tuple
        Batch shape of the trajectories (``n = prod(shape)``).

    Returns
    -------
    PGDResult
    """
    overlaps = np.moveaxis(out, 1, -1)  # (n_rec, n, 5)
    lam = np.broadcast_to(np.asarray(lam_rec, dtype=np.float64)[:, None], out[:, 0].shape)
    parts = engine.components(params, tuple(out[:, i] for i in range(5)), lam=lam)
    risks = params.eps**2 + parts.sum(axis=0)
    return PGDResult(
        np.asarray(rec),
        overlaps.reshape(len(rec), *shape, 5),
        risks.reshape(len(rec), *shape),
        np.asarray(lam_rec),
    )


# --- the step maps ----------------------------------------------------------------------


def overlap_step(ov5: np.ndarray, G: np.ndarray, alpha) -> np.ndarray:
    """One exact PGD step on overlaps ``(5, n)`` given the partials ``(5, n)``; unchecked.

    ``ov5 + overlap_increment(ov5, G, alpha)``: the closed-form map is written out once, in
    :func:`overlap_increment` (the public door to it is
    :func:`slr_theory.dynamics.pgd_step`).

    Parameters
    ----------
    ov5, G : ndarray, shape ``(5, n)``
        Overlaps and partials, rows ``(kappa, nu, theta, eta, rho)``.
    alpha : float or ndarray ``(n,)``

    Returns
    -------
    ndarray, shape ``(5, n)``
    """
    return ov5 + overlap_increment(ov5, G, alpha)


def overlap_increment(ov5: np.ndarray, G: np.ndarray, alpha) -> np.ndarray:
    r"""What one exact PGD step adds to the overlaps ``(5, n)``, to the precision of the partials.

    With ``A = k . grad_k R``, ``B = v . grad_v R`` and the flow's velocity ``u``
    (:func:`slr_theory.geometry.overlap_velocity`), the step is
    ``k <- (k - alpha P_k grad_k R) i_k``, ``i_k = (1 + alpha^2 |P_k grad_k R|^2)^{-1/2}``
    (likewise ``v``), so

    .. math::

        \Delta\kappa = \alpha u_\kappa i_k + \kappa (i_k - 1), \qquad
        \Delta\rho = (\alpha u_\rho + \alpha^2 c_2) i_k i_v + \rho (i_k i_v - 1),

    (``nu, theta`` with ``i_v``, ``eta`` with ``i_k``), ``i - 1 = -alpha^2 Q i / (1 + 1/i)``
    written without cancellation: an increment far below the rounding of the overlaps
    (``1e-20`` on a plateau, where ``kappa + Delta kappa == kappa``) keeps the relative
    precision of the partials. Unchecked.

    Parameters
    ----------
    ov5, G : ndarray, shape ``(5, n)``
        Overlaps and partials, rows ``(kappa, nu, theta, eta, rho)``.
    alpha : float or ndarray ``(n,)``

    Returns
    -------
    ndarray, shape ``(5, n)``
    """
    k, n, t, e, r = ov5
    rk, rn, rt, re, rr = G
    A = k * rk + e * re + r * rr
    Bv = t * rt + n * rn + r * rr
    X = rt * k + rn * e  # grad_v R . k minus its rho part
    Y = rk * t + re * n  # grad_k R . v minus its rho part
    al2 = alpha * alpha
    qk = al2 * (rk * rk + re * re + rr * (rr + 2.0 * Y) - A * A)
    qv = al2 * (rt * rt + rn * rn + rr * (rr + 2.0 * X) - Bv * Bv)
    sk = np.sqrt(1.0 + qk)
    sv = np.sqrt(1.0 + qv)
    ik, iv = 1.0 / sk, 1.0 / sv
    dk = -qk / (sk * (1.0 + sk))  # i_k - 1
    dv = -qv / (sv * (1.0 + sv))
    out = np.empty_like(ov5)
    out[0] = alpha * (A * k - rk - rr * t) * ik + k * dk
    out[1] = alpha * (Bv * n - rn - rr * e) * iv + n * dv
    out[2] = alpha * (Bv * t - rt - rr * k) * iv + t * dv
    out[3] = alpha * (A * e - re - rr * n) * ik + e * dk
    u_rho = (A + Bv) * r - (X + Y + 2.0 * rr)
    c2 = A * Bv * r - A * (X + rr) - Bv * (Y + rr) + rk * rt + re * rn + rr * (A + Bv - r * rr)
    out[4] = (alpha * u_rho + al2 * c2) * (ik * iv) + r * (dk + dv + dk * dv)
    return out


def to_vectors(ov5: np.ndarray) -> np.ndarray:
    """Coordinates ``(8, n)`` of ``k`` (rows 0-3) and ``v`` (rows 4-7) realising overlaps ``(5, n)``.

    In the orthonormal basis ``(k*, v*, e3, e4)`` of ``span{k*, v*, k, v}``:
    ``k = (kappa, eta, k3, 0)``, ``v = (theta, nu, v3, v4)`` (a Cholesky factor of
    the Gram matrix; ``v3 = 0`` when ``k`` lies in ``span{k*, v*}``).

    Parameters
    ----------
    ov5 : ndarray, shape ``(5, n)``
        Feasible overlaps (unchecked).

    Returns
    -------
    ndarray, shape ``(8, n)``
    """
    k, n, t, e, r = ov5
    out = np.empty((8, *np.shape(k)))  # written row by row: no stack of eight arrays
    k3 = np.sqrt(np.maximum(1.0 - k * k - e * e, 0.0))
    v3 = np.where(k3 > 0, (r - k * t - e * n) / np.where(k3 > 0, k3, 1.0), 0.0)
    v4 = np.sqrt(np.maximum(1.0 - t * t - n * n - v3 * v3, 0.0))
    out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7] = k, e, k3, 0.0, t, n, v3, v4
    return out


_OV_ROWS = np.array([0, 5, 4, 1])  # kappa = k.k*, nu = v.v*, theta = v.k*, eta = k.v*


def to_overlaps(kv: np.ndarray) -> np.ndarray:
    """The overlaps ``(5, n)`` of coordinates ``kv`` ``(8, n)`` (see :func:`to_vectors`).

    Parameters
    ----------
    kv : ndarray, shape ``(8, n)``

    Returns
    -------
    ndarray, shape ``(5, n)``
    """
    out = np.empty((5, kv.shape[1]))
    out[:4] = kv[_OV_ROWS]
    out[4] = (kv[:4] * kv[4:]).sum(axis=0)
    return out


def vector_step(kv: np.ndarray, gr: np.ndarray, alpha) -> np.ndarray:
    """One PGD step on the coordinates ``(8, n)``, given the overlap partials ``(5, n)``.

    :func:`coordinate_step` on these arrays; agrees with :func:`overlap_step` to
    rounding and costs fewer array operations.

    Parameters
    ----------
    kv : ndarray, shape ``(8, n)``
    gr : ndarray, shape ``(5, n)``
    alpha : float or ndarray ``(n,)``

    Returns
    -------
    ndarray, shape ``(8, n)``
    """
    n = kv.shape[1]
    S = np.ascontiguousarray(kv.T).reshape(n, 2, 4)
    coordinate_step(S, step_gradient(gr) * np.reshape(alpha, (-1, 1)))
    return S.reshape(n, 8).T


#: Where :func:`coordinate_step` takes each partial of ``(kappa, nu, theta, eta, rho)``:
#: ``G[:, :8]`` is ``grad R`` without its ``rho`` part, in the coordinates of ``k`` then
#: ``v`` (``rk, re`` along ``k*, v*`` for ``k``; ``rt, rn`` for ``v``), ``G[:, 8]`` is ``rr``.
STEP_COLUMNS = (0, 3, None, None, 2, 1, None, None, 4)
_AT = np.array([j for j, r in enumerate(STEP_COLUMNS) if r is not None])
_ROWS_AT = np.array([r for r in STEP_COLUMNS if r is not None])


def step_gradient(rows: np.ndarray) -> np.ndarray:
    """The partials ``(5, n)`` in the layout ``(n, 9)`` of :func:`coordinate_step`."""
    G = np.zeros((rows.shape[1], 9))
    G[:, _AT] = rows[_ROWS_AT].T
    return G


def coordinate_step(S: np.ndarray, G: np.ndarray) -> None:
    """One PGD step, in place, on coordinates held run by run: the loop's step.

    ``grad_k R = rk k* + re v* + rr v`` and ``grad_v R = rt k* + rn v* + rr k``: the
    projection on the tangent space, the step and the normalisation of
    :func:`vector_step` in nine NumPy calls, on ``S`` ``(n, 2, 4)`` (``k`` then ``v``,
    :func:`to_vectors`).

    Parameters
    ----------
    S : ndarray, shape ``(n, 2, 4)``
        Overwritten with the next iterate.
    G : ndarray, shape ``(n, 9)``
        The step size times the partials, placed as :data:`STEP_COLUMNS` says
        (:func:`step_gradient`).
    """
    n = S.shape[0]
    g = G[:, 8, None, None] * S[:, ::-1]
    g += G[:, :8].reshape(n, 2, 4)
    g -= np.vecdot(g, S)[:, :, None] * S
    S -= g
    S /= np.sqrt(np.vecdot(S, S))[:, :, None]


def manifold_step(kn: np.ndarray, gr: np.ndarray, alpha) -> np.ndarray:
    """Exact PGD on M: ``x <- (x - alpha R_x (1 - x^2)) / sqrt(1 + alpha^2 R_x^2 (1 - x^2))``.

    ``|x| <= 1`` is preserved: ``1 - x_new^2 = (1 - x^2)(1 + alpha x R_x)^2 / norm^2``.

    Parameters
    ----------
    kn, gr : ndarray, shape ``(2, n)``
        ``(kappa, nu)`` and ``(dR/dkappa, dR/dnu)``.
    alpha : float or ndarray ``(n,)``

    Returns
    -------
    ndarray, shape ``(2, n)``
    """
    return manifold_update(kn, alpha * gr)


def manifold_update(kn: np.ndarray, ag: np.ndarray) -> np.ndarray:
    """:func:`manifold_step` given ``ag``, the step size times the gradient."""
    one_m = (1.0 - kn) * (1.0 + kn)
    return (kn - ag * one_m) / np.sqrt(1.0 + ag * ag * one_m)


# --- the batched loop --------------------------------------------------------------------


@dataclass
class Group:
    """What the runs of a batch share: parameters, a step size and a temperature law.

    Attributes
    ----------
    params : Params
    alpha : float
    lam : ndarray or None
        Temperatures at steps ``0..steps`` (:func:`temperatures`), or None for ``params.lam``.
    """

    params: Params
    alpha: float
    lam: np.ndarray | None


_CHUNK = 4096


def run_pgd(ov5: np.ndarray, group: Group, steps: int, record_every: int, progress=None):
    """Exact PGD of overlaps ``ov5`` ``(5, n)`` with the engine's gradient, no per-step checks.

    A batch of at most :data:`KERNEL_RUNS` runs at one temperature of a closed-form model
    takes the gradient from its table's :func:`~slr_theory.engine.loop_kernel`; others
    from the table (its interpolant for a model by quadrature), one table per chunk of
    4096 steps under a schedule. A batch that starts on M runs :func:`manifold_update`;
    otherwise :func:`coordinate_step`.

    Parameters
    ----------
    ov5 : ndarray, shape ``(5, n)``
        Validated initial overlaps.
    group : Group
        What the runs share.
    steps, record_every : int
    progress : callable, optional
        Called with the number of steps done after each chunk of 4096 steps.

    Returns
    -------
    rec : ndarray ``(n_records,)``
        The recorded steps (every `record_every`, and the last).
    out : ndarray ``(n_records, 5, n)``
        The recorded overlaps.
    """
    rec, out, _ = run_coordinates(ov5, None, group, steps, record_every, progress)
    return rec, out


def run_coordinates(
    ov5: np.ndarray,
    kv: np.ndarray | None,
    group: Group,
    steps: int,
    record_every: int,
    progress=None,
):
    """:func:`run_pgd` from overlaps or from the coordinates that realise them, and the
    coordinates it ends at.

    Near the boundary of the feasible set (``k`` or ``v`` almost in ``span{k*, v*}``) the
    coordinates hold what the overlaps round away (``k3 = 1e-9`` where ``eta = 1``):
    a long run in pieces goes on from the coordinates, not from the overlaps.

    Parameters
    ----------
    ov5 : ndarray, shape ``(5, n)``
        The overlaps of the start (of ``kv`` when given).
    kv : ndarray ``(8, n)`` or None
        The coordinates of the start (:func:`to_vectors`'s layout), or None: from `ov5`.
    group, steps, record_every, progress
        As :func:`run_pgd`.

    Returns
    -------
    rec, out
        As :func:`run_pgd`.
    kv : ndarray ``(8, n)`` or None
        The final coordinates; None for a batch on M (its state is ``(kappa, nu)``).
    """
    n = ov5.shape[1]
    rec = sorted(set(range(0, steps + 1, record_every)) | {steps})
    out = np.empty((len(rec), 5, n))
    out[0] = ov5
    if kv is None and not np.any(ov5[2:]):  # a batch on M stays there: the 2-D map
        _manifold_run(ov5, _manifold_source(group, n), rec, out, progress)
        return np.array(rec), out, None
    S = np.ascontiguousarray((to_vectors(ov5) if kv is None else kv).T).reshape(n, 2, 4)
    _coordinate_run(S, _coordinate_source(group, n), rec, out, progress)
    return np.array(rec), out, S.reshape(n, 8).T.copy()


# What the gradient sources read off M, one row per run: ext = (1, kappa, eta, theta,
# nu, rho) (what the loop kernel reads; (kappa, eta, theta, nu) are S[:, :, :2])
_EXT_OVERLAPS = np.array([1, 4, 3, 2, 5])  # (kappa, nu, theta, eta, rho) among ext


#: Most runs of a batch the loop kernel serves. A kernel step is about twenty-five NumPy
#: calls but gathers ``KERNEL_NODES x F`` coefficients per run; the engine's features are
#: about sixty calls on cache-sized blocks. Below, the calls dominate and the kernel
#: is 3-4 times faster; from a thousand runs on, the features are (benchmarks/engine.py).
KERNEL_RUNS = 512


@lru_cache(maxsize=64)
def _step_kernel(params: Params, alpha: float, on_manifold: bool):
    """The loop kernel of ``params`` at ``params.lam`` (the table's hook), its rows placed
    for the step and times `alpha`, or None where the table has none; built once (a long
    run in pieces asks for it again and again)."""
    kernel = engine.table(params, params.lam, 1).loop_kernel()
    if kernel is None:
        return None
    if on_manifold:
        return kernel.on_manifold().permuted((0, 1), alpha)
    return kernel.permuted(STEP_COLUMNS, alpha)


def _kernel_serves(grp: Group, n: int, on_manifold: bool) -> bool:
    """Whether `n` runs at a fixed temperature take their gradient from the loop kernel."""
    return n <= KERNEL_RUNS and _step_kernel(grp.params, grp.alpha, on_manifold) is not None


def _coordinate_source(grp: Group, n: int):
    """The gradient source of a batch of `n` runs off M: ``chunks(start, stop)`` gives, for each step
    ``j`` of the chunk, ``(j, X) -> (n, 9)``, the step size times the partials at
    ``X = (1, kappa, eta, theta, nu, rho)`` ``(n, 6)``, in the layout of :func:`step_gradient`.

    At one temperature, the table's loop kernel where it has one (:meth:`RiskTable.loop_kernel`);
    under a schedule, its sweep kernels (:meth:`RiskTable.sweep_kernel`) at the steps
    they serve; otherwise the table (its interpolant for a model by quadrature), one per
    chunk under a schedule, with its rows placed for the step where the table places them
    (:meth:`RiskTable.placed`).
    """
    a = grp.alpha
    if grp.lam is None:
        tab = engine.table(grp.params, grp.params.lam, 1)
        if _kernel_serves(grp, n, False):
            kernel = _step_kernel(grp.params, a, False)

            def fixed(j, X):
                return kernel(X)

            return lambda start, stop: fixed
        tab = tab.prepared()

        def prepared(j, X):
            return step_gradient(tab(X.T.take(_EXT_OVERLAPS, axis=0))) * a

        return lambda start, stop: prepared

    def engine_chunk(start, stop):
        tabs = engine.table(grp.params, grp.lam[start:stop], 1)
        placed = tabs.placed(STEP_COLUMNS, a)  # the rows placed for the step, times a
        if placed is not None:
            return lambda j, X: placed.at(j)(X.T.take(_EXT_OVERLAPS, axis=0)).T
        return lambda j, X: step_gradient(tabs.at(j)(X.T.take(_EXT_OVERLAPS, axis=0))) * a

    # the table's kernels along the whole schedule (segments span more steps than a
    # chunk), built once; the engine's tables only for a chunk with steps they miss
    sweep = None
    if n <= KERNEL_RUNS:
        sweep = engine.table(grp.params, grp.lam[:1], 1).sweep_kernel(
            lambda lam: engine.table(grp.params, lam, 1), grp.lam
        )
    if sweep is None:
        return engine_chunk
    sweep = sweep.permuted(STEP_COLUMNS, a)

    def chunk(start, stop):
        if sweep.serves(start, stop):
            return lambda j, X: sweep(start + j, X)
        fallback = engine_chunk(start, stop)

        def step(j, X):
            rows = sweep(start + j, X)
            return fallback(j, X) if rows is None else rows

        return step

    return chunk


def _manifold_source(grp: Group, n: int):
    """As :func:`_coordinate_source` on M: ``(j, X) -> (n, 2)``, the step size times
    ``(dR/dkappa, dR/dnu)`` at ``X = (1, kappa, 0, 0, nu, 0)``."""
    a = grp.alpha
    if grp.lam is None:
        tab = engine.table(grp.params, grp.params.lam, 1)
        if _kernel_serves(grp, n, True):
            kernel = _step_kernel(grp.params, a, True)

            def fixed(j, X):
                return kernel(X)

            return lambda start, stop: fixed
        tab = tab.prepared()
        return lambda start, stop: lambda j, X: tab.manifold_gradient(X[:, 1::3].T).T * a

    def chunk(start, stop):
        tabs = engine.table(grp.params, grp.lam[start:stop], 1)
        return lambda j, X: tabs.at(j).manifold_gradient(X[:, 1::3].T).T * a

    return chunk


def _coordinate_run(S, chunks, rec, out, progress) -> None:
    """:func:`run_pgd` off M: :func:`coordinate_step` on coordinates held run by run.

    ``S`` ``(n, 2, 4)`` (contiguous: every call of the step then runs one loop over
    its values; overwritten with the last iterate) holds ``k``'s and ``v``'s coordinates
    (:func:`to_vectors`); ``chunks(start, stop)`` gives the gradient of each step of a
    chunk, ``(j, ext) -> (n, 9)`` (:func:`_coordinate_source`).
    """
    n = S.shape[0]
    ext = np.ones((n, 6))
    pairs = ext[:, 1:5].reshape(n, 2, 2)  # S[:, :, :2] is (kappa, eta, theta, nu)
    steps, nxt = rec[-1], 1
    for start in range(0, steps, _CHUNK):
        stop = min(start + _CHUNK, steps)
        gradient = chunks(start, stop)
        for t in range(start, stop):
            pairs[...] = S[:, :, :2]
            np.vecdot(S[:, 0], S[:, 1], out=ext[:, 5])
            coordinate_step(S, gradient(t - start, ext))
            if t + 1 == rec[nxt]:
                out[nxt] = to_overlaps(S.reshape(n, 8).T)
                nxt += 1
        if progress is not None:
            progress(stop - start)


def _manifold_run(ov5, chunks, rec, out, progress) -> None:
    """:func:`run_pgd` on M: :func:`manifold_update` on ``(kappa, nu)``, a view into
    ``X = (1, kappa, 0, 0, nu, 0)`` ``(n, 6)``, what the loop kernel reads off M too."""
    n = ov5.shape[1]
    X = np.zeros((n, 6))
    X[:, 0] = 1.0
    kn = X[:, 1::3]  # (kappa, nu), a view
    kn[...] = ov5[:2].T
    steps, nxt = rec[-1], 1
    for start in range(0, steps, _CHUNK):
        stop = min(start + _CHUNK, steps)
        gradient = chunks(start, stop)
        for t in range(start, stop):
            kn[...] = manifold_update(kn, gradient(t - start, X))
            if t + 1 == rec[nxt]:
                out[nxt, :2], out[nxt, 2:] = kn.T, 0.0
                nxt += 1
        if progress is not None:
            progress(stop - start)
