"""The branch and bound on boxes, and the isolating neighbourhoods of the points found, with their check."""

from __future__ import annotations

import numpy as np

from .boxes import (
    CHUNK,
    EXCLUDED,
    NEWTON_EXCLUDED,
    UNIQUE,
    UNRESOLVED,
    boxes_of_paths,
    children,
    ivs,
    krawczyk,
    paths_are_halvings,
    tree_complete,
    widest,
)
from .charts import Charts
from .faces import Face, tube_test
from .parts import Judges, Space, joined

__all__ = []


def bnb(
    space,
    min_width: float,
    max_boxes: int,
    progress=None,
    known: list | None = None,
    judges: Judges | None = None,
):
    """Branch and bound over the space's root: every leaf's path, verdict and zero.

    With `known` (the strata), a leaf whose preimage lies in a proved point's Krawczyk
    box (:meth:`Strata.covered`) closes as unique with that point. Each generation is
    judged in chunks (:data:`CHUNK`) by `judges` (:class:`Judges`; default: here), the
    space grown (:meth:`Space.grow`) after each chunk from what its boxes asked."""
    judges = Judges(1) if judges is None else judges
    lo, hi = space.root_lo[None].copy(), space.root_hi[None].copy()
    codes = np.zeros((1, 0), dtype=np.uint8)  # the generation's paths, a character a column
    closed_codes: list[np.ndarray] = []  # the leaves' paths, generation by generation
    leaves: dict = {"paths": [], "verdicts": [], "point": []}
    zeros: list[dict] = [dict(z) for z in (known or [])]
    seen = 0
    while len(lo):
        got, starts = [], list(range(0, len(lo), CHUNK))
        for i in starts:
            clo, chi = lo[i : i + CHUNK], hi[i : i + CHUNK]
            r = judges(space, clo, chi, bool(known))
            ask = np.flatnonzero(r["grow"])
            if ask.size:
                space.grow(clo[ask], chi[ask])
            got.append(r)
        r = joined(got, starts)
        verdict, prefer = r["verdict"], r["prefer"]  # prefer: the side an open box asks to split
        width = np.max(hi - lo, axis=1)
        seen += len(lo)
        if progress is not None:
            progress(len(lo))
        stop = seen >= max_boxes
        verdict[(verdict < 0) & ((width <= min_width) | stop)] = UNRESOLVED
        closed = np.flatnonzero(verdict >= 0)
        if closed.size:
            closed_codes.append(codes[closed])
            point = r["cov"][closed]  # a known point's box holds it, or -1
            f = r["found"]
            at = np.searchsorted(closed, f["at"])  # the Krawczyk proofs, leaf by leaf
            for j, k in enumerate(at.tolist()):
                zero = {key: f[key][j] for key in ("zlo", "zhi", "klo", "khi")}
                zero["leaf"] = len(leaves["point"]) + k
                point[k] = len(zeros)
                zeros.append(zero)
            leaves["verdicts"] += verdict[closed].tolist()
            leaves["point"] += point.tolist()
        split = np.flatnonzero(verdict < 0)
        if not split.size:
            break
        dims = np.where(prefer[split] >= 0, prefer[split], space.split_dims(lo[split], hi[split]))
        (l0, h0), (l1, h1) = children(lo[split], hi[split], dims)
        side = (ord("0") + 2 * dims).astype(np.uint8)[:, None]  # str(2 dim + half)
        codes = np.concatenate(
            [np.hstack([codes[split], side]), np.hstack([codes[split], side + 1])]
        )
        lo, hi = np.concatenate([l0, l1]), np.concatenate([h0, h1])
    for c in closed_codes:
        n = c.shape[1]
        leaves["paths"] += c.view(f"S{n}").ravel().astype(f"U{n}").tolist() if n else [""] * len(c)
    return leaves, zeros


# --- isolating neighbourhoods ------------------------------------------------------------------
#: Half-widths (chart units) tried, widest first, for a proved zero's isolating neighbourhood.
ISOLATE_RADII = (1e-4, 1e-3, 1e-2)


#: Boxes one neighbourhood's branch and bound may visit before its radius is given up.
ISOLATE_BUDGET = 100_000


class _Neighbourhood(Space):
    """A box ``W`` about a proved zero in its chart, in which every critical point lies in
    the zero's Krawczyk box ``Z``: a branch and bound over ``W`` (:func:`isolate`).

    A leaf is *unique* when every critical point in it lies in ``Z`` (it lies in ``Z``; or
    its Krawczyk image, or on the zero's face its tube image, lies in ``Z``), *excluded*
    when it holds none (the gradient's enclosure misses 0, or the face argument counts
    none), *Newton-excluded* when its Krawczyk image misses it. The strata then close a
    box whose preimage lies in ``W`` (:meth:`Strata.covered`): near ``k3 = 0`` the preimage
    of an overlaps' box of width ``w`` is ``sqrt(w)`` wide, far wider than a Krawczyk box
    where a curvature is small against the third derivatives.
    """

    name = "neighbourhood"
    newton = False

    def __init__(self, chart: Charts, zero: dict, lo: np.ndarray, hi: np.ndarray) -> None:
        self.chart = chart
        self.dim = chart.dim
        self.zlo, self.zhi = np.asarray(zero["zlo"]), np.asarray(zero["zhi"])
        face = zero.get("face")
        self.face = (
            Face(zero["chart"], tuple(face["normal"]), tuple(face["values"])) if face else None
        )
        self.root_lo, self.root_hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)

    def split_dims(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return widest(lo, hi)

    def _in_zero(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.all((lo >= self.zlo) & (hi <= self.zhi), axis=1)

    def classify(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        verdict = np.full(len(lo), -1)
        verdict[self._in_zero(lo, hi)] = UNIQUE
        idx = np.flatnonzero(verdict < 0)
        if idx.size:
            g, _ = self.chart.system(ivs(lo[idx], hi[idx]), need_jacobian=False)
            none = np.zeros(idx.size, dtype=bool)
            for c in g:
                none |= ~c.contains_zero()
            verdict[idx[none]] = EXCLUDED
            idx = idx[~none]
        if idx.size:
            kv, klo, khi = krawczyk(self.chart, lo[idx], hi[idx])
            verdict[idx[kv == NEWTON_EXCLUDED]] = NEWTON_EXCLUDED
            verdict[idx[(kv == UNIQUE) & self._in_zero(klo, khi)]] = UNIQUE
            idx = idx[verdict[idx] < 0]
        if idx.size and self.face is not None:  # the box stretched to the face, strictly
            N = list(self.face.normal)
            vals = np.array(self.face.values)
            blo, bhi = lo[idx].copy(), hi[idx].copy()
            blo[:, N] = np.minimum(blo[:, N], np.nextafter(vals, -np.inf))
            bhi[:, N] = np.maximum(bhi[:, N], np.nextafter(vals, np.inf))
            count, klo, khi = tube_test(self.chart, self.face, blo, bhi)
            verdict[idx[count == 0]] = EXCLUDED
            verdict[idx[(count == 1) & self._in_zero(klo, khi)]] = UNIQUE
        return verdict, np.full(len(lo), -1)


def isolate(
    chart: Charts,
    zero: dict,
    radii=ISOLATE_RADII,
    budget: int = ISOLATE_BUDGET,
    judges: Judges | None = None,
) -> dict | None:
    """The widest proved isolating neighbourhood of a zero: ``W = centre(Z) +- r`` for the
    largest ``r`` in `radii` wider than ``Z`` (tried from the widest down) with every leaf
    of its branch and bound closed (:class:`_Neighbourhood`). Returns ``{"lo", "hi",
    "paths", "verdicts"}``, or None where none closes within `budget` boxes."""
    zlo, zhi = np.asarray(zero["zlo"]), np.asarray(zero["zhi"])
    centre, half = 0.5 * zlo + 0.5 * zhi, float(np.max(zhi - zlo)) / 2

    def attempt(r: float) -> dict | None:
        space = _Neighbourhood(chart, zero, centre - r, centre + r)
        leaves, _zeros = bnb(space, 1e-12, budget, judges=judges)
        if UNRESOLVED in leaves["verdicts"]:
            return None
        return {
            "lo": space.root_lo,
            "hi": space.root_hi,
            "paths": leaves["paths"],
            "verdicts": leaves["verdicts"],
        }

    if budget <= 0:
        return None
    for r in sorted((r for r in radii if r > half), reverse=True):
        got = attempt(r)  # the widest first: where it closes, the narrower need no proof
        if got is not None:
            return got
    return None


def check_neighbourhood(chart: Charts, zero: dict, judges: Judges | None = None) -> str | None:
    """Re-verify a zero's saved neighbourhood from its leaves: None, or what fails."""
    cover = zero["cover"]
    lo, hi = np.asarray(cover["lo"]), np.asarray(cover["hi"])
    paths, verdicts = cover["paths"], np.array(cover["verdicts"], dtype=int)
    if lo.shape != (chart.dim,) or hi.shape != (chart.dim,) or not np.all(lo < hi):
        return "its neighbourhood is not a box of its chart"
    if not paths_are_halvings(paths, chart.dim):
        return "a path of its neighbourhood holds a character that is not a side's half"
    if len(paths) != len(verdicts) or not tree_complete(list(paths)):
        return "the leaves of its neighbourhood do not partition it"
    space = _Neighbourhood(chart, zero, lo, hi)
    blo, bhi = boxes_of_paths(lo, hi, list(paths))
    judges = Judges(1) if judges is None else judges
    fresh = judges(space, blo, bhi, newton=False)["verdict"]  # part by part
    if np.any(fresh < 0) or np.any(fresh != verdicts):
        return f"{int(np.count_nonzero(fresh != verdicts))} leaves of its neighbourhood do not re-verify"
    return None
