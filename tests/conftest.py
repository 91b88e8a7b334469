"""Shared test configuration: hypothesis profiles, seeds, mpmath precision."""

import os

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# "ci": what .ci/run uses (bounded time); "dev": the default locally; "thorough": -m slow sweeps.
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=400, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)


def pytest_addoption(parser):
    parser.addoption(
        "--double-double-door",
        action="store_true",
        default=False,
        help="run with slr_theory.doubledouble.EXTENDED = False: the double-double door of "
        "the exponents as the main door, as on a platform without extended precision "
        "(aarch64); .ci/run runs the precision-sensitive tests this way a second time",
    )


def pytest_configure(config):
    # here, not in a fixture: every xdist worker runs it before it collects (test_dd's
    # list of doors is read at collection)
    if config.getoption("--double-double-door"):
        from slr_theory import doubledouble

        doubledouble.EXTENDED = False


def pytest_report_header(config):
    """Which code paths this run exercises: the door of the exponents and NumPy's targets."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    from slr_theory import doubledouble

    door = "extended precision" if doubledouble.EXTENDED else "double-double"
    on = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
    off = os.environ.get("NPY_DISABLE_CPU_FEATURES", "")
    return (
        f"slr-theory: exponents through the {door} door; NumPy {np.__version__} dispatch "
        f"targets in use: {' '.join(on) or 'baseline only'}"
        + (f" (NPY_DISABLE_CPU_FEATURES={off!r})" if off else "")
    )


@pytest.fixture(autouse=True)
def _reset_precision():
    """Every test starts at mpmath's default precision and with NumPy's error state."""
    mp.mp.dps = 15
    with np.errstate(all="warn", under="ignore"):  # NumPy defaults: IEEE underflow is correct
        yield
    mp.mp.dps = 15


@pytest.fixture(scope="session")
def small_study():
    """A real :class:`slr_theory.study.Study` at small parameters, computed once.

    Everything at the study's own parameters is computed as the report computes it; the
    parts at fixed parameters are shrunk (two checks, the paper's experiments at 2 repeats
    and 1/500 of their steps) and the portrait and the continuation on coarser grids, to
    keep it cheap.
    """
    import fnmatch
    import functools

    import slr_theory.experiments as ex
    import slr_theory.landscape as ls
    import slr_theory.verify as ver
    from slr_theory import Params
    from slr_theory.study import study

    run, checks, portrait, follow = ex.run, ver.run_checks, ls.portrait_data, ls.continuation
    with pytest.MonkeyPatch.context() as mpatch:
        mpatch.setattr(
            ex, "run", lambda names, **kw: run(names, **{**kw, "repeats": 2, "steps_scale": 2e-3})
        )

        def few_checks(names=None, **kw):  # two checks, within the names asked for
            keep = [
                n
                for n in ("gaussian.mean_erf", "risk.total")
                if names is None or any(fnmatch.fnmatch(n, p) for p in names)
            ]
            return checks(keep, **kw)

        mpatch.setattr(ver, "run_checks", few_checks)
        mpatch.setattr(
            ls,
            "portrait_data",
            functools.partial(portrait, grid=15, basin_grid=8, refine=2, t_max=100.0),
        )
        mpatch.setattr(  # a coarser grid in lambda: 5.3 s of 13 were the continuation's
            ls, "continuation", lambda *a, **k: follow(*a, **{**k, "steps": 12, "seeds": 2})
        )
        return study(Params(d=6, L=4, lam=0.3, gamma=0.7, eps=0.1), alpha=0.02, jobs=1)


# --- the summary says what the default run left out -----------------------------------------
# Under pytest-xdist the controller collects nothing, so each worker counts the deselected
# tests marked slow (pyproject's `-m 'not slow'`) and sends the count back; the summary
# then names it.
_deselected: list[int] = []


def pytest_deselected(items):
    _deselected.append(sum(1 for item in items if item.get_closest_marker("slow")))


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a worker: report to the controller
        workeroutput["deselected"] = sum(_deselected)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    count = getattr(node, "workeroutput", {}).get("deselected")
    if count is not None:  # every worker collects the whole suite: one count
        _deselected[:] = [count]


def pytest_terminal_summary(terminalreporter, config):
    n = sum(_deselected)
    if n and "not slow" in config.option.markexpr:
        terminalreporter.write_line(
            f"{n} tests marked slow (the long sweeps) were deselected by -m "
            f"'{config.option.markexpr}'; `python -m pytest -m slow` runs them."
        )
