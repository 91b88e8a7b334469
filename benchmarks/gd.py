"""The paper's four GD configurations as a user runs them: whole processes, µs a step, calls a step.

    python benchmarks/gd.py [--repeat 5] [--python PY] [--against PY] [--write FILE --label L]
                            [--configs NAME ...]

For each configuration of ``slr_theory.experiments`` solved by PGD (30 runs each), in
fresh processes of ``PY`` (default: this Python):

- ``process s``: the median wall time of ``run([name])`` in a fresh process, import
  included (what a user waits for, and what ``benchmarks/authors.py`` compares with the
  authors' JAX code);
- ``µs/step``: the run in a process that has already imported the package, divided by
  its steps (the batch of 30 advanced together);
- ``calls/step``: what ``cProfile`` records per step at a tenth of the steps: Python
  functions and the C methods it sees (``take``, ``reduce``, ...); NumPy's ufunc calls
  (``np.exp(x)``) are not among them, so this counts the Python-level work, not every
  NumPy call;

and the import, ``import slr_theory.experiments`` less an empty interpreter.
``--configs`` chooses among every experiment: ``sgd_sphere_schedule`` (the paper's online
SGD, about a minute a process) is measured only when named; the stored release has no
figure for it, so its table gives none to compare with.

The figures of the last release are stored beside this script (``gd_release.json``,
written by ``--write`` from a Python that has that release installed). Each table
compares with them, scaled by a probe of the machine (the time of a fixed loop of small
NumPy calls, the kind of work a step is), and marks ``SLOWER`` any figure more than 10 %
above the release's: the check that would have caught 0.10.0's regression (this VM's
phases move a whole process by up to 25 % between runs, so a mark there is a reason to
run side by side, not a verdict). ``--against
PY`` measures a second installation side by side instead, alternating process by
process (this VM's speed drifts by 25 % within an hour; neighbours share a phase).
"""

from __future__ import annotations

import argparse
import atexit
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import machine  # benchmarks/engine.py, beside this script

CONFIGS = ("gd_manifold", "gd_sphere_small_lambda", "gd_sphere_large_lambda", "gd_sphere_schedule")
EVERY = (*CONFIGS, "sgd_sphere_schedule")
STORED = Path(__file__).with_name("gd_release.json")
SLOWER = 1.10  # a figure this much above the release's (after the probe's scaling) is flagged

RUN = "from slr_theory.experiments import run\nrun([{name!r}])"

# in one process: the import first, then the run timed, then a profiled tenth of it
STEP = """
import cProfile, json, pstats, time
from slr_theory.experiments import experiments, run
e = experiments()[{name!r}]
t = time.perf_counter()
run([{name!r}])
wall = time.perf_counter() - t
prof = cProfile.Profile()
prof.enable()
run([{name!r}], steps_scale=0.1)
prof.disable()
calls = pstats.Stats(prof).total_calls
print(json.dumps({{"us_per_step": 1e6 * wall / e.steps, "calls_per_step": calls / round(0.1 * e.steps)}}))
"""

# which installation: its version and where it is (a checkout between releases keeps the
# last release's number)
_VERSION = """
from pathlib import Path
import slr_theory
print(slr_theory.__version__, "at", Path(slr_theory.__file__).parent.parent)
"""

# the machine's speed at what a step is made of: small-array NumPy calls
PROBE = """
import time
import numpy as np
x = np.linspace(-1.0, 1.0, 30)
y = np.empty_like(x)
best = float("inf")
for _ in range(40):  # the best of many short rounds: this VM's phases last seconds
    t = time.perf_counter()
    for _ in range(2500):
        np.multiply(x, 0.5, out=y)
        np.exp(y, out=y)
        y += x
        np.sqrt(np.abs(y), out=y)
        y.take([0, 2, 4])
    best = min(best, time.perf_counter() - t)
print(1e6 * best / 2500)
"""


# every process starts in an empty directory: ``python -c`` puts its directory first on
# the path, and a checkout there would shadow the installation measured
_EMPTY = tempfile.mkdtemp(prefix="slr-gd-bench-")
atexit.register(shutil.rmtree, _EMPTY, ignore_errors=True)


def _wall(python: str, code: str) -> float:
    t = time.perf_counter()
    subprocess.run([python, "-c", code], check=True, stdout=subprocess.DEVNULL, cwd=_EMPTY)
    return time.perf_counter() - t


def _out(python: str, code: str) -> str:
    done = subprocess.run(
        [python, "-c", code], check=True, capture_output=True, text=True, cwd=_EMPTY
    )
    return done.stdout


def measure(pythons: list[str], repeat: int, configs=CONFIGS) -> list[dict]:
    """The figures of each Python, its processes alternating with the others'."""
    figs = [{"configs": {}} for _ in pythons]
    for fig, py in zip(figs, pythons, strict=True):
        fig["version"] = _out(py, _VERSION).strip()
        fig["probe_us"] = float(_out(py, PROBE))
    empty = {py: [] for py in pythons}
    imported = {py: [] for py in pythons}
    for _ in range(repeat):
        for py in pythons:
            empty[py].append(_wall(py, "pass"))
            imported[py].append(_wall(py, "import slr_theory.experiments"))
    for fig, py in zip(figs, pythons, strict=True):
        fig["import_s"] = statistics.median(imported[py]) - statistics.median(empty[py])
    for name in configs:
        walls = {py: [] for py in pythons}
        for _ in range(repeat):
            for py in pythons:
                walls[py].append(_wall(py, RUN.format(name=name)))
        for fig, py in zip(figs, pythons, strict=True):
            step = json.loads(_out(py, STEP.format(name=name)))
            fig["configs"][name] = {"process_s": statistics.median(walls[py]), **step}
    return figs


def _flag(now: float, then: float, scale: float) -> str:
    ratio = now / (then * scale)
    return f"{ratio:6.2f}{' SLOWER' if ratio > SLOWER else ''}"


def table(fig: dict, base: dict | None, scale: float, base_name: str) -> None:
    """Print one installation's figures, each against `base`'s scaled by `scale`."""
    print(f"slr-theory {fig['version']}: probe {fig['probe_us']:.2f} µs")
    head = f"{'configuration':<24} {'process s':>9} {'µs/step':>8} {'calls/step':>10}"
    if base:
        head += f"   ratios to {base_name} (process, step)"
    print(head)
    for name, c in fig["configs"].items():
        line = (
            f"{name:<24} {c['process_s']:>9.3f} {c['us_per_step']:>8.1f} "
            f"{c['calls_per_step']:>10.1f}"
        )
        if base and name in base["configs"]:
            b = base["configs"][name]
            line += (
                f"   {_flag(c['process_s'], b['process_s'], scale)}"
                f" {_flag(c['us_per_step'], b['us_per_step'], scale)}"
            )
        print(line)
    line = f"{'import':<24} {fig['import_s']:>9.3f}"
    if base:
        line += f"{'':>21}   {_flag(fig['import_s'], base['import_s'], scale)}"
    print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="processes per figure (median)")
    ap.add_argument("--python", default=sys.executable, help="the installation measured")
    ap.add_argument("--against", help="a second installation, measured side by side")
    ap.add_argument("--write", type=Path, help="save the figures (as the release's)")
    ap.add_argument("--label", help="with --write: what the figures are of, e.g. 0.10.0")
    ap.add_argument(
        "--configs",
        nargs="+",
        default=list(CONFIGS),
        choices=list(EVERY),
        metavar="NAME",
        help=f"experiments to measure, among {', '.join(EVERY)} (default: the four GD ones)",
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error(f"--repeat: must be at least 1, got {args.repeat}")
    if args.write and not args.label:
        ap.error("--write needs --label (the release the figures are of)")
    print(f"machine: {machine()}")
    pythons = [args.python] + ([args.against] if args.against else [])
    figs = measure(pythons, args.repeat, args.configs)
    if args.against:
        table(figs[1], None, 1.0, "")
        print()
        table(figs[0], figs[1], 1.0, figs[1]["version"] + " (side by side)")
    elif STORED.exists():
        base = json.loads(STORED.read_text())
        scale = figs[0]["probe_us"] / base["probe_us"]
        print(f"stored: {base['label']} on {base['machine']}; probe ratio {scale:.2f}")
        table(figs[0], base, scale, base["label"] + " (stored, scaled by the probe)")
    else:
        table(figs[0], None, 1.0, "")
    if args.write:
        args.write.write_text(
            json.dumps({"label": args.label, "machine": machine(), **figs[0]}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()
