"""docs/api.md and the package agree both ways: every documented name exists, every public name is documented."""

import importlib
import pathlib
import re

DOC = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text()


def _sections():
    parts = re.split(r"^## `(slr_theory[\w.]*)`.*$", DOC, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_every_documented_name_exists_and_every_public_name_is_documented():
    sections = _sections()
    assert "slr_theory" in sections and len(sections) > 10
    for module_name, body in sections.items():
        module = importlib.import_module(module_name)
        documented = re.findall(r"^\| `([A-Za-z_]\w*)`", body, flags=re.M)
        missing = [n for n in documented if not hasattr(module, n)]
        assert not missing, (module_name, missing)
        assert set(documented) == set(module.__all__), (
            module_name,
            sorted(set(module.__all__) - set(documented)),
            sorted(set(documented) - set(module.__all__)),
        )


def test_public_modules_are_all_documented():
    import slr_theory

    pkg = pathlib.Path(slr_theory.__file__).parent
    public = {f"slr_theory.{p.stem}" for p in pkg.glob("*.py") if not p.stem.startswith("_")}
    internal = {
        "slr_theory.validate",
        "slr_theory.doubledouble",
        "slr_theory.chebyshev",
    }  # helpers
    assert public - internal <= set(_sections())


def _needs(obj) -> list[str]:
    import inspect

    if inspect.isclass(obj):  # a class documents its constructor or its attributes
        return ["Attributes"] if obj.__init__ is not object.__init__ else []
    return (["Parameters"] if inspect.signature(obj).parameters else []) + ["Returns"]


def test_every_public_callable_has_numpydoc_parameters_and_returns():
    import inspect

    missing = []
    for module_name in _sections():
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            doc = inspect.getdoc(obj) or ""
            lacks = [s for s in _needs(obj) if not re.search(rf"^{s}\n-+$", doc, re.M)]
            if lacks == ["Returns"] and re.search(r"^Yields\n-+$", doc, re.M):
                lacks = []  # a generator (a context manager) documents what it yields
            if lacks == ["Attributes"] and re.search(r"^Parameters\n-+$", doc, re.M):
                lacks = []  # documented by its constructor's parameters
            if lacks:
                missing.append(f"{module_name}.{name}: {', '.join(lacks)}")
    assert not missing, missing


def test_internal_names_stay_importable_and_out_of_the_public_surface():
    """The building blocks each section lists as internal keep their names (an earlier
    import keeps working) and are not exported."""
    found = 0
    for module_name, body in _sections().items():
        module = importlib.import_module(module_name)
        for para in re.findall(r"^Internal \(.*?\n\n", body, flags=re.M | re.S):
            names = re.findall(r"`([A-Za-z_]\w*)`", para.split(":", 1)[1])
            found += len(names)
            assert all(hasattr(module, n) for n in names), (module_name, names)
            assert not set(names) & set(module.__all__), (module_name, names)
    assert found >= 20


def test_each_name_is_exported_once():
    """A public name has one home: no two modules export the same object (the top level
    re-exports from its home)."""
    homes = {}
    for module_name in _sections():
        if module_name == "slr_theory":
            continue
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj):
                homes.setdefault(id(obj), []).append(f"{module_name}.{name}")
    twice = [v for v in homes.values() if len(v) > 1]
    assert not twice, twice
