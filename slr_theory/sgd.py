r"""Online SGD (the paper's fifth experiment): in ``R^d``, and exactly in law on the overlaps.

One step draws a fresh mini-batch of ``b`` sequences, takes the gradient of the
batch-mean squared loss ``(1/b) sum_i (Y_i - T(X_i))^2``, projects it on the
tangent spaces of the spheres and renormalises, as PGD does:

.. math::

    \nabla_k = \sum_{i,\ell} c_{i\ell} X_{i\ell}, \quad
    c_{i\ell} = -\tfrac{2}{b} r_i\, \lambda\, \mathrm{erf}'(\lambda X_{i\ell}^\top k)\, X_{i\ell}^\top v,
    \qquad
    \nabla_v = \sum_{i,\ell} \beta_{i\ell} X_{i\ell}, \quad
    \beta_{i\ell} = -\tfrac{2}{b} r_i\, \mathrm{erf}(\lambda X_{i\ell}^\top k),

with residuals ``r_i = Y_i - T(X_i)``. :func:`sgd_vectors` does exactly this
with explicit tokens in ``R^d`` (``O(b L d)`` per step).

:func:`sgd` runs the same Markov chain on the five overlaps, exactly in law,
at a cost independent of ``d``. Split every token into its coordinates ``p``
in an orthonormal basis of ``S = span{k*, v*, k, v}`` and its part ``X_perp``
in ``S^perp``. The coefficients ``c, beta`` depend on ``p`` only, and given
``p`` the two vectors ``xi_k = sum c X_perp``, ``xi_v = sum beta X_perp`` are
jointly Gaussian in ``S^perp`` with covariance ``Sigma (x) I_{d-4}``,
``Sigma = sum sigma_l^2 [[c^2, c beta], [c beta, beta^2]]`` (``sigma^2 = gamma^2``
for the informative tokens, 1 otherwise). The next overlaps need only their
Gram matrix, ``L W L^T`` with ``L = chol(Sigma)`` and ``W`` a 2x2 Wishart
matrix with ``d - 4`` degrees of freedom (Bartlett: ``W = A A^T``,
``A = [[chi_{d-4}, 0], [N(0,1), chi_{d-5}]]``). By rotational invariance the law
of the next step depends on the current vectors only through their overlaps,
so the chain on the overlaps is exact.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .models import Model
from .params import Params
from .sampling import overlaps_of, sample
from .trajectory import PGDResult, Progress, price_records, temperatures, to_vectors, validate_run
from .validate import generator, orthonormal_pair, positive_int, positive_real, unit_vectors

__all__ = ["MAX_BATCH", "sgd", "sgd_vectors"]

_CHUNK_FLOATS = 4_000_000


def _coefficients(U, V, Y, lam: float, batch: int, model: Model):
    """``(c, beta)`` of the module docstring from ``U = X.k``, ``V = X.v`` (..., b, L), ``Y`` (..., b).

    From the model's forward map (:meth:`slr_theory.models.Model.forward`): with the
    residual ``r = Y - T``, ``c = -(2/b) r dT/dU`` and ``beta = -(2/b) r dT/dV`` (for
    pointwise attention ``lam sigma'(lam U) V`` and ``sigma(lam U)``; for softmax
    ``lam p (V - T)`` and ``p = softmax(lam U)``).
    """
    T, dU, dV = model.forward(U, V, lam, derivatives=True)
    w = (-2.0 / batch) * (Y - T)[..., None]
    return w * dU, w * dV


#: Largest minibatch (sequences per step) the SGD functions accept.
MAX_BATCH = 10**6


def sgd_vectors(
    params: Params,
    k0: ArrayLike,
    v0: ArrayLike,
    k_star: ArrayLike,
    v_star: ArrayLike,
    alpha: float,
    steps: int,
    *,
    batch: int,
    rng: np.random.Generator | int | None,
    schedule: Callable[[int], float] | None = None,
    record_every: int | None = None,
) -> PGDResult:
    """Online projected SGD on explicit vectors in ``R^d``, vectorised over repeats.

    Parameters
    ----------
    params : Params
        Model (``params.eps`` is the label noise of the samples).
    k0, v0 : array_like, shape (..., d)
        Initial unit vectors; leading dimensions are independent repeats.
    k_star, v_star : array_like, shape (d,)
        Orthonormal targets.
    alpha : float
        Step size.
    steps : int
    batch : int
        Mini-batch size ``b``, ``1 <= b <= MAX_BATCH`` (1e6); every step draws ``b``
        fresh sequences per repeat with :func:`slr_theory.sampling.sample`.
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    schedule : callable ``step -> lam``, optional
    record_every : int, optional
        Record the overlaps every this many steps (default: only the start and the end).

    Returns
    -------
    PGDResult
        Overlaps of the recorded iterates and their exact population risk.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.sampling import random_targets
    >>> from slr_theory.sgd import sgd_vectors
    >>> rng = np.random.default_rng(0)
    >>> p = Params(d=20, L=4, lam=0.5, gamma=0.7, eps=0.1)
    >>> ks, vs = random_targets(p, rng)
    >>> k0, v0 = (x / np.linalg.norm(x, axis=-1, keepdims=True) for x in rng.standard_normal((2, 8, p.d)))
    >>> res = sgd_vectors(p, k0, v0, ks, vs, 0.01, 300, batch=4, rng=rng)
    >>> res.overlaps.shape, bool(res.risk[-1].mean() < res.risk[0].mean())
    ((2, 8, 5), True)
    """
    rng = generator(rng)
    d = params.d
    k = unit_vectors(k0, "k0", d, batch=True).copy()
    v = unit_vectors(v0, "v0", d, batch=True).copy()
    ks, vs = orthonormal_pair(k_star, v_star, ("k_star", "v_star"), d)
    k, v = np.broadcast_arrays(k, v)
    k, v = k.copy(), v.copy()
    shape = k.shape[:-1]
    ov0 = overlaps_of(k, v, ks, vs)
    validate_run(params, ov0, alpha, steps, 1)
    batch = positive_int(batch, "batch", upper=MAX_BATCH)
    steps = int(steps)
    every = steps if record_every is None else positive_int(record_every, "record_every")
    lam = temperatures(schedule, steps, lam_max=params.lam_max)
    k, v = k.reshape(-1, d), v.reshape(-1, d)
    R = k.shape[0]
    rec = sorted(set(range(0, steps + 1, max(every, 1))) | {steps})
    out = np.empty((len(rec), 5, R))
    out[0] = overlaps_of(k, v, ks, vs).T
    nxt = 1
    model = params.model
    for t in range(steps):
        lt = params.lam if lam is None else float(lam[t])
        X, Y, _ = sample(params, R * batch, rng, ks, vs)
        X = X.reshape(R, batch, params.L, d)
        Y = Y.reshape(R, batch)
        U = np.einsum("rbld,rd->rbl", X, k)
        V = np.einsum("rbld,rd->rbl", X, v)
        c, beta = _coefficients(U, V, Y, lt, batch, model)
        gk = np.einsum("rbl,rbld->rd", c, X)
        gv = np.einsum("rbl,rbld->rd", beta, X)
        k = k - alpha * (gk - np.sum(gk * k, axis=-1, keepdims=True) * k)
        v = v - alpha * (gv - np.sum(gv * v, axis=-1, keepdims=True) * v)
        k /= np.linalg.norm(k, axis=-1, keepdims=True)
        v /= np.linalg.norm(v, axis=-1, keepdims=True)
        if t + 1 == rec[nxt]:
            out[nxt] = overlaps_of(k, v, ks, vs).T
            nxt += 1
    lam_rec = np.full(len(rec), params.lam) if lam is None else lam[rec]
    return price_records(params, np.array(rec), out, lam_rec, shape)


def _wishart_factor(rng: np.random.Generator, m: int, size) -> tuple[np.ndarray, ...]:
    """Bartlett factor ``(a11, a21, a22)`` of a 2x2 Wishart(I, m) matrix ``A A^T``."""
    if m <= 0:
        z = np.zeros(size)
        return z, z, z
    a11 = np.sqrt(rng.chisquare(m, size))
    a21 = rng.standard_normal(size)
    a22 = np.sqrt(rng.chisquare(m - 1, size)) if m >= 2 else np.zeros(size)
    return a11, a21, a22


def _sgd_step(ov5, x, Y, w, wish, lam, alpha, batch: int, model: Model):
    """One exact-in-law SGD step on overlaps ``(5, R)``.

    ``x`` ``(R, b L, 4)``: token coordinates in ``(k*, v*, e3, e4)``, informative
    tokens (position 0 of each sequence, by exchangeability) already shifted and
    scaled; ``Y`` ``(R, b)`` labels; ``w`` ``(b L,)`` token variances; ``wish`` the
    Bartlett factor of the 2x2 Wishart draw.
    """
    R = ov5.shape[1]
    S = to_vectors(ov5).T.reshape(R, 2, 4)  # rows: k, v in (k*, v*, e3, e4)
    UV = x @ S.transpose(0, 2, 1)  # (R, bL, 2): X.k, X.v
    U = UV[..., 0].reshape((*Y.shape, -1))
    V = UV[..., 1].reshape(U.shape)
    c, beta = _coefficients(U, V, Y, lam, batch, model)
    CB = np.empty((R, 2, c[0].size))  # (R, 2, bL)
    CB[:, 0] = c.reshape(R, -1)
    CB[:, 1] = beta.reshape(R, -1)
    G = CB @ x  # (R, 2, 4): the in-span parts of grad_k, grad_v
    Sig = (CB * w) @ CB.transpose(0, 2, 1)  # covariance factor of (xi_k, xi_v) in S-perp
    l11 = np.sqrt(Sig[:, 0, 0])
    l21 = np.where(l11 > 0, Sig[:, 0, 1] / np.where(l11 > 0, l11, 1.0), 0.0)
    l22 = np.sqrt(np.maximum(Sig[:, 1, 1] - l21 * l21, 0.0))
    a11, a21, a22 = wish
    m11 = l11 * a11
    m21 = l21 * a11 + l22 * a21
    m22 = l22 * a22
    # (np.add.reduce is np.sum's own reduction, without its per-call dispatch: a step is
    # small arrays, and their calls' overhead is its cost)
    Sn = S - alpha * (G - np.add.reduce(G * S, axis=-1, keepdims=True) * S)
    al2 = alpha * alpha
    sq = np.add.reduce(Sn * Sn, axis=-1)
    nk = np.sqrt(sq[:, 0] + al2 * m11 * m11)
    nv = np.sqrt(sq[:, 1] + al2 * (m21 * m21 + m22 * m22))
    kv = np.add.reduce(Sn[:, 0] * Sn[:, 1], axis=-1) + al2 * m11 * m21
    out = np.empty_like(ov5)
    out[0] = Sn[:, 0, 0] / nk
    out[1] = Sn[:, 1, 1] / nv
    out[2] = Sn[:, 1, 0] / nv
    out[3] = Sn[:, 0, 1] / nk
    out[4] = kv / (nk * nv)
    return out


def sgd(
    params: Params,
    overlaps0: ArrayLike,
    alpha: float,
    steps: int,
    *,
    batch: int,
    rng: np.random.Generator | int | None,
    schedule: Callable[[int], float] | None = None,
    record_every: int = 1,
    progress: bool | Callable[[int], object] = False,
) -> PGDResult:
    """Online projected SGD on the overlaps, exactly in law (module docstring); cost independent of ``d``.

    Parameters
    ----------
    params : Params
        Model; ``params.eps`` is the label noise, ``params.d >= 4``.
    overlaps0 : array_like, shape (..., 5)
        Initial overlaps of a batch of independent repeats.
    alpha, steps, schedule, record_every
        As in :func:`slr_theory.pgd`.
    batch : int
        Mini-batch size, ``1 <= batch <= MAX_BATCH`` (1e6).
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    progress : bool or callable
        ``True`` shows a tqdm bar; a callable is called with the number of steps
        done after each chunk (e.g. ``tqdm.update``).

    Returns
    -------
    PGDResult
        The recorded overlaps and their exact population risk.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params, sample_initial_overlaps
    >>> from slr_theory.sgd import sgd
    >>> rng = np.random.default_rng(0)
    >>> p = Params(d=80, L=10, lam=0.5, gamma=0.5**0.5, eps=0.1)
    >>> res = sgd(p, sample_initial_overlaps(p, rng, 16), 2e-3, 3000, batch=5, rng=rng, record_every=1500)
    >>> res.overlaps.shape, bool(res.risk[-1].mean() < res.risk[0].mean())
    ((3, 16, 5), True)
    """
    rng = generator(rng)
    ov = validate_run(params, overlaps0, alpha, steps, record_every)
    batch = positive_int(batch, "batch", upper=MAX_BATCH)
    alpha = positive_real(alpha, "alpha")
    steps = int(steps)
    lam = temperatures(schedule, steps, lam_max=params.lam_max)
    shape = ov.shape[:-1]
    state = ov.reshape(-1, 5).T.copy()
    R, L = state.shape[1], params.L
    rec = sorted(set(range(0, steps + 1, int(record_every))) | {steps})
    out = np.empty((len(rec), 5, R))
    out[0] = state
    nxt = 1
    S = params.s  # by exchangeability the informative tokens are the first s
    w = np.ones((batch, L))
    w[:, :S] = params.gamma**2
    w = w.reshape(-1)
    chunk = max(1, _CHUNK_FLOATS // (R * batch * L * 4))
    model = params.model  # resolved once, not at every step
    with Progress(progress, steps, "sgd") as update:
        for start in range(0, steps, chunk):
            stop = min(start + chunk, steps)
            n = stop - start
            P = rng.standard_normal((n, R, batch, L, 4))
            noise = rng.standard_normal((n, R, batch))
            wish = _wishart_factor(rng, params.d - 4, (n, R))
            P[:, :, :, :S] *= params.gamma  # informative tokens: N(sqrt(d/2) k*, gamma^2 I)
            P[:, :, :, :S, 0] += np.sqrt(params.d / 2.0)
            Y = (
                P[:, :, :, 0, 1] if S == 1 else P[:, :, :, :S, 1].sum(axis=-1)
            ) + params.eps * noise
            X = P.reshape(n, R, batch * L, 4)
            for i, t in enumerate(range(start, stop)):
                lt = params.lam if lam is None else float(lam[t])
                ws = (wish[0][i], wish[1][i], wish[2][i])
                state = _sgd_step(state, X[i], Y[i], w, ws, lt, alpha, batch, model)
                if t + 1 == rec[nxt]:
                    out[nxt] = state
                    nxt += 1
            if update is not None:
                update(n)
    lam_rec = np.full(len(rec), params.lam) if lam is None else lam[rec]
    return price_records(params, np.array(rec), out, lam_rec, shape)
