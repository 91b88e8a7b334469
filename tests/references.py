"""Slow mpmath references, remembered between the runs of one checkout.

CI runs the precision-sensitive tests three times (on this machine's loops, then twice on
NumPy's baseline loops); their references are mpmath's, which no NumPy code path and no
door of the exponents changes. The first run computes each reference and keeps it in
pytest's cache directory (``.pytest_cache/d/mp-references``); later runs read it. A
reference is kept under a digest of everything it may depend on: the function's name, the
exact reprs of its arguments, mpmath's working precision and version, and the bytes of the
sources it may read (the modules of the function and of any function among its arguments,
and every module of ``slr_theory.verify`` and ``derivations``: :data:`READS`), so an edited
reference is computed afresh; a reference must read nothing else of the project.
Arguments without an exact, stable repr (a user's sigma, a lambda) are never remembered:
the reference is then computed, as it is everywhere without pytest's cache
(``-p no:cacheprovider``).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import sys
import tempfile
from functools import cache
from pathlib import Path

import mpmath as mp
import numpy as np

from slr_theory import Params

_where: list[Path] = []  # the directory, once pytest's cache is known (conftest)


def remember_in(directory: Path | None) -> None:
    """Keep references in `directory` (None: compute every one)."""
    _where[:] = [] if directory is None else [Path(directory)]


class _Unstable(Exception):
    """An argument whose repr does not say exactly what it is."""


def _stable(x, sources: list) -> str:
    if x is None or isinstance(x, bool | int | float | str):
        return repr(x)
    if isinstance(x, np.generic):
        return f"{x.dtype.str}:{x.item()!r}"
    if isinstance(x, np.ndarray):
        return f"array({x.dtype.str}, {x.shape}, {x.tolist()!r})"
    if isinstance(x, mp.mpf):
        return f"mpf{x._mpf_!r}"
    if isinstance(x, tuple | list):
        return "(" + ", ".join(_stable(v, sources) for v in x) + ")"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_stable(v, sources)}" for k, v in sorted(x.items())) + "}"
    if isinstance(x, Params):  # a built-in model is its name; a user's object is not
        if not (isinstance(x.nonlinearity, str) and isinstance(x.attention, str)):
            raise _Unstable
        return repr(x)
    if inspect.isfunction(x) and "<" not in x.__qualname__:  # no lambda, nothing local
        sources.append(inspect.getsourcefile(x))
        return f"{x.__module__}.{x.__qualname__}"
    raise _Unstable


@cache
def _file_digest(path: str) -> bytes:
    return hashlib.sha256(Path(path).read_bytes()).digest()


#: Where the references live, beside the function's own module (the project's root).
READS = ("slr_theory/verify", "derivations")


@cache
def _tree_digest() -> bytes:
    root = Path(__file__).resolve().parents[1]
    files = sorted(f for d in READS for f in (root / d).glob("*.py"))
    return b"".join(_file_digest(str(f)) for f in files)


def _key(fn, args, kwargs) -> str | None:
    sources: list = []
    try:
        text = _stable((fn, list(args), dict(kwargs)), sources)
    except _Unstable:
        return None
    h = hashlib.sha256(text.encode())
    h.update(f"{mp.__version__} prec={mp.mp.prec} {sys.version_info[:2]}".encode())
    h.update(_tree_digest())
    for path in sorted(set(sources)):
        h.update(_file_digest(path))
    return h.hexdigest()


def remembered(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, read from the cache when an earlier run computed it."""
    key = _key(fn, args, kwargs) if _where else None
    if key is None:
        return fn(*args, **kwargs)
    path = _where[0] / f"{key}.pickle"
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
        pass
    value = fn(*args, **kwargs)
    tmp = None
    try:
        _where[0].mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=_where[0], suffix=".part")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f)
        os.replace(tmp, path)  # whole or absent: a worker beside never reads half of one
    except OSError:  # a directory that cannot be written, a full disk: computed next time
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)  # nothing left once renamed
    return value
