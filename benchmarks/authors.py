"""Whole-process time of the paper's experiments: this toolkit against the authors' JAX code.

    python benchmarks/authors.py --authors DIR --jax-python PY [--configs a,b] [--steps-scale 1]

``DIR`` is a checkout of the authors' code (github.com/PierreMarion23/single-location-regression,
not part of this project) and ``PY`` a Python with what its README pins (``jax==0.4.31``,
``quadax==0.2.2``, pandas). Each configuration runs in a fresh process on each side,
imports and compilation included, figures excluded on both sides:

- theirs: ``run.run(config, jax.random.key(0))`` (the loop of their ``main.py`` without
  ``plot``), in a scratch directory, since it writes a pickle;
- ours: ``slr_theory.experiments.run([name])``.

The two sides alternate configuration by configuration, so a change in the machine's
speed falls on both. ``--steps-scale`` shortens both the same way (the per-step cost is
constant); the ratio is the number the project tracks (goal: >= 30 on every configuration).

This VM's speed moves by up to a factor of two within minutes, and not by the same
factor on both sides. ``--repeat R`` runs each configuration ``R`` times, the sides
alternating, and prints the median of each side's times, their ratio, and the range
of the ``R`` paired ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import machine  # benchmarks/engine.py, beside this script

NAMES = {  # ours -> theirs (config.py)
    "gd_manifold": "config_gd_manifold",
    "gd_sphere_large_lambda": "config_gd_sphere_no_schedule_large_lambda",
    "gd_sphere_small_lambda": "config_gd_sphere_no_schedule_small_lambda",
    "gd_sphere_schedule": "config_gd_sphere_schedule",
    "sgd_sphere_schedule": "config_sgd_sphere_schedule",
}

THEIRS = """
import sys
sys.path.insert(0, {dir!r})
import jax
import config
from run import run
cfg = dict(config.{config})
cfg["n_steps"] = max(1, round(cfg["n_steps"] * {scale!r}))
run(cfg, jax.random.key(0))
"""

OURS = """
from slr_theory.experiments import run
run([{name!r}], steps_scale={scale!r})
"""


WARM_THEIRS = """
import sys
sys.path.insert(0, {dir!r})
import jax, config, run
"""

WARM_OURS = "import slr_theory.experiments"


def _wall(cmd: list[str], cwd: str, env: dict) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--authors", required=True, help="checkout of the authors' code")
    ap.add_argument("--jax-python", required=True, help="a Python with jax 0.4.31, quadax")
    ap.add_argument("--configs", default="gd_manifold,gd_sphere_small_lambda")
    ap.add_argument("--steps-scale", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each side per configuration")
    args = ap.parse_args()
    names = [n for n in args.configs.split(",") if n]
    if args.configs == "all":
        names = list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        ap.error(f"--configs: unknown configuration(s) {unknown}; known: {list(NAMES)}")
    authors = str(Path(args.authors).resolve())
    jax_version = subprocess.run(
        [args.jax_python, "-c", "import jax; print(jax.__version__)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"machine: {machine()}")
    print(f"theirs on jax {jax_version}; steps scale {args.steps_scale:g}")
    if args.repeat < 1:
        ap.error(f"--repeat: must be at least 1, got {args.repeat}")
    print(f"theirs and ours: the median of {args.repeat} run(s) each")
    print(
        f"{'configuration':<24} {'theirs s':>9} {'ours s':>8} {'ratio':>7} {'paired ratios':>15}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        _wall([args.jax_python, "-c", WARM_THEIRS.format(dir=authors)], scratch, env)
        _wall([sys.executable, "-c", WARM_OURS], scratch, env)
        for name in names:
            theirs = THEIRS.format(dir=authors, config=NAMES[name], scale=args.steps_scale)
            ours = OURS.format(name=name, scale=args.steps_scale)
            pairs = []
            for _ in range(args.repeat):
                t_theirs = _wall([args.jax_python, "-c", theirs], scratch, env)
                t_ours = _wall([sys.executable, "-c", ours], scratch, env)
                pairs.append((t_theirs, t_ours))
            med_theirs = statistics.median(t for t, _ in pairs)
            med_ours = statistics.median(o for _, o in pairs)
            ratios = [t / o for t, o in pairs]
            span = f"{min(ratios):.1f}-{max(ratios):.1f}"
            print(
                f"{name:<24} {med_theirs:>9.2f} {med_ours:>8.2f} "
                f"{med_theirs / med_ours:>7.1f} {span:>15}",
                flush=True,
            )


if __name__ == "__main__":
    main()
