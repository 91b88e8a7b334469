r"""The statistical results of the paper's section 4, computable.

- The attention predictor at the oracle ``k = k*, v = v*`` and the temperature
  minimising its risk.
- The Bayes predictor ``E[Y | X]``: given ``J0 = j`` the label is ``X_j . v*``
  (plus noise), so ``E[Y | X] = sum_j w_j(X) X_j . v*`` with posterior weights
  ``w = softmax(l)``,

  .. math:: l_j = \log\frac{N(X_j; \mu k^*, \gamma^2 I)}{N(X_j; 0, I)}
            = -d\log\gamma - \frac{\|X_j - \mu k^*\|^2}{2\gamma^2} + \frac{\|X_j\|^2}{2},
            \qquad \mu = \sqrt{d/2},

  and the Bayes risk is ``eps^2 + E[posterior variance of X_J . v*]``. It
  depends on ``X_j`` only through ``(X_j . k*, X_j . v*, ||X_j^perp||^2)``,
  which are sampled directly (``chi^2_{d-2}`` for the last), so Monte Carlo
  costs ``O(L)`` per sample for any ``d``.
- The best linear (affine) predictor: by exchangeability its weights are equal
  across tokens, it regresses ``Y`` on ``S = sum_l X_l`` with
  ``Cov(S) = (gamma^2 + L - 1) I`` and ``Cov(S, Y) = gamma^2 v*``, hence

  .. math:: R_{\mathrm{lin}} = \varepsilon^2 + \frac{\gamma^2 (L - 1)}{L - 1 + \gamma^2},

  independent of ``d``: linear predictors do not approach the Bayes risk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from .nonlinearity import Nonlinearity
from .params import DOMAIN, Params, check_params, temperature_range
from .risk import risk
from .validate import as_array, generator, positive_int

#: Most tokens per sample of :func:`bayes_risk_mc` (a sample is held in memory at once).
MAX_TOKENS = 10**7

__all__ = [
    "MAX_TOKENS",
    "BayesRisk",
    "bayes_risk_mc",
    "bhattacharyya_log",
    "linear_risk",
    "optimal_lambda",
    "oracle_risk",
    "statistics_table",
    "subset_posterior",
]


def oracle_risk(params: Params) -> float:
    """Risk of the attention predictor at ``k = k*, v = v*`` (``eps**2`` included).

    Parameters
    ----------
    params : Params
        Model parameters.

    Returns
    -------
    float
        ``R(k*, v*)`` at ``params.lam``.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.statistics import oracle_risk, linear_risk
    >>> p = Params.paper(lam=0.1)
    >>> bool(oracle_risk(p) < linear_risk(p))
    True
    """
    return float(risk(params, 1.0, 1.0))


def optimal_lambda(params: Params, lam_range: tuple[float, float] = (1e-6, 1e3)) -> float:
    """The temperature minimising :func:`oracle_risk` for ``(d, L, gamma, eps)``.

    Minimised over ``log(lam)`` by bounded Brent; ``params.lam`` is ignored. The
    interval is cut at the model's :attr:`slr_theory.Params.lam_max` (softmax attention's
    risk at the optimum falls as ``lam`` grows: its minimum is then that edge).
    The risk trades the distractor floor ``(L - 1) zeta(0, lam)`` (small ``lam``)
    against the informative error ``gamma^2 E erfc(...)^2`` (large ``lam sqrt(d)``).

    Parameters
    ----------
    params : Params
        Model parameters.
    lam_range : tuple of float
        Search interval for ``lam``, inside ``DOMAIN["lam"]`` (1e-6 to 1e3).

    Returns
    -------
    float
        The minimising temperature; the interval's end itself when the risk is smallest
        there (within ``1e-6`` in ``log lam`` of it, and no higher at it): softmax
        attention at the paper's ``d``, whose risk still falls at ``lam_max``.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.statistics import optimal_lambda, oracle_risk
    >>> soft = Params.paper().replace(attention="softmax")
    >>> optimal_lambda(soft) == soft.lam_max  # the edge of the model's domain
    True
    >>> p = Params.paper()
    >>> lam = optimal_lambda(p)
    >>> bool(oracle_risk(p.replace(lam=lam)) <= oracle_risk(p.replace(lam=2 * lam)))
    True
    """
    from scipy.optimize import minimize_scalar  # here: SciPy's optimisers cost 0.2 s to import

    lo, hi = temperature_range(lam_range)
    hi = min(hi, params.lam_max)
    ends = (float(min(lo, hi)), float(hi))
    lo, hi = np.log(ends[0]), np.log(ends[1])
    res = minimize_scalar(
        lambda u: oracle_risk(params.replace(lam=float(np.exp(u)))),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    for lam_end in ends:  # Brent stops inside the interval: an end it approaches is the answer
        if (
            abs(res.x - np.log(lam_end)) <= 1e-6
            and oracle_risk(params.replace(lam=lam_end)) <= res.fun
        ):
            return lam_end
    return float(np.exp(res.x))


def linear_risk(params: Params) -> float:
    """Risk of the best affine predictor (closed form, see the module docstring).

    Parameters
    ----------
    params : Params
        Model parameters.

    Returns
    -------
    float
        ``eps**2 + gamma**2 (L - 1) / (L - 1 + gamma**2)``; with ``s`` informative
        tokens ``eps**2 + s gamma**2 (L - s) / (L - s + s gamma**2)`` (``Cov(S) =
        (s gamma^2 + L - s) I``, ``Cov(S, Y) = s gamma^2 v*``, ``Var Y = s gamma^2 +
        eps^2``): zero excess risk when every token is informative.

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.statistics import linear_risk
    >>> print(linear_risk(Params(d=400, L=10, lam=1.0, gamma=1.0)))  # 9 / 10
    0.9
    """
    g2, L, S = params.gamma**2, params.L, params.s
    return params.eps**2 + S * g2 * (L - S) / (L - S + S * g2)


@dataclass(frozen=True)
class BayesRisk:
    """Monte Carlo estimate of the Bayes risk (``eps**2`` included).

    Attributes
    ----------
    estimate : float
    stderr : float
        Standard error of the estimate.
    n : int
        Number of samples.
    log10_excess : float
        ``log10`` of the Bayes risk minus ``eps**2`` (the mean posterior variance), from
        the samples' logs: it keeps its digits where the excess is below the double range
        (``estimate - eps**2`` then reads 0). ``-inf`` if every posterior is certain.
    rel_stderr : float
        The standard error of the excess relative to it (0 with ``-inf``).
    """

    estimate: float
    stderr: float
    n: int
    log10_excess: float
    rel_stderr: float

    @property
    def excess(self) -> float:
        """The Bayes risk minus ``eps**2``, from its log (0 below the double range)."""
        return float(10.0**self.log10_excess)


def subset_posterior(loglik, values, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and variance of ``sum_{j in J} values_j``, ``J`` an ``s``-subset.

    With a uniform prior over the ``s``-subsets of the ``L`` tokens and independent
    tokens, ``P(J | X)`` is proportional to ``exp(sum_{j in J} loglik_j)``. One pass over
    the tokens carries, for each size ``k <= s``, the log of the subsets' total weight
    and the mean and variance of their sums; adding a token mixes "without it" and
    "with it" by their weights, so every step is a convex combination (no cancellation,
    no overflow whatever the spread of the log-likelihoods).

    Parameters
    ----------
    loglik : array_like, shape ``(..., L)``
        Log-likelihood ratios of "token j is informative", ``|loglik| <= 1e250``.
    values : array_like, shape ``(..., L)``
        The token values summed over ``J`` (``X_j . v*``), ``|values| <= 1e150``.
    s : int
        Subset size, ``1 <= s <= L``.

    Returns
    -------
    mean, variance : ndarray, shape ``(...)``

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory.statistics import subset_posterior
    >>> m, v = subset_posterior([0.0, 0.0, 0.0], [1.0, 2.0, 3.0], 2)  # 3 pairs, equally likely
    >>> float(m), round(float(v), 12)  # sums 3, 4, 5
    (4.0, 0.666666666667)
    """
    logw = as_array(loglik, "loglik", allow_nan=False, bound=1e250)  # sums stay finite
    b = as_array(values, "values", allow_nan=False, bound=1e150)  # squares stay finite
    if logw.shape != b.shape or logw.ndim < 1 or logw.shape[-1] == 0:
        raise ValueError(
            "`loglik` and `values` must have one shape (..., L) with L >= 1, got "
            f"{logw.shape} and {b.shape}."
        )
    s = positive_int(s, "s", upper=logw.shape[-1])
    mean, log_var, _ = _log_posterior(logw, b, s)
    return mean, np.exp(log_var)


def _log_posterior(logw: np.ndarray, b, s: int, *, moments: bool = True) -> tuple:
    """The recursion of :func:`subset_posterior` (checked inputs): the posterior mean, the
    log of the variance, and the log of the total weight of the ``s``-subsets.

    Each step mixes ``(1 - p) var_without + p var_with + p (1 - p) gap^2``, three
    non-negative terms, summed as logs (``log p`` and ``log(1 - p)`` from the subsets' log
    weights): no cancellation, and a variance below the double range keeps its digits.
    With ``moments=False`` only the total weight is carried (`b` unused; the mean and
    variance come back as None).
    """
    L = logw.shape[-1]
    shape = logw.shape[:-1]
    la = np.full((s + 1, *shape), -np.inf)  # log total weight of the k-subsets so far
    la[0] = 0.0
    mean = np.zeros((s + 1, *shape))
    lv = np.full((s + 1, *shape), -np.inf)  # log variance of the k-subsets' sums
    with np.errstate(divide="ignore"):  # log 0 = -inf: a weight or a gap of exactly 0
        for j in range(L):
            lw = logw[..., j]
            bj = b[..., j] if moments else None
            top = min(j + 1, s)
            new = la[:top] + lw  # the k-subsets with token j (k = 1..top): finite
            total = np.logaddexp(la[1 : top + 1], new)  # la[top] may be -inf: p = 1
            if moments:
                lp, lq = new - total, la[1 : top + 1] - total  # log p, log(1 - p)
                gap = mean[:top] + bj - mean[1 : top + 1]
                terms = [lq + lv[1 : top + 1], lp + lv[:top], lp + lq + 2.0 * np.log(np.abs(gap))]
                lv[1 : top + 1] = logsumexp(np.stack(terms), axis=0)
                mean[1 : top + 1] = mean[1 : top + 1] + np.exp(lp) * gap
            la[1 : top + 1] = total
    if not moments:
        return None, None, la[s]
    return mean[s], lv[s], la[s]


def bhattacharyya_log(params: Params) -> float:
    """``log Z``, ``Z = integral sqrt(p q)`` over ``R^d``: the informative token's law ``p``
    against a distractor's ``q`` (derivations/bayes.py).

    ``p = N(sqrt(d/2) k*, gamma^2 I)``, ``q = N(0, I)``, so
    ``log Z = (d/2) log(2 gamma / (1 + gamma^2)) - d / (8 (1 + gamma^2))``. The Bayes
    risk's excess over ``eps^2`` is of order ``Z^2`` (:func:`bayes_risk_mc`).

    Parameters
    ----------
    params : Params

    Returns
    -------
    float

    Examples
    --------
    >>> from slr_theory import Params
    >>> from slr_theory.statistics import bhattacharyya_log
    >>> round(bhattacharyya_log(Params.paper()), 4)
    -45.1116
    """
    check_params(params)
    d, g2 = params.d, params.gamma**2
    return float(0.5 * d * np.log(2.0 * params.gamma / (1.0 + g2)) - d / (8.0 * (1.0 + g2)))


def bayes_risk_mc(
    params: Params, n: int, rng: np.random.Generator | int | None, *, chunk: int = 200_000
) -> BayesRisk:
    """Bayes risk ``E (Y - E[Y|X])^2`` by importance sampling over pairs of subsets.

    The excess over ``eps^2`` is the mean posterior variance of ``B_J = sum_{j in J}
    X_j . v*``, and a posterior variance is a sum over pairs of ``s``-subsets,
    ``Var = 1/2 sum_{J != J'} pi_J pi_J' (B_J - B_J')^2``, of non-negative terms. At
    large ``d`` its mean is carried by rare samples, where a distractor looks as
    informative as the informative token: at the paper's ``d = 400`` the mean over 2e4
    samples of the model is ``1.5e-117``, over 2e5 ``5e-114``, and the excess is
    ``1.9e-40``. Each pair is therefore sampled where it matters: the tokens of ``J``
    and ``J'`` alike from the law ``h ~ sqrt(p q)`` halfway between the informative
    ``p`` and the distractor ``q``, the common ones from ``p``, the rest from ``q``. With
    ``r`` tokens swapped the pairs' share is

        1/2 C(s, r) C(L - s, r) Z^(2r)
            E_h[(B_J - B_J')^2 exp((l_J + l_J')/2 - log sum_K e^(l_K))],

    ``Z = int sqrt(p q)`` (:func:`bhattacharyya_log`), ``l_K`` the subsets' summed
    log-likelihood ratios; the sampled factor is at most ``(B_J - B_J')^2 / 2``, so the
    estimate has a finite variance at every ``d`` and its standard error says how good it
    is. Everything is summed as logs: the excess keeps its digits below the double range
    (:attr:`BayesRisk.log10_excess`).

    Parameters
    ----------
    params : Params
        Model parameters, with ``L <= MAX_TOKENS`` (1e7); any ``s``.
    n : int
        Samples per number of swapped tokens, ``2 <= n <= 1e12``.
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    chunk : int
        Samples per vectorised block, ``1 <= chunk <= 1e7``.

    Returns
    -------
    BayesRisk

    Examples
    --------
    >>> import numpy as np
    >>> from slr_theory import Params
    >>> from slr_theory.statistics import bayes_risk_mc, linear_risk
    >>> b = bayes_risk_mc(Params(d=50, L=10, lam=1.0, gamma=0.7), 20_000, np.random.default_rng(0))
    >>> bool(b.estimate < linear_risk(Params(d=50, L=10, lam=1.0, gamma=0.7)))
    True
    >>> b = bayes_risk_mc(Params.paper(), 20_000, np.random.default_rng(0))
    >>> round(b.log10_excess), b.rel_stderr < 0.05  # below the double range, with its digits
    (-40, True)
    """
    check_params(params)
    n = positive_int(n, "n", upper=10**12)
    if n < 2:
        raise ValueError(f"`n` must be >= 2 (a standard error needs two samples), got {n!r}.")
    rng = generator(rng)
    chunk = positive_int(chunk, "chunk", upper=10**7)
    if params.L > MAX_TOKENS:
        raise ValueError(
            f"`params.L` must be <= {MAX_TOKENS:g} for bayes_risk_mc (each sample's tokens are "
            f"held in memory at once), got {params.L}."
        )
    L, S = params.L, params.s
    log_z = bhattacharyya_log(params)
    shares, rels = [], []  # per r: log of its share of the excess, its relative s.e.
    for r in range(1, min(S, L - S) + 1):
        log_mean, rel = _swapped_pairs(params, r, n, rng, chunk)
        count = 0.5 * math.comb(S, r) * math.comb(L - S, r)
        shares.append(math.log(count) + 2 * r * log_z + log_mean)
        rels.append(rel)
    if not shares:  # s = L: J is known, the posterior certain
        return BayesRisk(params.eps**2, 0.0, n, -np.inf, 0.0)
    log_excess = float(logsumexp(shares))
    w = np.exp(np.array(shares) - log_excess)  # each share's fraction of the excess
    rel = float(np.sqrt(np.sum((w * np.array(rels)) ** 2)))
    excess = float(np.exp(log_excess))
    return BayesRisk(
        estimate=params.eps**2 + excess,
        stderr=excess * rel,
        n=n,
        log10_excess=log_excess / math.log(10.0),
        rel_stderr=rel,
    )


def _swapped_pairs(
    params: Params, r: int, n: int, rng: np.random.Generator, chunk: int
) -> tuple[float, float]:
    """``log E_h[...]`` of :func:`bayes_risk_mc` for pairs with `r` tokens swapped, and its
    relative standard error."""
    d, L, S, g = params.d, params.L, params.s, params.gamma
    mu = np.sqrt(d / 2.0)
    g2 = g * g
    # token roles: J and J' share the first S - r; J alone has the next r, J' the r after
    common = S - r
    half_sd, half_mean = np.sqrt(2.0 * g2 / (1.0 + g2)), mu / (1.0 + g2)  # h ~ sqrt(p q)
    sd = np.ones(L)
    mean = np.zeros(L)
    sd[:common], mean[:common] = g, mu
    sd[common : S + r], mean[common : S + r] = half_sd, half_mean
    log_sum, log_sum2 = -np.inf, -np.inf
    done = 0
    while done < n:
        m = min(chunk, n - done, MAX_TOKENS // L)
        a = mean + sd * rng.standard_normal((m, L))  # X . k*
        b = sd * rng.standard_normal((m, L))  # X . v*
        perp = sd**2 * rng.chisquare(d - 2, size=(m, L)) if d > 2 else np.zeros((m, L))
        norm2 = a * a + b * b + perp
        logw = -d * np.log(g) - (norm2 - 2 * mu * a + mu * mu) / (2 * g2) + norm2 / 2
        own = logw[:, :common].sum(axis=1)
        lj = own + logw[:, common:S].sum(axis=1)
        lj2 = own + logw[:, S : S + r].sum(axis=1)
        gap = b[:, common:S].sum(axis=1) - b[:, S : S + r].sum(axis=1)
        log_all = _log_posterior(logw, None, S, moments=False)[2]  # log sum_K e^(l_K)
        with np.errstate(divide="ignore"):  # a gap of exactly 0: log 0 = -inf
            log_v = 2.0 * np.log(np.abs(gap)) + 0.5 * (lj + lj2) - log_all
        log_sum = float(np.logaddexp(log_sum, logsumexp(log_v)))
        log_sum2 = float(np.logaddexp(log_sum2, logsumexp(2.0 * log_v)))
        done += m
    log_mean = log_sum - math.log(n)
    ratio = math.exp((log_sum2 - math.log(n)) - 2.0 * log_mean) - 1.0  # Var / mean^2
    return log_mean, math.sqrt(max(ratio, 0.0) / (n - 1))


def statistics_table(
    gamma: float,
    eps: float,
    L: int | None,
    dims: list[int],
    samples: int,
    rng: np.random.Generator | int | None,
    progress=None,
    *,
    s: int = 1,
    nonlinearity: str | Nonlinearity = "erf",
    attention: str = "pointwise",
) -> list[dict]:
    """Rows ``d, L, lam*, attention, bayes (+- se), linear`` (risks minus ``eps**2``).

    ``L=None`` grows the sequence length with the dimension as ``L = ceil(sqrt(d))``.
    The attention column is the risk at ``(k*, v*)`` at its best temperature, for the
    model's nonlinearity and attention; the Bayes and linear columns do not depend on
    them.

    Parameters
    ----------
    gamma, eps : float
        Informative spread and label noise.
    L : int or None
        Sequence length (None: ``ceil(sqrt(d))``).
    dims : list of int
        Dimensions, one row each (each in the domain of `d`, at most 1e15).
    samples : int
        Monte Carlo draws of the Bayes risk per row, ``2 <= samples <= 1e12``.
    rng : numpy.random.Generator, int or None
        A generator, or a seed for a new one.
    progress : callable, optional
        Called with 1 after each row.
    s : int, optional
        Informative tokens per sequence, ``1 <= s <= L`` (1: the paper's model).
    nonlinearity : str or Nonlinearity, optional
        The attention's ``sigma`` (``"erf"``: the paper's).
    attention : {"pointwise", "softmax"}, optional
        The attention (:class:`slr_theory.Params`).

    Returns
    -------
    list of dict
        Keys ``d, L, lam_opt, attention, bayes, bayes_se, linear``, and
        ``bayes_log10``, ``bayes_rel_se``: the Bayes excess as its ``log10`` and relative
        standard error (:class:`BayesRisk`), which keep their digits where ``bayes``
        underflows to 0; ``bayes_n`` its samples per kind of subset pair.

    """
    if not isinstance(dims, (list, tuple, np.ndarray)) or len(dims) == 0:
        raise ValueError(f"`dims` must be a non-empty list of dimensions, got {dims!r}.")
    dims = [positive_int(d, "dims", upper=DOMAIN["d"][1]) for d in dims]
    if min(dims) < DOMAIN["d"][0]:
        raise ValueError(f"`dims` must be >= {DOMAIN['d'][0]}, got {min(dims)!r}.")
    samples = positive_int(samples, "samples", upper=10**12)
    if samples < 2:
        raise ValueError(f"`samples` must be >= 2 (a standard error needs two), got {samples!r}.")
    rng = generator(rng)
    rows = []
    for d in dims:
        length = int(np.ceil(np.sqrt(d))) if L is None else L
        p = Params(
            d=d,
            L=length,
            lam=DOMAIN["lam"][0],  # every model takes it; optimal_lambda ignores it
            gamma=gamma,
            eps=eps,
            s=s,
            nonlinearity=nonlinearity,
            attention=attention,
        )
        lam = optimal_lambda(p)
        bayes = bayes_risk_mc(p, samples, rng)
        rows.append(
            {
                "d": d,
                "L": length,
                "lam_opt": lam,
                "attention": oracle_risk(p.replace(lam=lam)) - eps**2,
                "bayes": bayes.excess,
                "bayes_se": bayes.stderr,
                "bayes_log10": bayes.log10_excess,
                "bayes_rel_se": bayes.rel_stderr,
                "bayes_n": bayes.n,
                "linear": linear_risk(p) - eps**2,
            }
        )
        if progress is not None:
            progress(1)
    return rows
