"""The loop kernel: an order-1 table of one temperature as polynomials in kappa, a long run's gradient."""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from ...engine.contract import RiskTable, part_exponents
from ...engine.terms import NU_BASES, columns, gaussian_columns
from .features import features, reduced

__all__ = []


#: Nodes per piece of a :class:`LoopKernel` (its polynomials have degree ``KERNEL_NODES - 1``).
KERNEL_NODES = 12


#: A kernel's polynomials agree with the features they interpolate to this many units of
#: ``2**-52`` of the size of their terms, checked between the nodes as they are built.
KERNEL_ULPS = 32.0


#: A kernel interpolates the components with their factor ``e^{-x^2}`` when ``x^2 <= KERNEL_FOLD``
#: for every ``kappa`` (the factor then changes a component's size by at most 64 times over
#: ``[-1, 1]``, nowhere near underflow); beyond, it computes the factor.
KERNEL_FOLD = math.log(64.0)


_KERNEL_MAX_PIECES = 1 << 14

_GAUSS = 6  # the Gaussian factor's column among the variables a call multiplies by


_KW = 0.5 * np.cos(np.pi * (np.arange(KERNEL_NODES) + 0.5) / KERNEL_NODES)  # nodes in w


# probes: between neighbouring nodes and at the ends of a piece (w = +-1/2)
_KP = np.concatenate([[-0.5], 0.5 * (_KW[:-1] + _KW[1:]), [0.5]])


@cache
def _chebyshev_transform(n: int) -> np.ndarray:
    """``(n, n)``: values at the ``n`` Chebyshev nodes ``cos(pi (m + 1/2) / n)`` ->
    coefficients of ``T_k`` (a cosine transform, well conditioned)."""
    dct = (2.0 / n) * np.cos(np.pi * np.outer(np.arange(n), np.arange(n) + 0.5) / n)
    dct[0] *= 0.5
    return dct


@cache
def _kernel_conversion() -> tuple[np.ndarray, np.ndarray]:
    """``(KERNEL_NODES, KERNEL_NODES)``: values at the nodes ``_KW`` -> coefficients of ``w^j``.

    Values to Chebyshev coefficients in ``t = 2w`` (:func:`_chebyshev_transform`), then
    ``T_k(2w)`` to powers of ``w`` (integers times powers of two, exact).
    """
    n = KERNEL_NODES
    dct = _chebyshev_transform(n)
    to_powers = np.zeros((n, n))
    for k in range(n):
        unit = np.zeros(n)
        unit[k] = 1.0
        powers = np.polynomial.chebyshev.cheb2poly(unit)  # trailing zeros trimmed
        to_powers[: powers.size, k] = powers * 2.0 ** np.arange(powers.size)
    return to_powers, dct


class LoopKernel:
    """The order-1 rows of one temperature as polynomials in ``kappa``: a PGD loop's gradient.

    Every feature of the order-1 table is a monomial in ``(nu, theta, eta, rho)`` times
    a function of ``kappa`` affine in ``nu`` (the parts of :class:`Enclosure`). Grouped by
    row, by monomial and by whether they carry ``e^{-x^2}``, they give ``F`` *components*
    ``c_f(kappa)``, and

    .. math:: \\text{row}_r = \\sum_f R_{fr}\\, m_f\\, c_f(\\kappa)\\, [e^{-x^2}]^{g_f}.

    Each component, without its Gaussian factor, is a polynomial of degree
    ``KERNEL_NODES - 1`` on each of ``pieces + 1`` pieces of width ``2 / pieces`` centred
    at ``2j / pieces``, ``|j| <= pieces / 2`` (they reach ``1/pieces`` past ``+-1``, so
    a ``kappa`` rounded past ``+-1`` needs no clipping), interpolating the engine's
    :func:`features` at Chebyshev nodes. Pieces
    are halved until, between the nodes and at the ends, every component agrees with
    the features to :data:`KERNEL_ULPS` ulp of the size of its terms on the piece. Where
    ``e^{-x^2}`` can become small (``x^2 > KERNEL_FOLD`` at ``kappa = 1``) the factor
    ``exp(-x2 kappa^2)`` is computed, not interpolated, so a component keeps its
    relative precision where the factor underflows; its rounding adds the engine's
    own ``2 x^2`` ulp. ``e^{-x^2} [erf(y) - nu]`` counts as two terms here: the
    kernel does not keep the relative precision of ``R_kappa`` at the optimum that the
    validated functions keep, which a PGD step cannot see (it multiplies ``R_kappa``
    by ``1 - kappa^2`` and ``alpha``, below an ulp of ``kappa``).

    A call costs about seventeen NumPy calls whatever the table (:func:`features`:
    about sixty), which is what a loop over a few tens of runs pays for. Build
    one with :func:`loop_kernel`.

    Attributes
    ----------
    coefficients : ndarray, shape ``(pieces + 1, F, KERNEL_NODES)``
        Coefficients of ``w^i`` on piece ``j`` (at row ``j mod (pieces + 1)``), ``w`` in
        ``[-1/2, 1/2]``, ``kappa = (2 / pieces) (j + w)``.
    gaussian : int
        The first `gaussian` components carry ``e^{-x^2}``.
    x2 : float
        ``x^2 / kappa^2 = a^2 / q``.
    monomials : ndarray of int, shape ``(F,)``
        Each component's monomial as ``36 i + 6 j + k``: the product ``e_i e_j e_k`` of
        the variables ``e = (1, kappa, eta, theta, nu, rho)`` (:func:`kernel_monomial`).
    rows : ndarray, shape ``(F, R)``
        ``R_{fr}``: what each component adds to each output row.
    """

    def __init__(self, coefficients, gaussian: int, x2: float, monomials, rows):
        self.coefficients = coefficients
        self.gaussian = gaussian
        self.x2 = x2
        self.monomials = monomials
        self.rows = rows
        # 0-d arrays: a product with one costs less than with a Python float (NumPy 2)
        self._scale = np.array(0.5 * (coefficients.shape[0] - 1))
        self._minus_x2 = np.array(-x2)
        # each component's factors among e = (1, kappa, eta, theta, nu, rho, e^{-x^2}):
        # its monomial's three and the Gaussian factor (or 1), gathered and multiplied in
        # two calls (the factor is a seventh variable, not a separate product)
        first, rest = np.divmod(monomials, 36)
        second, third = np.divmod(rest, 6)
        gauss = np.where(np.arange(monomials.size) < gaussian, _GAUSS, 0)
        used = [f for f in (first, second, third, gauss) if np.any(f)]
        self._factors = np.ascontiguousarray(np.stack(used)) if used else None  # (k, F)
        # one factor and no Gaussian (the kernel on M: nu): one gather, no product
        self._single = used[0] if len(used) == 1 and not gaussian else None
        self._work = np.ones((7, 0))
        self._powers = np.ones((0, KERNEL_NODES))

    @property
    def pieces(self) -> int:
        """``2 / width`` of a piece."""
        return self.coefficients.shape[0] - 1

    def __call__(self, ext: np.ndarray) -> np.ndarray:
        """The rows ``(n, R)`` at ``ext = (1, kappa, eta, theta, nu, rho)`` ``(n, 6)``.

        The order of `ext` is that of the coordinates ``(k_1, k_2, v_1, v_2)`` a PGD
        loop holds (:mod:`slr_theory.trajectory`), so it fills ``ext`` with one copy.

        (``ndarray.take`` serves every gather: a third of the cost of fancy indexing on
        arrays of a few tens of runs; every intermediate of a few tens of runs is written
        into work arrays kept between calls.)
        """
        n = ext.shape[0]
        if self._powers.shape[0] != n:
            self._powers = np.ones((n, KERNEL_NODES))
            self._work = np.ones((7, n))
        w, e = self._powers, self._work
        kappa = ext[:, 1]
        u = kappa * self._scale
        r = np.rint(u)
        w[:, 1:] = (u - r)[:, None]
        np.multiply.accumulate(w, axis=1, out=w)
        block = self.coefficients.take(r.astype(np.intp), axis=0, mode="wrap")
        c = (block @ w[:, :, None])[:, :, 0]
        if self._factors is None:
            return c @ self.rows
        if self._single is not None:
            c *= ext.take(self._single, axis=1)
            return c @ self.rows
        e[:6] = ext.T  # by variable: the gather and the product below run along runs
        if self.gaussian:
            g = e[6]
            np.square(kappa, out=g)
            g *= self._minus_x2
            np.exp(g, out=g)
        c *= np.multiply.reduce(e.take(self._factors, axis=0), axis=0).T
        return c @ self.rows

    def permuted(self, rows, scale: float = 1.0) -> LoopKernel:
        """The same kernel with its output rows rearranged, times `scale`: row ``j`` is
        ``scale`` times the old row ``rows[j]``, or zero where ``rows[j]`` is None."""
        out = np.zeros((self.rows.shape[0], len(rows)))
        for j, r in enumerate(rows):
            if r is not None:
                out[:, j] = scale * self.rows[:, r]
        return LoopKernel(self.coefficients, self.gaussian, self.x2, self.monomials, out)

    def on_manifold(self) -> LoopKernel:
        """The kernel of ``(dR/dkappa, dR/dnu)`` on M: the components free of ``theta, eta, rho``.

        Its monomials read only ``1`` and ``nu``: on M, ``ext = (1, kappa, 0, 0, nu, 0)``.
        """
        on_m = {kernel_monomial(nus) for nus in ((), (4,), (4, 4), (4, 4, 4))}  # nu = e_4
        keep = np.isin(self.monomials, list(on_m)) & np.any(self.rows[:, :2] != 0, axis=1)
        return LoopKernel(
            np.ascontiguousarray(self.coefficients[:, keep]),
            int(np.count_nonzero(keep[: self.gaussian])),
            self.x2,
            self.monomials[keep],
            np.ascontiguousarray(self.rows[keep][:, :2]),
        )


def _kernel_parts(constants: np.ndarray, kappa: np.ndarray, pairs: bool, scaled: bool):
    """The parts ``f``, ``g`` of the features (`scaled`: see :func:`features`) and their
    size, each ``(K, n)``, with `constants` a table's row or one column per point.

    ``Phi_c(nu) = nu^e (f_c + nu g_c)`` (monomials at ``theta = eta = rho = 1``): from
    ``nu = 1`` and ``nu = 2``, ``g = Phi(2) / 2^e - Phi(1)`` and ``f = Phi(1) - g``; a basis
    without ``nu`` gives ``g = 0`` and ``f = Phi(1)`` exactly (the ratios are powers of 2).
    """
    n = kappa.size
    ov = np.ones((5, n))
    ov[0] = kappa
    one = features(ov, constants, 1, scaled=scaled)
    ov[1] = 2.0
    g = features(ov, constants, 1, scaled=scaled)
    e_nu = np.array([m[0] for m, _p, _b in columns(1, pairs)], dtype=np.float64)
    g /= (2.0**e_nu)[:, None]
    g -= one
    size = np.abs(one)
    size += np.abs(g)  # bounds |f| and |g| to rounding
    one -= g  # f
    return one, g, size


def _piece_points(pieces: int) -> tuple[np.ndarray, np.ndarray]:
    """The kappa nodes and probes of `pieces` pieces, piece by piece: piece ``j`` (centre
    ``2j / pieces``) at row ``j mod (pieces + 1)``."""
    j = np.arange(pieces + 1)
    centre = (2.0 / pieces) * np.where(j <= pieces // 2, j, j - pieces - 1)
    nodes = (centre[:, None] + (2.0 / pieces) * _KW).ravel()
    probes = (centre[:, None] + (2.0 / pieces) * _KP).ravel()
    return nodes, probes


def _layout(C: np.ndarray, pairs: bool, gauss: np.ndarray) -> tuple[list, np.ndarray]:
    """The components of tables ``C`` ``(T, rows, K)`` (one or several temperatures):
    ``(carries no e^{-x^2}, monomial, row)`` sorted (Gaussian ones first), and the weights
    ``(T, F, 2K)`` that make them of the features' parts ``f``, ``g``."""
    cols = columns(1, pairs)
    exps = part_exponents(cols)  # (2, K, 4)
    K = len(cols)
    entries: dict = {}
    for part in (0, 1):
        for c, (m, _p, b) in enumerate(cols):
            for r in range(C.shape[1]):
                if np.any(C[:, r, c] != 0.0) and (part == 0 or b in NU_BASES or m[4]):
                    entries[(not gauss[c], tuple(exps[part, c]), r), part, c] = None
    order = sorted({key for key, _part, _c in entries})
    index = {k: i for i, k in enumerate(order)}
    W = np.zeros((C.shape[0], len(order), 2 * K))
    for key, part, c in entries:
        W[:, index[key], part * K + c] += C[:, key[2], c]
    return order, W


def _kernel_of(order: list, rows: int) -> tuple[int, np.ndarray, np.ndarray]:
    """What :class:`LoopKernel` reads of a layout: the number of Gaussian components, each
    component's monomial code and its output row ``(F, rows)``."""
    var = dict(enumerate((4, 3, 2, 5)))  # nu, theta, eta, rho among e
    monomials = np.array(
        [
            kernel_monomial([var[v] for v, e in enumerate(mono) for _ in range(e)])
            for _g, mono, _r in order
        ],
        dtype=np.intp,
    )
    out = np.zeros((len(order), rows))
    for f, (_g, _mono, r) in enumerate(order):
        out[f, r] = 1.0
    return sum(1 for g, _m, _r in order if not g), monomials, out


def kernel_monomial(factors) -> int:
    """A :class:`LoopKernel` monomial's code ``36 i + 6 j + k`` from the indices of its
    (at most three) factors among ``e = (1, kappa, eta, theta, nu, rho)``."""
    idx = sorted(factors, reverse=True)
    if len(idx) > 3:
        raise ValueError(f"a monomial of degree {len(idx)} in the order-1 table")
    idx += [0] * (3 - len(idx))
    return 36 * idx[0] + 6 * idx[1] + idx[2]


def loop_kernel(tab: RiskTable) -> LoopKernel:
    """The :class:`LoopKernel` of an order-1 :class:`EngineTable` of one temperature.

    Parameters
    ----------
    tab : EngineTable
        ``order == 1``, one temperature.

    Returns
    -------
    LoopKernel
    """
    if tab.order != 1 or tab.C.ndim != 2:
        raise ValueError("`tab` must be an order-1 table of one temperature.")
    x2 = float(reduced(np.array([1.0]), tab.constants)[1][0])
    fold = x2 <= KERNEL_FOLD
    gauss = gaussian_columns(1, tab.pairs) & (not fold)
    order, W = _layout(tab.C[None], tab.pairs, gauss)
    W = W[0]
    absW = np.abs(W)

    def sample(pieces: int):
        nodes, probes = _piece_points(pieces)
        f, g, size = _kernel_parts(
            tab.constants, np.concatenate([nodes, probes]), tab.pairs, scaled=not fold
        )
        vals = W @ np.concatenate([f, g])
        size = absW @ np.concatenate([size, size])
        k = nodes.size
        return vals[:, :k], vals[:, k:], size[:, k:]

    to_powers, dct = _kernel_conversion()
    powers = _KP[:, None] ** np.arange(KERNEL_NODES)  # (probes, N)
    pieces = 2
    while True:
        at_nodes, exact, size = sample(pieces)
        F = at_nodes.shape[0]
        cheb = at_nodes.reshape(F, pieces + 1, KERNEL_NODES) @ dct.T
        coef = cheb @ to_powers.T  # (F, P + 1, N): coefficients of w^i
        approx = coef @ powers.T
        # held to the size of the terms on the piece: a component's zero (erf at
        # kappa = 0) is held to its neighbours' size, as any interpolant's must be
        local = size.reshape(F, pieces + 1, -1).max(axis=2, keepdims=True)
        excess = np.abs(approx - exact.reshape(approx.shape)) - KERNEL_ULPS * 2.0**-52 * local
        if np.all(excess <= 0.0):
            break
        if pieces >= _KERNEL_MAX_PIECES:
            raise ArithmeticError(f"no kernel of {pieces} pieces is within {KERNEL_ULPS} ulp")
        pieces *= 2
    gaussian, monomials, rows = _kernel_of(order, tab.C.shape[0])
    return LoopKernel(np.ascontiguousarray(np.moveaxis(coef, 0, 1)), gaussian, x2, monomials, rows)


# --- kernels over a temperature schedule -------------------------------------------------

#: Chebyshev nodes in ``lambda`` of a :class:`SweepKernel` segment (its coefficients are
#: polynomials of degree ``SWEEP_NODES - 1`` in ``lambda`` on the segment).
SWEEP_NODES = 12

#: A segment spans at most this relative width of temperatures, ``(hi - lo) / hi`` (at the
#: paper's parameters, 0.2 fails the check at ``lambda = 0.3`` and 0.1 passes from 0.1 to 0.9).
SWEEP_WIDTH = 0.1

#: Fewest steps a segment is built for: building and checking one costs 30-130 ms, what
#: the engine's features cost in 1 000-4 000 steps of a few tens of runs.
SWEEP_MIN_STEPS = 2048


# Most pieces a segment tries (each doubling evaluates the features at 2 SWEEP_NODES + 1
# temperatures times 25 points a piece): the fixed kernel needs 64 at the paper's lam = 1.
_SWEEP_MAX_PIECES = 256


def _chebyshev_in_lam(t: np.ndarray) -> np.ndarray:
    """``T_k(t)``, ``k < SWEEP_NODES``, at ``t`` in ``[-1, 1]``: shape ``(len(t), SWEEP_NODES)``."""
    return np.polynomial.chebyshev.chebvander(t, SWEEP_NODES - 1)


def _sweep_segment(tables_at, lo: float, hi: float, pieces: int = 2):
    """The coefficients of one segment ``[lo, hi]`` of temperatures, or None where the
    interpolant in ``lambda`` misses the features by more than :data:`KERNEL_ULPS`.

    Returns ``(coefficients (terms, pieces + 1, F, KERNEL_NODES), gaussian, monomials,
    rows, pieces)``: the coefficient of ``T_k`` in ``lambda``, ``k < terms <=
    SWEEP_NODES``, of each coefficient of :class:`LoopKernel`.
    """
    M = SWEEP_NODES
    t_nodes = np.cos(np.pi * (np.arange(M) + 0.5) / M)  # decreasing
    t_probes = np.concatenate([[1.0], 0.5 * (t_nodes[:-1] + t_nodes[1:]), [-1.0]])
    mid, half = 0.5 * (hi + lo), 0.5 * (hi - lo)
    tab_n = tables_at(mid + half * t_nodes)
    tab_p = tables_at(mid + half * t_probes)
    pairs = tab_n.pairs
    K = len(columns(1, pairs))
    x2_hi = float(reduced(np.array([1.0]), tab_p.constants[0])[1][0])  # t = 1: lam = hi
    fold = x2_hi <= KERNEL_FOLD
    gauss = gaussian_columns(1, pairs) & (not fold)
    C_all = np.concatenate([tab_n.C, tab_p.C])  # (M + M + 1, rows, K)
    order, W = _layout(C_all, pairs, gauss)  # per temperature: the features -> components
    F = len(order)
    # f's and g's weights, and the sizes' (|f| and |g| share one size)
    Wf, Wg = np.ascontiguousarray(W[:, :, :K]), np.ascontiguousarray(W[:, :, K:])
    absW = np.abs(W[:, :, :K]) + np.abs(W[:, :, K:])
    constants = np.concatenate([tab_n.constants, tab_p.constants])  # (T, N_CONSTANTS)
    to_powers, dct = _kernel_conversion()
    lam_dct = _chebyshev_transform(M)
    powers = _KP[:, None] ** np.arange(KERNEL_NODES)
    node_powers = _KW[:, None] ** np.arange(KERNEL_NODES)
    cheb_all = np.concatenate([_chebyshev_in_lam(t_nodes), _chebyshev_in_lam(t_probes)])

    def components(temps: slice, kappa: np.ndarray):
        """The components and their sizes ``(T, F, points)`` at the temperatures `temps`."""
        rows = constants[temps]
        f, g, size = _kernel_parts(
            np.repeat(rows, kappa.size, axis=0).T, np.tile(kappa, rows.shape[0]), pairs, not fold
        )
        shape = (K, rows.shape[0], kappa.size)
        f, g, size = (x.reshape(shape).transpose(1, 0, 2) for x in (f, g, size))
        return Wf[temps] @ f + Wg[temps] @ g, absW[temps] @ size

    while True:
        nodes, probes = _piece_points(pieces)
        kappa = np.concatenate([nodes, probes])
        nn = nodes.size
        # first the nodes in lambda: the fit, and whether the pieces in kappa suffice
        comp, comp_size = components(slice(0, M), kappa)
        at_nodes = comp[:, :, :nn].reshape(M, F, pieces + 1, KERNEL_NODES)
        # Chebyshev in lambda (nodes t_nodes), then in kappa to powers of w per piece
        lam_coef = np.tensordot(lam_dct, at_nodes, axes=(1, 0))  # (M, F, P + 1, N)
        coef = (lam_coef @ dct.T) @ to_powers.T  # coefficients of w^i
        check = _check_data(comp, comp_size, nn, pieces, cheb_all[:M], node_powers, powers)
        if _misses(coef, M, *check).any():  # the pieces in kappa are too wide
            if pieces >= _SWEEP_MAX_PIECES:
                return None
            pieces *= 2
            continue
        # then between the nodes in lambda, at every kappa node and probe
        more, more_size = components(slice(M, None), kappa)
        comp = np.concatenate([comp, more])
        comp_size = np.concatenate([comp_size, more_size])
        check = _check_data(comp, comp_size, nn, pieces, cheb_all, node_powers, powers)
        if _misses(coef, M, *check).any():
            return None  # the segment is too wide in lambda
        break
    # the fewest terms in lambda that pass the same check (a narrow segment needs fewer:
    # each term is a product a step pays)
    terms = M
    while terms > 2 and not _misses(coef, terms - 1, *check).any():
        terms -= 1
    coef = coef[:terms]
    gaussian, monomials, rows = _kernel_of(order, C_all.shape[1])
    return np.ascontiguousarray(np.moveaxis(coef, 1, 2)), gaussian, monomials, rows, pieces


def _check_data(comp, comp_size, nn, pieces, cheb, node_powers, powers) -> tuple:
    """What :func:`_misses` compares: the components at the kappa nodes (the first `nn`
    points) and probes, and the tolerance of each piece (from its probes' sizes)."""
    T, F = comp.shape[:2]
    exact_nodes = comp[:, :, :nn].reshape(T, F, pieces + 1, KERNEL_NODES)
    exact_probes = comp[:, :, nn:].reshape(T, F, pieces + 1, -1)
    local = comp_size[:, :, nn:].reshape(exact_probes.shape).max(axis=3, keepdims=True)
    return cheb, node_powers, powers, exact_nodes, exact_probes, KERNEL_ULPS * 2.0**-52 * local


def _misses(coef, terms, cheb, node_powers, powers, exact_nodes, exact_probes, tol):
    """Which temperatures (rows of `cheb`) a segment's first `terms` Chebyshev terms in
    lambda miss, at the kappa nodes or probes, by more than `tol`."""
    at_t = np.tensordot(cheb[:, :terms], coef[:terms], axes=(1, 0))
    return np.maximum(
        (np.abs(at_t @ node_powers.T - exact_nodes) > tol).any(axis=(1, 2, 3)),
        (np.abs(at_t @ powers.T - exact_probes) > tol).any(axis=(1, 2, 3)),
    )


class SweepKernel:
    """Loop kernels along a schedule of temperatures: a run's gradient at every step.

    The steps are cut into segments of temperatures at most :data:`SWEEP_WIDTH` wide
    (relative) and at least :data:`SWEEP_MIN_STEPS` long; on each, every coefficient of
    the :class:`LoopKernel` is a polynomial of degree ``SWEEP_NODES - 1`` in ``lambda``
    (Chebyshev interpolation at :data:`SWEEP_NODES` temperatures), checked as it is built
    against the engine's features at the temperatures between the nodes and at the
    segment's ends, between the kernel's nodes in ``kappa`` and at them, to
    :data:`KERNEL_ULPS` ulp of the size of the terms (the bound of the kernel at one
    temperature). A step of a segment combines its coefficients for its temperature (one
    product of ``SWEEP_NODES`` values with the segment's coefficients) and calls the
    kernel; a step outside every segment (the schedule moves too fast there, or no
    interpolant passed its check) is not served: the call gives None, and
    :meth:`serves` says which steps are.

    Build one with :func:`sweep_kernel`.
    """

    def __init__(self, segments: list, steps: int):
        self.segments = (
            segments  # (start, stop, coefficients (M, size), T (steps, M), -x2, kernel)
        )
        self.steps = steps
        self._of_step = np.full(steps, -1, dtype=np.intp)
        for i, (start, stop, *_rest) in enumerate(segments):
            self._of_step[start:stop] = i

    def serves(self, start: int, stop: int | None = None) -> bool:
        """Whether step `start` (every step of ``start:stop``) has a kernel."""
        return bool(np.all(self._of_step[start : start + 1 if stop is None else stop] >= 0))

    def __call__(self, j: int, ext: np.ndarray) -> np.ndarray | None:
        """The rows ``(n, R)`` of step `j` at ``ext`` (as :meth:`LoopKernel.__call__`), or
        None where the step has no kernel."""
        i = self._of_step[j]
        if i < 0:
            return None
        start, _stop, coef, cheb, minus_x2, kernel = self.segments[i]
        np.dot(cheb[j - start], coef, out=kernel.coefficients.reshape(-1))
        kernel._minus_x2[...] = minus_x2[j - start]
        return kernel(ext)

    def permuted(self, rows, scale: float = 1.0) -> SweepKernel:
        """As :meth:`LoopKernel.permuted`, for every segment (each a coefficient buffer of its own)."""
        segs = []
        for start, stop, coef, cheb, minus_x2, kernel in self.segments:
            moved = kernel.permuted(rows, scale)
            moved.coefficients = np.empty_like(kernel.coefficients)
            segs.append((start, stop, coef, cheb, minus_x2, moved))
        return SweepKernel(segs, self.steps)


def sweep_kernel(tables_at, lam: np.ndarray) -> SweepKernel | None:
    """The :class:`SweepKernel` of the temperatures `lam` of a run's steps, or None where
    no segment is built (the schedule moves too fast for any).

    Parameters
    ----------
    tables_at : callable
        ``lam -> EngineTable`` of order 1 at those temperatures (one per entry).
    lam : ndarray, shape ``(steps,)``
        Each step's temperature, monotone.

    Returns
    -------
    SweepKernel or None
    """
    lam = np.asarray(lam, dtype=np.float64)
    segments = []
    start, pieces = 0, 32  # the first from 16: about what a kernel near lam = 0.1 needs
    while start < lam.size:
        # the longest run of steps from `start` within the relative width (lam monotone)
        span = np.abs(lam[start:] - lam[start]) / np.maximum(np.abs(lam[start:]), lam[start])
        wide = np.flatnonzero(span > SWEEP_WIDTH)
        stop = start + (int(wide[0]) if wide.size else lam.size - start)
        seg_lam = lam[start:stop]
        lo, hi = float(seg_lam.min()), float(seg_lam.max())
        built = None
        if stop - start >= SWEEP_MIN_STEPS and hi > lo:
            # from half the last segment's pieces: a schedule's next segment needs about as many
            built = _sweep_segment(tables_at, lo, hi, max(2, pieces // 2))
        if built is not None:
            coef, gaussian, monomials, rows, pieces = built
            t = np.clip((2.0 * seg_lam - (lo + hi)) / (hi - lo), -1.0, 1.0)
            cheb = np.ascontiguousarray(_chebyshev_in_lam(t)[:, : coef.shape[0]])
            minus_x2 = np.zeros(seg_lam.size)
            if gaussian:
                minus_x2 = -reduced(np.ones(seg_lam.size), tables_at(seg_lam).constants.T)[1]
            kernel = LoopKernel(np.empty(coef.shape[1:]), gaussian, 0.0, monomials, rows)
            flat = np.ascontiguousarray(coef.reshape(coef.shape[0], -1))
            segments.append((start, stop, flat, cheb, minus_x2, kernel))
        start = stop
    return SweepKernel(segments, lam.size) if segments else None
