"""The structure of the package: one home per shared name, presentation apart."""

import ast
import importlib
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import slr_theory

PKG = pathlib.Path(__file__).resolve().parents[1] / "slr_theory"
MODULES = {p.stem for p in PKG.glob("*.py")} | {
    p.name for p in PKG.iterdir() if (p / "__init__.py").exists()
}


def _sources():
    return [(p, p.read_text()) for p in PKG.rglob("*.py")]


def test_no_module_imports_another_modules_private_names():
    bad = []
    for path, text in _sources():
        for node in ast.walk(ast.parse(text)):  # every relative import, one line or several
            if isinstance(node, ast.ImportFrom) and node.level:
                names = [a.name for a in node.names]
                bad += [
                    f"{path.name}: {n}" for n in names if n.startswith("_") and n != "__version__"
                ]
        for m in re.finditer(r"\b([a-z]\w*)\._[a-zA-Z]\w*", text):
            if m.group(1) in MODULES and m.group(1) != path.stem:
                bad.append(f"{path.name}: {m.group(0)}")
    assert not bad, bad


def test_only_plotting_imports_matplotlib_and_never_switches_backends():
    users = {
        p.relative_to(PKG).parts[0]
        for p, t in _sources()
        if re.search(r"^\s*(import|from) matplotlib", t, re.M)
    }
    assert users <= {"plotting"}
    assert not any("matplotlib.use(" in t for _, t in _sources())


def test_the_figures_draw_results_and_only_the_door_computes():
    """plotting's modules take results and compute nothing: they import the formatting of
    points (critical) and the overlaps' names (params), never the numerics; the package's
    door (plotting/__init__.py) alone computes a result from a Params, then draws it."""
    drawing = [p for p in (PKG / "plotting").glob("*.py") if p.name != "__init__.py"]
    assert len(drawing) >= 5
    bad = {p.name: _imports(p) - {"plotting", "critical", "params"} for p in drawing}
    assert not any(bad.values()), bad


def test_importing_the_package_does_not_import_matplotlib():
    code = "import sys, slr_theory, slr_theory.experiments; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_package_imports_a_public_name_only_when_it_is_used():
    code = (
        "import sys, slr_theory, slr_theory.experiments\n"
        "m = sys.modules['slr_theory.risk']\n"
        "heavy = [n for n in ('scipy.optimize', 'slr_theory.critical') if n in sys.modules]\n"
        "print(heavy, callable(slr_theory.risk), m is not slr_theory.risk)\n"
        "print(slr_theory.critical_points is slr_theory.critical.critical_points, "
        "'critical_points' in dir(slr_theory))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[] True True", "True True"]
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        slr_theory.nothing  # noqa: B018


def test_a_command_imports_only_what_it_runs():
    """Building the parser of every command reads the bounds its messages quote
    (``--starts``, ``--samples``, ``--t-max``) without importing the modules that apply
    them: ``slr-theory risk`` loads neither SciPy's optimisers and integrators nor mpmath
    nor matplotlib (half a second of its start, once)."""
    code = (
        "import contextlib, io, sys\n"
        "from slr_theory.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['risk', '--kappa', '0.5', '--nu', '0.5'])\n"
        "heavy = ('scipy.optimize', 'scipy.integrate', 'mpmath', 'matplotlib', 'slr_theory.verify')\n"
        "print(code, [n for n in heavy if n in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0 []", out.stdout + out.stderr


def test_every_public_name_resolves_to_the_object_of_its_module():
    for name in slr_theory.__all__:
        if name != "__version__":
            obj = getattr(slr_theory, name)
            home = importlib.import_module(f"slr_theory.{slr_theory._HOME[name]}")
            assert obj is getattr(home, name), name


def test_experiment_figure_keeps_the_users_backend(tmp_path):
    import matplotlib

    from slr_theory.experiments import run
    from slr_theory.plotting import experiment_figure

    before = matplotlib.get_backend()
    res = run("gd_sphere_small_lambda", repeats=3, steps_scale=0.005, records=5)
    path = experiment_figure(res["gd_sphere_small_lambda"], tmp_path / "f.png")
    assert matplotlib.get_backend() == before
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_trajectory_csv_round_trips(tmp_path):
    import csv

    from slr_theory import Params, pgd
    from slr_theory.render import TRAJECTORY_COLUMNS, write_trajectory_csv

    tr = pgd(
        Params.paper(),
        [[0.1, 0.2, 0.0, 0.0, 0.0], [0.3, -0.1, 0.0, 0.0, 0.0]],
        4e-3,
        20,
        record_every=10,
    )
    path = write_trajectory_csv(tr, tmp_path / "t.csv")
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == TRAJECTORY_COLUMNS and len(rows) == 3 * 2
    got = np.array([[float(r[c]) for c in ("kappa", "nu", "risk")] for r in rows])
    want = np.column_stack(
        [tr.overlaps[..., 0].ravel(), tr.overlaps[..., 1].ravel(), tr.risk.ravel()]
    )
    np.testing.assert_array_equal(got, want)


# The layers, lowest first, as the package docstring states them. A module may import
# modules of its own layer or of lower ones, never of a higher one (imports inside
# functions count too).
LAYERS = [
    {
        "validate",
        "doubledouble",
        "results",
        "chebyshev",
        "interval",
        "interrupts",
        "identities",
        "symbolic",
        "catalogue",
        "startup",
    },
    {"gaussian", "nonlinearity", "params", "work", "output", "workers"},
    {"engine"},
    {"trajectory"},
    {"models", "model", "sampling", "geometry", "flows", "manifold", "softmax", "rigorous"},
    {"risk"},
    {"statistics", "sgd", "critical", "dynamics", "longrun", "certify"},
    {"landscape", "experiments", "survey"},
    {"verify", "study", "study_check", "testing"},
    {"render", "plotting"},
    {"report", "cli", "__main__", "__init__"},
]
# Documented exceptions: (importer, imported, why).
ALLOWED_UPWARD = {
    ("experiments", "plotting"): "experiments.write saves the figure of the results it ran",
    ("experiments", "render"): "experiments.write saves the CSV of the results it ran",
    ("output", "__init__"): "the marker records the package's __version__",
    ("work", "risk"): "model_cost_factor prices a model by timing its risk and gradient",
    ("study", "__init__"): "a saved study records the package's __version__",
    ("longrun", "plotting"): "Fates.plot() hands the result to plotting, imported when called",
    ("landscape", "plotting"): "Basins, PortraitData, Continuation .plot() hand the result "
    "to plotting, imported when called",
    ("survey", "plotting"): "Atlas.plot() hands the result to plotting, imported when called",
}


def _imports(path: pathlib.Path) -> set[str]:
    """The sibling modules `path` imports (relative imports, at any depth of the code)."""
    import ast

    tree = ast.parse(path.read_text())
    here = path.relative_to(PKG).parts
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(here[: len(here) - node.level])
            target = [*base, *(node.module.split(".") if node.module else [])]
            if not target:  # `from . import x`: x is a module, or a name of __init__
                for alias in node.names:
                    is_module = (PKG / f"{alias.name}.py").exists() or (PKG / alias.name).is_dir()
                    out.add(alias.name if is_module else "__init__")
            else:
                out.add(target[0])
    return out


def test_lower_layers_never_import_higher_ones():
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    assert set(layer) >= MODULES | {"__init__", "__main__"}, set(MODULES) - set(layer)
    bad = []
    for path in PKG.rglob("*.py"):
        top = path.relative_to(PKG).parts[0].removesuffix(".py")
        for imported in _imports(path) - {top}:
            if layer[imported] > layer[top] and (top, imported) not in ALLOWED_UPWARD:
                bad.append(
                    f"{path.relative_to(PKG)} (layer {layer[top]}) imports {imported} "
                    f"(layer {layer[imported]})"
                )
    assert not bad, bad


def test_the_package_docstring_states_the_layers():
    import slr_theory

    doc = slr_theory.__doc__
    for i, names in enumerate(LAYERS[:-1]):
        line = next(t for t in doc.splitlines() if t.strip().startswith(f"{i}."))
        assert all(f"``{n}``" in line for n in names), (i, line)


def test_nothing_above_the_trajectory_loop_names_engine_features_or_bases():
    """The layers above see tables (called on overlaps, asked for their features, scaled
    part, manifold gradient) and the engine's functions, never its bases or kernels;
    the closed forms are one model's implementation among the table kinds."""
    from slr_theory import engine
    from slr_theory.nonlinearity import MOMENT_NAMES

    public = {"1", "erf", "zeta", *(k for keys in MOMENT_NAMES.values() for k in keys)}
    bases = {b for b in (*engine.BASES, *engine.MOMENT_BASES) if b not in public}
    kernels = (
        "engine.features",
        "engine.columns",
        "engine.gaussian_columns",
        "engine.manifold_gradient",
        "N_CONSTANTS",
        ".column(",
        "EngineTable",
    )
    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    bad = []
    for path, text in _sources():
        top = path.relative_to(PKG).parts[0].removesuffix(".py")
        if layer.get(top, 99) <= layer["trajectory"] or top == "models":
            continue  # the models implement the tables: erf's closed forms live in models/erf/
        bad += [f"{path.name}: {k}" for k in kernels if k in text]
        bad += [f"{path.name}: {b!r}" for b in bases if f'"{b}"' in text]
    assert not bad, bad


def test_above_the_trajectory_loop_only_the_model_interface_of_the_engine_is_used():
    """The model interface is ``engine.__all__``: every ``engine.X`` (and every name
    imported from the engine) in a module above the trajectory loop is one of them. The
    models (``models/``) are the exception by design: each builds its table from the
    engine's evaluators and term algebra."""
    import re

    from slr_theory import engine

    layer = {name: i for i, names in enumerate(LAYERS) for name in names}
    bad, seen = [], 0
    for path, text in _sources():
        top = path.relative_to(PKG).parts[0].removesuffix(".py")
        if layer.get(top, 99) <= layer["trajectory"] or top == "models":
            continue
        used = set(re.findall(r"\bengine\.(\w+)", text))
        for names in re.findall(r"from \.+engine import \(?([\w\s,]+)\)?", text):
            used |= {n.strip() for n in names.split(",") if n.strip()}
        seen += len(used)
        bad += [f"{path.name}: engine.{n}" for n in sorted(used - set(engine.__all__))]
    assert seen > 5 and not bad, bad


def test_the_version_has_one_home_and_the_release_files_name_it():
    """pyproject reads slr_theory.__version__ (no second copy); the changelog has a section
    for it and the citation states it; the licence is the one pyproject names."""
    import importlib.metadata

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    root = PKG.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("slr-theory") == slr_theory.__version__
    assert f"## {slr_theory.__version__} " in (root / "CHANGELOG.md").read_text()
    cff = (root / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(slr_theory.__version__)}$", cff, flags=re.M)
    assert project["license"] == "BSD-3-Clause"
    assert (root / "LICENSE").read_text().startswith("BSD 3-Clause License")


def test_nothing_outside_models_branches_on_a_models_name_or_kind():
    """Everything above ``models/`` asks the model object (``Params.model``): no
    comparison with a model's or a nonlinearity's name, no ``isinstance`` on a model or
    a table, no flag of its kind (``closed_form``, ``model.sigma is None``): what a model
    proves (``five_points_proved``, ``feature_bounds_proved``) and what its table offers
    (``loop_kernel()``, ``placed()``) are asked of it."""
    from slr_theory.models import attention_names
    from slr_theory.nonlinearity import BUILTIN_NONLINEARITIES

    names = "|".join(map(re.escape, {*attention_names(), *BUILTIN_NONLINEARITIES}))
    branch = re.compile(
        r"\b(attention|nonlinearity|sigma_name)\s*(==|!=)"
        rf"|(==|!=)\s*[\"']({names})[\"']"
        rf"|[\"']({names})[\"']\s+(not\s+)?in\b"
        r"|isinstance\([^)]*\b(\w*Table|Model|Erf|Pointwise|Softmax)\b"
        # a flag that says what kind the model is (what it proves is asked of it)
        r"|\b(model|params)\.closed_form\b|\bmodel\.sigma\s+is\b|\btype\([^)]*\bmodel\)"
    )
    bad = []
    for path, text in _sources():
        if path.relative_to(PKG).parts[0] == "models":
            continue
        for no, line in enumerate(text.splitlines(), 1):
            code = line.split("#")[0]
            if branch.search(code):
                bad.append(f"{path.relative_to(PKG)}:{no}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_no_module_is_longer_than_800_lines():
    """A module holds one concept: one over 800 lines is split by concept (a package keeps
    the module's name), as docs/architecture.md lays out."""
    long = {str(p.relative_to(PKG)): n for p, t in _sources() if (n := t.count("\n")) > 800}
    assert not long, long
