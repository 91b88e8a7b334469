"""From boxes to points: Newton in the charts, verification, the point a box holds, its kind and risk, and the points merged."""

from __future__ import annotations

import numpy as np

from .. import engine
from ..critical import canonical
from ..interval import Interval
from ..params import Params
from .boxes import TIGHTEN, UNIQUE, UNRESOLVED, box_of_path, inertia, ivs, krawczyk
from .census import CertifiedPoint
from .charts import Charts, Overlaps, euclidean, vector_overlaps
from .faces import Face, FaceSpace, face_vectors, group_signs, tube_test
from .strata import Strata
from .symmetry import vector_generators

__all__ = []


def _inverse_chart(x: np.ndarray, sign: float) -> np.ndarray:
    return x[:2] / (1.0 + sign * x[2])


def to_chart_point(
    space: Charts, group: np.ndarray, k: np.ndarray, v: np.ndarray
) -> np.ndarray | None:
    """Chart coordinates of an image of ``(k, v)`` (``R^3``) in the space's domain, if any."""
    x = np.concatenate([k, v])
    for sign in group_signs(vector_generators(group)):
        y = sign * x
        if y[2] * space.signs[0] < -1e-12 or y[5] * space.signs[1] < -1e-12:
            continue
        w = np.concatenate(
            [_inverse_chart(y[:3], space.signs[0]), _inverse_chart(y[3:], space.signs[1])]
        )
        if np.all(w >= space.root_lo - 1e-9) and np.all(w <= space.root_hi + 1e-9):
            return w
    return None


def newton(space, w: np.ndarray, steps: int = 8) -> np.ndarray:
    """Newton's iteration on the space's system from each row of `w` (``(n, m)``, or one
    point ``(m,)``), all rows at once; a row stops where its Jacobian is singular or its
    iterate is no longer finite."""
    w = np.array(w, dtype=float)
    one = w.ndim == 1
    W = np.atleast_2d(w).copy()
    n, m = W.shape
    active = np.all(np.isfinite(W), axis=1)
    for _ in range(steps):
        idx = np.flatnonzero(active)
        if not idx.size:
            break
        g, J = space.system([Interval(W[idx, i]) for i in range(m)])
        gm = np.stack([np.asarray(c.mid, dtype=float).reshape(-1) for c in g], axis=1)
        Jm = np.empty((idx.size, m, m))
        for a in range(m):
            for b in range(m):
                Jm[:, a, b] = np.asarray(J[a][b].mid, dtype=float).reshape(-1)
        ok = np.all(np.isfinite(Jm), axis=(1, 2)) & np.all(np.isfinite(gm), axis=1)
        step = np.zeros((idx.size, m))
        rows = np.flatnonzero(ok)
        try:
            step[rows] = np.linalg.solve(Jm[rows], gm[rows][..., None])[..., 0]
        except np.linalg.LinAlgError:  # some row is singular: row by row, and those stop
            for j in rows:
                try:
                    step[j] = np.linalg.solve(Jm[j], gm[j])
                except np.linalg.LinAlgError:
                    ok[j] = False
        W[idx[ok]] -= step[ok]
        active[idx[~ok]] = False
        active &= np.all(np.isfinite(W), axis=1)
    return W[0] if one else W


#: The half-widths `verify_many` tries, largest first.
VERIFY_RADII = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6, 1e-7)


def verify_many(space, W: np.ndarray) -> list[dict | None]:
    """For each row of `W`, a Krawczyk box around it that holds exactly one zero (the
    largest of :data:`VERIFY_RADII` that works), or None: every radius of every row in
    one vectorised test."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2:
        raise ValueError(f"`W` must be an (n, m) array of points, got shape {W.shape}.")
    n, m = W.shape
    out: list[dict | None] = [None] * n
    if not n:
        return out
    radii = np.array(VERIFY_RADII)
    zlo = (W[:, None, :] - radii[None, :, None]).reshape(-1, m)
    zhi = (W[:, None, :] + radii[None, :, None]).reshape(-1, m)
    kv, klo, khi = krawczyk(space, zlo, zhi)
    unique = (kv == UNIQUE).reshape(n, radii.size)
    rows = np.flatnonzero(unique.any(axis=1))
    if not rows.size:
        return out
    pick = rows * radii.size + np.argmax(unique[rows], axis=1)
    blo, bhi = klo[pick].copy(), khi[pick].copy()
    for _ in range(TIGHTEN):  # K of any box holding the zero holds it
        _kv, lo2, hi2 = krawczyk(space, blo, bhi)
        blo, bhi = np.maximum(blo, lo2), np.minimum(bhi, hi2)
    for j, (r, i) in enumerate(zip(rows, pick, strict=True)):
        out[r] = {"zlo": zlo[i], "zhi": zhi[i], "klo": blo[j], "khi": bhi[j]}
    return out


def verify_face(chart: Charts, w: np.ndarray, candidates: list[Face]) -> dict | None:
    """A box about a face through `w` that holds exactly one zero (:func:`tube_test`): for a
    point where a curvature is too small for the Krawczyk test in the full chart (a factor
    ``e^{-x^2}`` far below the other entries), but the symmetry leaves one equation on
    the face."""
    for face in candidates:
        N, T = list(face.normal), list(face.tangent)
        if face.chart != chart.name or np.max(np.abs(w[N] - np.array(face.values))) > 1e-6:
            continue
        c = w.copy()
        c[N] = face.values
        if T:
            c[T] = newton(FaceSpace(chart, face), c[T])
            if not np.all(np.isfinite(c)):
                continue
        for r in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
            zlo, zhi = (c - r)[None], (c + r)[None]
            count, klo, khi = tube_test(chart, face, zlo, zhi)
            if count[0] == 1:
                for _ in range(TIGHTEN if T else 0):  # K of any box holding the zero holds it
                    _kv, lo2, hi2 = krawczyk(FaceSpace(chart, face), klo[:, T], khi[:, T])
                    klo[:, T] = np.maximum(klo[:, T], lo2)
                    khi[:, T] = np.minimum(khi[:, T], hi2)
                return {
                    "zlo": zlo[0],
                    "zhi": zhi[0],
                    "klo": klo[0],
                    "khi": khi[0],
                    "face": {"normal": N, "values": list(face.values)},
                }
    return None


def search_vectors(points) -> list[tuple[np.ndarray, np.ndarray]]:
    """Representatives in ``R^3 x R^3`` of the search's points with ``r <= 3``."""
    out = []
    for c in points:
        k, v = np.array(c.vectors[0], dtype=float), np.array(c.vectors[1], dtype=float)
        ko, vo = k[2:], v[2:]
        if np.linalg.norm(ko) > 1e-9:
            e = ko / np.linalg.norm(ko)
        elif np.linalg.norm(vo) > 1e-9:
            e = vo / np.linalg.norm(vo)
        else:
            e = np.array([1.0, 0.0])
        rot = np.array([[e[0], e[1]], [-e[1], e[0]]])
        ko, vo = rot @ ko, rot @ vo
        if abs(vo[1]) > 1e-6:
            continue  # r = 4: the overlaps part
        out.append((np.array([k[0], k[1], ko[0]]), np.array([v[0], v[1], vo[0]])))
    return out


def point_of(space, params: Params, zero: dict, group: np.ndarray):
    """Classify the zero enclosed by ``zero["klo"], zero["khi"]`` (rigorous signs)."""
    d = params.d
    K = ivs(zero["klo"][None], zero["khi"][None])
    if isinstance(space, Overlaps):
        ov = K
        span = 4
        feasible = space.feasible_point(zero["klo"], zero["khi"])
        if feasible is False:
            return None
        H = space.table.hessian(ov)
        signs = inertia(H)
        index = None if signs is None or feasible is None else signs[0]
        nullity = 2 * d - 7 if index is not None else None
        span = span if feasible else None
    else:
        _g, J = space.system(K)
        face = zero.get("face")
        if face is None:
            x, _d, _dd = space.vectors(K, derivatives=True)
            signs = inertia(J)
        else:  # on the face of a symmetry h: Hess = dh^T Hess dh, dh = +1 (tangent), -1 (normal)
            f = Face(space.name, tuple(face["normal"]), tuple(face["values"]))
            zT = [K[i] for i in f.tangent]
            x, _d, _dd = face_vectors(space, f, zT)  # the point's exact coordinates
            parts = [inertia([[J[i][j] for j in f.normal] for i in f.normal])]
            if zT:
                parts.append(inertia(FaceSpace(space, f).system(zT)[1]))
            signs = None if None in parts else tuple(sum(p[i] for p in parts) for i in range(2))
        grad, _H, R = euclidean(space.table, x, need_hessian=False)
        k, v = x[:3], x[3:]
        ov = vector_overlaps(x)
        A = k[0] * grad[0] + k[1] * grad[1] + k[2] * grad[2]
        B = v[0] * grad[3] + v[1] * grad[4] + v[2] * grad[5]
        if not (k[2].contains_zero()[0] and v[2].contains_zero()[0]):
            span = 3
        else:  # the reflection of e3 maps the zero into Z: it is its own image, k3 = v3 = 0
            refl = []
            for part in (slice(0, 2), slice(2, 4)):
                ws = K[part]
                n2 = ws[0] ** 2 + ws[1] ** 2
                if n2.lo[0] <= 0.0:
                    refl = None
                    break
                refl += [c * n2.reciprocal() for c in ws]
            inside = refl is not None and all(
                r.lo[0] > zero["zlo"][i] and r.hi[0] < zero["zhi"][i] for i, r in enumerate(refl)
            )
            span = 2 if inside and space.signs[0] == space.signs[1] else None
        index = nullity = None
        if signs is not None and span is not None:
            trace = -(A + B)
            if span == 2:
                det = A * B - R[4] ** 2
                if det.lo[0] > 0.0 and (trace.hi[0] < 0.0 or trace.lo[0] > 0.0):
                    neg_w = 2 if trace.hi[0] < 0.0 else 0
                elif det.hi[0] < 0.0:
                    neg_w = 1
                else:
                    neg_w = None
                extra = 0
            else:  # one eigenvector of H_W is the orbit's direction; the other eigenvalue is the trace
                neg_w = 1 if trace.hi[0] < 0.0 else (0 if trace.lo[0] > 0.0 else None)
                extra = d - 3
            if neg_w is not None:
                index = signs[0] + (d - 3) * neg_w
                nullity = extra
    lo = tuple(float(o.lo[0]) for o in ov)
    hi = tuple(float(o.hi[0]) for o in ov)
    return lo, hi, span, index, nullity


def kind_of(index, nullity, d: int) -> str:
    if index is None:
        return "undecided"
    total = 2 * (d - 1)
    kind = "minimum" if index == 0 else ("maximum" if index + nullity == total else "saddle")
    if nullity:
        kind += f" (critical manifold of dimension {nullity})"
    return kind


def model_table(params: Params):
    """The model's rigorous table (:meth:`slr_theory.models.Model.rigorous_table`), or a
    ``ValueError`` saying that the model has none (an ``ImportError`` names the extra)."""
    table = params.model.rigorous_table(params)
    if table is None:
        raise ValueError(
            f"certify_critical_points needs rigorous enclosures of the model's risk; the model "
            f"{params.model.label!r} has none (pointwise erf has)."
        )
    return table


def open_distance(strata: Strata, part: dict, unproved: list, group: np.ndarray) -> float | None:
    """The largest distance (sup norm, in the overlaps) from an open box of the strata to
    the nearest image of a point the search found and the census did not prove; None
    when no box is open or no such point exists."""
    paths = [p for p, v in zip(part["paths"], part["verdicts"], strict=True) if v == UNRESOLVED]
    if not paths or not unproved:
        return None
    targets = np.concatenate([group * np.asarray(u) for u in unproved])
    worst = 0.0
    for path in paths:
        lo, hi = box_of_path(strata.root_lo, strata.root_hi, path)
        gap = np.maximum(np.maximum(lo - targets, targets - hi), 0.0)  # box to point
        far = np.maximum(np.abs(lo - targets), np.abs(hi - targets))  # farthest corner
        nearest = int(np.argmin(np.max(gap, axis=1)))
        worst = max(worst, float(np.max(far[nearest])))
    return worst


def strata_covered(
    strata: Strata, known: list[dict], z: dict, chart: Charts, group: np.ndarray
) -> bool:
    """Whether the zero in `z` (a chart's Krawczyk box) is already one of `known`: its
    enclosure, mapped to the overlaps, lies in a known zero's box after a symmetry."""
    K = ivs(z["klo"][None], z["khi"][None])
    ov = vector_overlaps(chart.vectors(K))
    lo = np.array([o.lo[0] for o in ov])
    hi = np.array([o.hi[0] for o in ov])
    if not known:
        return False
    strata.known = known
    for g in group:  # the group's rows are all its elements
        a, b = np.minimum(g * lo, g * hi), np.maximum(g * lo, g * hi)
        if strata.covered(a[None], b[None])[0] >= 0:
            return True
    return False


def risk_at(params: Params, overlaps: np.ndarray) -> float:
    """The risk a point states: at its overlaps, by the engine."""
    return float(engine.components(params, overlaps.reshape(5, 1)).sum()) + params.eps**2


def canonical_box(lo, hi, group: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A zero's enclosure as a point states it: the canonical image of its centre, and
    the enclosure mapped by the symmetry that took it there."""
    lo, hi = np.array(lo), np.array(hi)
    raw = 0.5 * (lo + hi)
    mid = canonical(raw, group)
    g = next(g for g in group if np.array_equal(g * raw, mid))  # the image canonical took
    return mid, np.where(g > 0, lo, -hi), np.where(g > 0, hi, -lo)


def merge(params: Params, points: list, group: np.ndarray) -> list[CertifiedPoint]:
    """One point per orbit: zeros whose canonical overlaps agree to 1e-7 are one point."""
    out: list[dict] = []
    for name, zi, (lo, hi, span, index, nullity) in points:
        mid, lo, hi = canonical_box(lo, hi, group)
        for q in out:
            if np.max(np.abs(q["mid"] - mid)) < 1e-7:
                q["zeros"].append(f"{name}:{zi}")
                for key, val in (("span", span), ("index", index), ("nullity", nullity)):
                    if q[key] is None:
                        q[key] = val
                break
        else:
            out.append(
                {
                    "mid": mid,
                    "lo": lo,
                    "hi": hi,
                    "span": span,
                    "index": index,
                    "nullity": nullity,
                    "zeros": [f"{name}:{zi}"],
                    "part": name,
                }
            )
    result = []
    for q in out:
        r = risk_at(params, q["mid"])
        result.append(
            CertifiedPoint(
                part=q["part"],
                zeros=tuple(q["zeros"]),
                overlaps_lo=tuple(float(x) for x in q["lo"]),
                overlaps_hi=tuple(float(x) for x in q["hi"]),
                overlaps=tuple(float(x) for x in q["mid"]),
                span_dim=q["span"],
                index=q["index"],
                nullity=q["nullity"],
                risk=r,
                kind=kind_of(q["index"], q["nullity"], params.d),
            )
        )
    return sorted(result, key=lambda p: p.risk)
