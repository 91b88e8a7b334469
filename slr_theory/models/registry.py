"""The registry: an attention's name -> the factory of its model for a nonlinearity."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from ..nonlinearity import Nonlinearity, resolve_nonlinearity
from ..validate import is_object_path, object_at
from .base import Model

__all__ = [
    "attention_names",
    "canonical_names",
    "model_of",
    "register_model",
    "takes_nonlinearity",
    "unregister_model",
]

#: name -> (factory of the model from a resolved nonlinearity, whether it takes one)
_FACTORIES: dict[str, tuple[Callable[[str | Nonlinearity], Model], bool]] = {}
#: The attentions the package registers itself, one line each in
#: ``slr_theory/models/__init__.py`` (:func:`unregister_model` keeps them).
_BUILT_IN: list[str] = []


def register_model(
    name: str,
    factory: Callable[[str | Nonlinearity], Model],
    *,
    nonlinearity: bool,
    built_in: bool = False,
) -> None:
    """Make ``Params(attention=name)`` build its model with ``factory(nonlinearity)``.

    Parameters
    ----------
    name : str
        The attention's name: a new one, or one registered before (replaced); not a
        built-in's.
    factory : callable
        ``factory(sigma) -> Model`` from a built-in's name or a
        :class:`slr_theory.Nonlinearity`.
    nonlinearity : bool
        Whether the attention applies a nonlinearity; if not, ``Params`` refuses one
        other than the default.
    built_in : bool, default False
        A model of the package's own (its registration in ``slr_theory/models/__init__.py``):
        never replaced or removed afterwards.

    Returns
    -------
    None

    Examples
    --------
    >>> from slr_theory.models import Softmax, attention_names, register_model, unregister_model
    >>> register_model("coupled", lambda sigma: Softmax(), nonlinearity=False)
    >>> attention_names()
    ('pointwise', 'softmax', 'softmax1', 'coupled')
    >>> unregister_model("coupled")

    ``docs/models.md`` writes a model of one's own.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"`name` must be an identifier, got {name!r}.")
    if name in _BUILT_IN:
        raise ValueError(
            f"`name` must not be a built-in's ({', '.join(_BUILT_IN)}), got {name!r}."
        )
    if not callable(factory):
        raise ValueError(f"`factory` must be callable, got {factory!r}.")
    _FACTORIES[name] = (factory, bool(nonlinearity))
    if built_in:
        _BUILT_IN.append(name)
    _build.cache_clear()


def unregister_model(name: str) -> None:
    """Remove a model :func:`register_model` added (the built-ins stay).

    Parameters
    ----------
    name : str
        A registered name other than a built-in's.

    Returns
    -------
    None

    Examples
    --------
    >>> from slr_theory.models import Softmax, attention_names, register_model, unregister_model
    >>> register_model("mine", lambda sigma: Softmax(), nonlinearity=False)
    >>> unregister_model("mine")
    >>> "mine" in attention_names()
    False
    """
    if name in _BUILT_IN or not (isinstance(name, str) and name in _FACTORIES):
        added = [n for n in _FACTORIES if n not in _BUILT_IN]
        raise ValueError(
            f"`name` must be a model register_model added, one of {added}, got {name!r}."
        )
    del _FACTORIES[name]
    _build.cache_clear()


def attention_names() -> tuple[str, ...]:
    """The registered attentions' names, in the order registered.

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from slr_theory.models import attention_names
    >>> attention_names()[:2]
    ('pointwise', 'softmax')
    """
    return tuple(_FACTORIES)


def takes_nonlinearity(attention: str | Model) -> bool:
    """Whether the attention `attention` (a name or a model) applies a nonlinearity.

    Parameters
    ----------
    attention : str or Model

    Returns
    -------
    bool

    Examples
    --------
    >>> from slr_theory.models import takes_nonlinearity
    >>> takes_nonlinearity("pointwise"), takes_nonlinearity("softmax")
    (True, False)
    """
    attention = _object_at(attention)
    if isinstance(attention, Model):
        return attention.sigma is not None
    return _entry(attention)[1]


def model_of(attention: str | Model = "pointwise", nonlinearity: object = "erf") -> Model:
    """The model of an attention (a registered name, or a :class:`Model`) and a nonlinearity.

    Parameters
    ----------
    attention : str or Model
        A name of :func:`attention_names`, a model object (which carries its own
        nonlinearity: leave `nonlinearity` at its default), or the path of one,
        ``"package.module:attr"`` (imported: what the command line's ``--attention`` takes).
    nonlinearity : str or Nonlinearity, default ``"erf"``
        For an attention that applies one: a built-in's name or a user's
        :class:`slr_theory.Nonlinearity`.

    Returns
    -------
    Model

    Examples
    --------
    >>> from slr_theory.models import model_of
    >>> model_of("pointwise", "tanh").label
    'tanh'
    >>> model_of("softmax", "tanh")
    Traceback (most recent call last):
        ...
    ValueError: `nonlinearity` applies to pointwise attention; softmax attention has none (leave the default), got 'tanh'.
    """
    sigma = resolve_nonlinearity(nonlinearity)
    attention = _object_at(attention)
    if isinstance(attention, Model):
        if sigma != "erf":
            raise ValueError(
                "`nonlinearity` must be left at its default with a model object (the model "
                f"carries its own), got {getattr(sigma, 'name', sigma)!r}."
            )
        return attention
    factory, takes = _entry(attention)
    if not takes and sigma != "erf":
        raise ValueError(
            f"`nonlinearity` applies to pointwise attention; {attention} attention has none "
            f"(leave the default), got {getattr(sigma, 'name', sigma)!r}."
        )
    return _build(attention, sigma)


def canonical_names(model: Model) -> tuple[str, str | Nonlinearity] | None:
    """``(attention, nonlinearity)`` from which the registry builds `model`, or None.

    What ``Params`` stores for a model object the registry can rebuild, so that saved
    results name it (a built-in nonlinearity by its name, a user's by its object).

    Parameters
    ----------
    model : Model

    Returns
    -------
    tuple or None

    Examples
    --------
    >>> from slr_theory.models import Pointwise, canonical_names
    >>> from slr_theory.nonlinearity import nonlinearity_of
    >>> canonical_names(Pointwise(nonlinearity_of("tanh")))
    ('pointwise', 'tanh')
    """
    from ..nonlinearity import BUILTIN_NONLINEARITIES

    if not isinstance(model, Model) or model.name not in _FACTORIES:
        return None
    sigma = model.sigma
    if sigma is None:
        sigma = "erf"
    elif BUILTIN_NONLINEARITIES.get(sigma.name) is sigma:
        sigma = sigma.name
    try:
        rebuilt = model_of(model.name, sigma)
    except ValueError:
        return None
    return (model.name, sigma) if rebuilt == model else None


def _object_at(attention):
    """A model named by its path, ``"package.module:attr"``, as its object; else as given."""
    if is_object_path(attention):
        return object_at(attention, "attention", Model)
    return attention


def _entry(attention) -> tuple:
    if not (isinstance(attention, str) and attention in _FACTORIES):
        choices = ", ".join(map(repr, _FACTORIES))
        raise ValueError(
            f"`attention` must be one of {choices}, a slr_theory.models.Model or the path "
            f"of one ('package.module:attr'), got {attention!r}."
        )
    return _FACTORIES[attention]


@lru_cache(maxsize=256)
def _build(attention: str, sigma) -> Model:
    return _FACTORIES[attention][0](sigma)
