"""What the atlas pays per cell to commit it, as the atlas grows to 1e5 cells.

    python benchmarks/atlas_bookkeeping.py [--cells 100000]

Each cell of an atlas is written the moment it ends, under the output discipline. This
times exactly that part, with rows of the atlas's real size and nothing computed: the
cell file staged, committed by ``Destination.commit_file`` (its digest appended to the
journal, then a rename), at checkpoints as the directory fills up. Then the resume: the
one read of every cell against its recorded digest. For comparison, the whole-marker
commit (``Destination.commit``, which re-hashes and rewrites the marker, what every cell
paid before) is timed at the first checkpoints only: it grows with the cells already
there. The issue's bar: at most 10 ms a cell at 1e5 cells.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path

from slr_theory.output import Destination, written_files
from slr_theory.survey import COLUMNS

ROW = {c: 0.123456789012345 for c in COLUMNS}
ROW |= {"nonlinearity": "erf", "attention": "pointwise", "global_min_overlaps": [0.5] * 5}


def _cell(dest: Destination, i: int, whole: bool) -> None:
    name = f"cell-{i:06d}.json"
    dest.file(name).write_text(json.dumps({"spec": "0" * 16, "row": {**ROW, "cell": i}}))
    if whole:
        dest.commit()
    else:
        dest.commit_file(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=100_000)
    args = ap.parse_args()
    checkpoints = [c for c in (1_000, 10_000, 100_000, 1_000_000) if c <= args.cells]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "atlas"
        print(f"{'cells there':>12} {'commit_file ms/cell':>20} {'commit (marker) ms/cell':>24}")
        with Destination(out) as dest:
            done = 0
            for target in checkpoints:
                while done < target - 200:
                    _cell(dest, done, whole=False)
                    done += 1
                t0 = time.perf_counter()
                for _ in range(200):
                    _cell(dest, done, whole=False)
                    done += 1
                per = (time.perf_counter() - t0) / 200 * 1e3
                whole = "-"
                if target <= 10_000:  # the old way, at this size (a few cells: it is slow)
                    t0 = time.perf_counter()
                    for _ in range(5):
                        _cell(dest, done, whole=True)
                        done += 1
                    whole = f"{(time.perf_counter() - t0) / 5 * 1e3:.2f}"
                print(f"{target:>12,} {per:>20.3f} {whole:>24}")
        t0 = time.perf_counter()
        recorded = written_files(out)
        read = 0
        for p in out.glob("cell-*.json"):
            data = p.read_bytes()
            read += hashlib.sha256(data).hexdigest() == recorded.get(p.name)
            json.loads(data)
        sec = time.perf_counter() - t0
        print(f"resume: {read:,} cells read and matched to the record in {sec:.2f} s "
              f"({sec / read * 1e3:.3f} ms/cell)")  # fmt: skip


if __name__ == "__main__":
    main()
