"""The geometry layer against finite differences of the risk at explicit vectors in R^m."""

import numpy as np
import pytest

from slr_theory import Params, risk_grad, risk_grad_at
from slr_theory.geometry import (
    gradient_norms,
    manifold_chart_jacobian,
    manifold_chart_velocity,
    riemannian_hessian,
)
from slr_theory.sampling import overlaps_of

from .strategies import geodesic_hessian


def _point(rng, m):
    k, v = rng.standard_normal((2, m))
    return k / np.linalg.norm(k), v / np.linalg.norm(v)


@pytest.mark.parametrize("lam", [0.1, 0.9])
def test_gradient_norms_match_the_projected_gradient_of_explicit_vectors(lam):
    p = Params(d=7, L=5, lam=lam, gamma=0.8)
    rng = np.random.default_rng(1)
    e = np.eye(7)
    for _ in range(5):
        k, v = _point(rng, 7)
        gk, gv = risk_grad_at(p, k, v, e[0], e[1], riemannian=True)
        ov = overlaps_of(k, v, e[0], e[1])
        got = gradient_norms(ov, risk_grad(p, *ov))
        np.testing.assert_allclose(got, [np.linalg.norm(gk), np.linalg.norm(gv)], rtol=1e-12)


@pytest.mark.parametrize("m, lam", [(6, 0.3), (7, 0.9), (9, 0.1)])
def test_hessian_spectrum_matches_second_differences_along_geodesics(m, lam):
    """Every eigenvalue, with its multiplicity for d = m, against the matrix of second
    differences of risk_at along geodesics in an orthonormal tangent basis of R^m."""
    p = Params(d=m, L=4, lam=lam, gamma=0.7)
    rng = np.random.default_rng(m)
    e = np.eye(m)
    k, v = _point(rng, m)
    k[3:] *= 0.3  # keep away from the degenerate spans
    k /= np.linalg.norm(k)
    ov = overlaps_of(k, v, e[0], e[1])
    spec = riemannian_hessian(p, ov)

    H = geodesic_hessian(p, k, v, e[0], e[1], 2e-4)
    fd = np.sort(np.linalg.eigvalsh(H))
    ours = np.sort(np.repeat(spec.eigenvalues, spec.multiplicities))
    assert ours.size == fd.size == 2 * (m - 1)
    np.testing.assert_allclose(ours, fd, atol=2e-5 * max(1.0, np.abs(fd).max()))


def test_multiplicities_count_the_transverse_copies():
    p = Params.paper(lam=0.1)
    spec = riemannian_hessian(p, [0.3, 0.2, 0.1, -0.2, 0.05])
    assert spec.multiplicities.sum() == 2 * (p.d - 1)
    assert spec.span_dim == 4  # d - 4 copies of H_W
    for val in spec.transverse:
        i = np.argmin(np.abs(spec.eigenvalues - val))
        assert spec.multiplicities[i] >= p.d - 4


@pytest.mark.parametrize("lam", [0.1, 0.9])
@pytest.mark.parametrize("corner", [(0.0, 0.0), (np.pi, np.pi), (0.0, np.pi)])
def test_corner_eigenvalues_are_the_geodesic_rates(lam, corner):
    """At a corner the angle chart's Jacobian is diagonal with the rates of the flow along
    the two geodesics, measured here from the velocity at a small angle off the corner."""
    p = Params.paper(lam=lam)
    phi, psi = corner
    J = manifold_chart_jacobian(p, phi, psi)
    assert abs(J[0, 1]) <= 1e-15 * np.abs(J).max()
    for axis in (0, 1):
        d = 1e-7
        step = np.array([phi, psi], float)
        step[axis] += d if step[axis] == 0 else -d
        vel = manifold_chart_velocity(p, *step)[axis]
        rate = vel / (step[axis] - corner[axis])
        np.testing.assert_allclose(J[axis, axis], rate, rtol=1e-5)


def test_chart_jacobian_is_minus_the_riemannian_hessian_on_m():
    p = Params.paper(lam=0.3)
    kappa, nu = 0.4, -0.3
    J = manifold_chart_jacobian(p, np.arccos(kappa), np.arccos(nu))
    spec = riemannian_hessian(p, [kappa, nu, 0.0, 0.0, 0.0])
    on_m = np.sort(np.linalg.eigvalsh(-J))
    assert all(np.min(np.abs(spec.in_span - x)) <= 1e-9 * np.abs(spec.in_span).max() for x in on_m)
