"""A saved study checked against the domain of every field before anything is drawn from it.

``report --from`` draws a report from ``results.json`` alone. A file edited by hand, or
by another program, must be refused with the field it is wrong in, never drawn as a
report that contradicts itself (negative risks, basin shares ``0.9 + 0.9``, ``100 <= Lip
<= 1``, index ``-3``) or ending in an internal error. Every number is checked finite
(but where a study records "never" as infinity or "stopped" as NaN: the fates and the
distance traces), the quantities that cannot be negative are not, the integers are
integers, the shapes agree with each other, and what one field determines of another is
derived again (the basin shares from the runs' labels, their standard errors from the
shares, the bounds of the Lipschitz constant in order).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from typing import Any

import numpy as np

__all__ = ["check_study"]

# fields where infinity ("never") and NaN ("stopped") are values the study records
_NON_FINITE = ("basins.fates.", "portrait.basin_fates.", "basins.trace_distance")
# fields that are never negative, and fields that are integers (paths, indices as \d+)
_NON_NEGATIVE = re.compile(
    r"^(points\[\d+\]\.(risk|grad_norm|index|nullity|map_unstable)"
    r"|risk_rows\[\d+\]\.total|lipschitz\.(lower|upper|alpha)|alpha|lam_star"
    r"|basins\.(fractions|stderr|alpha|n|steps|max_steps|distance|gradient|steps_run)"
    r"|portrait\.(risk|t_max)|seconds\[.*\]|proof\.(points|indices|boxes|check_seconds))$"
)
_INTEGERS = re.compile(
    r"^(seed|points\[\d+\]\.(index|nullity|map_unstable)|basins\.(n|steps|max_steps)"
    r"|proof\.(points|indices|boxes))$"
)


def _refuse(where: str, field: str, what: str, value: Any) -> None:
    shown = repr(value) if not isinstance(value, np.ndarray) else f"array of shape {value.shape}"
    raise ValueError(f"`{where}` field `{field}` {what}, got {shown[:200]}.")


def _walk(x: Any, path: str, where: str) -> None:
    """Every number below `x` finite (but in :data:`_NON_FINITE`), non-negative where its
    name says it cannot be negative, an integer where it must be."""
    loose = any(path.startswith(p) or f".{p}" in path for p in _NON_FINITE)
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        if type(x).__name__ == "Params":  # rebuilt, hence checked, by Params itself
            return
        for f in dataclasses.fields(x):
            _walk(getattr(x, f.name), f"{path}.{f.name}" if path else f.name, where)
        return
    if isinstance(x, dict):
        for k, v in x.items():
            _walk(v, f"{path}[{k!r}]", where)
        return
    if isinstance(x, list | tuple):
        for i, v in enumerate(x):
            _walk(v, f"{path}[{i}]", where)
        return
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return
    if isinstance(x, numbers.Number) or isinstance(x, np.ndarray):
        a = np.asarray(x)
        if a.dtype.kind not in "biuf":
            _refuse(where, path, "must hold numbers", x)
        if a.dtype.kind == "f" and not loose and not np.all(np.isfinite(a)):
            _refuse(where, path, "must be finite", x)
        if _NON_NEGATIVE.match(path) and np.any(a < 0):
            _refuse(where, path, "must not be negative", x)
        if _INTEGERS.match(path) and a.dtype.kind not in "iu":
            _refuse(where, path, "must be an integer", x)


def _shape(where: str, field: str, a: Any, shape: tuple) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != len(shape) or any(
        s is not None and n != s for n, s in zip(a.shape, shape, strict=False)
    ):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        _refuse(where, field, f"must have shape {want}", a)
    return a


def _basins(b, where: str, field: str = "basins") -> None:
    m = len(b.names)
    _shape(where, f"{field}.minima", b.minima, (m, 5))
    f = _shape(where, f"{field}.fractions", b.fractions, (m,))
    e = _shape(where, f"{field}.stderr", b.stderr, (m,))
    label = _shape(where, f"{field}.label", b.label, (b.n,))
    for name in ("nearest", "distance", "gradient", "steps_run", "stalled"):
        _shape(where, f"{field}.{name}", getattr(b, name), (b.n,))
    _shape(where, f"{field}.final", b.final, (b.n, 5))
    steps = _shape(where, f"{field}.trace_step", b.trace_step, (None,))
    _shape(where, f"{field}.trace_distance", b.trace_distance, (steps.size, b.n))
    if label.dtype.kind not in "iu" or np.any((label < -1) | (label >= m)):
        _refuse(where, f"{field}.label", f"must be integers in [-1, {m})", b.label)
    share = np.bincount(label[label >= 0], minlength=m)[:m] / max(b.n, 1)
    if not np.allclose(f, share, rtol=0, atol=1e-12):
        _refuse(where, f"{field}.fractions", f"must be the runs' shares {share.tolist()}", f)
    se = np.sqrt(share * (1 - share) / max(b.n, 1))
    if not np.allclose(e, se, rtol=1e-9, atol=1e-15):
        _refuse(where, f"{field}.stderr", f"must be the shares' standard errors {se.tolist()}", e)


def check_study(s, where: str) -> None:
    """Refuse a study with a field outside its domain, naming the field.

    Parameters
    ----------
    s : slr_theory.study.Study
        As loaded (its parameters already rebuilt, hence checked).
    where : str
        The file, for the message.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        ```where` field `basins.fractions` must be the runs' shares [...], got [...]``.

    Examples
    --------
    >>> import types
    >>> from slr_theory.study_check import check_study
    >>> check_study(types.SimpleNamespace(), "results.json")  # nothing to check: fine
    """
    if not dataclasses.is_dataclass(s):
        return
    _walk(s, "", where)
    for i, q in enumerate(s.points):
        o = _shape(where, f"points[{i}].overlaps", q.overlaps, (5,))
        if np.any(np.abs(o) > 1.0 + 1e-9):
            _refuse(where, f"points[{i}].overlaps", "must lie in [-1, 1]", q.overlaps)
    for i, r in enumerate(s.risk_rows):
        _shape(where, f"risk_rows[{i}].overlaps", r.overlaps, (5,))
    if s.lipschitz is not None and not s.lipschitz.lower <= s.lipschitz.upper:
        _refuse(
            where,
            "lipschitz",
            "must have lower <= upper",
            (s.lipschitz.lower, s.lipschitz.upper),
        )
    _basins(s.basins, where)
    p = s.portrait
    g = _shape(where, "portrait.grid", p.grid, (None,))
    if g.size < 2 or not np.all(np.diff(g) > 0) or np.any(np.abs(g) > 1.0):
        _refuse(where, "portrait.grid", "must be at least 2 increasing values in [-1, 1]", g)
    _shape(where, "portrait.risk", p.risk, (g.size, g.size))
    _shape(where, "portrait.field", p.field, (g.size, g.size, 2))
    _shape(where, "portrait.points", p.points, (len(p.point_kinds), 2))
    st = s.stability
    k = _shape(where, "stability.kappa", st.kappa, (None,))
    v = _shape(where, "stability.nu", st.nu, (None,))
    _shape(where, "stability.lead", st.lead, (v.size, k.size))
    if s.escape is not None:
        r0 = _shape(where, "escape.r0", s.escape.r0, (None,))
        _shape(where, "escape.measured", s.escape.measured, (r0.size,))
        _shape(where, "escape.predicted", s.escape.predicted, (r0.size,))
    if not math.isfinite(s.lam_star) or s.lam_star <= 0:
        _refuse(where, "lam_star", "must be positive and finite", s.lam_star)
