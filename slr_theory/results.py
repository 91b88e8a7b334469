"""Typed results as plain JSON, and back: what a computation saves and a figure redraws from.

:func:`to_plain` turns a result (dataclasses, NumPy arrays and scalars, lists, dicts,
tuples, numbers, strings) into JSON-ready data; :func:`from_plain` rebuilds the typed
result from that data and the dataclass's annotations. Floats keep every bit (JSON
numbers written with ``repr``); the non-finite ones, which JSON cannot hold, become the
strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``. Arrays become nested lists (an
empty array comes back with shape ``(0,)``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import types
import typing
from typing import Any

import numpy as np

__all__ = ["FieldError", "dumps", "from_plain", "html_table", "loads", "text_table", "to_plain"]

_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _float(x: float):
    x = float(x)
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def to_plain(obj: Any) -> Any:
    """JSON-ready data of a result.

    Parameters
    ----------
    obj : object
        A dataclass instance, ndarray, NumPy scalar, list, tuple, dict (string keys),
        bool, int, float, str or None, nested in any way.

    Returns
    -------
    object
        Lists, dicts, numbers, strings, booleans and None only.

    Examples
    --------
    >>> import numpy as np
    >>> to_plain({"x": np.array([1.0, np.inf]), "n": np.int64(3)})
    {'x': [1.0, 'Infinity'], 'n': 3}
    """
    if hasattr(obj, "__plain__"):  # an object that says how it is saved (a Nonlinearity: its name)
        return to_plain(obj.__plain__())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, np.ndarray):
        return to_plain(obj.tolist())
    if isinstance(obj, np.generic):
        return to_plain(obj.item())
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return _float(obj)
    if isinstance(obj, (list, tuple)):
        return [to_plain(x) for x in obj]
    if isinstance(obj, dict):
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            raise TypeError(f"dict keys must be strings to be saved, got {bad[0]!r}.")
        return {k: to_plain(v) for k, v in obj.items()}
    raise TypeError(f"cannot save a {type(obj).__name__} as plain data.")


def _number(x):
    if isinstance(x, str):
        if x not in _NON_FINITE:
            raise ValueError(f"expected a number, got the string {x!r}.")
        return _NON_FINITE[x]
    if isinstance(x, list):
        return [_number(y) for y in x]
    return x


def from_plain(tp: Any, data: Any) -> Any:
    """Rebuild a typed result from :func:`to_plain` data and its type.

    Parameters
    ----------
    tp : type
        A dataclass (its fields' annotations guide the rest), ``numpy.ndarray``,
        ``float``, ``int``, ``str``, ``bool``, ``list[T]``, ``tuple[...]``,
        ``dict[str, T]``, ``T | None``, or ``typing.Any`` / bare ``list`` / ``dict``
        (kept as plain data).
    data : object

    Returns
    -------
    object

    Examples
    --------
    >>> from slr_theory import Params
    >>> p = Params.paper(lam=0.5)
    >>> from_plain(Params, to_plain(p)) == p
    True
    """
    if tp is Any or tp is None or tp is type(None):
        return data
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        rest = [a for a in args if a is not type(None)]
        return from_plain(rest[0], data)
    if origin in (list, tuple, dict):
        args = typing.get_args(tp)
        if origin is list:
            return [_at(f"[{i}]", args[0] if args else Any, x) for i, x in enumerate(data)]
        if origin is dict:
            return {k: _at(f"[{k!r}]", args[1] if args else Any, v) for k, v in data.items()}
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_at(f"[{i}]", args[0], x) for i, x in enumerate(data))
        return tuple(_at(f"[{i}]", a, x) for i, (a, x) in enumerate(zip(args, data, strict=True)))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        kwargs = {
            f.name: _at(f".{f.name}", hints.get(f.name, Any), data[f.name])
            for f in dataclasses.fields(tp)
            if f.init and f.name in data
        }
        return tp(**kwargs)
    if tp is np.ndarray:
        return np.asarray(_number(data)) if data != [] else np.empty(0)
    if tp is float:
        return float(_number(data))
    if tp in (int, str, bool):
        if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
            raise ValueError(f"expected {tp.__name__}, got {data!r}.")
        return data
    if tp in (list, dict, tuple):
        return data
    raise TypeError(f"cannot rebuild a {tp!r} from plain data.")


class FieldError(ValueError):
    """A value of saved data that does not rebuild as its type, with the field it is in.

    Attributes
    ----------
    field : str
        The path of the field (``points[0].index``).
    reason : str
        What is wrong with it.
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field, self.reason = field, reason
        super().__init__(f"field `{field}`: {reason}")


def _at(step: str, tp: Any, data: Any) -> Any:
    """:func:`from_plain` of a field, a failure in it named by its path."""
    try:
        return from_plain(tp, data)
    except FieldError as exc:
        inner = exc.field if exc.field.startswith("[") else f".{exc.field}"
        raise FieldError(f"{step}{inner}".lstrip("."), exc.reason) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise FieldError(step.lstrip("."), str(exc)) from None


def _hints(tp: type) -> dict:
    """The dataclass's field types; a field whose annotation names a type imported for
    the type checker only (``Params.attention``: ``str | Model``) is read as plain data."""
    try:
        return typing.get_type_hints(tp)
    except NameError:
        module = vars(sys.modules[tp.__module__])
        out = {}
        for f in dataclasses.fields(tp):
            try:
                out[f.name] = eval(f.type, module) if isinstance(f.type, str) else f.type
            except NameError:
                out[f.name] = Any
        return out


def dumps(obj: Any, indent: int = 1) -> str:
    """Indented, strict JSON of a result (:func:`to_plain`).

    Parameters
    ----------
    obj : object
    indent : int
        Spaces per level.

    Returns
    -------
    str
    """
    return json.dumps(to_plain(obj), indent=indent, allow_nan=False)


def loads(tp: Any, text: str) -> Any:
    """The typed result of JSON written by :func:`dumps`.

    Parameters
    ----------
    tp : type
    text : str

    Returns
    -------
    object

    Examples
    --------
    >>> import numpy as np
    >>> loads(np.ndarray, dumps(np.array([0.1, np.nan])))
    array([0.1, nan])
    """
    return from_plain(tp, json.loads(text))


def text_table(header, rows, caption: str = "") -> str:
    """A compact plain-text table (what ``repr`` of a result shows), columns aligned.

    Parameters
    ----------
    header : sequence of str
        Column names.
    rows : sequence of sequences
        Cells, turned into text with ``str``.
    caption : str
        The first line.

    Returns
    -------
    str

    Examples
    --------
    >>> print(text_table(["end", "runs"], [["(k*, v*)", 12], ["a saddle", 3]], caption="15 runs"))
    15 runs
    end       runs
    (k*, v*)    12
    a saddle     3
    """
    if isinstance(header, str) or not hasattr(header, "__iter__"):
        raise ValueError(f"`header` must be a sequence of column names, got {header!r}.")
    if isinstance(rows, str) or not hasattr(rows, "__iter__"):
        raise ValueError(f"`rows` must be a sequence of rows, got {rows!r}.")
    table = [[str(h) for h in header]]
    for row in rows:
        if isinstance(row, str) or not hasattr(row, "__iter__"):
            raise ValueError(f"`rows` must hold sequences of cells, got {row!r}.")
        table.append([str(c) for c in row])
    width = [max(len(r[j]) for r in table if j < len(r)) for j in range(len(table[0]))]

    def line(r):  # text left, numbers right
        cells = []
        for j, c in enumerate(r[: len(width)]):
            numeric = c.replace(".", "", 1).replace("-", "", 1).replace("e", "", 1).isdigit()
            cells.append(c.rjust(width[j]) if numeric else c.ljust(width[j]))
        return "  ".join(cells).rstrip()

    return "\n".join(([caption] if caption else []) + [line(r) for r in table])


def html_table(header, rows, caption: str = "") -> str:
    """A compact HTML table (what a notebook shows for a result's ``_repr_html_``).

    Parameters
    ----------
    header : sequence of str
        Column names.
    rows : sequence of sequences
        Cells, turned into text with ``str`` and escaped.
    caption : str
        Shown above the table (escaped).

    Returns
    -------
    str

    Examples
    --------
    >>> html_table(["a", "b"], [[1, "x < y"]], caption="two")
    '<table><caption>two</caption><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>x &lt; y</td></tr></table>'
    """
    import html

    def cells(tag, values):
        return "".join(f"<{tag}>{html.escape(str(v))}</{tag}>" for v in values)

    if isinstance(header, str) or not hasattr(header, "__iter__"):
        raise ValueError(f"`header` must be a sequence of column names, got {header!r}.")
    if isinstance(rows, str) or not hasattr(rows, "__iter__"):
        raise ValueError(f"`rows` must be a sequence of rows, got {rows!r}.")
    head = list(header)
    body = []
    for row in rows:
        if isinstance(row, str) or not hasattr(row, "__iter__"):
            raise ValueError(f"`rows` must hold sequences of cells, got a row {row!r}.")
        body.append(f"<tr>{cells('td', row)}</tr>")
    cap = f"<caption>{html.escape(str(caption))}</caption>" if caption else ""
    return f"<table>{cap}<tr>{cells('th', head)}</tr>{''.join(body)}</table>"
