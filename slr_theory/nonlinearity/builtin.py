"""The built-in nonlinearities (erf, tanh, arctan, algebraic, sigmoid, ReLU, ...), built when first asked, and how a name or an object resolves to one."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

import numpy as np
from scipy.special import erf, erfc, expit

from ..validate import is_object_path
from .function import K2, TWO_OVER_PI, Nonlinearity, nonlinearity_at

__all__ = ["BUILTIN_NONLINEARITIES", "nonlinearity_of", "resolve_nonlinearity"]


_ERF_REACH = 40.0  # exp(-40^2) = 0 in double: beyond it every derivative of erf is 0


def _reach(u):
    """`u` clipped to ``[-_ERF_REACH, _ERF_REACH]``: the same values, and no overflow of
    ``u * u`` (two ufuncs: ``np.clip``'s dispatch costs several times their work on the
    few values of an SGD step)."""
    return np.minimum(np.maximum(u, -_ERF_REACH), _ERF_REACH)


def _erf_d1(u):
    u = _reach(u)
    return K2 * np.exp(-u * u)


def _erf_d2(u):
    u = _reach(u)
    return -2.0 * u * K2 * np.exp(-u * u)


def _erf_d3(u):
    u = _reach(u)
    return (4.0 * u * u - 2.0) * K2 * np.exp(-u * u)


def _erf_d4(u):
    u = _reach(u)
    return (12.0 * u - 8.0 * u**3) * K2 * np.exp(-u * u)


def _tanh_sech2(u):
    e = np.exp(-2.0 * np.abs(u))
    return 4.0 * e / (1.0 + e) ** 2


def _tanh_complement(u):
    e = np.exp(-2.0 * np.abs(u))
    return np.where(u >= 0, 2.0 * e / (1.0 + e), 2.0 / (1.0 + e))


# The algebraic and arctan derivatives in r = 1 / sqrt(1 + u^2) and x = u r (|x| < 1): no
# power of u is formed, so nothing overflows out to |u| = 1e300 (u^2 did beyond 1e154).
def _alg_r(u):
    return 1.0 / np.hypot(1.0, u)


def _alg_complement(u):
    q = np.hypot(1.0, u)
    au = np.abs(u)
    return np.where(u >= 0, (1.0 / q) / (q + au), 1.0 + au / q)  # no q^2: it overflows


def _alg_d3(u):
    r = _alg_r(u)
    x = u * r
    return r**5 * (12.0 * x * x - 3.0 * r * r)


def _alg_d4(u):
    r = _alg_r(u)
    x = u * r
    return x * r**6 * (45.0 * r * r - 60.0 * x * x)


def _atan_d1(u):
    return TWO_OVER_PI * _alg_r(u) ** 2


def _atan_d2(u):
    r = _alg_r(u)
    return TWO_OVER_PI * (-2.0 * u * r) * r**3


def _atan_d3(u):
    r = _alg_r(u)
    x = u * r
    return TWO_OVER_PI * r**4 * (6.0 * x * x - 2.0 * r * r)


def _atan_d4(u):
    r = _alg_r(u)
    x = u * r
    return TWO_OVER_PI * 24.0 * x * r**5 * (r * r - x * x)


def _sigmoid_d1(u):
    return expit(u) * expit(-u)  # sigma (1 - sigma), each factor without cancellation


def _sigmoid_d2(u):
    return _sigmoid_d1(u) * (expit(-u) - expit(u))  # sigma' (1 - 2 sigma)


def _sigmoid_d3(u):
    return _sigmoid_d1(u) * (1.0 - 6.0 * _sigmoid_d1(u))  # sigma' (1 - 6 sigma (1 - sigma))


def _sigmoid_d4(u):
    return _sigmoid_d2(u) * (1.0 - 12.0 * _sigmoid_d1(u))


def _relu(u):
    return np.maximum(np.asarray(u, dtype=np.float64), 0.0)


def _step(u):
    return (np.asarray(u) > 0).astype(np.float64)


_LEAK = 0.01  # leaky ReLU's slope below 0 (PyTorch's default)


def _leaky(u):
    u = np.asarray(u, dtype=np.float64)
    return np.where(u > 0, u, _LEAK * u)


def _leaky_d1(u):
    return np.where(np.asarray(u) > 0, 1.0, _LEAK)


def _hardtanh(u):
    return np.clip(np.asarray(u, dtype=np.float64), -1.0, 1.0)


def _hardtanh_d1(u):
    return (np.abs(np.asarray(u)) < 1.0).astype(np.float64)


def _zero(u):
    return np.zeros(np.shape(u))


class _Builtins(Mapping):
    """The built-ins by name, each built (and its properties established, a few tenths of
    a second) when first asked for, once: the same object ever after, in every thread."""

    def __init__(self, factories: dict) -> None:
        self._factories = dict(factories)
        self._built: dict[str, Nonlinearity] = {}
        self._lock = threading.Lock()

    def add(self, name: str, factory: Callable[[], Nonlinearity]) -> None:
        self._factories[name] = factory

    def __getitem__(self, name: str) -> Nonlinearity:
        factory = self._factories[name]  # KeyError for an unknown name, as a dict
        with self._lock:
            if name not in self._built:
                self._built[name] = factory()
            return self._built[name]

    def __iter__(self):
        return iter(self._factories)

    def __len__(self) -> int:
        return len(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories


#: The built-in nonlinearities by name; ``"erf"`` is the paper's (the risk engine uses its
#: closed forms, and this entry serves as an independent reference through quadrature).
BUILTIN_NONLINEARITIES: Mapping[str, Nonlinearity] = _Builtins(
    {
        "erf": lambda: Nonlinearity(
            "erf",
            erf,
            _erf_d1,
            _erf_d2,
            _erf_d3,
            d4f=_erf_d4,
            complement=erfc,
        ),
        "tanh": lambda: Nonlinearity(
            "tanh",
            np.tanh,
            _tanh_sech2,
            lambda u: -2.0 * np.tanh(u) * _tanh_sech2(u),
            lambda u: _tanh_sech2(u) * (6.0 * np.tanh(u) ** 2 - 2.0),
            d4f=lambda u: np.tanh(u) * _tanh_sech2(u) * (16.0 - 24.0 * np.tanh(u) ** 2),
            complement=_tanh_complement,
            strip=np.pi / 2,  # poles at +-i pi/2
        ),
        "algebraic": lambda: Nonlinearity(
            "algebraic",
            lambda u: u * _alg_r(u),
            lambda u: _alg_r(u) ** 3,
            lambda u: -3.0 * (u * _alg_r(u)) * _alg_r(u) ** 4,
            _alg_d3,
            d4f=_alg_d4,
            complement=_alg_complement,
            strip=1.0,  # branch points at +-i
        ),
        "arctan": lambda: Nonlinearity(
            "arctan",
            lambda u: TWO_OVER_PI * np.arctan(u),
            _atan_d1,
            _atan_d2,
            _atan_d3,
            d4f=_atan_d4,
            complement=lambda u: TWO_OVER_PI * np.arctan2(1.0, u),
            strip=1.0,  # branch points at +-i
        ),
        # sigmoid attention: sigma(0) = 1/2, not odd (its weights are positive, as softmax's)
        "sigmoid": lambda: Nonlinearity(
            "sigmoid",
            expit,
            _sigmoid_d1,
            _sigmoid_d2,
            _sigmoid_d3,
            d4f=_sigmoid_d4,
            complement=lambda u: expit(-u),
            strip=np.pi,  # poles at +-i pi
        ),
        # kinked: the pieces' derivatives, the Dirac masses at the kinks added in closed form
        "relu": lambda: Nonlinearity("relu", _relu, _step, _zero, _zero, d4f=_zero, kinks=(0.0,)),
        "leaky_relu": lambda: Nonlinearity(
            "leaky_relu", _leaky, _leaky_d1, _zero, _zero, d4f=_zero, kinks=(0.0,)
        ),
        "hardtanh": lambda: Nonlinearity(
            "hardtanh", _hardtanh, _hardtanh_d1, _zero, _zero, d4f=_zero, kinks=(-1.0, 1.0)
        ),
    }
)


def resolve_nonlinearity(value: object, name: str = "nonlinearity") -> str | Nonlinearity:
    """A built-in's name or a :class:`Nonlinearity`, checked; ``ValueError`` otherwise.

    Parameters
    ----------
    value : str or Nonlinearity
        A built-in's name, a :class:`Nonlinearity`, or ``"package.module:attr"``, the path
        of one (:func:`nonlinearity_at`: imported, and sent to workers by that path).
    name : str
        The argument's name, for the error message.

    Returns
    -------
    str or Nonlinearity
        The name of a built-in as given, or the user's object.

    Examples
    --------
    >>> from slr_theory.nonlinearity import resolve_nonlinearity
    >>> resolve_nonlinearity("tanh")
    'tanh'
    >>> resolve_nonlinearity("slr_theory.nonlinearity.examples:softsign").kinks
    (0.0,)
    """
    if isinstance(value, Nonlinearity):
        return value
    if isinstance(value, str) and value in BUILTIN_NONLINEARITIES:
        return value
    if is_object_path(value):
        return nonlinearity_at(value, name)
    choices = ", ".join(repr(k) for k in BUILTIN_NONLINEARITIES)
    raise ValueError(
        f"`{name}` must be one of {choices}, a slr_theory.Nonlinearity or the path of one "
        f"('package.module:attr'), got {value!r}."
    )


def nonlinearity_of(value: str | Nonlinearity) -> Nonlinearity:
    """The :class:`Nonlinearity` behind a resolved value (a built-in's name or itself).

    Parameters
    ----------
    value : str or Nonlinearity
        As returned by :func:`resolve_nonlinearity`.

    Returns
    -------
    Nonlinearity
    """
    return value if isinstance(value, Nonlinearity) else BUILTIN_NONLINEARITIES[value]
