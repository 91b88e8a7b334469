r"""Training dynamics: the paper's projected gradient descent, exactly, on the overlaps.

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

Equivalently, and this is how :func:`pgd` runs (:mod:`slr_theory.trajectory`): the iterates never leave the
four-dimensional ``span{k0, v0, k*, v*}``, so PGD in ``R^d`` *is* PGD in ``R^4``
with ``k* = e1``, ``v* = e2`` and the coordinates of a Cholesky factor of the
initial Gram matrix, ``d`` entering only through the risk. Both forms are
tested against PGD on explicit vectors in ``R^d``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .params import Params, check_params, dimension_of
from .risk import risk_grad_at
from .trajectory import (
    MAX_ALPHA,
    MAX_STEPS,
    Group,
    PaperSchedule,  # noqa: F401  (importable here since issue 4; exported by trajectory)
    PGDResult,
    Progress,
    overlap_step,
    paper_schedule,  # noqa: F401  (importable here since issue 4; exported by trajectory)
    price_records,
    run_pgd,
    temperatures,
    validate_run,
)
from .validate import generator, positive_int, positive_real, unit_vectors

#: Most initial overlaps :func:`sample_initial_overlaps` draws at once (400 MB).
MAX_DRAWS = 10**7

# PGDResult, PaperSchedule and paper_schedule are importable here too (pgd's signature
# names them) but exported once, from their home slr_theory.trajectory.
__all__ = [
    "MAX_DRAWS",
    "pgd",
    "pgd_step",
    "pgd_vectors",
    "sample_initial_overlaps",
]


def pgd_step(overlaps: ArrayLike, grad: ArrayLike, alpha: float) -> np.ndarray:
    """One exact PGD step on overlaps ``(..., 5)`` given the partials ``grad`` ``(..., 5)``.

    Unchecked (an inner-loop building block); :func:`pgd` validates its input once.

    Parameters
    ----------
    overlaps, grad : array_like, shape ``(..., 5)``
        Overlaps and the partials of the risk there (broadcast together).
    alpha : float
        Step size.

    Returns
    -------
    ndarray, shape ``(..., 5)``
        The overlaps after the step (:func:`slr_theory.trajectory.overlap_step`).
    """
    ov, gr = np.broadcast_arrays(np.asarray(overlaps, float), np.asarray(grad, float))
    shape = ov.shape
    flat = overlap_step(ov.reshape(-1, 5).T, gr.reshape(-1, 5).T, alpha)
    return flat.T.reshape(shape)


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
    The overlaps are validated once; every step then evaluates the gradient with
    the risk engine (:mod:`slr_theory.engine`, the same tables as
    :func:`slr_theory.risk_grad`, unchecked; at a fixed temperature of ``erf``, the
    table's loop kernel, its features as polynomials in ``kappa``, which agree with
    it to a few tens of ulp of the size of their terms: :mod:`slr_theory.trajectory`) and steps the
    coordinates of :mod:`slr_theory.trajectory`. A batch that starts exactly on the invariant
    manifold stays there exactly (the off-M partials are exact zeros), and is run
    with the two-dimensional map on ``(kappa, nu)``.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.dynamics import pgd
    >>> res = pgd(Params.paper(lam=0.1), [0.1, 0.1, 0.0, 0.0, 0.0], 4e-3, 400, record_every=200)
    >>> res.step.tolist(), bool(res.risk[-1] < res.risk[0])
    ([0, 200, 400], True)
    """
    ov = validate_run(params, overlaps0, alpha, steps, record_every)
    steps = int(steps)
    lam = temperatures(schedule, steps, lam_max=params.lam_max)
    shape = ov.shape[:-1]
    ov5 = ov.reshape(-1, 5).T.copy()
    group = Group(params, float(alpha), lam)
    with Progress(progress, steps, "pgd") as update:
        rec, out = run_pgd(ov5, group, steps, int(record_every), progress=update)
    lam_rec = np.full(rec.shape, params.lam) if lam is None else lam[rec]
    return price_records(params, rec, out, lam_rec, shape)


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

    Parameters
    ----------
    params : Params
        Model parameters.
    k0, v0 : ndarray, shape ``(..., d)``
        Initial unit vectors.
    k_star, v_star : ndarray, shape ``(d,)``
        Orthonormal targets.
    alpha : float
        Step size, ``0 < alpha <= 1e100``.
    steps : int
        ``0 <= steps <= 1e12`` (one Python-level step each: a reference, not a fast path).
    schedule : callable ``step -> lam``, optional

    Returns
    -------
    k, v : ndarray, shape ``(..., d)``
        The final iterates.
    """
    check_params(params)
    k = unit_vectors(k0, "k0", params.d, batch=True).copy()
    v = unit_vectors(v0, "v0", params.d, batch=True).copy()
    positive_real(alpha, "alpha", upper=MAX_ALPHA)
    steps = positive_int(steps, "steps", allow_zero=True, upper=MAX_STEPS)
    lam = temperatures(schedule, steps, lam_max=params.lam_max)
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
    params: Params,
    rng: np.random.Generator | int | None,
    size: int | tuple[int, ...] = (),
    *,
    on_manifold: bool = False,
) -> np.ndarray:
    """Overlaps of a random initialisation in ``R^d``, sampled exactly in O(1) per draw.

    Sphere: ``k, v`` independent and uniform on ``S^{d-1}``. With Gaussian
    ``g, h``, ``k = g/|g|``: ``kappa, eta`` are its first two coordinates, the rest
    has squared norm ``chi^2_{d-2}``; ``g_perp . h_perp = |g_perp| z`` and
    ``|h_perp|^2 = z^2 + chi^2_{d-3}``.
    On ``M``: ``k`` uniform on the unit sphere orthogonal
    to ``v*`` and ``v`` uniform orthogonal to ``k*`` and ``k``, so
    ``theta = eta = rho = 0``, ``kappa = g1/|g|`` with ``g`` in ``R^{d-1}``,
    ``nu = h1/|h|`` with ``h`` in ``R^{d-2}``.

    Parameters
    ----------
    params : Params
        The model; its dimension ``d >= 4`` is used. (An int ``d`` is the old,
        deprecated signature: it works, with a ``DeprecationWarning``.)
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    size : int or tuple of int
        Batch shape, at most ``MAX_DRAWS`` (1e7) draws in all.
    on_manifold : bool
        Draw on M (``theta = eta = rho = 0``) instead of the spheres.

    Returns
    -------
    ndarray, shape ``(*size, 5)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.dynamics import sample_initial_overlaps
    >>> from slr_theory import Params
    >>> ov = sample_initial_overlaps(Params.paper(), np.random.default_rng(0), 1000)
    >>> ov.shape, bool(abs((ov[:, 0] ** 2).mean() * 400 - 1) < 0.2)
    ((1000, 5), True)
    """
    import numbers

    d = dimension_of(params, "sample_initial_overlaps")
    try:
        sizes = (size,) if isinstance(size, (numbers.Number, str)) or size is None else tuple(size)
    except TypeError:
        sizes = (size,)
    if any(isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0 for x in sizes):
        raise ValueError(
            f"`size` must be a non-negative integer or a tuple of them, got {size!r}."
        )
    shape = tuple(int(x) for x in sizes)
    if np.prod(shape, dtype=float) > MAX_DRAWS:
        raise ValueError(f"`size` must ask for at most {MAX_DRAWS:g} draws, got {size!r}.")
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 4:
        raise ValueError(f"`d` must be >= 4 (an integer) for random initialisations, got {d!r}.")
    rng = generator(rng)
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
