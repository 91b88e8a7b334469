"""Input validation shared by every public function.

Each validator returns the cleaned value and raises :class:`ValueError` whose
message names the argument, the constraint, and the value received.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
from collections.abc import Iterator

import numpy as np

__all__ = [
    "EXACT",
    "MAX_ATOL",
    "MAX_CHECK_SAMPLES",
    "MAX_STARTS",
    "MIN_CHECK_SAMPLES",
    "as_array",
    "boolean",
    "broadcast",
    "current_rounding_tolerance",
    "finite_real",
    "generator",
    "is_object_path",
    "nonnegative_array",
    "object_at",
    "orthonormal_pair",
    "positive_int",
    "positive_real",
    "progress_option",
    "random_generator",
    "rounding_tolerance",
    "tolerance",
    "unit_vectors",
]

#: The largest tolerance for overlaps or norms outside their feasible set: it is meant
#: for rounding (float32 weights miss by about 1e-7), not for moving a point.
MAX_ATOL = 1e-2

# Bounds the command line quotes in its parser as well as the functions that apply them:
# here, where reading them imports nothing, so that building the parser of every command
# does not import what only one needs (the critical points' SciPy optimisers, the checks'
# mpmath: half a second of each ``slr-theory`` command's start).

#: Upper bound of the random starts of one full-space search
#: (:data:`slr_theory.critical.MAX_STARTS`).
MAX_STARTS = 10**6

#: Fewest Monte Carlo draws a check accepts (:data:`slr_theory.verify.MIN_SAMPLES`). With 2
#: or 3 draws correct closed forms scored |z| up to 52; with 1000, over five seeds of every
#: registered check, |z| <= 2.7.
MIN_CHECK_SAMPLES = 1000

#: Most Monte Carlo draws per check (each check holds its draws in memory: 0.8 GB)
#: (:data:`slr_theory.verify.MAX_SAMPLES`).
MAX_CHECK_SAMPLES = 10**8

#: Exact input is taken as it is within this distance of the feasible set (norms of
#: unit vectors, orthogonality of the targets); beyond it, up to the rounding tolerance,
#: it is projected onto the set.
EXACT = 1e-10

_ROUNDING: contextvars.ContextVar[float] = contextvars.ContextVar(
    "slr_theory_rounding_tolerance", default=1e-12
)


def rounding_tolerance(atol: float) -> contextlib.AbstractContextManager[float]:
    """The tolerance for rounded inputs inside a ``with`` block (the public door is
    :func:`slr_theory.overlap_tolerance`); `atol` is validated here, when called.

    Parameters
    ----------
    atol : float
        ``0 <= atol <= MAX_ATOL``.

    Returns
    -------
    context manager
        It yields `atol`.
    """
    return _rounding(tolerance(atol))


@contextlib.contextmanager
def _rounding(atol: float) -> Iterator[float]:
    token = _ROUNDING.set(atol)
    try:
        yield atol
    finally:
        _ROUNDING.reset(token)


def current_rounding_tolerance() -> float:
    """The tolerance set by the innermost :func:`rounding_tolerance` (default ``1e-12``).

    Returns
    -------
    float
    """
    return _ROUNDING.get()


def _accepted() -> float:
    """How far from the feasible set rounded input may be: the rounding tolerance, or
    ``EXACT`` where that is smaller."""
    return max(EXACT, _ROUNDING.get())


def _show(value: object) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(arr.item())
    return f"array of shape {arr.shape}"


def _first(arr: np.ndarray, mask: np.ndarray) -> object:
    """The first offending element, as a plain Python number for the message."""
    return arr[mask].flat[0].item()


def as_array(
    value: object, name: str, *, allow_nan: bool = True, bound: float = np.inf
) -> np.ndarray:
    """Convert `value` to a float64 array; reject infinities (and NaN if asked).

    NaN is accepted by default and propagates to NaN outputs: that is the
    package-wide policy for array arguments of the numerical kernels.
    Values with ``|value| > bound`` are rejected (the supported domain).
    """
    try:
        raw = np.asarray(value) if value is not None else None
    except (ValueError, TypeError):  # a ragged nest of lists, or an object NumPy refuses
        raise ValueError(
            f"`{name}` must be real numbers in a rectangular array, got {_brief(value)}."
        ) from None
    if raw is None or raw.dtype == object or raw.dtype.kind not in "iuf":
        raise ValueError(f"`{name}` must be real numbers, got {_brief(value)}.")
    arr = raw.astype(np.float64, copy=False)
    # one pass over the values in the common case; the errors in the same order as ever
    has_nan = False
    if allow_nan or not np.isfinite(arr).all():
        if np.isinf(arr).any():
            raise ValueError(f"`{name}` must be finite, got {_first(arr, np.isinf(arr))!r}.")
        has_nan = not allow_nan
    if bound != np.inf:
        big = np.abs(arr) > bound
        if big.any():
            raise ValueError(
                f"`{name}` must satisfy |{name}| <= {bound:g}, got {_first(arr, big)!r}."
            )
    if has_nan:
        raise ValueError(f"`{name}` must not be NaN, got {_show(value)}.")
    return arr


def nonnegative_array(value: object, name: str, *, bound: float = np.inf) -> np.ndarray:
    """`as_array` plus the constraint ``value >= 0`` (NaN still propagates)."""
    arr = as_array(value, name, bound=bound)
    neg = arr < 0
    if neg.any():
        raise ValueError(f"`{name}` must be >= 0, got {_first(arr, neg)!r}.")
    return arr


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together, naming them all in the error."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"`{k}` {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"shapes do not broadcast together: {shapes}.") from None


def positive_int(
    value: object, name: str, *, allow_zero: bool = False, upper: int | None = None
) -> int:
    """Return `value` as a positive ``int`` (or ``>= 0`` with `allow_zero`), at most
    `upper` if given; reject bools and floats with a fraction."""
    kind = "a non-negative integer" if allow_zero else "a positive integer"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"`{name}` must be {kind}, got {value!r}.")
    if isinstance(value, numbers.Integral):
        out = int(value)
    elif np.isfinite(float(value)) and float(value).is_integer():
        out = int(value)
    else:
        raise ValueError(f"`{name}` must be {kind}, got {value!r}.")
    if out < 0 or (out == 0 and not allow_zero):
        raise ValueError(f"`{name}` must be {kind}, got {value!r}.")
    if upper is not None and out > upper:
        raise ValueError(f"`{name}` must be {kind} <= {upper:g}, got {value!r}.")
    return out


def boolean(value: object, name: str) -> bool:
    """Return `value` if it is a ``bool`` (NumPy's included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"`{name}` must be True or False, got {_brief(value)}.")
    return bool(value)


def random_generator(value: object, name: str = "rng") -> np.random.Generator:
    """A :class:`numpy.random.Generator` from a generator or a seed.

    Parameters
    ----------
    value : Generator, int >= 0, sequence of int >= 0, or None
        A generator is returned as it is; anything else seeds a new one
        (``numpy.random.default_rng``; None draws fresh entropy).
    name : str
        The argument's name, for the message.

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> from slr_theory.validate import random_generator
    >>> float(random_generator(0).random()) == float(random_generator(0).random())
    True
    """
    if isinstance(value, np.random.Generator):
        return value
    if _is_seed(value):
        with contextlib.suppress(TypeError, ValueError):
            return np.random.default_rng(value)
    raise ValueError(
        f"`{name}` must be a numpy.random.Generator or a seed (a non-negative integer or a "
        f"flat sequence of them), got {_brief(value)}."
    )


def progress_option(value: object, name: str = "progress") -> object:
    """`value` as given if it is None, a bool or a callable (a progress option).

    Parameters
    ----------
    value : object
    name : str
        The argument's name, for the message.

    Returns
    -------
    None, bool or callable

    Examples
    --------
    >>> from slr_theory.validate import progress_option
    >>> progress_option(True)
    True
    """
    if value is None or isinstance(value, bool) or callable(value):
        return value
    raise ValueError(f"`{name}` must be a bool or a callable, got {value!r}.")


def _is_seed(value: object) -> bool:
    """None, an integer ``>= 0`` (not a bool), or a flat sequence of them: what NumPy would
    seed from without guessing (it also takes nested lists, floats of integral value...)."""
    if value is None or isinstance(value, np.random.SeedSequence | np.random.BitGenerator):
        return True

    def whole(x: object) -> bool:
        return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_) and x >= 0

    if whole(value):
        return True
    if isinstance(value, list | tuple | np.ndarray):
        items = value.tolist() if isinstance(value, np.ndarray) else value
        return (
            len(items) > 0
            and (not isinstance(value, np.ndarray) or value.ndim == 1)
            and all(whole(x) for x in items)
        )
    return False


def tolerance(value: object, name: str = "atol") -> float:
    """A tolerance for rounding: a finite number with ``0 <= value <= MAX_ATOL`` (1e-2).

    Parameters
    ----------
    value : float
    name : str
        The argument's name, for the message.

    Returns
    -------
    float

    Examples
    --------
    >>> from slr_theory.validate import tolerance
    >>> tolerance(1e-6)
    1e-06
    """
    out = positive_real(value, name, allow_zero=True)
    if out > MAX_ATOL:
        raise ValueError(
            f"`{name}` must be <= {MAX_ATOL:g} (a tolerance for rounding, not for moving a "
            f"point), got {value!r}."
        )
    return out


def generator(value: object, name: str = "rng") -> np.random.Generator:
    """The generator of `value`: one convention for a seed across the API, a
    :class:`numpy.random.Generator` as it is, or a seed (int, sequence of int, None) for a
    new one (:func:`random_generator`)."""
    return random_generator(value, name)


def _brief(value: object) -> str:
    """A short description of a value for a message: its repr, or its type and shape."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return f"array of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


def is_object_path(value: object) -> bool:
    """Whether `value` is written as ``package.module:attr`` (what :func:`object_at` reads)."""
    return isinstance(value, str) and value.count(":") == 1


def object_at(path: str, name: str, kind: type | tuple[type, ...]) -> object:
    """The object ``attr`` of the module ``package.module`` named by ``"package.module:attr"``.

    What the command line's ``--nonlinearity`` and ``--attention`` take for a user's own
    object: the module is imported (from ``sys.path``, as ``python -m`` would), ``attr``
    may be dotted (``module:Class.attribute``), and the object must be a `kind`.

    Parameters
    ----------
    path : str
        ``"package.module:attr"``.
    name : str
        The argument's name, for the error message.
    kind : type or tuple of type
        What the object must be.

    Returns
    -------
    object

    Raises
    ------
    ValueError
        If `path` is not of that form, the module cannot be imported (the message carries
        the import's own error), it has no such attribute, or the object is not a `kind`.

    Examples
    --------
    >>> from slr_theory.validate import object_at
    >>> object_at("math:pi", "x", float)
    3.141592653589793
    >>> object_at("math:pi", "attention", int)
    Traceback (most recent call last):
        ...
    ValueError: `attention` must name an object of type int as package.module:attr; 'math:pi' is a float, got 'math:pi'.
    >>> object_at("slr_theory:nowhere", "nonlinearity", object)
    Traceback (most recent call last):
        ...
    ValueError: `nonlinearity` must name an object as package.module:attr; module 'slr_theory' has no attribute 'nowhere', got 'slr_theory:nowhere'.
    """
    import importlib
    import types

    module_name, _, attr = path.partition(":") if is_object_path(path) else ("", "", "")
    if not module_name or not attr:
        raise ValueError(
            f"`{name}` must name an object as package.module:attr, got {_brief(path)}."
        )
    try:
        obj: object = importlib.import_module(module_name)
    except Exception as exc:  # the module's own failure, whatever it is, named
        raise ValueError(
            f"`{name}` must name an object as package.module:attr; importing "
            f"{module_name!r} failed ({type(exc).__name__}: {exc}), got {path!r}."
        ) from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(
                f"`{name}` must name an object as package.module:attr; "
                f"{'module' if isinstance(obj, types.ModuleType) else 'object'} "
                f"{getattr(obj, '__name__', module_name)!r} has no attribute {part!r}, "
                f"got {path!r}."
            )
        obj = getattr(obj, part)
    if not isinstance(obj, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(
            k.__qualname__ if k.__module__ == "builtins" else f"{k.__module__}.{k.__qualname__}"
            for k in kinds
        )
        raise ValueError(
            f"`{name}` must name an object of type {wanted} as package.module:attr; {path!r} is a "
            f"{type(obj).__name__}, got {path!r}."
        )
    return obj


def finite_real(value: object, name: str) -> float:
    """Return `value` as a finite ``float``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"`{name}` must be a finite real number, got {value!r}.")
    out = float(value)
    if not np.isfinite(out):
        raise ValueError(f"`{name}` must be a finite real number, got {value!r}.")
    return out


def positive_real(
    value: object, name: str, *, allow_zero: bool = False, upper: float | None = None
) -> float:
    """Return `value` as a finite float that is > 0 (or >= 0 with `allow_zero`), at most
    `upper` if given."""
    out = finite_real(value, name)
    if out < 0 or (out == 0 and not allow_zero):
        op = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"`{name}` must be finite and {op}, got {value!r}.")
    if upper is not None and out > upper:
        raise ValueError(f"`{name}` must be <= {upper:g}, got {value!r}.")
    return out


def unit_vectors(x: object, name: str, d: int, *, batch: bool = False) -> np.ndarray:
    """Float array of unit vectors in ``R^d`` (shape ``(d,)``, or ``(..., d)`` if `batch`).

    Norms within ``EXACT`` (1e-10) of 1 are taken as they are; norms within the rounding
    tolerance that :func:`slr_theory.overlap_tolerance` sets are divided out, which is the
    nearest unit vector; beyond, a ``ValueError`` says by how much and how to allow it.

    Parameters
    ----------
    x : array_like
    name : str
        The argument's name, for the message.
    d : int
        The dimension.
    batch : bool
        Accept a stack of vectors, shape ``(..., d)``.

    Returns
    -------
    ndarray
    """
    tol = _accepted()
    x = as_array(x, name)
    if batch and x.shape[-1:] != (d,):
        raise ValueError(f"`{name}` must have last dimension d={d}, got shape {x.shape}.")
    if not batch and x.shape != (d,):
        raise ValueError(f"`{name}` must have shape ({d},), got {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`{name}` must be finite.")
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    off = np.abs(norms - 1.0)
    bad = off > tol
    if np.any(bad):
        raise ValueError(
            f"`{name}` must have unit norm (tolerance {tol:g}), got norm "
            f"{np.ravel(norms)[np.flatnonzero(bad)[0]]!r}; for rounded inputs (e.g. float32 "
            "weights) use `with slr_theory.overlap_tolerance(1e-6):`."
        )
    if np.any(off > EXACT):  # rounded: the nearest unit vector
        x = np.where(off > EXACT, x / norms, x)
    return x


def orthonormal_pair(
    a: object, b: object, names: tuple[str, str], d: int, *, batch: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Two orthonormal vectors (the targets ``k*, v*``), validated like :func:`unit_vectors`.

    An inner product within ``EXACT`` of 0 is taken as it is; within the rounding
    tolerance the pair is replaced by the nearest orthonormal pair (symmetric
    orthogonalisation); beyond, a ``ValueError`` names both.

    Parameters
    ----------
    a, b : array_like, shape ``(d,)`` (or ``(..., d)`` with `batch`)
    names : pair of str
        Their names, for the message.
    d : int
    batch : bool

    Returns
    -------
    tuple of two ndarray
    """
    a = unit_vectors(a, names[0], d, batch=batch)
    b = unit_vectors(b, names[1], d, batch=batch)
    dot = np.sum(a * b, axis=-1, keepdims=True)
    tol = _accepted()
    if np.any(np.abs(dot) > tol):
        raise ValueError(
            f"`{names[0]}` and `{names[1]}` must be orthogonal (tolerance {tol:g}), got "
            f"{names[0]}.{names[1]}={np.ravel(dot)[0]!r}."
        )
    if np.any(np.abs(dot) > EXACT):
        p, q = 1 / np.sqrt(1 + dot), 1 / np.sqrt(1 - dot)  # [[1, c], [c, 1]]^(-1/2)
        a, b = a * (p + q) / 2 + b * (p - q) / 2, a * (p - q) / 2 + b * (p + q) / 2
    return a, b
