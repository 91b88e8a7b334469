"""Check a saved census: every stated quantity of every point derived again from the certificate's own data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..critical import symmetries
from ..work import worker_count
from .boxes import (
    EXCLUDED,
    INFEASIBLE,
    NEWTON_EXCLUDED,
    UNIQUE,
    UNRESOLVED,
    VERDICTS,
    boxes_of_paths,
    krawczyk,
    paths_are_halvings,
    tree_complete,
)
from .census import Census
from .faces import Face, faces, tube_test
from .neighbourhoods import check_neighbourhood
from .parts import Judges
from .search import canonical_box, kind_of, model_table, point_of, risk_at
from .strata import check_tubes, proof_spaces

__all__ = ["CertificateCheck", "check_certificate"]


def _restated(census: Census, derived: dict, group: np.ndarray) -> list[str]:
    """What each point states, derived again from its re-proved zeros as the census
    derived it (:func:`merge`): its overlaps and their enclosure from its first zero, the
    span dimension, index and nullity from the first zero that decides each, the kind
    from those, and the risk at its overlaps. Any edit of a point fails here."""
    params = census.params
    out = []
    for q in census.points:
        gots = [derived.get(ref) for ref in q.zeros]
        if not gots or any(g is None for g in gots):
            continue  # already a failure: a zero missing or not re-proved
        mid, lo, hi = canonical_box(gots[0][0], gots[0][1], group)
        where = f"point {q.overlaps}"
        close = lambda a, b, tol: np.all(  # noqa: E731
            np.abs(np.asarray(a, dtype=float) - b) <= tol * np.maximum(1.0, np.abs(b))
        )
        if not (
            close(q.overlaps, mid, 1e-12)
            and close(q.overlaps_lo, lo, 1e-12)
            and close(q.overlaps_hi, hi, 1e-12)
        ):
            out.append(
                f"{where}: its overlaps or their enclosure are not its zero's "
                f"({tuple(float(x) for x in mid)} in [{tuple(lo.tolist())}, {tuple(hi.tolist())}])"
            )
        stated = {"span_dim": q.span_dim, "index": q.index, "nullity": q.nullity}
        for key, pos in (("span_dim", 2), ("index", 3), ("nullity", 4)):
            value = next((got[pos] for got in gots if got[pos] is not None), None)
            if value != stated[key]:
                out.append(f"{where}: {key} {stated[key]!r} is not re-proved (got {value!r})")
        kind = kind_of(q.index, q.nullity, params.d)
        if q.kind != kind:
            out.append(f"{where}: kind {q.kind!r} does not follow from its index ({kind!r})")
        r = risk_at(params, mid)
        if not (isinstance(q.risk, float) and abs(q.risk - r) <= 1e-12 * max(1.0, abs(r))):
            out.append(f"{where}: risk {q.risk!r} is not the risk at its overlaps ({r!r})")
    return out


@dataclass(frozen=True)
class CertificateCheck:
    """What :func:`check_certificate` found.

    Attributes
    ----------
    ok : bool
        Every verdict, zero and point re-verified, and the leaves partition each domain.
    complete : bool
        ``ok`` and no box unresolved: the list is proved complete.
    failures : list of str
        What failed (empty when ``ok``).
    boxes : int
        Leaves checked.
    """

    ok: bool
    complete: bool
    failures: list
    boxes: int


def check_certificate(census: Census | str | Path, *, jobs: int | None = None) -> CertificateCheck:
    """Re-verify a census from its boxes alone, with fresh enclosures.

    The checker rebuilds every leaf from its bisection path, checks that the leaves of
    each part partition the part's domain (prefix-free paths with ``sum 2^-len = 1``), that
    the domains are the ones the model's symmetry group gives, re-runs the verdict of
    every leaf (infeasible, excluded, Newton-excluded, unique) and the Krawczyk test of
    every zero, and derives every point's overlaps, enclosure, span dimension, index,
    nullity, kind and risk again from its zeros (any edit of them fails). It trusts
    nothing the census says but the boxes. The edge tubes a census saved are re-proved
    too, and every box is classified again against what is re-proved: with tubes cut
    short or deleted, each box is re-proved on its own or fails.

    Parameters
    ----------
    census : Census or path
        A census, or a file written by :meth:`Census.save`.
    jobs : int, optional
        Worker processes that classify the leaves again (default: every core this process
        may run on; 1: all here). The check is the same whatever `jobs`.

    Returns
    -------
    CertificateCheck
    """
    jobs = worker_count(jobs)
    if not isinstance(census, Census):
        census = Census.load(census)
    with Judges(jobs) as judges:
        return _check(census, judges)


def _check(census: Census, judges: Judges) -> CertificateCheck:
    params = census.params
    table = model_table(params)
    group = np.asarray(symmetries(params), dtype=float)
    failures: list[str] = []
    if group.tolist() != [list(map(float, g)) for g in census.group]:
        failures.append("the symmetry group differs from the model's")
    built = proof_spaces(table, group)
    spaces = {"strata": built["strata"], "overlaps": built["overlaps"]}
    charts = built["charts"]
    if set(spaces) != set(census.parts):
        failures.append(f"parts {sorted(census.parts)} differ from the domains {sorted(spaces)}")
    tubes = census.parts.get("strata", {}).get("tubes") or {}
    why = check_tubes(spaces["strata"], tubes)
    if why is None:
        spaces["strata"].set_tubes(tubes)
    else:
        failures.append(f"strata: {why}")
    boxes = 0
    unresolved = 0
    for name, part in census.parts.items():
        space = spaces.get(name)
        if space is None:
            continue
        if not (
            np.array_equal(part["root"][0], space.root_lo)
            and np.array_equal(part["root"][1], space.root_hi)
        ):
            failures.append(f"{name}: the root box is not the domain")
            continue
        paths, verdicts, point = part["paths"], np.array(part["verdicts"]), np.array(part["point"])
        if not paths_are_halvings(paths, space.dim):
            failures.append(f"{name}: a path holds a character that is not a side's half")
            continue
        if not tree_complete(paths):
            failures.append(f"{name}: the leaves do not partition the domain")
        if not (len(paths) == len(verdicts) == len(point)):
            failures.append(f"{name}: ragged leaf records")
            continue
        boxes += len(paths)
        unresolved += int(np.count_nonzero(verdicts == UNRESOLVED))
        zeros = part["zeros"]
        malformed = [
            j
            for j, z in enumerate(zeros)
            if not all(np.all(z[a] <= z[b]) for a, b in (("zlo", "zhi"), ("klo", "khi")))
        ]
        if malformed:
            failures.append(f"{name}: zeros {malformed} have boxes with lo > hi")
            continue
        # every zero: the Krawczyk test again, in its own space
        for j, z in enumerate(zeros):
            zspace = charts.get(z.get("chart")) if name == "strata" else space
            if zspace is None:
                failures.append(f"{name}: zero {j} names no chart")
                continue
            face = z.get("face")
            if face is not None:  # the symmetry's argument on a face, in its chart
                f = Face(z.get("chart"), tuple(face["normal"]), tuple(face["values"]))
                if name != "strata" or f not in faces(charts, group):
                    failures.append(f"{name}: zero {j} names a face no symmetry fixes")
                    continue
                count, klo, khi = tube_test(zspace, f, z["zlo"][None], z["zhi"][None])
                kv = np.where(count == 1, UNIQUE, UNRESOLVED)
            else:
                kv, klo, khi = krawczyk(zspace, z["zlo"][None], z["zhi"][None])
            if z.get("cover") is not None:
                why = (
                    check_neighbourhood(zspace, z, judges)
                    if name == "strata"
                    else "not in a chart"
                )
                if why is not None:
                    failures.append(f"{name}: zero {j}: {why}")
            if kv[0] != UNIQUE:
                failures.append(f"{name}: zero {j} fails the Krawczyk test")
            elif not np.all((klo[0] <= z["khi"]) & (khi[0] >= z["klo"])):
                failures.append(f"{name}: zero {j}'s enclosure misses its Krawczyk image")
            elif not z["feasible"] and (
                not hasattr(space, "feasible_point")
                or space.feasible_point(klo[0], khi[0]) is not False
            ):
                failures.append(f"{name}: zero {j} claimed infeasible is not proved so")
        if not len(paths):
            continue
        lo, hi = boxes_of_paths(space.root_lo, space.root_hi, paths)
        fresh = judges(space, lo, hi, known=False, newton=False)["verdict"]
        for code in (INFEASIBLE, EXCLUDED):
            bad = np.flatnonzero((verdicts == code) & (fresh != code))
            if bad.size:
                failures.append(
                    f"{name}: {bad.size} boxes claimed {VERDICTS[code]} are not (first: {paths[bad[0]]!r})"
                )
        newton = np.flatnonzero(verdicts == NEWTON_EXCLUDED)
        if newton.size:
            if not space.newton:
                failures.append(f"{name}: Newton verdicts in a part without them")
            else:
                zlo, zhi = space.newton_box(lo[newton], hi[newton])
                kv, _l, _h = krawczyk(space, zlo, zhi)
                bad = newton[kv != NEWTON_EXCLUDED]
                if bad.size:
                    failures.append(f"{name}: {bad.size} boxes claimed Newton-excluded are not")
        unique = np.flatnonzero(verdicts == UNIQUE)
        if unique.size:
            if name == "strata":
                space.known = zeros
                cov = space.covered(lo[unique], hi[unique])
                bad = unique[cov < 0]
            else:
                bad = np.array(
                    [
                        i
                        for i in unique
                        if not (0 <= point[i] < len(zeros))
                        or not np.all(
                            (lo[i] >= zeros[point[i]]["zlo"]) & (hi[i] <= zeros[point[i]]["zhi"])
                        )
                    ],
                    dtype=int,
                )
            if bad.size:
                failures.append(
                    f"{name}: {bad.size} unique boxes lie in no zero's Krawczyk box (first: {paths[bad[0]]!r})"
                )
        if np.any((point >= 0) & (verdicts != UNIQUE)):
            failures.append(f"{name}: a box that is not unique names a zero")
        for j, z in enumerate(zeros):
            if z["feasible"] and not any(f"{name}:{j}" in p.zeros for p in census.points):
                failures.append(f"{name}: zero {j} is in no point")
    by_zero = {}
    for q in census.points:
        for ref in q.zeros:
            by_zero[ref] = q
    derived: dict = {}  # a zero's (lo, hi, span, index, nullity), re-proved
    for ref, q in by_zero.items():
        name, _, j = ref.partition(":")
        part = census.parts.get(name)
        if part is None or not j.isdigit() or int(j) >= len(part["zeros"]):
            failures.append(f"point {q.overlaps}: no zero {ref}")
            continue
        z = part["zeros"][int(j)]
        zspace = charts.get(z.get("chart")) if name == "strata" else spaces.get(name)
        got = point_of(zspace, params, {**z}, group) if zspace is not None else None
        if got is None:
            failures.append(f"point {q.overlaps}: zero {ref} is not a feasible critical point")
            continue
        derived[ref] = got
        images = group * 0.5 * (np.array(got[0]) + np.array(got[1]))
        lo_q, hi_q = np.array(q.overlaps_lo), np.array(q.overlaps_hi)
        mid_q = np.array(q.overlaps)
        if not any(np.max(np.abs(img - mid_q)) < 1e-6 for img in images) and not np.all(
            (np.array(got[0]) >= lo_q - 1e-12) & (np.array(got[1]) <= hi_q + 1e-12)
        ):
            failures.append(f"point {q.overlaps}: its zero {ref} lies elsewhere")
    failures += _restated(census, derived, group)
    ok = not failures
    complete = ok and unresolved == 0 and all(q.span_dim is not None for q in census.points)
    if census.complete and not complete:
        failures.append("the census claims completeness it does not have")
        ok = False
    return CertificateCheck(ok=ok, complete=complete, failures=failures, boxes=boxes)
