"""The strata of the overlap box (where the Gram matrix is singular), their tubes and the exclusion tests near them; the spaces a proof runs in (charts, strata, the interior)."""

from __future__ import annotations

import numpy as np

from ..interval import Interval
from .boxes import (
    EXCLUDED,
    INFEASIBLE,
    NEWTON_EXCLUDED,
    isolated_box,
    ivs,
    krawczyk,
    regular,
    widest,
)
from .charts import (
    CHART_OVERLAPS,
    CHART_WIDTH,
    NORMAL_FLIP,
    TUBE_AFTER,
    TUBE_FINEST,
    TUBE_WIDTHS,
    Charts,
    EdgeChart,
    OverlapChart,
    Overlaps,
    strata_conditions,
)
from .faces import group_signs
from .jets import Dual
from .parts import Space
from .symmetry import overlap_flips, pivot_columns, vector_generators

__all__ = []


class Strata(Space):
    """``r <= 3`` in the overlaps: the boundary ``det Gram = 0`` of the feasible set, where a
    critical point satisfies :func:`strata_conditions`; uniqueness from the charts.

    A box closes as unique when every ``(k, v)`` with ``k3 >= 0`` and overlaps in it lies,
    after a symmetry, in a chart box where exactly one critical point is proved (``known``:
    the Krawczyk box, or the isolating neighbourhood, :func:`isolate`); as excluded also
    by the overlap chart (:meth:`chart_excludes`).
    """

    name = "strata"
    newton = False
    dim = 5

    def __init__(self, table, flips: list[int], charts: dict, group: np.ndarray) -> None:
        self.table = table
        self.root_lo = -np.ones(5)
        self.root_hi = np.ones(5)
        for c in flips:
            self.root_lo[c] = 0.0
        self.charts = charts
        self.signs = group_signs(vector_generators(group))
        self.known: list[dict] = []
        self.overlap_charts = tuple(OverlapChart(table, s) for s in (1.0, -1.0))
        self.edge_charts = tuple(EdgeChart(table, s) for s in (1.0, -1.0))
        self.tubes: dict = {}  # chart name -> (lo, hi, half-width, range-min table)
        self.built_tubes: dict = {}  # the tubes built so far, as saved in a census
        self.lazy_tubes = False  # build the tubes along the stretches boxes by an edge need
        self.tubes_tried: dict = {}  # chart name -> which of its segments were built
        self.even = bool(np.any(np.all(np.asarray(group) == NORMAL_FLIP, axis=1)))

    def split_dims(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return widest(lo, hi)

    def __getstate__(self) -> dict:
        # a copy for a worker (:mod:`slr_theory.certify.parts`): of a known point's
        # neighbourhood it needs the box (:func:`isolated_box`), not the leaves that prove it
        state = dict(self.__dict__)
        state["known"] = [
            {**z, "cover": {"lo": z["cover"]["lo"], "hi": z["cover"]["hi"]}} if "cover" in z else z
            for z in self.known
        ]
        return state

    def classify(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The verdict of each box (-1: open) and the side to split an open one along
        (-1: the widest): where the conditions' mean-value form ran, the side whose width
        times the enclosure of the conditions' slope along it is largest (the smear); but
        ``kappa`` for a box by an edge that no one chart's tubes span
        (:meth:`_beyond_tubes`). The tubes then grow (:meth:`grow`) along the boxes that
        ask for them (:meth:`verdicts`)."""
        verdict, dims, ask = self.verdicts(lo, hi)
        if ask.any():
            self.grow(lo[ask], hi[ask])
        return verdict, dims

    def grow(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Build the tubes along the edge by each box (:meth:`extend_tubes`)."""
        self.extend_tubes(lo, hi)

    def verdicts(self, lo: np.ndarray, hi: np.ndarray):
        """:meth:`classify`'s verdicts and sides, the space unchanged, and which boxes ask
        for the tubes along their edge: with ``lazy_tubes`` and the symmetry
        :data:`NORMAL_FLIP`, an open box by an edge, at most :data:`TUBE_AFTER` wide
        across it (it may stay long along ``kappa``)."""
        verdict = np.full(len(lo), -1)
        dims = np.full(len(lo), -1)
        grow = np.zeros(len(lo), dtype=bool)
        x = ivs(lo, hi)
        pk, pv, _c, det = Overlaps.gram_parts(x)
        infeasible = (pk.hi < 0.0) | (pv.hi < 0.0) | (det.hi < 0.0)
        verdict[infeasible] = INFEASIBLE
        verdict[~infeasible & (det.lo > 0.0)] = EXCLUDED  # r = 4 throughout
        idx = np.flatnonzero(verdict < 0)
        if idx.size:
            xs = ivs(lo[idx], hi[idx])
            R = self.table.partials(xs)
            conds = strata_conditions(R, xs)
            excluded = np.zeros(idx.size, dtype=bool)
            for e in conds:
                excluded |= ~e.contains_zero()
            verdict[idx[excluded]] = EXCLUDED
            rest = idx[~excluded]
            if rest.size:  # the mean-value form: E(c) + grad E(X) (X - c)
                keep = ~excluded
                mean, smear = self._mean_value_excludes(lo[rest], hi[rest], [r[keep] for r in R])
                verdict[rest[mean]] = EXCLUDED
                dims[rest] = np.argmax(smear, axis=1)
                last = rest[~mean]
                last = last[np.sort(hi[last] - lo[last], axis=1)[:, -2] <= CHART_WIDTH]
                if last.size:
                    closed = self.chart_excludes(lo[last], hi[last])
                    verdict[last[closed]] = EXCLUDED
                    open_ = last[~closed]
                    dims[open_[self._beyond_tubes(lo[open_], hi[open_])]] = 0
                    if self.lazy_tubes and self.even:
                        # the second-widest side: such a box may stay long along kappa
                        w = np.sort(hi[open_] - lo[open_], axis=1)[:, -2]
                        near = self._near_edge(lo[open_], hi[open_])
                        grow[open_[near & (w <= TUBE_AFTER)]] = True
        return verdict, dims, grow

    def chart_excludes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which boxes hold no critical point by the overlap chart (:class:`OverlapChart`).

        Where ``k3^2`` and ``q^2`` are positive throughout a box's ``(kappa, theta, eta, rho)``,
        a point with ``r <= 3`` and overlaps in the box sits (``k3 > 0`` after the reflection
        of ``e3``) on a branch whose ``nu`` meets the box's ``nu``; each such branch must be
        free of critical points: :meth:`_chart_box_excludes`."""
        ylo, yhi = lo[:, CHART_OVERLAPS], hi[:, CHART_OVERLAPS]
        pk, q2 = OverlapChart.domain(ivs(ylo, yhi))
        closed = (pk.lo > 0.0) & (q2.lo > 0.0)
        for chart in self.overlap_charts:
            idx = np.flatnonzero(closed)
            if not idx.size:
                break
            nu = chart.nu(ivs(ylo[idx], yhi[idx]))
            todo = idx[(nu.lo <= hi[idx, 1]) & (nu.hi >= lo[idx, 1])]
            if todo.size:
                ok = self.tube_holds(chart, ylo[todo], yhi[todo])
                rest = np.flatnonzero(~ok)
                if rest.size:
                    ok[rest] = self._chart_box_excludes(chart, ylo[todo[rest]], yhi[todo[rest]])
                closed[todo] = ok
        rest = np.flatnonzero(~closed)
        if rest.size:
            closed[rest] = self.edge_excludes(lo[rest], hi[rest])
        return closed

    def edge_excludes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which boxes with ``kappa > 0`` and one sign of ``nu`` hold no critical point by the
        face argument in the edge chart (:class:`EdgeChart`): the preimage's ``(eta, k3,
        theta, v3)`` stretched to the face ``eta = theta = v3 = 0`` has a regular normal
        block, so every critical point in it lies on the face, and there the gradient along
        ``k3`` (``-(k3 / kappa) R_kappa``, enclosed at the face) misses 0. Without the
        symmetry :data:`NORMAL_FLIP` in the model's group, none."""
        out = np.zeros(len(lo), dtype=bool)
        if not self.even:
            return out
        for chart in self.edge_charts:
            side = (lo[:, 1] > 0.0) if chart.sign > 0 else (hi[:, 1] < 0.0)
            idx = np.flatnonzero(side & (lo[:, 0] > 0.0))
            if not idx.size:
                continue
            k3 = v3lo = v3hi = None
            for half in (1, -1):  # v3 over both halves of the preimage (k3 >= 0)
                y, empty = self.preimage(lo[idx], hi[idx], half)
                k3 = y[2]
                a = np.where(empty, np.inf, y[5].lo)
                b = np.where(empty, -np.inf, y[5].hi)
                v3lo = a if v3lo is None else np.minimum(v3lo, a)
                v3hi = b if v3hi is None else np.maximum(v3hi, b)
            good = np.flatnonzero((k3.lo > 0.0) & (v3lo <= v3hi))
            if not good.size:
                continue
            plo = np.column_stack([lo[idx, 3], k3.lo, lo[idx, 2], v3lo])[good]
            phi = np.column_stack([hi[idx, 3], k3.hi, hi[idx, 2], v3hi])[good]
            closed = self.tube_holds(chart, plo, phi)
            rest = np.flatnonzero(~closed)
            if rest.size:
                closed[rest] = self.face_clear(chart, plo[rest], phi[rest])
            out[idx[good]] = closed
        return out

    def _chart_box_excludes(self, chart: OverlapChart, ylo: np.ndarray, yhi: np.ndarray):
        """Whether each chart box holds no critical point: the gradient's enclosure misses
        0, or the Krawczyk image misses the box, or (with the symmetry :data:`NORMAL_FLIP`)
        every critical point of the box lies on the face ``theta = eta = rho = 0``, where
        ``F``'s gradient is ``R_kappa(kappa, sign, 0, 0, 0)`` and misses 0.

        The face argument: ``nu`` is even in ``(theta, eta, rho)`` and so is ``R`` (the
        symmetry), so the normal components of ``F``'s gradient vanish on the face, and
        along the segment from ``(kappa, 0)`` to ``(kappa, y_N)`` they are ``A y_N`` with
        ``A`` in the hull of their Jacobian along ``y_N`` over the box stretched to the
        face; when that hull is regular, ``y_N = 0``. On the face ``nu = sign`` does not
        move with ``kappa``, so the tangent component is ``R_kappa`` there."""
        g, _ = chart.system(ivs(ylo, yhi), need_jacobian=False)
        out = np.zeros(len(ylo), dtype=bool)
        for c in g:
            out |= ~c.contains_zero()
        rest = np.flatnonzero(~out)
        if rest.size:
            kv, _l, _h = krawczyk(chart, ylo[rest], yhi[rest])
            out[rest] = kv == NEWTON_EXCLUDED
        rest = np.flatnonzero(~out)
        if rest.size:
            out[rest] = self.face_clear(chart, ylo[rest], yhi[rest])
        return out

    def build_tubes(self, want: dict | None = None) -> dict:
        """Tube boxes along the edges, each free of critical points by :meth:`face_clear`:
        in each chart, segments of its ``tube_range`` along the edge (`want`: ``{chart
        name: indices of segments}``; None: all), each with the widest half-width across it
        from :data:`TUBE_WIDTHS` that passes (a segment none passes is halved, down to
        :data:`TUBE_FINEST`, else left out). Returns ``{chart name: (lo, hi,
        half-width)}``, sorted along the edge, for the charts with a tube."""
        out: dict = {}
        if not self.even:
            return out
        for chart in self.overlap_charts + self.edge_charts:
            cuts = self._tube_cuts(chart)
            i = (
                np.arange(len(cuts) - 1)
                if want is None
                else np.asarray(want.get(chart.name, []), dtype=int)
            )
            seg = np.stack([cuts[i], cuts[i + 1]], axis=1).reshape(-1, 2)
            done = []
            while len(seg):
                best = np.zeros(len(seg))
                for wn in TUBE_WIDTHS:
                    todo = np.flatnonzero(best == 0.0)
                    if not todo.size:
                        break
                    lo, hi = self._tube_box(chart, seg[todo], wn)
                    best[todo[self.face_clear(chart, lo, hi)]] = wn
                done += [(s[0], s[1], w) for s, w in zip(seg, best, strict=True) if w > 0.0]
                rest = seg[(best == 0.0) & (seg[:, 1] - seg[:, 0] > TUBE_FINEST)]
                mid = 0.5 * (rest[:, 0] + rest[:, 1])
                seg = np.concatenate(
                    [np.stack([rest[:, 0], mid], 1), np.stack([mid, rest[:, 1]], 1)]
                )
            done.sort()
            if done:
                out[chart.name] = tuple(np.array([d[i] for d in done]) for i in range(3))
        return out

    def extend_tubes(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Build (:meth:`build_tubes`) the segments not yet built along the stretch of the
        edge that each box (by an edge, narrow across it) spans, in the two charts of its
        sign of ``nu``, and use them with those built before."""
        reach = self._reach(lo, hi)
        straddles = (lo[:, 0] <= 0.0) & (hi[:, 0] >= 0.0)
        least = np.where(straddles, 0.0, np.minimum(lo[:, 0] ** 2, hi[:, 0] ** 2))  # of kappa^2
        most = np.maximum(lo[:, 0] ** 2, hi[:, 0] ** 2)
        want = {}
        for chart in self.overlap_charts + self.edge_charts:
            side = (lo[:, 1] >= 0.5) if chart.sign > 0 else (hi[:, 1] <= -0.5)
            cuts = self._tube_cuts(chart)
            n = len(cuts) - 1
            if chart.along == 0:  # kappa
                s0, s1 = lo[side, 0], hi[side, 0]
            else:  # k3 = sqrt(1 - kappa^2 - eta^2), |eta| <= reach
                s0 = np.sqrt(np.maximum(0.0, 1.0 - most[side] - reach[side] ** 2))
                s1 = np.sqrt(np.maximum(0.0, 1.0 - least[side]))
            meets = (s1 >= cuts[0]) & (s0 <= cuts[-1])
            # the segments [cuts[i], cuts[i + 1]] that meet [s0, s1]
            i0 = np.clip(np.searchsorted(cuts, s0[meets], side="right") - 1, 0, n - 1)
            i1 = np.clip(np.searchsorted(cuts, s1[meets], side="left") - 1, 0, n - 1)
            mark = np.zeros(n + 1, dtype=int)
            np.add.at(mark, i0, 1)
            np.add.at(mark, np.maximum(i1, i0) + 1, -1)
            tried = self.tubes_tried.setdefault(chart.name, np.zeros(n, dtype=bool))
            new = np.flatnonzero((np.cumsum(mark)[:n] > 0) & ~tried)
            if new.size:
                tried[new] = True
                want[chart.name] = new
        if not want:
            return
        for name, (tlo, thi, wn) in self.build_tubes(want).items():
            old = self.built_tubes.get(name, (np.zeros(0), np.zeros(0), np.zeros(0)))
            merged = [np.concatenate([o, x]) for o, x in zip(old, (tlo, thi, wn), strict=True)]
            order = np.argsort(merged[0], kind="stable")
            self.built_tubes[name] = tuple(m[order] for m in merged)
        self.set_tubes(self.built_tubes)

    @staticmethod
    def _tube_cuts(chart) -> np.ndarray:
        """The ends of a chart's first tube segments along its ``tube_range``."""
        a, b, step = chart.tube_range
        return np.linspace(a, b, round((b - a) / step) + 1)

    @staticmethod
    def _reach(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """How far each strata box reaches off the edges ``theta = eta = rho = 0``."""
        return np.max(np.maximum(np.abs(lo[:, 2:]), np.abs(hi[:, 2:])), axis=1)

    @staticmethod
    def _tube_box(chart, seg: np.ndarray, wn: float) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.zeros((len(seg), 4)), np.zeros((len(seg), 4))
        lo[:, chart.along], hi[:, chart.along] = seg[:, 0], seg[:, 1]
        lo[:, list(chart.normal)], hi[:, list(chart.normal)] = -wn, wn
        return lo, hi

    def _beyond_tubes(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Which boxes near an edge (``|nu| >= 1/2`` of one sign, within the widest tube
        across it) span more ``kappa`` than one chart's tubes cover: those are split along
        ``kappa`` (whatever the slopes), to be covered by the tubes or the corner's
        neighbourhood piece by piece."""
        if not self.tubes:
            return np.zeros(len(lo), dtype=bool)
        near = self._near_edge(lo, hi)
        inside = np.zeros(len(lo), dtype=bool)
        for chart in self.overlap_charts[:1] + self.edge_charts[:1]:
            a, b, _step = chart.tube_range
            if chart.along == 0:  # kappa itself
                k0, k1 = a, b
            else:  # k3 = sqrt(1 - kappa^2)
                k0, k1 = np.sqrt(1.0 - b * b), np.sqrt(1.0 - a * a)
            inside |= (lo[:, 0] >= k0) & (hi[:, 0] <= k1)
        wide = hi[:, 0] - lo[:, 0] > TUBE_FINEST
        return near & ~inside & wide

    @staticmethod
    def _near_edge(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Boxes with ``|nu| >= 1/2`` of one sign within the widest tube of an edge."""
        near = Strata._reach(lo, hi) <= TUBE_WIDTHS[0]
        return ((lo[:, 1] >= 0.5) | (hi[:, 1] <= -0.5)) & near

    def set_tubes(self, tubes: dict) -> None:
        """Use `tubes` (:meth:`build_tubes`, or a certificate's, once re-verified)."""
        self.tubes = {}
        for name, (lo, hi, wn) in tubes.items():
            levels = [np.asarray(wn, dtype=float)]  # level j: minima over 2^j segments
            while 2 ** len(levels) <= len(levels[0]):
                prev, step = levels[-1], 2 ** (len(levels) - 1)
                levels.append(np.minimum(prev[:-step], prev[step:]))
            gaps = np.concatenate([[0], np.cumsum(hi[:-1] != lo[1:])])
            self.tubes[name] = (np.asarray(lo), np.asarray(hi), levels, gaps)

    def tube_holds(self, chart, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Whether each chart box lies in the union of the chart's tube boxes: its range
        along the edge in contiguous segments, each as wide across as the box reaches."""
        out = np.zeros(len(lo), dtype=bool)
        if chart.name not in self.tubes or not len(lo):
            return out
        tlo, thi, levels, gaps = self.tubes[chart.name]
        n = len(tlo)
        a, b = lo[:, chart.along], hi[:, chart.along]
        N = list(chart.normal)
        reach = np.max(np.maximum(np.abs(lo[:, N]), np.abs(hi[:, N])), axis=1)
        i0 = np.searchsorted(thi, a, side="right")
        i1 = np.searchsorted(tlo, b, side="left") - 1
        ok = (i0 <= i1) & (i0 < n) & (i1 >= 0)
        i0c, i1c = np.clip(i0, 0, n - 1), np.clip(i1, 0, n - 1)
        ok &= (tlo[i0c] <= a) & (thi[i1c] >= b) & (gaps[i1c] == gaps[i0c])
        span = np.maximum(i1c - i0c + 1, 1)
        j = np.minimum(np.floor(np.log2(span)).astype(int), len(levels) - 1)
        low = np.full(len(lo), np.inf)
        for k in np.unique(j[ok]):
            s = ok & (j == k)
            low[s] = np.minimum(levels[k][i0c[s]], levels[k][i1c[s] - 2**k + 1])
        return ok & (low >= reach)

    def face_clear(self, chart, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Whether each chart box holds no critical point by the face argument: stretched to
        the face (its normal coordinates' ranges widened to hold 0), inside the chart, with
        the normal block's hull regular (every critical point then lies on the face) and
        ``R_kappa`` at the face, where ``nu = sign`` exactly, missing 0 (none lies there;
        along the face ``F``'s gradient is ``R_kappa`` times ``dkappa``, nonzero in both
        charts where ``k3 > 0``). Without :data:`NORMAL_FLIP` in the group, none."""
        out = np.zeros(len(lo), dtype=bool)
        if not self.even or not len(lo):
            return out
        N = list(chart.normal)
        flo, fhi = lo.copy(), hi.copy()
        flo[:, N] = np.minimum(flo[:, N], 0.0)
        fhi[:, N] = np.maximum(fhi[:, N], 0.0)
        a, b = chart.domain(ivs(flo, fhi))
        inside = (a.lo > 0.0) & (b.lo > 0.0)
        if chart.along == 1:  # the edge chart: k3 > 0 (k3 = 0 is the corner)
            inside &= flo[:, 1] > 0.0
        idx = np.flatnonzero(inside)
        if not idx.size:
            return out
        _g, J = chart.system(ivs(flo[idx], fhi[idx]))
        flat = regular([[J[i][j] for j in N] for i in N])
        m = idx.size
        face = self.table.partials(
            [chart.face_kappa(flo[idx], fhi[idx]), Interval(np.full(m, chart.sign))]
            + [Interval(np.zeros(m))] * 3
        )
        out[idx] = flat & ~face[0].contains_zero()
        return out

    def _mean_value_excludes(
        self, lo: np.ndarray, hi: np.ndarray, R=None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which boxes the mean-value form of the conditions closes (`R`: the partials over
        the boxes, when the caller has them), and the smear ``(n, 5)``: for each side, the
        largest over the conditions of ``|slope enclosure| x width``."""
        c = 0.5 * lo + 0.5 * hi
        xc = [Interval(c[:, i]) for i in range(5)]
        at_c = strata_conditions(self.table.partials(xc), xc)
        X = ivs(lo, hi)
        if R is None:
            R, H = self.table.partials_and_hessian(X)
        else:
            H = self.table.hessian(X)
        zero = Interval(np.zeros(len(lo)))
        one = Interval(np.ones(len(lo)))
        xd = [Dual(X[i], [one if j == i else zero for j in range(5)]) for i in range(5)]
        Rd = [Dual(R[i], [H[i][j] for j in range(5)]) for i in range(5)]
        grads = strata_conditions(Rd, xd)
        out = np.zeros(len(lo), dtype=bool)
        smear = np.zeros((len(lo), 5))
        width = hi - lo
        for e0, g in zip(at_c, grads, strict=True):
            e = e0
            for j in range(5):
                e = e + g.d[j] * (X[j] - c[:, j])
                slope = np.maximum(np.abs(g.d[j].lo), np.abs(g.d[j].hi))
                smear[:, j] = np.maximum(smear[:, j], slope * width[:, j])
            out |= ~e.contains_zero()
        return out, np.where(np.isfinite(smear), smear, np.inf)

    def preimage(self, lo: np.ndarray, hi: np.ndarray, half: int = 1) -> list[Interval]:
        """An enclosure of every ``(k, v)`` in ``R^3 x R^3`` with ``k3 >= 0``, ``half * v3 >= 0``
        and overlaps in the boxes: ``k3 = sqrt(p_k)``, ``|v3| = sqrt(p_v)``, ``v3 = c / k3``."""
        kappa, nu, theta, eta, _rho = x = ivs(lo, hi)
        pk, pv, c, _det = Overlaps.gram_parts(x)
        k3 = Interval(np.maximum(pk.lo, 0.0), np.maximum(pk.hi, 0.0)).sqrt()
        a = Interval(np.maximum(pv.lo, 0.0), np.maximum(pv.hi, 0.0)).sqrt()
        v3lo, v3hi = (a.lo.copy(), a.hi.copy()) if half > 0 else (-a.hi, -a.lo)
        pos = k3.lo > 0.0
        if np.any(pos):
            q = c[pos] * Interval(k3.lo[pos], k3.hi[pos]).reciprocal()
            v3lo[pos] = np.maximum(v3lo[pos], q.lo)
            v3hi[pos] = np.minimum(v3hi[pos], q.hi)
        empty = v3lo > v3hi  # no point of this half: an empty piece, covered by nothing needed
        v3hi = np.maximum(v3hi, v3lo)
        return [kappa, eta, k3, theta, nu, Interval(v3lo, v3hi)], empty

    def covered(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Index of a known chart zero whose Krawczyk box holds each box's preimage, or -1.

        The preimage is two pieces, ``v3 >= 0`` and ``v3 <= 0``; each must lie, after a
        symmetry, in the box ``Z`` of a known zero (the box then holds no critical point
        but those zeros)."""
        out = np.full(len(lo), -1)
        if not self.known or not len(lo):
            return out
        first = None
        every = np.ones(len(lo), dtype=bool)
        for half in (1, -1):
            y, empty = self.preimage(lo, hi, half)
            got = self._covered_piece(y)
            every &= empty | (got >= 0)
            first = got if first is None else np.where(first >= 0, first, got)
        out[every] = np.maximum(first[every], 0)
        return out

    def _covered_piece(self, y: list[Interval]) -> np.ndarray:
        out = np.full(len(y[0].lo), -1)
        for s in self.signs:
            img = [y[i] if s[i] > 0 else -y[i] for i in range(6)]
            coords: dict = {}  # each chart's coordinates of the image, formed once
            for j, z in enumerate(self.known):
                if z["chart"] not in coords:
                    coords[z["chart"]] = self._chart_coordinates(img, self.charts[z["chart"]])
                ok, w = coords[z["chart"]]
                ok = ok.copy()
                blo, bhi = isolated_box(z)
                for i in range(4):
                    ok &= (w[i].lo > blo[i]) & (w[i].hi < bhi[i])
                out[ok & (out < 0)] = j
        return out

    @staticmethod
    def _chart_coordinates(img: list[Interval], chart: Charts):
        """Enclosures of the chart coordinates of ``(k, v)`` in `img`, and where they exist
        (the chart's denominators positive)."""
        w = []
        ok = np.ones(len(img[0].lo), dtype=bool)
        for part, sign in ((img[:3], chart.signs[0]), (img[3:], chart.signs[1])):
            den = 1.0 + sign * part[2]
            ok &= den.lo > 0.0
            inv = Interval(np.where(ok, den.lo, 1.0), np.where(ok, den.hi, 1.0)).reciprocal()
            w += [part[0] * inv, part[1] * inv]
        return ok, w


def check_tubes(strata: Strata, tubes: dict) -> str | None:
    """Re-verify a census's tube boxes (:meth:`Strata.build_tubes`): None, or what fails."""
    charts = {c.name: c for c in strata.overlap_charts + strata.edge_charts}
    for name, (lo, hi, wn) in tubes.items():
        chart = charts.get(name)
        if chart is None:
            return f"tubes in {name!r}, which is no chart"
        lo, hi, wn = (np.asarray(x, dtype=float) for x in (lo, hi, wn))
        if not (lo.shape == hi.shape == wn.shape and lo.ndim == 1):
            return f"ragged tubes in {name}"
        if lo.size == 0:  # a census writes a chart's tubes only where it built some
            return f"the tubes in {name} are empty"
        if not (np.all(lo < hi) and np.all(wn > 0.0) and np.all(hi[:-1] <= lo[1:])):
            return f"the tubes in {name} are not ordered, disjoint segments"
        for w in np.unique(wn):
            s = wn == w
            blo, bhi = strata._tube_box(chart, np.stack([lo[s], hi[s]], axis=1), float(w))
            bad = int(np.count_nonzero(~strata.face_clear(chart, blo, bhi)))
            if bad:
                return f"{bad} tube boxes in {name} are not free of critical points"
    return None


def proof_spaces(table, group: np.ndarray) -> dict:
    """The spaces of the proof: the charts of ``S^2 x S^2`` (reduced by the reflection of
    ``e3`` and the group's rows that act by sign changes), where the Krawczyk test proves
    points; the strata ``r <= 3`` and the interior ``r = 4`` in the overlaps, reduced by
    the group, where the branch and bound runs."""
    pivots = pivot_columns(vector_generators(group))
    fixed = tuple(c in pivots for c in (0, 1, 3, 4))  # k1, k2, v1, v2 -> s_k, t_k, s_v, t_v
    sk = (1.0,) if 2 in pivots else (1.0, -1.0)
    sv = (1.0,) if 5 in pivots else (1.0, -1.0)
    charts = {c.name: c for c in (Charts(table, (a, b), fixed) for a in sk for b in sv)}
    flips = pivot_columns([overlap_flips(g) for g in group if overlap_flips(g).any()])
    return {
        "charts": charts,
        "strata": Strata(table, flips, charts, group),
        "overlaps": Overlaps(table, flips),
    }
