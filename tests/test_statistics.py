"""Paper section 4: oracle risk, optimal temperature, Bayes and linear predictors."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from slr_theory import Params
from slr_theory.model import random_targets, sample
from slr_theory.statistics import (
    bayes_risk_mc,
    linear_risk,
    optimal_lambda,
    oracle_risk,
    statistics_table,
)


@pytest.mark.parametrize("s", [1, 2, 4])  # s = L: every token informative, Y is linear in X
def test_linear_risk_matches_least_squares_on_samples(s):
    p = Params(d=6, L=4, lam=1.0, gamma=0.7, eps=0.2, s=s)
    rng = np.random.default_rng(s)
    n = 300_000
    # fit on one sample, evaluate on a fresh one drawn with the same targets
    ks, vs = random_targets(p.d, rng)
    X, y, _ = sample(p, n, rng, ks, vs)
    Xt, yt, _ = sample(p, n, rng, ks, vs)
    A = np.concatenate([X.reshape(n, -1), np.ones((n, 1))], axis=1)
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    At = np.concatenate([Xt.reshape(n, -1), np.ones((n, 1))], axis=1)
    err = (yt - At @ coef) ** 2
    z = (err.mean() - linear_risk(p)) / (err.std(ddof=1) / np.sqrt(n))
    assert abs(z) < 5
    if s == p.L:
        assert linear_risk(p) == p.eps**2


def test_bayes_risk_refuses_more_than_one_informative_token():
    with pytest.raises(ValueError, match=r"`params\.s` must be 1"):
        bayes_risk_mc(Params(d=6, L=4, lam=1.0, gamma=0.7, s=2), 100, np.random.default_rng(0))


def test_bayes_risk_matches_the_full_posterior():
    p = Params(d=6, L=4, lam=1.0, gamma=0.7, eps=0.2)
    rng = np.random.default_rng(1)
    ks, vs = random_targets(p.d, rng)
    X, y, _ = sample(p, 200_000, rng, ks, vs)
    mu = np.sqrt(p.d / 2)
    logw = (
        -p.d * np.log(p.gamma)
        - np.sum((X - mu * ks) ** 2, -1) / (2 * p.gamma**2)
        + np.sum(X**2, -1) / 2
    )
    w = np.exp(logw - logsumexp(logw, axis=1, keepdims=True))
    err = (y - np.sum(w * (X @ vs), axis=1)) ** 2
    direct, se_direct = err.mean(), err.std(ddof=1) / np.sqrt(len(err))
    b = bayes_risk_mc(p, 200_000, rng)
    assert abs(direct - b.estimate) < 5 * np.hypot(se_direct, b.stderr)
    assert p.eps**2 <= b.estimate < linear_risk(p)


def test_bayes_below_attention_below_linear_and_optimal_lambda():
    p = Params.paper(eps=0.1)
    lam = optimal_lambda(p)
    att = oracle_risk(p.replace(lam=lam))
    for f in (0.5, 0.9, 1.1, 2.0):
        assert att <= oracle_risk(p.replace(lam=lam * f))
    b = bayes_risk_mc(p, 20_000, np.random.default_rng(2))
    assert b.estimate <= att + 5 * b.stderr < linear_risk(p)


def test_table_shows_attention_approaching_bayes_as_d_grows():
    rows = statistics_table(
        0.5**0.5, 0.0, 10, [100, 1000, 10_000, 100_000], 2_000, np.random.default_rng(3)
    )
    att = [r["attention"] for r in rows]
    assert all(a > b for a, b in itertools.pairwise(att))
    assert att[-1] < 1e-3 and all(r["linear"] == pytest.approx(0.5 * 9 / 9.5) for r in rows)
    grow = statistics_table(0.5**0.5, 0.0, None, [100, 10_000], 2_000, np.random.default_rng(3))
    assert [r["L"] for r in grow] == [10, 100]
