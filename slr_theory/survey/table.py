"""The atlas as a table: its rows, written as CSV or Parquet beside a spec, read back and checked field by field."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..params import Params, params_record
from ..results import html_table, text_table
from .columns import (
    AXES,
    CENSUS_COLUMNS,
    COLUMNS,
    FATE_COLUMNS,
    INTS,
    SEARCH_COLUMNS,
    SEARCH_DEFAULTS,
    SPEC,
    TEXT_AXES,
    has_pyarrow,
)

__all__ = ["Atlas", "found_text", "read_atlas"]


@dataclass
class Atlas:
    """The rows of an atlas, one per finished cell, in cell order.

    Attributes
    ----------
    base : Params
        The parameters every axis not spanned keeps.
    axes : dict of str to list
        The values of each axis of the grid (:data:`AXES`; an axis not given has the
        base's value alone).
    settings : dict
        ``basin_runs``, ``alpha``, ``steps``, ``max_steps``, ``stability_grid``, ``rng``.
    rows : list of dict
        One per finished cell (:data:`COLUMNS`).
    rejected : dict of str to str
        Cell files found that the atlas did not trust, each with why (and, after a run,
        where it was set aside); their cells were computed again (or, read back with
        :func:`read_atlas`, are :attr:`missing`).
    """

    base: Params
    axes: dict
    settings: dict
    rows: list = field(default_factory=list)
    rejected: dict = field(default_factory=dict)

    @property
    def cells(self) -> int:
        """Cells of the grid (finished or not)."""
        return int(np.prod([len(v) for v in self.axes.values()]))

    @property
    def missing(self) -> list[int]:
        """The cells without a row (a run that was interrupted)."""
        have = {r["cell"] for r in self.rows}
        return [i for i in range(self.cells) if i not in have]

    def column(self, name: str) -> np.ndarray:
        """One column of the rows as an array (``global_min_overlaps``: shape ``(n, 5)``).

        Parameters
        ----------
        name : str
            One of :data:`COLUMNS`.

        Returns
        -------
        ndarray
        """
        if name not in COLUMNS:
            raise ValueError(f"`name` must be one of {', '.join(COLUMNS)}, got {name!r}.")
        return np.array([r[name] for r in self.rows])

    def _repr_html_(self) -> str:
        """What a notebook shows: one row per cell, what ``(k*, v*)`` is and who reaches it."""
        return html_table(*self._table())

    def __repr__(self) -> str:
        """The same table as text."""
        return text_table(*self._table())

    def _table(self) -> tuple:
        rows = []
        for r in self.rows:
            fates = math.isfinite(r["fate_optimum_fraction"])
            rows.append(
                [
                    f"{r['lam']:.4g}", r["L"], f"{r['gamma']:.4g}", r["d"], r["s"],
                    r["nonlinearity"], r["attention"], found_text(r), r["optimum_index"],
                    "yes" if r["optimum_is_global"] else "no",
                    f"{r['fate_optimum_fraction']:.3f} ± {r['fate_optimum_se']:.3f}"
                    if fates else "—",
                    f"{r['optimum_log10_steps']:.1f}" if fates else "—",
                ]
            )  # fmt: skip
        return (
            [
                "λ", "L", "γ", "d", "s", "σ", "attention", "critical points (found)",
                "(k*, v*) index", "global", "share to (k*, v*)", "median log10 steps",
            ],
            rows,
            f"atlas: {len(self.rows)} of {self.cells} cells",
        )  # fmt: skip

    def plot(self, path=None, **options):
        """:func:`slr_theory.plotting.atlas_figure` of this atlas.

        Parameters
        ----------
        path : str or Path, optional
            Where to write it; None: the figure is returned (a notebook shows it).
        **options
            ``x``, ``y``, ``dpi`` of :func:`~slr_theory.plotting.atlas_figure`.

        Returns
        -------
        Path or matplotlib.figure.Figure
        """
        from ..plotting.atlas import atlas_figure

        return atlas_figure(self, path, **options)

    def write(self, path: str | os.PathLike, *, force: bool = False) -> Path:
        """Write the rows as a tidy table: CSV, or Parquet for a ``.parquet`` path.

        Under the output discipline (:class:`slr_theory.output.Destination`): a file that
        exists is replaced only with `force`, and only if slr-theory wrote it.

        Parameters
        ----------
        path : str or os.PathLike
        force : bool

        Returns
        -------
        Path
        """
        from ..output import Destination

        path = Path(path)
        if path.suffix == ".parquet" and not has_pyarrow():
            raise ValueError(
                f"`path` {str(path)!r}: Parquet needs pyarrow "
                "(pip install 'slr-theory[parquet]'); a .csv path needs nothing."
            )
        with Destination(path.parent, force=force, expect=[path.name], argument="path") as dest:
            write_table(self, dest.file(path.name))
        return path


def found_text(row: dict) -> str:
    """An atlas row's count of critical points with the search's evidence.

    Parameters
    ----------
    row : dict
        A row of :attr:`Atlas.rows`.

    Returns
    -------
    str
        ``"13 (last new at start 324 of 851)"``; ``"12 (complete by proof)"`` where the
        cell's census closed every box and holds the search's points; the count alone for
        a table written before the evidence was kept.
    """
    if row.get("census_complete") == 1 and row.get("census_agrees") == 1:
        return f"{row['n_critical']} (complete by proof)"
    if row["search_starts"] < 0:  # a table written before the evidence was kept
        return f"{row['n_critical']}"
    return (
        f"{row['n_critical']} (last new at start {row['search_last_new']} of "
        f"{row['search_starts']})"
    )


def _row_for_table(row: dict) -> dict:
    out = dict(row)
    out["global_min_overlaps"] = " ".join(repr(float(x)) for x in row["global_min_overlaps"])
    return out


def _row_from_table(raw: dict) -> dict:
    ints = INTS
    row = {}
    for name in COLUMNS:
        # a table written before the attention axis: the paper's pointwise attention
        value = raw.get(name, "pointwise") if name == "attention" else raw.get(name)
        if value is None and name in FATE_COLUMNS:  # a table written before the fates
            row[name] = math.nan
            continue
        if value is None and name in (*SEARCH_COLUMNS, *CENSUS_COLUMNS):  # ... or before
            row[name] = -1  # the search's evidence or the census
            continue
        if value is None:
            raise KeyError(name)
        if name in TEXT_AXES:
            row[name] = str(value)
        elif name == "global_min_overlaps":
            row[name] = [float(x) for x in str(value).split()]
        elif name == "optimum_is_global":
            row[name] = value if isinstance(value, bool) else str(value) == "True"
        elif name in ints:
            row[name] = int(value)
        else:
            row[name] = float(value)
    return row


def write_table(a: Atlas, path: Path) -> None:
    rows = [_row_for_table(r) for r in a.rows]
    if path.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(rows, schema=_arrow_schema(pa))
        table = table.replace_schema_metadata({"slr_theory": json.dumps(atlas_spec(a))})
        pq.write_table(table, path)
        return
    with open(path, "w", newline="") as f:
        f.write(f"# slr-theory atlas {json.dumps(atlas_spec(a), sort_keys=True)}\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})


def _arrow_schema(pa):
    kinds = {
        "nonlinearity": pa.string(),
        "attention": pa.string(),
        "global_min_overlaps": pa.string(),
        "optimum_is_global": pa.bool_(),
    }
    ints = INTS
    return pa.schema(
        [(c, kinds.get(c, pa.int64() if c in ints else pa.float64())) for c in COLUMNS]
    )


def read_atlas(path: str | os.PathLike) -> Atlas:
    """An :class:`Atlas` from what :func:`atlas` or :meth:`Atlas.write` wrote.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV or Parquet table, or the directory `out` of :func:`atlas` (its finished
        cells, even if the run was interrupted). In a directory, only cell files whose
        bytes have the digest recorded when they were written are read; the others are
        named in :attr:`Atlas.rejected` and their cells are :attr:`Atlas.missing`.

    Returns
    -------
    Atlas
    """
    from ..output import written_files

    path = Path(path)
    if path.is_dir():
        recorded = written_files(path)
        spec = stored_spec(path, recorded)
        if spec is None:
            raise ValueError(f"`path`: {path} holds no atlas ({SPEC} is missing).")
        a = _from_spec(spec, [])
        rows, a.rejected = read_cells(path, spec_digest(spec), a.cells, recorded)
        a.rows = sorted(rows.values(), key=lambda r: r["cell"])
        return a
    if not path.is_file():
        raise ValueError(f"`path` must be an atlas table or directory, got {str(path)!r}.")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        spec = json.loads(table.schema.metadata[b"slr_theory"])
        return _from_spec(spec, [_row_from_table(r) for r in table.to_pylist()])
    with open(path, newline="") as f:
        first = f.readline()
        prefix = "# slr-theory atlas "
        if not first.startswith(prefix):
            raise ValueError(f"`path`: {path} is not an atlas table (no slr-theory header).")
        spec = json.loads(first[len(prefix) :])
        return _from_spec(spec, [_row_from_table(r) for r in csv.DictReader(f)])


def atlas_spec(a: Atlas) -> dict:
    return {
        "base": params_record(a.base),
        "axes": {k: list(v) for k, v in a.axes.items()},
        "settings": dict(a.settings),
    }


def upgraded(spec: dict) -> dict:
    """`spec` with what an atlas recorded before an axis or a setting existed filled in."""
    return {
        "base": {"attention": "pointwise", **spec["base"]},
        "axes": {"attention": ["pointwise"], **spec["axes"]},
        "settings": {**SEARCH_DEFAULTS, **spec["settings"]},
    }


def _from_spec(spec: dict, rows: list[dict]) -> Atlas:
    spec = upgraded(spec)
    return Atlas(
        base=Params(**spec["base"]),
        axes={k: list(spec["axes"][k]) for k in AXES},  # in cell order (JSON sorts keys)
        settings=dict(spec["settings"]),
        rows=sorted(rows, key=lambda r: r["cell"]),
    )


def spec_digest(spec: dict) -> str:
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def bytes_recorded(path: Path, digest: str | None) -> tuple[bytes | None, str | None]:
    """The bytes of `path` if they have the recorded `digest`; else why not."""
    if digest is None:
        return None, "not recorded as written by slr-theory"
    if path.is_symlink() or not path.is_file():
        return None, "not a regular file"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    if hashlib.sha256(data).hexdigest() != digest:
        return None, "changed since slr-theory wrote it (its SHA-256 differs from the record)"
    return data, None


def stored_spec(directory: Path, recorded: dict) -> dict | None:
    """The atlas specification in `directory`; None where there is none; refused where
    there is an ``atlas.json`` that this toolkit did not write or that is not one."""
    path = directory / SPEC
    if not (path.exists() or path.is_symlink()):
        return None
    data, why = bytes_recorded(path, recorded.get(SPEC))
    spec = None
    if data is not None:
        try:
            spec = json.loads(data)
            _from_spec(spec, [])
        except (ValueError, TypeError, KeyError, AttributeError):
            why, spec = "not an atlas specification", None
    if spec is None:
        raise untrusted(path, why)
    return spec


_CELL_NAME = re.compile(r"cell-(\d{6})\.json")


def _row_out_of_domain(row: dict) -> str | None:
    """None, or which field of a cell's row is not of its type and domain: the integer
    columns integers, the names strings, the numbers finite (a fate column may be NaN, a
    table written before it, or infinite: never), the overlaps five numbers, the shares
    in [0, 1]."""

    def number(v):
        return isinstance(v, int | float) and not isinstance(v, bool)

    for name in COLUMNS:
        v = row[name]
        if name in INTS:
            ok = isinstance(v, int) and not isinstance(v, bool)
        elif name in TEXT_AXES:
            ok = isinstance(v, str)
        elif name == "optimum_is_global":
            ok = isinstance(v, bool)
        elif name == "global_min_overlaps":
            ok = (
                isinstance(v, list)
                and len(v) == 5
                and all(number(x) and math.isfinite(x) and abs(x) <= 1 + 1e-9 for x in v)
            )
        else:
            ok = number(v) and (
                math.isfinite(v) or (name in FATE_COLUMNS and (math.isnan(v) or v == math.inf))
            )
            if ok and (name.endswith(("fraction", "_se")) or name.startswith("within")):
                ok = math.isnan(v) or 0.0 <= v <= 1.0
        if not ok:
            return f"with its field `{name}` out of its domain ({v!r})"
    return None


def read_cells(
    directory: Path, tag: str, cells: int, recorded: dict
) -> tuple[dict[int, dict], dict[str, str]]:
    """The rows of the cell files the atlas wrote, by cell, and the cell files it rejects."""
    rows: dict[int, dict] = {}
    rejected: dict[str, str] = {}
    for p in sorted(directory.glob("cell-*.json")):
        m = _CELL_NAME.fullmatch(p.name)
        if m is None or int(m.group(1)) >= cells:
            continue  # not a cell of this grid: not the atlas's to judge or to replace
        i = int(m.group(1))
        data, why = bytes_recorded(p, recorded.get(p.name))
        if data is not None:
            try:
                got = json.loads(data)
                row = got["row"]
                if set(COLUMNS) - set(row) == {"attention"}:  # written before that axis
                    row = {c: row.get(c, "pointwise") for c in COLUMNS}
                ok = got["spec"] == tag and tuple(row) == COLUMNS and row["cell"] == i
            except (ValueError, TypeError, KeyError):
                ok = False
            if ok:
                why = _row_out_of_domain(row)
                if why is None:
                    rows[i] = row
                    continue
            else:
                why = "not a cell of this atlas"
        rejected[p.name] = why
    return rows, rejected


def _refused(detail: str):
    from ..output import OutputConflict, refusal

    return refusal(OutputConflict, "out", detail)


def untrusted(path: Path, why: str):
    return _refused(
        f"{path} is {why}; the atlas never reads or replaces it: move it away or choose "
        "another directory"
    )


def another_atlas(directory: Path):
    return _refused(
        f"{directory} holds another atlas (its {SPEC} differs); choose another directory "
        "to keep both"
    )
