"""Wall time of ``slr-theory report`` and of each of its parts, at every model, on this machine.

    python benchmarks/report.py [--lam 0.1] [--model erf tanh softmax softmax1 s2] [--redraw]

Runs the report at the paper's ``d, L, gamma`` (erf; tanh; softmax and softmax-1
attention; erf with ``s = 2`` informative tokens) into a temporary folder and prints the seconds of each
computed part (``Study.seconds``: the checks and the paper's experiments run in a second
process beside the rest), the wall time of the whole report, the estimate the command
checks at the door (:func:`slr_theory.study.cost`), and, with ``--redraw``, the wall
time of ``report --from`` on the result.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

from slr_theory import Params
from slr_theory.report import redraw_report, write_report
from slr_theory.study import Study, cost

MODELS = {
    "erf": {},
    "tanh": {"nonlinearity": "tanh"},
    "softmax": {"attention": "softmax"},
    "softmax1": {"attention": "softmax1"},
    "s2": {"s": 2},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, default=0.1)
    ap.add_argument("--model", nargs="+", choices=tuple(MODELS), default=list(MODELS))
    ap.add_argument("--redraw", action="store_true")
    args = ap.parse_args()
    rows = []
    for name in args.model:
        params = dataclasses.replace(Params.paper(lam=args.lam), **MODELS[name])
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            t0 = time.perf_counter()
            write_report(out, params)
            wall = time.perf_counter() - t0
            s = Study.load(out / "results.json")
            print(f"\nreport {name} at lambda = {args.lam:g} on {os.cpu_count()} cores")
            print(f"{'part':<18} {'seconds':>8}")
            for part, sec in s.seconds.items():
                print(f"{part:<18} {sec:>8.1f}")
            redraw = None
            if args.redraw:
                t0 = time.perf_counter()
                redraw_report(out)
                redraw = time.perf_counter() - t0
        rows.append((name, wall, cost(params).seconds, redraw))
    print(f"\n{'model':<8} {'wall s':>8} {'estimate s':>11} {'redraw s':>9}")
    for name, wall, est, redraw in rows:
        shown = "" if redraw is None else f"{redraw:9.1f}"
        print(f"{name:<8} {wall:8.1f} {est:11.1f} {shown}")


if __name__ == "__main__":
    main()
