"""The atlas: the landscape over a grid of parameters, cell by cell, resumable.

Each *cell* is one :class:`~slr_theory.Params`: the critical points of the full space
(:func:`slr_theory.critical_points`), whether ``(k*, v*)`` is the global minimum, an
ensemble of PGD runs from uniform starts run to convergence
(:func:`slr_theory.landscape.basins`), and where M attracts transversally
(:func:`slr_theory.landscape.stability_map`). :func:`atlas` computes the Cartesian grid
of the axes it is given around a base ``Params``, in local processes or on a Dask
cluster, and writes every finished cell at once, so a killed run resumes where it
stopped. Every cell seeds from ``(rng, cell)``: the rows are the same, bit for bit,
whatever the backend, the number of workers and the order the cells finish in.

Nothing is read back that the atlas did not write: a cell file is trusted only if its
bytes have the SHA-256 digest recorded when it was committed
(:func:`slr_theory.output.written_files`); one that fails (edited, truncated, not ours)
is named in :attr:`Atlas.rejected`, set aside under a new name (never deleted), and
computed again. Each cell is committed at a cost that does not grow with the cells
already there (:meth:`slr_theory.output.Destination.commit_file`). A run that loses a
worker process, its Dask scheduler or its client raises :class:`AtlasIncomplete`,
with every finished cell kept.
"""

from __future__ import annotations

from .cells import WITHIN, atlas_cell, atlas_step, fate_columns
from .columns import AXES, COLUMNS, MAX_CELLS, MIN_D, STEP_SHARE, AtlasIncomplete
from .run import atlas, dask_setup
from .table import Atlas, found_text, read_atlas

__all__ = [
    "AXES",
    "COLUMNS",
    "MAX_CELLS",
    "MIN_D",
    "STEP_SHARE",
    "WITHIN",
    "Atlas",
    "AtlasIncomplete",
    "atlas",
    "atlas_cell",
    "atlas_step",
    "dask_setup",
    "fate_columns",
    "found_text",
    "read_atlas",
]

# An exception is shown (in a traceback, a doctest) by the path users import it from.
for _exception in (AtlasIncomplete,):
    _exception.__module__ = __name__
del _exception
