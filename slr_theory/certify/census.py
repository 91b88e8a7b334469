"""The census of critical points: its certified points, its summary, and saving and loading it."""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..critical import canonical
from ..params import Params, params_record
from ..results import html_table, text_table
from .boxes import FORMAT, UNRESOLVED, VERDICTS

__all__ = ["Census", "CertifiedPoint"]


# --- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CertifiedPoint:
    """A critical point whose existence and uniqueness in its box is proved.

    Attributes
    ----------
    part : str
        The part that found it first: ``"vectors++"``, ``"vectors+-"`` (``r <= 3``, the
        charts of ``k`` and ``v``) or ``"overlaps"`` (``r = 4``).
    zeros : tuple of str
        ``"part:i"``: the Krawczyk boxes of the census that hold it (its images under
        the group and the reflection of ``e3`` included).
    overlaps_lo, overlaps_hi : tuple of float
        Enclosure of ``(kappa, nu, theta, eta, rho)``.
    overlaps : tuple of float
        Its midpoint, in the canonical form of the symmetry group.
    span_dim : int or None
        ``dim span{k, v, k*, v*}`` when proved (2, 3 or 4).
    index, nullity : int or None
        At dimension ``d``, from the rigorous inertia (None when not decided).
    risk : float
        The risk at the midpoint (floating point).
    kind : str
    """

    part: str
    zeros: tuple
    overlaps_lo: tuple
    overlaps_hi: tuple
    overlaps: tuple
    span_dim: int | None
    index: int | None
    nullity: int | None
    risk: float
    kind: str


@dataclass
class Census:
    """The result of :func:`certify_critical_points`: the points and every box's verdict.

    Attributes
    ----------
    params : Params
    points : list of CertifiedPoint
        Distinct up to the symmetry group, sorted by risk.
    complete : bool
        True when every box of both parts is closed (no box unresolved): the list is then
        proved to hold every critical point, up to the group.
    parts : dict
        Per part (``"strata"``: ``r <= 3``, ``"overlaps"``: ``r = 4``): ``root`` (lo, hi, the
        domain the group leaves), ``paths`` (bisection path of each leaf), ``verdicts``,
        ``point`` (index into the part's zeros, -1 if none) and ``zeros`` (each Krawczyk
        box ``Z`` and its enclosure ``K``; a strata zero names its ``chart``, and its
        ``face`` where it was proved by :func:`tube_test`).
    group : list
        The symmetry group's rows (sign flips of the overlaps) the model verified.
    seconds : float
    min_width : float
        Boxes narrower than this were left unresolved.
    search : dict
        The search that seeded the proofs: ``starts``, ``seed``, how many points it
        ``found``, and the canonical overlaps of those ``unproved`` here (e.g. where the
        gradient's factor ``e^{-x^2}`` leaves the Jacobian's enclosure singular).
    """

    params: Params
    points: list
    complete: bool
    parts: dict
    group: list
    seconds: float
    min_width: float
    search: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict:
        """Per part, how many boxes each verdict closed."""
        return {
            name: {VERDICTS[v]: list(p["verdicts"]).count(v) for v in range(len(VERDICTS))}
            for name, p in self.parts.items()
        }

    def _table(self) -> tuple:
        boxes = sum(len(p["paths"]) for p in self.parts.values())
        if self.complete:
            status = f"complete by proof ({boxes} boxes, every one closed)"
        else:
            open_ = sum(list(p["verdicts"]).count(UNRESOLVED) for p in self.parts.values())
            status = f"NOT proved complete: {open_} of {boxes} boxes open"
        rows = [
            [
                *(f"{x:.4f}" if abs(x) >= 5e-5 else "0.0000" for x in q.overlaps),
                f"{q.risk:.6g}",
                "?" if q.index is None else q.index,
                "?" if q.nullity is None else q.nullity,
                q.kind,
            ]
            for q in self.points
        ]
        return (
            ["kappa", "nu", "theta", "eta", "rho", "risk", "index", "null", "kind"],
            rows,
            f"{len(self.points)} points up to symmetry at {self.params!r}, {status}",
        )

    def _repr_html_(self) -> str:
        """What a notebook shows: the proved points (midpoints of their boxes), and whether
        the list is complete by proof."""
        return html_table(*self._table())

    def __repr__(self) -> str:
        """The same table as text (:meth:`summary` says what is proved, in sentences)."""
        header, rows, caption = self._table()
        return text_table(header, rows, "Census: " + caption)

    def part_complete(self, name: str) -> bool:
        """Whether every box of part `name` (``"strata"``: ``r <= 3``, ``"overlaps"``:
        ``r = 4``) is closed by a verdict."""
        return UNRESOLVED not in self.parts[name]["verdicts"]

    def summary(self) -> str:
        """What is proved, in a few sentences (every number from the census)."""
        n = len(self.points)
        decided = sum(q.index is not None for q in self.points)
        boxes = sum(len(p["paths"]) for p in self.parts.values())
        on_faces = sum(
            any(
                self.parts[r.split(":")[0]]["zeros"][int(r.split(":")[1])].get("face")
                for r in q.zeros
            )
            for q in self.points
        )
        faced = f"; {on_faces} on a face of a symmetry" if on_faces else ""
        out = [
            f"{n} critical points up to symmetry proved to exist, each the only one in its box "
            f"(Krawczyk{faced}), {decided} with their index at d = {self.params.d} proved."
        ]
        if self.complete:
            out.append(
                f"The list is complete by proof: {boxes} boxes, every one closed by a rigorous verdict."
            )
        else:
            for name, what in (
                ("overlaps", "dim span{k, v, k*, v*} = 4"),
                ("strata", "dim span{k, v, k*, v*} <= 3"),
            ):
                part = self.parts[name]
                left = part["verdicts"].count(UNRESOLVED)
                if left:
                    out.append(
                        f"Points with {what}: NOT proved complete, {left} of {len(part['paths'])} boxes open "
                        f"(budget or width {self.min_width:g})."
                    )
                else:
                    out.append(
                        f"Points with {what}: complete by proof ({len(part['paths'])} boxes)."
                    )
        unproved = self.search.get("unproved", [])
        within = self.search.get("open_within")
        if within is not None and within < 0.1 and not self.complete:  # a statement only when near
            out.append(
                f"Every open box lies within {within:.1e} (in the overlaps) of a point the search "
                "found and the census did not prove: every critical point is in the list or "
                f"within {within:.1e} of those."
                if self.part_complete("overlaps")
                else f"The open boxes of the strata lie within {within:.1e} of unproved points."
            )
        if self.search:
            how = (
                f"{self.search['starts']} random starts, seed {self.search['seed']}"
                if self.search["seed"] is not None
                else f"given, {self.search['starts']} starts"
            )
            out.append(
                f"The search ({how}) found {self.search['found']}; {len(unproved)} of them not "
                "proved here."
            )
        out.append(f"{self.seconds:.0f} s.")
        return " ".join(out)

    def agreement(self, points) -> dict:
        """How a list of points (e.g. :func:`slr_theory.critical_points`'s) compares with the
        census, up to the group: ``missing`` (canonical overlaps of census points the list
        lacks), ``extra`` (list points the census does not have), ``differ`` (points in
        both whose index or nullity differ; only where the census proved them), and
        ``same`` (none of the three).

        Parameters
        ----------
        points : iterable
            Objects with ``overlaps``, ``index`` and ``nullity``.

        Returns
        -------
        dict
        """
        group = np.asarray(self.group, dtype=float)
        seen = [False] * len(self.points)
        extra, differ = [], []
        for q in points:
            mid = canonical(np.asarray(q.overlaps, dtype=float), group)
            near = [
                i
                for i, c in enumerate(self.points)
                if np.max(np.abs(np.asarray(c.overlaps) - mid)) < 1e-6
            ]
            if not near:
                extra.append([float(x) for x in mid])
                continue
            c = self.points[near[0]]
            seen[near[0]] = True
            if c.index is not None and (c.index, c.nullity) != (q.index, q.nullity):
                differ.append([float(x) for x in mid])
        missing = [list(c.overlaps) for c, s in zip(self.points, seen, strict=True) if not s]
        same = not (missing or extra or differ)
        return {"missing": missing, "extra": extra, "differ": differ, "same": same}

    def to_dict(self) -> dict:
        """The certificate as JSON-able data (floats of boxes as exact hex strings)."""

        def hexes(x) -> list[str]:
            return [float(v).hex() for v in x]

        return {
            "format": FORMAT,
            "params": params_record(self.params),
            "points": [asdict(p) for p in self.points],
            "complete": self.complete,
            "parts": {
                name: {
                    "root": [hexes(part["root"][0]), hexes(part["root"][1])],
                    "paths": list(part["paths"]),
                    "verdicts": [int(v) for v in part["verdicts"]],
                    "point": [int(v) for v in part["point"]],
                    **(
                        {
                            "tubes": {
                                name: {"lo": hexes(t[0]), "hi": hexes(t[1]), "width": hexes(t[2])}
                                for name, t in part["tubes"].items()
                            }
                        }
                        if part.get("tubes")
                        else {}
                    ),
                    "zeros": [
                        {
                            **{key: hexes(z[key]) for key in ("zlo", "zhi", "klo", "khi")},
                            "feasible": bool(z.get("feasible", True)),
                            "chart": z.get("chart"),
                            "face": z.get("face"),
                            **(
                                {
                                    "cover": {
                                        "lo": hexes(z["cover"]["lo"]),
                                        "hi": hexes(z["cover"]["hi"]),
                                        "paths": list(z["cover"]["paths"]),
                                        "verdicts": [int(v) for v in z["cover"]["verdicts"]],
                                    }
                                }
                                if z.get("cover") is not None
                                else {}
                            ),
                        }
                        for z in part["zeros"]
                    ],
                }
                for name, part in self.parts.items()
            },
            "group": [list(map(float, g)) for g in self.group],
            "seconds": self.seconds,
            "min_width": self.min_width,
            "search": self.search,
        }

    def save(self, path) -> Path:
        """Write the certificate (gzip-compressed JSON) to `path` and return it."""
        path = Path(path)
        text = json.dumps(self.to_dict())  # one string: json.dump writes it in tiny pieces
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=6) as f:
            f.write(text)  # level 6: 4 times faster than 9 at lam = 0.9, 6 % larger
        return path

    @classmethod
    def from_dict(cls, data: dict) -> Census:
        """Rebuild a census from :meth:`to_dict` (nothing is re-verified: see
        :func:`check_certificate`)."""
        if data.get("format") != FORMAT:
            raise ValueError(
                f"not a census certificate: format {data.get('format')!r}, expected {FORMAT!r}."
            )

        def floats(x) -> np.ndarray:
            return np.array([float.fromhex(v) for v in x])

        parts = {}
        for name, part in data["parts"].items():
            parts[name] = {
                "root": (floats(part["root"][0]), floats(part["root"][1])),
                "paths": list(part["paths"]),
                "verdicts": [int(v) for v in part["verdicts"]],
                "point": [int(v) for v in part["point"]],
                **(
                    {
                        "tubes": {
                            name: (floats(t["lo"]), floats(t["hi"]), floats(t["width"]))
                            for name, t in part["tubes"].items()
                        }
                    }
                    if part.get("tubes")
                    else {}
                ),
                "zeros": [
                    {
                        **{key: floats(z[key]) for key in ("zlo", "zhi", "klo", "khi")},
                        "feasible": bool(z["feasible"]),
                        "chart": z.get("chart"),
                        "face": z.get("face"),
                        **(
                            {
                                "cover": {
                                    "lo": floats(z["cover"]["lo"]),
                                    "hi": floats(z["cover"]["hi"]),
                                    "paths": list(z["cover"]["paths"]),
                                    "verdicts": [int(v) for v in z["cover"]["verdicts"]],
                                }
                            }
                            if z.get("cover") is not None
                            else {}
                        ),
                    }
                    for z in part["zeros"]
                ],
            }
        points = [
            CertifiedPoint(**{k: tuple(v) if isinstance(v, list) else v for k, v in p.items()})
            for p in data["points"]
        ]
        return cls(
            params=Params(**data["params"]),
            points=points,
            complete=bool(data["complete"]),
            parts=parts,
            group=data["group"],
            seconds=float(data["seconds"]),
            min_width=float(data["min_width"]),
            search=data.get("search", {}),
        )

    @classmethod
    def load(cls, path) -> Census:
        """Read a certificate written by :meth:`save`."""
        with gzip.open(Path(path), "rt", encoding="utf-8") as f:
            return cls.from_dict(json.load(f))
