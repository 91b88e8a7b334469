"""Where ``Params`` finds the registry of models without importing the models.

The models build on :class:`slr_theory.Params` (their tables, their facts on M take
one), so :mod:`slr_theory.params` cannot import them. It asks this module instead, and
the package's face (``slr_theory/__init__.py``, above every layer) installs the loader
of :mod:`slr_theory.models.registry`, called the first time a ``Params`` asks for its
model: ``import slr_theory`` stays as cheap as NumPy, and no import runs in a circle.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Registry", "install", "registry"]


class Registry(Protocol):
    """What ``Params`` asks of the registry of models (:mod:`slr_theory.models.registry`).

    Attributes
    ----------
    model_of : callable
        ``model_of(attention, nonlinearity) -> Model``: ``Params.model``.
    canonical_names : callable
        ``canonical_names(model) -> (attention, nonlinearity) or None``: what ``Params``
        stores for a model object.
    attention_names : callable
        ``attention_names() -> tuple of str``: ``slr_theory.params.ATTENTIONS``.
    """

    def model_of(self, attention: Any, nonlinearity: Any) -> Any: ...

    def canonical_names(self, model: Any) -> tuple | None: ...

    def attention_names(self) -> tuple[str, ...]: ...


_LOADER: list[Callable[[], Registry]] = []
_LOADED: list[Registry] = []
_LOCK = threading.Lock()


def install(loader: Callable[[], Registry]) -> None:
    """Install the loader of the registry (``slr_theory/__init__.py`` does, on import).

    Parameters
    ----------
    loader : callable
        ``loader() -> Registry``: an object (a module) with ``model_of``,
        ``canonical_names`` and ``attention_names``; called once, when first needed.

    Returns
    -------
    None

    Examples
    --------
    ``import slr_theory`` installed the loader of :mod:`slr_theory.models.registry`;
    what is not a loader is refused:

    >>> from slr_theory import catalogue
    >>> catalogue.install(3)
    Traceback (most recent call last):
        ...
    ValueError: `loader` must be callable, got 3.
    """
    if not callable(loader):
        raise ValueError(f"`loader` must be callable, got {loader!r}.")
    with _LOCK:
        _LOADER[:] = [loader]
        _LOADED.clear()


def registry() -> Registry:
    """The registry of models, loaded on first use.

    Returns
    -------
    Registry

    Examples
    --------
    >>> from slr_theory.catalogue import registry
    >>> registry().attention_names()[:2]
    ('pointwise', 'softmax')
    """
    if _LOADED:
        return _LOADED[0]
    with _LOCK:
        if not _LOADED:
            if not _LOADER:  # pragma: no cover - slr_theory/__init__.py installs it
                raise RuntimeError("no registry of models installed (import slr_theory).")
            _LOADED.append(_LOADER[0]())
        return _LOADED[0]
