"""The structure of the package: one home per shared name, presentation apart."""

import pathlib
import re
import subprocess
import sys

import numpy as np

PKG = pathlib.Path(__file__).resolve().parents[1] / "slr_theory"
MODULES = {p.stem for p in PKG.glob("*.py")} | {"verify"}


def _sources():
    return [(p, p.read_text()) for p in PKG.rglob("*.py")]


def test_no_module_imports_another_modules_private_names():
    bad = []
    for path, text in _sources():
        for m in re.finditer(r"^\s*from \.+[\w.]* import (.+)$", text, re.M):
            names = [n.strip().split(" as ")[0] for n in m.group(1).strip("()").split(",")]
            bad += [f"{path.name}: {n}" for n in names if n.startswith("_") and n != "__version__"]
        for m in re.finditer(r"\b([a-z]\w*)\._[a-zA-Z]\w*", text):
            if m.group(1) in MODULES and m.group(1) != path.stem:
                bad.append(f"{path.name}: {m.group(0)}")
    assert not bad, bad


def test_only_plotting_imports_matplotlib_and_never_switches_backends():
    users = {p.name for p, t in _sources() if re.search(r"^\s*(import|from) matplotlib", t, re.M)}
    assert users <= {"plotting.py"}
    assert not any("matplotlib.use(" in t for _, t in _sources())


def test_importing_the_package_does_not_import_matplotlib():
    code = "import sys, slr_theory, slr_theory.experiments; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


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
