"""The atlas's grid and table: its axes, its columns and their types, its limits, and the error of an atlas left incomplete."""

from __future__ import annotations

from pathlib import Path

__all__ = ["AXES", "COLUMNS", "MAX_CELLS", "MIN_D", "STEP_SHARE", "AtlasIncomplete"]


#: The axes a grid may span, in the order the cells are numbered (the last varies fastest).
AXES = ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention")


#: The axes whose values are names.
TEXT_AXES = ("nonlinearity", "attention")


#: The columns from the fates of a cell's runs (:func:`fate_columns`); a table written
#: before them reads them as NaN.
FATE_COLUMNS = (
    "fate_optimum_fraction",
    "fate_optimum_se",
    "fate_saddle_fraction",
    "fate_undecided_fraction",
    "optimum_log10_steps",
    "within_1e4",
    "within_1e6",
    "within_1e8",
)


#: The evidence of the full-space search (``n_critical`` is what it found, not a proof):
#: its starts and the start at which the last new point appeared (``-1`` in a table
#: written before they were kept).
SEARCH_COLUMNS = ("search_starts", "search_last_new")


#: What a cell's census proved (:func:`slr_theory.certify_critical_points`, ``certify``):
#: 1 or 0, and its number of points; ``-1`` where no census ran (not asked, a model
#: without rigorous enclosures, or a table written before the column).
CENSUS_COLUMNS = ("census_complete", "census_points", "census_agrees")


#: A cell's census budget (boxes per part) when ``certify=True``.
CERTIFY_BOXES = 10**7


#: The integer columns of the table.
INTS = (
    "cell",
    "L",
    "d",
    "s",
    "n_critical",
    *SEARCH_COLUMNS,
    *CENSUS_COLUMNS,
    "optimum_index",
    "basin_runs",
)


#: The columns of :attr:`Atlas.rows`, in the order of the table.
COLUMNS = (
    "cell",
    *AXES,
    "eps",
    "n_critical",
    *SEARCH_COLUMNS,
    *CENSUS_COLUMNS,
    "optimum_index",
    "optimum_is_global",
    "global_min_overlaps",
    "global_min_risk",
    "optimum_risk",
    "m_attracting_fraction",
    "optimum_basin_fraction",
    "optimum_basin_se",
    "basin_unconverged_fraction",
    *FATE_COLUMNS,
    "basin_runs",
    "alpha",
    "seconds",
)


OPTIMUM = (1.0, 1.0, 0.0, 0.0, 0.0)


SPEC = "atlas.json"


CSV = "atlas.csv"


PARQUET = "atlas.parquet"


CELL = "cell-{:06d}.json"


#: The default step of a cell, as a share of the largest step at which every minimum is
#: stable for the PGD map (``2 / h_max``).
STEP_SHARE = 0.95


#: Most cells of one atlas (a typo in a range must not start days of work).
MAX_CELLS = 10**6


#: The smallest dimension of a cell: the full-space search needs ``span{k*, v*}`` and
#: two directions beside it.
MIN_D = 4


#: The search's settings of a cell, and their values in an atlas recorded before them.
SEARCH_DEFAULTS = {"starts": 512, "grid": 9, "certify": 0}


class AtlasIncomplete(RuntimeError):
    """The atlas stopped before its last cell: a worker, the scheduler or the client was lost.

    Every cell that finished is kept in `out` (when there is one): the same call again
    computes only the cells that are missing.

    Attributes
    ----------
    reason : str
        What was lost, in one clause.
    done, total : int
        Cells with a row, and cells of the grid.
    out : Path or None
        Where the finished cells are.
    """

    def __init__(self, reason: str, done: int, total: int, out: Path | None) -> None:
        self.reason, self.done, self.total, self.out = reason, done, total, out
        keep = (
            f"the {done} finished cells are kept in {out}: run the same call again to resume"
            if out is not None
            else "give `out` to keep finished cells across runs"
        )
        super().__init__(f"the atlas stopped after {done} of {total} cells: {reason}; {keep}")


def has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True
