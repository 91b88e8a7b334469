"""slr_theory.results: every result type survives JSON bit for bit."""

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from slr_theory import Params
from slr_theory.landscape import Continuation, StabilityMap
from slr_theory.results import dumps, from_plain, loads, to_plain


@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=64),
    )
)
def test_float_arrays_round_trip_bit_for_bit(a):
    b = loads(np.ndarray, dumps(a))
    assert b.shape == a.shape and b.dtype == np.float64
    assert np.array_equal(a.view(np.int64), b.view(np.int64)) or np.array_equal(
        np.nan_to_num(a, nan=7.0), np.nan_to_num(b, nan=7.0)
    )  # NaN payloads are not data
    assert np.array_equal(np.isnan(a), np.isnan(b))


def test_the_json_is_strict():
    text = dumps({"x": [math.nan, math.inf, -math.inf, 0.1]})
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict {c}"))["x"] == [
        "NaN",
        "Infinity",
        "-Infinity",
        0.1,
    ]


def test_nested_dataclasses_round_trip():
    p = Params(d=7, L=3, lam=0.25, gamma=1.5, eps=0.1)
    m = StabilityMap(p, np.linspace(-0.9, 0.9, 3), np.linspace(-0.9, 0.9, 3), -np.eye(3))
    back = loads(StabilityMap, dumps(m))
    assert back.params == p and np.array_equal(back.lead, m.lead)
    assert back.attracting_share == m.attracting_share


def test_a_continuation_round_trips(small_study):
    c = small_study.continuation
    back = from_plain(Continuation, json.loads(dumps(c)))
    assert len(back.branches) == len(c.branches)
    for a, b in zip(c.branches, back.branches, strict=True):
        assert np.array_equal(a.lam, b.lam) and np.array_equal(a.overlaps, b.overlaps)
        assert np.array_equal(a.index, b.index) and a.kind == b.kind
    assert to_plain(back) == to_plain(c)


def test_what_cannot_be_saved_is_refused():
    with pytest.raises(TypeError, match="set"):
        to_plain({1, 2})
    with pytest.raises(TypeError, match="keys"):
        to_plain({1: 2})
    with pytest.raises(ValueError, match="number"):
        from_plain(float, "many")
    with pytest.raises(ValueError, match="int"):
        from_plain(int, True)


def test_a_text_table_aligns_its_columns_and_refuses_what_is_no_table():
    from slr_theory.results import text_table

    out = text_table(["end", "runs"], [["a saddle", 3], ["(k*, v*)", 12]], caption="15 runs")
    assert out.splitlines() == ["15 runs", "end       runs", "a saddle     3", "(k*, v*)    12"]
    with pytest.raises(ValueError, match="`rows` must hold sequences of cells"):
        text_table(["a"], [3])
    with pytest.raises(ValueError, match="`header` must be a sequence"):
        text_table("ab", [])


def test_every_result_prints_as_a_short_table():
    """repr of a result is a short table under a caption naming it, never its arrays; the
    notebook's HTML holds the same rows."""
    from slr_theory import Params, pgd, sample_initial_overlaps
    from slr_theory.experiments import run
    from slr_theory.landscape import basin_fractions, continuation

    p = Params.paper()
    many = pgd(p, sample_initial_overlaps(p, 0, 12), 4e-3, 300, record_every=100)
    exp = run(["gd_manifold"], repeats=2, steps_scale=0.001, records=3)["gd_manifold"]
    small = Params(d=12, L=5, lam=0.6, gamma=0.7)
    fractions = basin_fractions(small, 8, alpha=0.02, steps=500)
    cont = continuation(p, (0.1, 0.15), steps=2, seeds=1)
    for res, head, lines in (
        (many, "PGDResult: 12 runs, 300 steps (4 records), λ = 0.1; the first 10 shown", 12),
        (exp, "ExperimentResult: gd_manifold (seed 0): 2 runs", 4),
        (fractions, "BasinFractions: 8 runs (pgd)", 2 + len(fractions.attractors) + 1),
        (cont, f"Continuation: {len(cont.branches)} branches over λ in [0.1, 0.15]", None),
    ):
        text = repr(res)
        assert text.splitlines()[0].startswith(head), text
        assert "array(" not in text and "\n" in text
        if lines is not None:
            assert len(text.splitlines()) == lines, text
        assert "<table" in res._repr_html_()
    assert "still moving at the end of the budget" in repr(exp).splitlines()[0]
    ends = many.overlaps[-1]
    assert f"{ends[0, 0]:.4f}" in repr(many).splitlines()[2]
