"""SciPy's first import in a process, without the NumPy modules it reads but never runs.

SciPy (1.15 and later) builds its array-API namespace for NumPy, at the import of any of
its submodules, by reading every public name of ``numpy`` (``hasattr`` on each name of
``dir(numpy)``). NumPy imports some of those names on first access, so that reading
imports ``numpy.f2py``, the Fortran wrapper generator (its module-level regular
expressions: 20 to 160 ms), ``numpy.testing`` (30 to 50 ms) and ``numpy.ma``, the masked
arrays (13 to 18 ms; matplotlib's contours use them, no computation of this package or
of SciPy's special functions does). On a 2-core machine that is a quarter of what a
short PGD run costs, import included (``benchmarks/gd.py``).

:func:`install`, called by the package's face, adds an import hook that acts once, just
before SciPy is first imported: each module of :data:`DEFERRED` not yet imported becomes
a lazy module (:class:`importlib.util.LazyLoader`, the standard library's), bound where
NumPy binds it. SciPy then finds the name and does not import it; the module is imported
for real on the first use of one of its attributes (``numpy.testing.assert_allclose``),
the same module as ever. A process that imported SciPy before this package, or a module of
:data:`DEFERRED`, is left as it is.

Standard library only: the package's face imports this module before NumPy is imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

__all__ = ["DEFERRED", "defer", "install"]

#: The NumPy modules made lazy before SciPy's first import.
DEFERRED = ("numpy.f2py", "numpy.testing", "numpy.ma")


def defer(names: tuple[str, ...] = DEFERRED) -> list[str]:
    """Make each module of `names` not yet imported a lazy module, bound in its package.

    Parameters
    ----------
    names : tuple of str
        Dotted names of submodules (their package is imported).

    Returns
    -------
    list of str
        The names made lazy (those already imported, or not found, are left alone).

    Examples
    --------
    >>> import sys
    >>> from slr_theory.startup import defer
    >>> import json.decoder  # already imported: left as it is
    >>> defer(("json.decoder",))
    []
    """
    done = []
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)  # imports the package, not the module
        if spec is None or spec.loader is None:
            continue
        loader = importlib.util.LazyLoader(spec.loader)
        spec.loader = loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loader.exec_module(module)  # lazy: runs the module on its first attribute access
        parent, _, child = name.rpartition(".")
        # bound as the import system binds a submodule: a package's __getattr__ that
        # imports the name on access (NumPy's) finds the binding and is not called
        setattr(sys.modules[parent], child, module)
        done.append(name)
    return done


class _BeforeScipy(importlib.abc.MetaPathFinder):
    """Runs :func:`defer` when ``scipy`` is about to be imported, once; finds nothing."""

    def __init__(self) -> None:
        self.done = False

    def find_spec(self, fullname, path=None, target=None):
        if not self.done and fullname == "scipy":
            self.done = True  # before defer: its own imports (NumPy) come back here
            defer()
        return None


def install() -> None:
    """Add the hook (:class:`_BeforeScipy`) at the head of ``sys.meta_path``, unless SciPy
    is imported already or the hook is there.

    Returns
    -------
    None
    """
    if "scipy" in sys.modules or any(isinstance(f, _BeforeScipy) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _BeforeScipy())
