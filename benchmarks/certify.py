"""The certified census at the paper's d, L, gamma: what it proves, and what it costs.

Prints one row per temperature and number of workers: seconds, points proved (of those
the search found), the r = 4 part's boxes and whether it is complete, the r <= 3 part's
boxes and how many are open at the budget, the time to check the saved certificate (on
as many workers), and a digest of the census (all of it but its time: the same digest
for every number of workers is the same census, bit for bit).

    python benchmarks/certify.py [--lam 0.1 0.9] [--jobs 1 2] [--max-boxes 30000000] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path

from slr_theory import Params
from slr_theory.certify import certify_critical_points, check_certificate
from slr_theory.certify.boxes import UNRESOLVED


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lam", type=float, nargs="+", default=[0.1, 0.9])
    ap.add_argument("--max-boxes", type=int, default=30_000_000)
    ap.add_argument("--min-width", type=float, default=1e-12)
    ap.add_argument("--jobs", type=int, nargs="+", default=[None], help="workers (default: all)")
    ap.add_argument("--out", default=None, help="keep the certificates here")
    args = ap.parse_args()
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        run(args, Path(args.out))
    else:  # the certificates go with the run
        with tempfile.TemporaryDirectory() as scratch:
            run(args, Path(scratch))


def run(args: argparse.Namespace, out: Path) -> None:
    """One row per temperature and number of workers, certificates saved in `out`."""
    runs = [(lam, jobs) for lam in args.lam for jobs in args.jobs]
    names = [out / f"census-lam{lam:g}-jobs{jobs}.json.gz" for lam, jobs in runs]
    if any(n.exists() for n in names):
        raise SystemExit(f"certify.py: {out} already holds a certificate; choose another --out")
    print(
        f"{'lam':>5} {'jobs':>5} {'seconds':>8} {'proved':>7} {'search':>7} {'r=4 boxes':>10} {'complete':>9} "
        f"{'r<=3 boxes':>11} {'open':>9} {'complete':>9} {'check s':>8} {'digest':>12}"
    )
    for (lam, jobs), name in zip(runs, names, strict=True):
        t0 = time.perf_counter()
        census = certify_critical_points(
            Params.paper(lam=lam), max_boxes=args.max_boxes, min_width=args.min_width, jobs=jobs
        )
        seconds = time.perf_counter() - t0
        record = census.to_dict()
        record.pop("seconds")
        digest = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:12]
        path = census.save(name)  # a file it checked was absent
        t1 = time.perf_counter()
        check = check_certificate(path, jobs=jobs)
        checked = time.perf_counter() - t1
        inner, strata = census.parts["overlaps"], census.parts["strata"]
        print(
            f"{lam:5g} {jobs or 'all':>5} {seconds:8.1f} {len(census.points):7d} {census.search['found']:7d} "
            f"{len(inner['paths']):10d} {census.part_complete('overlaps')!s:>9} "
            f"{len(strata['paths']):11d} {strata['verdicts'].count(UNRESOLVED):9d} "
            f"{check.complete!s:>9} "
            f"{checked:8.1f} {digest:>12}{'' if check.ok else '  CHECK FAILED'}"
        )
        for ov in census.search["unproved"]:
            print("      not proved: (" + ", ".join(f"{x:+.4f}" for x in ov) + ")")
        if census.search.get("open_within") is not None:
            print(f"      every open box within {census.search['open_within']:.1e} of those")


if __name__ == "__main__":
    main()
