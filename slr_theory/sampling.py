"""Sampling the single-location regression data model, the attention predictor on tokens,
and Monte Carlo risks (docs/theory.md §1); ``slr_theory.model`` is its former name."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .models import model_of, takes_nonlinearity
from .nonlinearity import Nonlinearity, resolve_nonlinearity
from .params import Params, dimension_of
from .validate import (
    as_array,
    finite_real,
    generator,
    orthonormal_pair,
    positive_int,
    unit_vectors,
)

#: Most token coordinates one call holds in memory (8 GB of float64).
MAX_FLOATS = 10**9
#: Most Monte Carlo samples :func:`monte_carlo_risk` accepts.
MAX_SAMPLES = 10**12

__all__ = [
    "MAX_FLOATS",
    "MAX_SAMPLES",
    "MonteCarloRisk",
    "mean_and_stderr",
    "monte_carlo_risk",
    "overlaps_of",
    "predict",
    "random_targets",
    "sample",
    "squared_errors",
    "vectors_from_overlaps",
]


def random_targets(
    params: Params, rng: np.random.Generator | int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Uniformly random orthonormal ``(k*, v*)`` in ``R^d`` (QR of a Gaussian matrix).

    Parameters
    ----------
    params : Params
        The model; its dimension ``d <= 1e8`` is used. (An int ``d`` is the old,
        deprecated signature: it works, with a ``DeprecationWarning``.)
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.

    Returns
    -------
    k_star, v_star : ndarray, shape ``(d,)``

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.sampling import random_targets
    >>> ks, vs = random_targets(Params.paper(), 0)
    >>> ks.shape, round(float(ks @ vs), 12)
    ((400,), 0.0)
    """
    d = positive_int(dimension_of(params, "random_targets"), "d", upper=10**8)
    if d < 2:
        raise ValueError(f"`d` must be >= 2 for two orthonormal targets, got {d!r}.")
    rng = generator(rng)
    q, r = np.linalg.qr(rng.standard_normal((d, 2)))
    q = q * np.sign(np.diag(r))
    return q[:, 0].copy(), q[:, 1].copy()


def sample(
    params: Params,
    n: int,
    rng: np.random.Generator | int | None,
    k_star: np.ndarray | None = None,
    v_star: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``n`` sequences from the model.

    Parameters
    ----------
    params : Params
        Model parameters.
    n : int
        Number of sequences; ``n * L * d <= MAX_FLOATS`` (1e9 token coordinates, 8 GB).
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    k_star, v_star : ndarray, shape ``(d,)``, optional
        Targets (random if omitted).

    Returns
    -------
    X : ndarray, shape (n, L, d)
        Tokens: ``X_j ~ N(sqrt(d/2) k*, gamma^2 I)`` at the informative positions, the
        others ``N(0, I)``.
    y : ndarray, shape (n,)
        Labels ``sum_j X_j^T v* + xi`` over the informative positions, ``xi ~ N(0, eps^2)``.
    J0 : ndarray of int, shape (n,), or (n, s) when ``params.s > 1``
        Positions of the informative tokens (0-based): uniform on ``0..L-1``, or a
        uniform ``s``-subset of it, in increasing order.

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.sampling import sample
    >>> X, y, J0 = sample(Params(d=8, L=3, lam=1.0, gamma=0.5), 4, np.random.default_rng(0))
    >>> X.shape, y.shape, J0.shape
    ((4, 3, 8), (4,), (4,))
    """
    X, signal, noise, J = _draw(params, n, rng, k_star, v_star)
    return X, signal + noise, J


def _draw(params, n, rng, k_star, v_star):
    """:func:`sample`'s draw with the labels in two parts: ``(X, signal, noise, J)``."""
    d, L = params.d, params.L
    n = positive_int(n, "n", upper=MAX_FLOATS // (L * d) or 1)
    rng = generator(rng)
    if k_star is None or v_star is None:
        k_star, v_star = random_targets(params, rng)
    k_star, v_star = orthonormal_pair(k_star, v_star, ("k_star", "v_star"), d)
    X = rng.standard_normal((n, L, d))
    rows = np.arange(n)
    if params.s == 1:
        J = rng.integers(0, L, size=n)
        X[rows, J] = np.sqrt(d / 2.0) * k_star + params.gamma * X[rows, J]
        signal = X[rows, J] @ v_star
    else:
        J = np.sort(np.argsort(rng.random((n, L)), axis=1)[:, : params.s], axis=1)
        r = rows[:, None]
        X[r, J] = np.sqrt(d / 2.0) * k_star + params.gamma * X[r, J]
        signal = (X[r, J] @ v_star).sum(axis=1)
    return X, signal, params.eps * rng.standard_normal(n), J


def squared_errors(
    params: Params,
    k: np.ndarray,
    v: np.ndarray,
    k_star: np.ndarray,
    v_star: np.ndarray,
    n: int,
    rng: np.random.Generator | int | None,
) -> np.ndarray:
    """The squared errors ``(Y - T(X))^2`` of `n` fresh samples of the model.

    The samples are :func:`sample`'s (the same draws from `rng`); each residual is formed
    as ``(signal - T(X)) + xi``, the noise added last, so a noise far below the labels'
    rounding (``eps = 1e-77``) still counts ``xi^2`` where ``signal + xi`` would lose it.

    Parameters
    ----------
    params : Params
        Model parameters.
    k, v : ndarray, shape ``(d,)``
        The predictor's unit vectors.
    k_star, v_star : ndarray, shape ``(d,)``
        Orthonormal targets.
    n : int
        Samples; ``n * L * d <= MAX_FLOATS``.
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.

    Returns
    -------
    ndarray, shape ``(n,)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.sampling import squared_errors
    >>> e1, e2 = np.eye(4)[:2]
    >>> p = Params(d=4, L=1, lam=0.5, gamma=0.1, eps=1e-77, attention="softmax")
    >>> err = squared_errors(p, e1, e2, e1, e2, 20_000, 0)  # T(X): the signal itself
    >>> print(f"{err.mean() / p.eps**2:.2f}")  # E xi^2 / eps^2, lost in signal + xi
    1.00
    """
    return _squared_errors(
        params,
        unit_vectors(k, "k", params.d),
        unit_vectors(v, "v", params.d),
        k_star,
        v_star,
        n,
        rng,
    )


def _squared_errors(params, k, v, k_star, v_star, n, rng):
    """:func:`squared_errors` with `k`, `v` already validated (a loop's door)."""
    X, signal, noise, _ = _draw(params, n, rng, k_star, v_star)
    signal -= predict(X, k, v, params.lam, params.nonlinearity, params.attention)
    signal += noise
    return np.square(signal, out=signal)


def predict(
    X: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    lam: float,
    sigma: str | Nonlinearity = "erf",
    attention: str = "pointwise",
) -> np.ndarray:
    """The attention predictor ``T(X) = sum_l w_l X_l.v``; ``X`` has shape (..., L, d).

    The weights are ``w_l = sigma(lam X_l.k)`` (pointwise attention, the paper's) or
    ``w = softmax(lam X k)`` over the ``L`` tokens.

    Parameters
    ----------
    X : ndarray, shape ``(..., L, d)``
        Tokens.
    k, v : ndarray, shape ``(d,)``
        Finite vectors.
    lam : float
        Finite temperature, with ``lam X_l.k`` finite for every token.
    sigma : str or Nonlinearity, default ``"erf"``
        The nonlinearity (:attr:`slr_theory.Params.nonlinearity`) of pointwise attention.
    attention : str or Model
        :attr:`slr_theory.Params.attention` (a registered name or a model object); an
        attention without a nonlinearity ignores `sigma`.

    Returns
    -------
    ndarray, shape ``(...)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.sampling import predict
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> float(predict(X, np.array([1.0, 0.0]), np.array([1.0, 1.0]), 0.0, attention="softmax"))
    1.0
    """
    sigma = resolve_nonlinearity(sigma, "sigma")
    model = model_of(attention, sigma if takes_nonlinearity(attention) else "erf")
    X, k, v = _vectors_of(X=X, k=k, v=v)
    if X.ndim < 2 or k.ndim != 1 or v.ndim != 1:
        raise ValueError(
            f"`X` must have shape (..., L, d) and `k`, `v` shape (d,), got {X.shape}, "
            f"{k.shape}, {v.shape}."
        )
    lam = finite_real(lam, "lam")
    U = X @ k
    with np.errstate(over="ignore", invalid="ignore"):
        logits = lam * U
    if not np.all(np.isfinite(logits)):
        raise ValueError(
            f"`lam` times the tokens' projections on `k` must be finite, got lam={lam!r} "
            f"with largest |X.k| {float(np.max(np.abs(U))):.3g}."
        )
    return model.forward(U, X @ v, lam)[0]


def _vectors_of(**named) -> list[np.ndarray]:
    """Finite real arrays, at least 1-D, sharing their last dimension (named in errors)."""
    out = [as_array(x, name, allow_nan=False) for name, x in named.items()]
    for name, x in zip(named, out, strict=True):
        if x.ndim == 0 or x.shape[-1] == 0:
            raise ValueError(f"`{name}` must be a non-empty vector, got shape {x.shape}.")
    dims = {x.shape[-1] for x in out}
    if len(dims) > 1:
        shapes = ", ".join(f"`{n}` {x.shape}" for n, x in zip(named, out, strict=True))
        raise ValueError(f"the vectors must share their last dimension: {shapes}.")
    return out


def overlaps_of(k, v, k_star, v_star) -> np.ndarray:
    """The overlaps ``(kappa, nu, theta, eta, rho)`` of explicit vectors, shape ``(..., 5)``.

    Parameters
    ----------
    k, v : array_like, shape ``(..., d)``
        Finite vectors (unit for the overlaps to be overlaps; not checked).
    k_star, v_star : array_like, shape ``(d,)``
        Finite vectors of the same dimension.

    Returns
    -------
    ndarray, shape ``(..., 5)``
        In :data:`slr_theory.OVERLAP_NAMES` order.
    """
    k, v, k_star, v_star = _vectors_of(k=k, v=v, k_star=k_star, v_star=v_star)
    return np.stack(
        [k @ k_star, v @ v_star, v @ k_star, k @ v_star, np.sum(k * v, axis=-1)], axis=-1
    )


@dataclass(frozen=True)
class MonteCarloRisk:
    """A Monte Carlo estimate of the risk with its standard error.

    Attributes
    ----------
    estimate : float
        Mean squared error over the samples.
    stderr : float
        Its standard error.
    n : int
        Number of samples.
    """

    estimate: float
    stderr: float
    n: int


def monte_carlo_risk(
    params: Params,
    k: np.ndarray,
    v: np.ndarray,
    k_star: np.ndarray,
    v_star: np.ndarray,
    n: int,
    rng: np.random.Generator | int | None,
    *,
    chunk_floats: int = 4_000_000,
    progress: bool = False,
) -> MonteCarloRisk:
    """Estimate ``E (Y - T(X))^2`` by sampling the model, in chunks of bounded memory.

    Each chunk holds at most `chunk_floats` token coordinates (32 MB by default),
    so ``n = 1e7`` at ``d = 400, L = 10`` runs in constant memory.

    Parameters
    ----------
    params : Params
        Model parameters.
    k, v : ndarray, shape ``(d,)``
        Unit vectors.
    k_star, v_star : ndarray, shape ``(d,)``
        Orthonormal targets.
    n : int
        Samples, ``2 <= n <= MAX_SAMPLES`` (1e12).
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    chunk_floats : int
        Token coordinates held in memory at once, ``1 <= chunk_floats <= MAX_FLOATS``.
    progress : bool
        Show a tqdm bar.

    Returns
    -------
    MonteCarloRisk

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.sampling import monte_carlo_risk, random_targets
    >>> rng = np.random.default_rng(1)
    >>> p = Params(d=16, L=4, lam=0.5, gamma=0.7)
    >>> ks, vs = random_targets(p, rng)
    >>> mc = monte_carlo_risk(p, ks, vs, ks, vs, 20_000, rng)
    >>> mc.n, mc.stderr > 0
    (20000, True)
    """
    from tqdm.auto import tqdm

    n = positive_int(n, "n", upper=MAX_SAMPLES)
    rng = generator(rng)
    chunk_floats = positive_int(chunk_floats, "chunk_floats", upper=MAX_FLOATS)
    if n < 2:
        raise ValueError(f"`n` must be >= 2 (a standard error needs two samples), got {n!r}.")
    d = params.d
    k = unit_vectors(k, "k", d)
    v = unit_vectors(v, "v", d)
    per = max(1, chunk_floats // (params.L * d))
    total = spread = 0.0  # the sum of the errors; the root of their squared deviations' sum
    done = 0
    with tqdm(total=n, desc="Monte Carlo risk", disable=not progress, leave=False) as bar:
        while done < n:
            m = min(per, n - done)
            err = _squared_errors(params, k, v, k_star, v_star, m, rng)
            exponent, chunk_sum, squares = _scaled_sums(err)
            chunk_mean = math.ldexp(chunk_sum / m, exponent)
            chunk_spread = math.ldexp(math.sqrt(squares), exponent)
            if done:  # Chan et al.'s pairwise update, on roots: no square under- or overflows
                gap = abs(chunk_mean - total / done) * math.sqrt(done * m / (done + m))
                spread = math.hypot(spread, chunk_spread, gap)
            else:
                spread = chunk_spread
            total += math.ldexp(chunk_sum, exponent)  # err.sum(), bit for bit unless subnormal
            done += m
            bar.update(m)
    stderr = spread / math.sqrt(n) / math.sqrt(n - 1)
    return MonteCarloRisk(estimate=total / n, stderr=stderr, n=n)


def _scaled_sums(values: np.ndarray) -> tuple[int, float, float]:
    """``(e, T, S)``: `values` in units of ``2**e`` near their largest magnitude, their sum
    ``T`` and the sum ``S`` of their squared deviations from ``T / n`` in those units, by
    NumPy's own operations (those of ``sum``, ``mean`` and ``var``), so that no square
    under- or overflows."""
    top = float(np.max(np.abs(values)))
    exponent = math.frexp(top)[1] if 0 < top < math.inf else 0
    scaled = np.ldexp(values, -exponent)
    total = np.add.reduce(scaled)
    scaled -= total / scaled.size
    np.multiply(scaled, scaled, out=scaled)
    return exponent, float(total), float(np.add.reduce(scaled))


def mean_and_stderr(values) -> tuple[float, float]:
    """The mean of i.i.d. samples and its standard error ``std(ddof=1) / sqrt(n)``.

    Computed in units of a power of two near the largest ``|value|`` (exact), by NumPy's
    own operations: for a contiguous 1-D array, the same numbers as ``values.mean()`` and
    ``values.std(ddof=1) / np.sqrt(n)`` wherever NumPy's squares of the deviations are
    normal floats, and right where they would underflow (samples of ``1e-300``) or
    overflow (``1e200``). Other arrays are read flattened, in C order.

    Parameters
    ----------
    values : array_like
        At least two finite samples.

    Returns
    -------
    mean, stderr : float

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.sampling import mean_and_stderr
    >>> mean, se = mean_and_stderr([1.0, 2.0, 3.0, 4.0])
    >>> print(mean, round(se, 6))
    2.5 0.645497
    >>> tiny = np.array([1.0, 2.0, 3.0, 4.0]) * 1e-300
    >>> print(f"{tiny.std(ddof=1):.1e} {mean_and_stderr(tiny)[1]:.6e}")  # NumPy's squares underflow
    0.0e+00 6.454972e-301
    """
    values = as_array(values, "values", allow_nan=False).ravel()
    if values.size < 2:
        raise ValueError(f"`values` must hold at least two samples, got {values.size}.")
    exponent, total, squares = _scaled_sums(values)
    stderr = np.sqrt(np.float64(squares) / (values.size - 1)) / np.sqrt(values.size)
    return math.ldexp(total / values.size, exponent), math.ldexp(float(stderr), exponent)


def vectors_from_overlaps(overlaps, d: int) -> tuple[np.ndarray, ...]:
    """Explicit unit vectors ``(k, v, k*, v*)`` in ``R^d`` (``d >= 4``) realising the overlaps.

    ``k* = e1, v* = e2``, ``k`` in ``span(e1, e2, e3)``, ``v`` in ``span(e1..e4)``.

    Parameters
    ----------
    overlaps : sequence of five floats
        Feasible overlaps.
    d : int
        Dimension, ``4 <= d <= 1e8`` (explicit vectors).

    Returns
    -------
    k, v, k_star, v_star : ndarray, shape ``(d,)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.sampling import overlaps_of, vectors_from_overlaps
    >>> ov = np.array([0.5, 0.4, 0.1, -0.2, 0.3])
    >>> np.allclose(overlaps_of(*vectors_from_overlaps(ov, 6)), ov)
    True

    """
    from .params import check_overlaps

    d = positive_int(d, "d", upper=10**8)
    if d < 4:
        raise ValueError(f"`d` must be >= 4 to realise general overlaps, got {d!r}.")
    ov = np.asarray(overlaps, dtype=object)
    if ov.shape != (5,):
        raise ValueError(f"`overlaps` must be five numbers, got {overlaps!r}.")
    ov = np.array(check_overlaps(*ov, d=d), dtype=float)
    from .trajectory import to_vectors  # the Cholesky coordinates the dynamics run on

    kv = to_vectors(ov[:, None])[:, 0]
    k, v, ks, vs = (np.zeros(d) for _ in range(4))
    k[:4], v[:4] = kv[:4], kv[4:]
    ks[0], vs[1] = 1.0, 1.0
    return k, v, ks, vs
