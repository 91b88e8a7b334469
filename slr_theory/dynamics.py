r"""Training dynamics (MATH.md section 6): the paper's projected gradient descent, exactly.

One PGD step updates both unit vectors from the same iterate,
``k <- normalize(k - alpha P_k grad_k R)``, ``v <- normalize(v - alpha P_v grad_v R)``
with ``P_x g = g - (x . g) x``. Every vector involved lies in ``span{k, v, k*, v*}``,
so the step maps the five overlaps to the next five exactly, at a cost
independent of ``d``. With ``R_x`` the overlap partials, ``A = kappa R_kappa +
eta R_eta + rho R_rho``, ``B = theta R_theta + nu R_nu + rho R_rho`` and
``cA = 1 + alpha A``, ``cB = 1 + alpha B``:

.. math::

    \tilde k\cdot k^* &= c_A\kappa - \alpha(R_\kappa + R_\rho\theta), &
    \tilde k\cdot v^* &= c_A\eta - \alpha(R_\eta + R_\rho\nu), \\
    \tilde v\cdot k^* &= c_B\theta - \alpha(R_\theta + R_\rho\kappa), &
    \tilde v\cdot v^* &= c_B\nu - \alpha(R_\nu + R_\rho\eta), \\
    \|\tilde k\|^2 &= 1 + \alpha^2(\|\nabla_k R\|^2 - A^2), &
    \|\tilde v\|^2 &= 1 + \alpha^2(\|\nabla_v R\|^2 - B^2),

with ``||grad_k R||^2 = R_kappa^2 + R_eta^2 + R_rho^2 + 2 R_kappa R_rho theta + 2 R_eta R_rho nu``
(and symmetrically for ``v``), and ``k~ . v~`` expanded in the Gram entries
(:func:`pgd_step`).

Equivalently, and this is how :func:`pgd` runs: the iterates never leave the
four-dimensional ``span{k0, v0, k*, v*}``, so PGD in ``R^d`` *is* PGD in ``R^4``
with ``k* = e1``, ``v* = e2`` and the coordinates of a Cholesky factor of the
initial Gram matrix, ``d`` entering only through the risk. Both forms are
tested against PGD on explicit vectors in ``R^d``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import _kernel
from ._validate import finite_real, positive_int, positive_real
from .params import Params, check_overlaps
from .risk import _risk_lam, risk_grad_at

__all__ = [
    "PGDResult",
    "PaperSchedule",
    "paper_schedule",
    "pgd",
    "pgd_step",
    "pgd_vectors",
    "sample_initial_overlaps",
]


class PaperSchedule:
    """The paper's temperature schedule ``lam_t = lam0 / (1 + c t)`` (vectorised over ``t``).

    Examples
    --------
    >>> from slr_theory.dynamics import paper_schedule
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
    """The paper's temperature schedule ``lam_t = lam0 / (1 + c t)``; see :class:`PaperSchedule`."""
    return PaperSchedule(lam0, c)


def _lam_table(params: Params, schedule, steps: int) -> np.ndarray | None:
    """Temperatures at steps ``0..steps`` (``None`` for the constant ``params.lam``)."""
    if schedule is None:
        return None
    if isinstance(schedule, PaperSchedule):
        lam = schedule(np.arange(steps + 1))
    elif callable(schedule):
        lam = np.array([float(schedule(t)) for t in range(steps + 1)])
    else:
        raise ValueError(
            f"`schedule` must be None or a callable step -> lam, got {type(schedule).__name__}."
        )
    bad = ~(np.isfinite(lam) & (lam > 0))
    if np.any(bad):
        t = int(np.argmax(bad))
        raise ValueError(
            f"`schedule` must return positive finite temperatures, got {float(lam[t])!r} at step {t}."
        )
    return lam


def pgd_step(overlaps: ArrayLike, grad: ArrayLike, alpha: float) -> np.ndarray:
    """One exact PGD step on overlaps ``(..., 5)`` given the partials ``grad`` ``(..., 5)``.

    Unchecked (an inner-loop building block); :func:`pgd` validates its input once.
    """
    ov, gr = np.broadcast_arrays(np.asarray(overlaps, float), np.asarray(grad, float))
    shape = ov.shape
    flat = _kernel.pgd_step(ov.reshape(-1, 5).T, gr.reshape(-1, 5).T, alpha)
    return flat.T.reshape(shape)


@dataclass(frozen=True)
class PGDResult:
    """Recorded PGD trajectory.

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


class _progress:
    """Context manager giving an ``update(n)`` callable (a tqdm bar if ``progress is True``)."""

    def __init__(self, progress, total: int, desc: str):
        self.bar = None
        self.update = progress if callable(progress) else None
        if progress is True:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, unit="step", desc=desc)
            self.update = self.bar.update
        elif not (progress is False or progress is None or callable(progress)):
            raise ValueError(f"`progress` must be a bool or a callable, got {progress!r}.")

    def __enter__(self):
        return self.update

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


@dataclass
class _Group:
    """Columns of a batch that share parameters, a step size and a temperature law."""

    cols: slice
    params: Params
    alpha: float
    lam: np.ndarray | None  # temperatures at steps 0..steps, or None (params.lam)


_CHUNK = 4096


def _run(ov5: np.ndarray, groups: list[_Group], steps: int, record_every: int, progress=None):
    """Exact PGD of overlaps ``ov5`` ``(5, n)``: the fused kernel, no per-step validation.

    Returns the record steps and the recorded overlaps ``(n_records, 5, n)``.
    """
    n = ov5.shape[1]
    rec = sorted(set(range(0, steps + 1, record_every)) | {steps})
    out = np.empty((len(rec), 5, n))
    out[0] = ov5
    nxt = 1
    single = len(groups) == 1
    on_m = single and not np.any(ov5[2:])
    alpha = (
        groups[0].alpha
        if single
        else np.concatenate([np.full(grp.cols.stop - grp.cols.start, grp.alpha) for grp in groups])
    )
    sc_cols = np.empty((3 + _kernel._NSER, n))  # the kernel's scalars per column (mixed batches)
    tables = [None] * len(groups)
    for i, grp in enumerate(groups):
        if grp.lam is None:
            tables[i] = _kernel.coefficient_table(grp.params, grp.params.lam)
            sc_cols[:, grp.cols] = tables[i][1][:, None]
    # on M: (kappa, nu); otherwise the coordinates of k and v in R^4 (_kernel.to_vectors)
    state = ov5[:2].copy() if on_m else _kernel.to_vectors(ov5)
    for start in range(0, steps, _CHUNK):
        stop = min(start + _CHUNK, steps)
        chunk = [
            None if grp.lam is None else _kernel.coefficient_table(grp.params, grp.lam[start:stop])
            for grp in groups
        ]
        for t in range(start, stop):
            if single:
                C, sc = (
                    tables[0]
                    if chunk[0] is None
                    else (chunk[0][0][t - start], chunk[0][1][t - start])
                )
                if on_m:
                    gr = _kernel.manifold_grad(
                        state, sc[0], sc[1], C[0, _kernel.STABLE_COL], C[1, _kernel.NU_COL]
                    )
                    state = _kernel.manifold_step(state, gr, alpha)
                else:
                    ov = _kernel.to_overlaps(state)
                    state = _kernel.vector_step(state, C @ _kernel.features(ov, sc), alpha)
            else:
                for i, grp in enumerate(groups):
                    if chunk[i] is not None:
                        sc_cols[:, grp.cols] = chunk[i][1][t - start][:, None]
                ov = _kernel.to_overlaps(state)
                phi = _kernel.features(ov, sc_cols)
                gr = np.empty((5, n))
                for i, grp in enumerate(groups):
                    C = tables[i][0] if chunk[i] is None else chunk[i][0][t - start]
                    gr[:, grp.cols] = C @ phi[:, grp.cols]
                state = _kernel.vector_step(state, gr, alpha)
            if t + 1 == rec[nxt]:
                if on_m:
                    out[nxt, :2], out[nxt, 2:] = state, 0.0
                else:
                    out[nxt] = _kernel.to_overlaps(state)
                nxt += 1
        if progress is not None:
            progress(stop - start)
    return np.array(rec), out


def _validate_run(params: Params, overlaps0, alpha, steps, record_every) -> np.ndarray:
    if not isinstance(params, Params):
        raise ValueError(f"`params` must be a slr_theory.Params, got {type(params).__name__}.")
    ov = np.array(overlaps0, dtype=np.float64)
    if ov.shape[-1:] != (5,):
        raise ValueError(f"`overlaps0` must have last dimension 5, got shape {ov.shape}.")
    check_overlaps(*np.moveaxis(ov, -1, 0), d=params.d)
    positive_real(alpha, "alpha")
    if isinstance(steps, bool) or int(steps) != steps or steps < 0:
        raise ValueError(f"`steps` must be a non-negative integer, got {steps!r}.")
    positive_int(record_every, "record_every")
    return ov


def pgd(
    params: Params,
    overlaps0: ArrayLike,
    alpha: float,
    steps: int,
    schedule: Callable[[int], float] | None = None,
    record_every: int = 1,
    progress: bool | Callable[[int], object] = False,
) -> PGDResult:
    """The paper's projected gradient descent, computed exactly on the overlaps.

    Parameters
    ----------
    params : Params
        Model parameters (``params.lam`` unless `schedule` is given).
    overlaps0 : array_like, shape (..., 5)
        Initial overlaps in :data:`slr_theory.OVERLAP_NAMES` order; a batch of repeats.
    alpha : float
        Step size.
    steps : int
        Number of steps.
    schedule : callable ``step -> lam``, optional
        Temperature schedule, e.g. :func:`paper_schedule` (``lam_t = lam0 / (1 + c t)``).
        ``None`` keeps ``params.lam``.
    record_every : int
        Record every this many steps (and the last step).
    progress : bool or callable
        ``True`` shows a tqdm bar; a callable is called with the number of steps
        done after each chunk of 4096 steps.

    Returns
    -------
    PGDResult
        ``step`` ``(n_records,)``, ``overlaps`` ``(n_records, ..., 5)``, ``risk``
        ``(n_records, ...)`` (at the temperature of that step) and ``lam``.

    Notes
    -----
    The overlaps are validated once; every step then runs the fused kernel of
    :mod:`slr_theory._kernel` (the same closed form as :func:`slr_theory.risk_grad`,
    each special function evaluated once). A batch that starts exactly on the
    invariant manifold stays there exactly (the off-M partials are exact zeros),
    and is run with the two-dimensional kernel of MATH.md section 6.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.dynamics import pgd
    >>> res = pgd(Params.paper(lam=0.1), [0.1, 0.1, 0.0, 0.0, 0.0], 4e-3, 400, record_every=200)
    >>> res.step.tolist(), bool(res.risk[-1] < res.risk[0])
    ([0, 200, 400], True)
    """
    ov = _validate_run(params, overlaps0, alpha, steps, record_every)
    steps = int(steps)
    lam = _lam_table(params, schedule, steps)
    shape = ov.shape[:-1]
    ov5 = ov.reshape(-1, 5).T.copy()
    group = _Group(slice(0, ov5.shape[1]), params, float(alpha), lam)
    with _progress(progress, steps, "pgd") as update:
        rec, out = _run(ov5, [group], steps, int(record_every), progress=update)
    lam_rec = np.full(rec.shape, params.lam) if lam is None else lam[rec]
    return _result(params, rec, out, lam_rec, shape)


def _result(params: Params, rec, out, lam_rec, shape) -> PGDResult:
    """Package records ``(n_rec, 5, n)`` and price them in one vectorised risk call."""
    overlaps = np.moveaxis(out, 1, -1)  # (n_rec, n, 5)
    risks = _risk_lam(params, lam_rec[:, None], tuple(out[:, i] for i in range(5)))
    return PGDResult(
        rec,
        overlaps.reshape(len(rec), *shape, 5),
        np.asarray(risks).reshape(len(rec), *shape),
        lam_rec,
    )


def pgd_vectors(
    params: Params,
    k0: np.ndarray,
    v0: np.ndarray,
    k_star: np.ndarray,
    v_star: np.ndarray,
    alpha: float,
    steps: int,
    schedule: Callable[[int], float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Reference PGD on explicit vectors in ``R^d`` (closed-form gradient); returns final ``(k, v)``.

    Each step evaluates :func:`slr_theory.risk_grad_at` (validated, general) at the
    current vectors: deliberately independent of the overlap kernel it checks.
    """
    k, v = np.array(k0, dtype=np.float64), np.array(v0, dtype=np.float64)
    lam = _lam_table(params, schedule, int(steps))
    p = params
    for t in range(int(steps)):
        if lam is not None and lam[t] != p.lam:
            p = params.replace(lam=float(lam[t]))
        gk, gv = risk_grad_at(p, k, v, k_star, v_star, riemannian=True)
        k, v = k - alpha * gk, v - alpha * gv
        k /= np.linalg.norm(k, axis=-1, keepdims=True)
        v /= np.linalg.norm(v, axis=-1, keepdims=True)
    return k, v


def sample_initial_overlaps(
    d: int,
    rng: np.random.Generator,
    size: int | tuple[int, ...] = (),
    *,
    on_manifold: bool = False,
) -> np.ndarray:
    """Overlaps of a random initialisation in ``R^d``, sampled exactly in O(1) per draw.

    Sphere: ``k, v`` independent and uniform on ``S^{d-1}``. With Gaussian
    ``g, h``, ``k = g/|g|``: ``kappa, eta`` are its first two coordinates, the rest
    has squared norm ``chi^2_{d-2}``; ``g_perp . h_perp = |g_perp| z`` and
    ``|h_perp|^2 = z^2 + chi^2_{d-3}``.
    On ``M`` (MATH.md section 7): ``k`` uniform on the unit sphere orthogonal
    to ``v*`` and ``v`` uniform orthogonal to ``k*`` and ``k``, so
    ``theta = eta = rho = 0``, ``kappa = g1/|g|`` with ``g`` in ``R^{d-1}``,
    ``nu = h1/|h|`` with ``h`` in ``R^{d-2}``.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.dynamics import sample_initial_overlaps
    >>> ov = sample_initial_overlaps(400, np.random.default_rng(0), 1000)
    >>> ov.shape, bool(abs((ov[:, 0] ** 2).mean() * 400 - 1) < 0.2)
    ((1000, 5), True)
    """
    shape = (size,) if isinstance(size, int) else tuple(size)
    if d < 4:
        raise ValueError(f"`d` must be >= 4 for random initialisations, got {d!r}.")
    out = np.zeros((*shape, 5))
    if on_manifold:
        g1 = rng.standard_normal(shape)
        k_norm = np.sqrt(g1**2 + rng.chisquare(d - 2, shape))
        h1 = rng.standard_normal(shape)
        v_norm = np.sqrt(h1**2 + rng.chisquare(d - 3, shape))
        out[..., 0], out[..., 1] = g1 / k_norm, h1 / v_norm
        return out
    g = rng.standard_normal((*shape, 2))
    h = rng.standard_normal((*shape, 2))
    g_perp2 = rng.chisquare(d - 2, shape)
    z = rng.standard_normal(shape)
    h_perp2 = z**2 + rng.chisquare(d - 3, shape)
    gn = np.sqrt(g[..., 0] ** 2 + g[..., 1] ** 2 + g_perp2)
    hn = np.sqrt(h[..., 0] ** 2 + h[..., 1] ** 2 + h_perp2)
    dot = g[..., 0] * h[..., 0] + g[..., 1] * h[..., 1] + np.sqrt(g_perp2) * z
    out[..., 0] = g[..., 0] / gn  # kappa = k . k*
    out[..., 3] = g[..., 1] / gn  # eta = k . v*
    out[..., 2] = h[..., 0] / hn  # theta = v . k*
    out[..., 1] = h[..., 1] / hn  # nu = v . v*
    out[..., 4] = dot / (gn * hn)
    return out
