"""One generation of the branch and bound judged in parts, here or in worker processes: the
same verdicts, bit for bit, whatever the number of workers.

A space's verdict on a box depends on the box and on the space's state alone (the
enclosures are evaluated box by box), so a generation cut into parts
(:func:`part_starts`: a function of its size alone) gets the same verdicts in any order
and on any process. The one thing that is not a
box's own is the state the space grows as it goes (the strata's edge tubes,
:meth:`Strata.grow`): the branch and bound grows it between chunks of
:data:`~slr_theory.certify.boxes.CHUNK` boxes, here, in order, from what the chunk's parts
asked for, and the next chunk's parts are judged against the grown space. A worker gets
the space as it stands (pickled once per state, kept by the worker while it stands); the
model's table inside it pickles as its parameters and is rebuilt once per worker.
"""

from __future__ import annotations

import hashlib
import pickle

import numpy as np

from .boxes import NEWTON_EXCLUDED, NEWTON_WIDTH, UNIQUE, krawczyk

__all__ = []

#: Fewest boxes of a part (but the last, or the one part of fewer boxes): the unit of work
#: of a worker.
PART = 2048

#: Most parts a chunk of boxes is cut into: enough for the workers of a few cores to share
#: a chunk (each a few parts, taken as it is free), few enough that a part's arrays are
#: long (every enclosure is a chain of NumPy calls on the part's boxes, and each call
#: pays its Python overhead once per part).
PARTS = 8

#: Most boxes of a part (a certificate's check judges millions of leaves at once: its
#: parts stay this size, and so does a worker's memory).
LARGEST_PART = 16_384


def part_starts(n: int) -> list[int]:
    """Where the parts of `n` boxes start: ``min(PARTS, n // PART)`` parts of equal size (the
    last shorter), or more where those would hold over :data:`LARGEST_PART` boxes, at least
    one; a function of `n` alone, so the parts, and the arrays each enclosure is evaluated
    on, are the same whatever the number of workers.

    Examples
    --------
    >>> part_starts(100_000)
    [0, 12500, 25000, 37500, 50000, 62500, 75000, 87500]
    >>> part_starts(5000), part_starts(0), len(part_starts(10**6))
    ([0, 2500], [0], 62)
    """
    count = max(1, min(PARTS, n // PART), -(-n // LARGEST_PART))
    size = max(1, -(-n // count))
    return list(range(0, n, size)) or [0]


#: Spaces a worker keeps (by the digest of their pickle) for the parts that follow.
KEPT_SPACES = 4

_SPACES: dict[str, object] = {}


class Space:
    """What the branch and bound asks of a space beside ``classify``: the verdicts of boxes
    without changing the space (:meth:`verdicts`), and the state the boxes asked for
    (:meth:`grow`). A space whose state never grows needs neither."""

    newton = False

    def verdicts(self, lo: np.ndarray, hi: np.ndarray):
        """``classify``'s verdicts and sides, and which boxes ask the space to grow."""
        verdict, dims = self.classify(lo, hi)
        return verdict, dims, np.zeros(len(lo), dtype=bool)

    def grow(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Grow the state the boxes asked for (none here)."""


def judge(space, lo: np.ndarray, hi: np.ndarray, known: bool, newton: bool = True) -> dict:
    """The verdict of every box of a generation's part (``-1``: open), its preferred side,
    whether it asks the space to grow, the known point whose box holds it (`known`,
    :meth:`Strata.covered`; ``-1``: none), and the Krawczyk proofs of the near boxes
    (`newton`, in a space that has them).

    The generation's step in the branch and bound, box by box: nothing here depends on
    another box or changes the space. Without `known` and `newton`, the space's verdicts
    alone (a certificate's check)."""
    verdict, prefer, grow = space.verdicts(lo, hi)
    width = np.max(hi - lo, axis=1)
    cov = np.full(len(lo), -1)
    if known:  # the strata: an open box whose preimage a proved point's box holds
        ask = np.flatnonzero(verdict < 0)
        if ask.size:
            cov[ask] = space.covered(lo[ask], hi[ask])
        verdict[cov >= 0] = UNIQUE
    near = np.flatnonzero((verdict < 0) & (width <= NEWTON_WIDTH) & (space.newton and newton))
    none = np.zeros((0, lo.shape[1]))
    found = {"at": near[:0], "zlo": none, "zhi": none, "klo": none, "khi": none}
    if near.size:
        zlo, zhi = space.newton_box(lo[near], hi[near])
        kv, klo, khi = krawczyk(space, zlo, zhi)
        unique = kv == UNIQUE
        verdict[near[unique]] = UNIQUE
        verdict[near[kv == NEWTON_EXCLUDED]] = NEWTON_EXCLUDED
        found = {"at": near[unique], "zlo": zlo[unique], "zhi": zhi[unique]}
        found.update(klo=klo[unique], khi=khi[unique])
    return {"verdict": verdict, "prefer": prefer, "grow": grow, "cov": cov, "found": found}


def judge_part(digest: str, blob: bytes, *args) -> dict:
    """:func:`judge` in a worker, on the space pickled as `blob` (kept by its `digest`)."""
    space = _SPACES.get(digest)
    if space is None:
        space = pickle.loads(blob)
        while len(_SPACES) >= KEPT_SPACES:
            _SPACES.pop(next(iter(_SPACES)))
        _SPACES[digest] = space
    return judge(space, *args)


def joined(results: list[dict], starts: list[int]) -> dict:
    """The results of consecutive parts (:func:`judge`) as one, the part at ``starts[i]``
    shifted there."""
    if len(results) == 1:
        return results[0]
    out = {
        k: np.concatenate([r[k] for r in results]) for k in ("verdict", "prefer", "grow", "cov")
    }
    found = [r["found"] for r in results]
    out["found"] = {k: np.concatenate([f[k] for f in found]) for k in ("zlo", "zhi", "klo", "khi")}
    out["found"]["at"] = np.concatenate([f["at"] + s for f, s in zip(found, starts, strict=True)])
    return out


class Judges:
    """Judges the parts of a chunk of boxes (:func:`judge`): here with ``jobs = 1``, else on a
    pool of `jobs` worker processes (:func:`slr_theory.workers.process_pool`), started at
    the first chunk of more than one part and ended by :meth:`close` (or the ``with``
    block's end, whatever ends it)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool = None

    def __enter__(self) -> Judges:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the workers (now, whatever they do)."""
        if self.pool is not None:
            from ..workers import end_pool

            pool, self.pool = self.pool, None
            end_pool(pool)

    def map(self, fn, calls: list[tuple]) -> list:
        """``fn(*args)`` for each `args` of `calls`, in order: on the workers where there
        are several calls and workers (`fn` importable by name, each call computing alone:
        the same results wherever it runs)."""
        if self.jobs == 1 or len(calls) < 2:
            return [fn(*args) for args in calls]
        futures = self._submit([(fn, *args) for args in calls])
        return self._results(futures)

    def _submit(self, tasks: list[tuple]) -> list:
        from ..output import quiet_workers
        from ..workers import process_pool

        try:
            with quiet_workers():  # a Ctrl-C reaches this process, which ends the workers
                if self.pool is None:
                    self.pool = process_pool(self.jobs)
                return [self.pool.submit(*task) for task in tasks]
        except BaseException:
            self.close()
            raise

    def _results(self, futures: list) -> list:
        try:
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C, SIGTERM or an error: leave no worker behind
            self.close()
            raise

    def __call__(
        self, space, lo: np.ndarray, hi: np.ndarray, known: bool = False, newton: bool = True
    ) -> dict:
        """:func:`judge` on every box of `lo`, `hi`, part by part, joined in order."""
        starts = part_starts(len(lo))
        parts = [slice(s, e) for s, e in zip(starts, [*starts[1:], len(lo)], strict=True)]
        if self.jobs == 1 or len(parts) == 1:
            results = [judge(space, lo[p], hi[p], known, newton) for p in parts]
        else:
            blob = pickle.dumps(space, protocol=pickle.HIGHEST_PROTOCOL)
            digest = hashlib.blake2b(blob, digest_size=16).hexdigest()
            tasks = [(judge_part, digest, blob, lo[p], hi[p], known, newton) for p in parts]
            results = self._results(self._submit(tasks))
        return joined(results, starts)
