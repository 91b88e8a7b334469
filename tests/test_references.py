"""The suite's cache of mpmath references (tests/references.py): the reruns of the precise
tests read what the first run computed, and nothing else."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from slr_theory import Nonlinearity, Params

from . import references
from .references import remembered

calls: list = []


def slow_reference(x, dps: int = 30, *, scale=None):
    calls.append(x)
    with mp.workdps(dps):
        return mp.sqrt(mp.mpf(x)) * (1 if scale is None else scale(2))


def twice(v):
    return 2 * v


@pytest.fixture
def cache_dir(tmp_path):
    before = list(references._where)
    references.remember_in(tmp_path)
    calls.clear()
    yield tmp_path
    references._where[:] = before


def test_a_reference_is_computed_once_and_read_back_the_same(cache_dir):
    first = remembered(slow_reference, 2.0, 40)
    again = remembered(slow_reference, 2.0, 40)
    assert calls == [2.0] and again == first and mp.almosteq(first**2, 2, 1e-39)
    assert len(list(cache_dir.glob("*.pickle"))) == 1 and not list(cache_dir.glob("*.part"))


def test_every_argument_and_the_precision_are_part_of_the_key(cache_dir):
    remembered(slow_reference, 2.0, 40)
    remembered(slow_reference, 2.0, 41)
    remembered(slow_reference, np.float64(2.0), 40)  # the same number, another type: kept apart
    remembered(slow_reference, -0.0)
    remembered(slow_reference, 0.0)
    with mp.workdps(50):  # the global precision a reference may read
        remembered(slow_reference, -0.0)
    assert len(calls) == 6
    remembered(slow_reference, 2.0, 40, scale=twice)  # a named function: by its name and source
    remembered(slow_reference, 2.0, 40, scale=twice)
    assert len(calls) == 7


def test_what_has_no_exact_name_is_computed_every_time(cache_dir):
    remembered(slow_reference, 2.0, scale=lambda v: v)
    remembered(slow_reference, 2.0, scale=lambda v: v)
    remembered(slow_reference, 2.0, scale=abs)  # a built-in has no source to digest
    remembered(slow_reference, 2.0, scale=abs)
    assert len(calls) == 4
    z = lambda u: np.zeros(np.shape(u))  # noqa: E731
    sigma = Nonlinearity("linear", lambda u: u, lambda u: np.ones(np.shape(u)), z, z, d4f=z)
    user = Params(d=8, L=2, lam=0.5, gamma=0.7, nonlinearity=sigma)
    assert references._key(slow_reference, (user,), {}) is None
    assert references._key(slow_reference, (Params.paper(),), {}) is not None
    assert not list(cache_dir.glob("*.pickle"))


def test_without_pytests_cache_every_reference_is_computed(cache_dir):
    references.remember_in(None)
    remembered(slow_reference, 3.0)
    remembered(slow_reference, 3.0)
    assert calls == [3.0, 3.0] and not list(cache_dir.iterdir())


def test_a_directory_that_cannot_be_written_only_costs_the_computation(cache_dir):
    blocked = cache_dir / "file"
    blocked.write_text("")
    references.remember_in(blocked / "below")  # below a file: no directory can be made
    assert remembered(slow_reference, 5.0) == remembered(slow_reference, 5.0)
    assert calls == [5.0, 5.0]


def test_the_key_reads_the_sources_a_reference_may_read(tmp_path):
    """Every directory of READS is there with its modules, and editing the function's own
    module changes its key."""
    import importlib.util
    from pathlib import Path

    root = Path(references.__file__).resolve().parents[1]
    assert all(list((root / d).glob("*.py")) for d in references.READS)
    source = tmp_path / "a_reference.py"
    keys = []
    for body in ("return x", "return 2 * x"):
        source.write_text(f"def ref(x):\n    {body}\n")
        spec = importlib.util.spec_from_file_location("a_reference", source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        references._file_digest.cache_clear()
        keys.append(references._key(module.ref, (1.0,), {}))
    assert None not in keys and keys[0] != keys[1]
