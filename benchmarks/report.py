"""Wall time of ``slr-theory report`` and of each of its parts, on this machine.

    python benchmarks/report.py [--lam 0.1] [--redraw]

Runs the report at the paper's parameters (or another ``lambda``) into a temporary
folder and prints the seconds of each computed part (``Study.seconds``: the checks and
the paper's experiments run in a second process beside the rest), the wall time of the
whole report, and, with ``--redraw``, of ``report --from`` on the result.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from slr_theory import Params
from slr_theory.report import redraw_report, write_report
from slr_theory.study import Study


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, default=0.1)
    ap.add_argument("--redraw", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report"
        t0 = time.perf_counter()
        write_report(out, Params.paper(lam=args.lam))
        wall = time.perf_counter() - t0
        s = Study.load(out / "results.json")
        print(f"report at lambda = {args.lam:g} on {os.cpu_count()} cores")
        print(f"{'part':<18} {'seconds':>8}")
        for name, sec in s.seconds.items():
            print(f"{name:<18} {sec:>8.1f}")
        beside = sum(s.seconds.get(n, 0.0) for n in ("verification", "experiments"))
        main_side = sum(s.seconds.values()) - beside
        print(f"{'main process':<18} {main_side:>8.1f}")
        print(f"{'second process':<18} {beside:>8.1f}")
        print(f"{'whole report':<18} {wall:>8.1f}")
        if args.redraw:
            t0 = time.perf_counter()
            redraw_report(out)
            print(f"{'report --from':<18} {time.perf_counter() - t0:>8.1f}")


if __name__ == "__main__":
    main()
