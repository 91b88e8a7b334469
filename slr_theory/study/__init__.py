"""The report's computation: one typed result, saved as ``results.json``, and its findings.

:func:`study` computes everything the report shows at the user's parameters and returns
a :class:`Study`; :meth:`Study.save` writes it as JSON (:mod:`slr_theory.results`) and
:meth:`Study.load` reads it back, so figures and text are redrawn without computing.
:func:`findings` turns a study into sentences; every number in them is read from the
study.

The schema of ``results.json`` is the :class:`Study` dataclass and the types of its
fields, field by field (documented in ``docs/api.md``); ``schema`` is its version.
"""

from __future__ import annotations

from .certificates import check_certifying, check_proof, read_certificate
from .compute import cost, study
from .findings import atlas_finding, fates_sentence, findings
from .record import Study
from .schema import SCHEMA, Event, Lipschitz, Point, Proof, RiskRow

__all__ = [
    "SCHEMA",
    "Event",
    "Lipschitz",
    "Point",
    "Proof",
    "RiskRow",
    "Study",
    "atlas_finding",
    "check_certifying",
    "check_proof",
    "cost",
    "fates_sentence",
    "findings",
    "read_certificate",
    "study",
]
