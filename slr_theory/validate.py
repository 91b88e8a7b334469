"""Input validation shared by every public function.

Each validator returns the cleaned value and raises :class:`ValueError` whose
message names the argument, the constraint, and the value received.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_array",
    "boolean",
    "broadcast",
    "finite_real",
    "generator",
    "nonnegative_array",
    "positive_int",
    "positive_real",
]


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
    raw = np.asarray(value) if value is not None else None
    if raw is None or raw.dtype == object or raw.dtype.kind not in "biuf":
        raise ValueError(f"`{name}` must be real numbers, got {value!r}.")
    arr = raw.astype(np.float64, copy=False)
    if np.isinf(arr).any():
        raise ValueError(f"`{name}` must be finite, got {_first(arr, np.isinf(arr))!r}.")
    big = np.abs(arr) > bound
    if big.any():
        raise ValueError(f"`{name}` must satisfy |{name}| <= {bound:g}, got {_first(arr, big)!r}.")
    if not allow_nan and np.isnan(arr).any():
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


def generator(value: object, name: str = "rng") -> np.random.Generator:
    """Return `value` if it is a :class:`numpy.random.Generator`."""
    if not isinstance(value, np.random.Generator):
        raise ValueError(
            f"`{name}` must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
            f"got {_brief(value)}."
        )
    return value


def _brief(value: object) -> str:
    """A short description of a value for a message: its repr, or its type and shape."""
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return f"array of shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


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


def unit_vectors(
    x: object, name: str, d: int, *, batch: bool = False, tol: float = 1e-10
) -> np.ndarray:
    """Float array of unit vectors in ``R^d`` (shape ``(d,)``, or ``(..., d)`` if `batch`)."""
    x = as_array(x, name)
    if batch and x.shape[-1:] != (d,):
        raise ValueError(f"`{name}` must have last dimension d={d}, got shape {x.shape}.")
    if not batch and x.shape != (d,):
        raise ValueError(f"`{name}` must have shape ({d},), got {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`{name}` must be finite.")
    norms = np.linalg.norm(x, axis=-1)
    bad = np.abs(norms - 1.0) > tol
    if np.any(bad):
        raise ValueError(
            f"`{name}` must have unit norm (tolerance {tol:g}), got norm {np.ravel(norms)[np.flatnonzero(bad)[0]]!r}."
        )
    return x
