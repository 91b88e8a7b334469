"""Certify the critical points of a model: the census from the branch and bound."""

from __future__ import annotations

import time

import numpy as np

from ..critical import canonical, symmetries
from ..interval import Interval
from ..params import Params, check_params
from ..work import worker_count
from .boxes import HARVEST, ROUNDS, UNIQUE, UNRESOLVED, boxes_of_paths, krawczyk
from .census import Census
from .charts import vector_overlaps
from .faces import faces
from .neighbourhoods import ISOLATE_BUDGET, ISOLATE_RADII, bnb, isolate
from .parts import Judges
from .search import (
    merge,
    model_table,
    newton,
    open_distance,
    point_of,
    search_vectors,
    strata_covered,
    to_chart_point,
    verify_face,
    verify_many,
)
from .strata import proof_spaces

__all__ = ["certify_critical_points"]


def certify_critical_points(
    params: Params,
    *,
    min_width: float = 1e-12,
    max_boxes: int = 30_000_000,
    starts: int = 512,
    seed: int = 0,
    progress=None,
    points=None,
    neighbourhood_budget: int = ISOLATE_BUDGET,
    edge_tubes: bool = True,
    jobs: int | None = None,
) -> Census:
    """Prove the list of critical points of the risk complete, or say how far the proof got.

    Parameters
    ----------
    params : Params
        A model with rigorous enclosures (pointwise ``erf``).
    min_width : float
        Boxes are not bisected below this width (then left unresolved).
    max_boxes : int
        Budget of boxes per part (beyond it the open boxes are left unresolved). The
        defaults close every box at the paper's parameters with ``lam = 0.1`` (3.4e5
        leaves in the strata, 20 s on one core) and ``lam = 0.9`` (7.6e6 leaves, 1.5e7
        boxes visited, ten minutes on one core: ``python benchmarks/certify.py``
        measures it).
    starts, seed : int
        The search (:func:`slr_theory.critical_points`) whose points seed the Krawczyk
        boxes of the vectors' parts: a point it finds is proved where its box verifies.
    progress : callable, optional
        Called with the number of boxes of each generation.
    points : CriticalPoints, optional
        A search already run at `params` (:func:`slr_theory.critical_points`) to seed
        from instead of running one (`starts`, `seed` are then its own).
    neighbourhood_budget : int
        Boxes the branch and bound of each proved point's isolating neighbourhood may
        visit per radius (:func:`isolate`; 0: none, the points' Krawczyk boxes alone
        close the strata's boxes about them).
    edge_tubes : bool
        Build the tube boxes along the edges ``v = +-v*`` (:meth:`Strata.build_tubes`)
        along the stretch of each box by an edge that stays open while at most ``2^-12``
        wide across it (:meth:`Strata.extend_tubes`; all of them, about 19 000 boxes,
        take half a minute); they close the strata's boxes by the edges, which otherwise
        close one by one.

    Returns
    -------
    Census
        ``complete`` only when every box is closed by a verdict.

    Examples
    --------
    >>> from slr_theory import Params, certify_critical_points
    >>> census = certify_critical_points(Params.paper())  # doctest: +SKIP
    >>> census.part_complete("overlaps"), len(census.points)  # doctest: +SKIP
    (True, 12)
    """
    check_params(params)
    if not (0.0 < min_width < 1.0):
        raise ValueError(f"`min_width` must be in (0, 1), got {min_width!r}.")
    if int(max_boxes) != max_boxes or max_boxes < 1:
        raise ValueError(f"`max_boxes` must be a positive integer, got {max_boxes!r}.")
    if not isinstance(edge_tubes, (bool, np.bool_)):
        raise ValueError(f"`edge_tubes` must be True or False, got {edge_tubes!r}.")
    if int(neighbourhood_budget) != neighbourhood_budget or neighbourhood_budget < 0:
        raise ValueError(
            f"`neighbourhood_budget` must be a non-negative integer, got {neighbourhood_budget!r}."
        )
    jobs = worker_count(jobs)
    t0 = time.perf_counter()
    with Judges(jobs) as judges:  # the workers end with the census, however it ends
        table = model_table(params)
        group = np.asarray(symmetries(params), dtype=float)
        spaces = proof_spaces(table, group)
        charts, strata, interior = spaces["charts"], spaces["strata"], spaces["overlaps"]
        strata.lazy_tubes = edge_tubes
        face_list = faces(charts, group)
        known: list[dict] = []
        seen: list[
            np.ndarray
        ] = []  # canonical overlaps of the points Newton reached (a shortcut only)

        def add(pairs: list[tuple[np.ndarray, np.ndarray]]) -> int:
            """Prove the critical points Newton reaches from each ``(k, v)`` of `pairs`, chart
            by chart (a pair moves on to the next chart where Newton diverges and no face
            proves its point), every pair of a chart at once; returns how many are new."""
            pending = list(range(len(pairs)))
            new = 0
            for chart in charts.values():
                starts = [(i, to_chart_point(chart, group, *pairs[i])) for i in pending]
                starts = [(i, w0) for i, w0 in starts if w0 is not None]
                if not starts:
                    continue
                W = newton(chart, np.array([w0 for _i, w0 in starts]))
                finite = np.all(np.isfinite(W), axis=1)
                x = np.full((len(W), 6), np.nan)
                if finite.any():
                    vec = chart.vectors([Interval(W[finite, i]) for i in range(4)])
                    x[finite] = np.stack([np.asarray(q.mid, dtype=float) for q in vec], axis=1)
                settled, fresh = set(), []
                for (i, w0), w, xi, ok in zip(starts, W, x, finite, strict=True):
                    if ok:
                        ov = canonical(np.array(vector_overlaps(xi)), group)
                        if any(np.max(np.abs(ov - q)) < 1e-9 for q in seen):
                            settled.add(i)  # a point already reached
                            continue
                        seen.append(ov)
                    fresh.append((i, w0, w, ok))
                proved = np.array([w for _i, _w0, w, ok in fresh if ok]).reshape(-1, chart.dim)
                proofs = iter(verify_many(chart, proved))
                zs = []
                for i, w0, _w, ok in fresh:
                    z = next(proofs) if ok else None
                    if z is None:  # Newton in the chart diverges where a curvature is 1e-54
                        z = verify_face(chart, w0, face_list)
                    if z is not None:
                        settled.add(i)
                        zs.append({**z, "chart": chart.name})
                # the neighbourhoods of the zeros no earlier point covers, each on its own (on
                # the workers); a zero that one of these covers is then dropped, in order
                before = list(known)
                todo = [z for z in zs if not strata_covered(strata, before, z, chart, group)]
                covers = judges.map(
                    isolate, [(chart, z, ISOLATE_RADII, neighbourhood_budget) for z in todo]
                )
                cover_of = {id(z): c for z, c in zip(todo, covers, strict=True)}
                for zero in zs:
                    if not strata_covered(strata, known, zero, chart, group):
                        cover = cover_of[id(zero)]
                        if cover is not None:
                            zero["cover"] = cover
                        known.append(zero)
                        new += 1
                pending = [i for i in pending if i not in settled]
            return new

        from ..critical import critical_points

        if points is not None:
            searched = list(points)
            starts, seed = len(points.search.starts), None
        else:
            searched = list(critical_points(params, starts=starts, rng=seed)) if starts else []
        add(search_vectors(searched))
        for _round in range(ROUNDS):
            strata.known = known
            leaves, zeros = bnb(strata, min_width, max_boxes, progress, known, judges)
            open_ = [
                p
                for p, v in zip(leaves["paths"], leaves["verdicts"], strict=True)
                if v == UNRESOLVED
            ]
            if not open_:
                break
            lo, hi = boxes_of_paths(  # Newton from the centres of open boxes' preimages
                strata.root_lo, strata.root_hi, open_[:: max(1, len(open_) // HARVEST)]
            )
            y, _empty = strata.preimage(lo, hi)
            c = np.stack([0.5 * (q.lo + q.hi) for q in y], axis=1)
            k = c[:, :3] / np.linalg.norm(c[:, :3], axis=1, keepdims=True)
            v = c[:, 3:] / np.linalg.norm(c[:, 3:], axis=1, keepdims=True)
            if not add(list(zip(k, v, strict=True))):
                break
        parts = {
            "strata": {
                "root": (strata.root_lo, strata.root_hi),
                **leaves,
                "zeros": zeros,
                "tubes": strata.built_tubes,
            }
        }
        ileaves, izeros = bnb(interior, min_width, max_boxes, progress, judges=judges)
        parts["overlaps"] = {
            "root": (interior.root_lo, interior.root_hi),
            **ileaves,
            "zeros": izeros,
        }
        points: list = []
        for zi, z in enumerate(zeros):
            got = point_of(charts[z["chart"]], params, z, group)
            z["feasible"] = True
            points.append(("strata", zi, got))
        for zi, z in enumerate(izeros):
            kz, klo, khi = krawczyk(interior, z["klo"][None], z["khi"][None])
            if kz[0] == UNIQUE:  # contract the enclosure (it holds the zero)
                z["klo"], z["khi"] = np.maximum(klo[0], z["klo"]), np.minimum(khi[0], z["khi"])
            got = point_of(interior, params, z, group)
            z["feasible"] = got is not None
            if got is not None:
                points.append(("overlaps", zi, got))
        found = merge(params, points, group)
        unproved = [
            tuple(float(x) for x in canonical(c.overlaps, group))
            for c in searched
            if not any(
                np.all(np.array(q.overlaps_lo) - 1e-9 <= img)
                and np.all(img <= np.array(q.overlaps_hi) + 1e-9)
                for q in found
                for img in group * np.asarray(c.overlaps)
            )
        ]
        open_within = open_distance(strata, parts["strata"], unproved, group)
        complete = all(UNRESOLVED not in p["verdicts"] for p in parts.values()) and all(
            q.span_dim is not None and q.index is not None for q in found
        )
        return Census(
            params=params,
            points=found,
            complete=complete,
            parts=parts,
            group=group.tolist(),
            seconds=time.perf_counter() - t0,
            min_width=min_width,
            search={
                "starts": starts,
                "seed": seed,
                "found": len(searched),
                "unproved": unproved,
                "open_within": open_within,
            },
        )
