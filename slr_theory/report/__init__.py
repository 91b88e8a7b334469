"""``slr-theory report``: one self-contained Markdown report with its figures, on any parameters.

The computation (:func:`slr_theory.study.study`) and the drawing are apart: the report
directory holds ``results.json`` (the :class:`slr_theory.study.Study`), and
:func:`redraw_report` (``slr-theory report --from DIR``) draws every figure and
``report.md`` again from it, in seconds, without computing.

Sections: what this shows (findings built from the results), the verification table, the
risk and its decomposition, the critical points on M (with the proof) and in the full
space (with the evidence) and the center-stable manifold conclusion, the phase portrait,
the global picture (stability of M, one basin ensemble, escape times, the continuation in
``lambda``), the paper's experiments, and the statistics of the paper's section 4.

The report is written under the output discipline of :mod:`slr_theory.output`: built in
a staging folder, committed by rename when complete (an error, Ctrl-C or SIGTERM leaves
the directory as it was), and ``force`` replaces only what an earlier report wrote.
"""

from __future__ import annotations

# Internal, importable from here as before the split (no promise):
from .document import (
    CENSUS,  # noqa: F401
    redraw_report,
    write_report,
)
from .tables import RESULTS

__all__ = ["RESULTS", "redraw_report", "write_report"]
