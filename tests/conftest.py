"""Shared test configuration: hypothesis profiles, seeds, mpmath precision."""

import os

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from .references import remember_in

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


class _TheRunsEnvironment:
    """A plugin (so that its fixtures reach the doctests of ``slr_theory/``, ``docs/`` and
    the README too, which this directory's fixtures do not): every test runs in the same
    environment, however and by whomever the run was started."""

    @pytest.fixture(scope="session", autouse=True)
    @classmethod
    def _temporary_files_in_the_runs_directory(cls, tmp_path_factory):
        """Every temporary file of the run, ``tempfile``'s and those of the processes the
        tests start (``TMPDIR``), in the run's own directory, which pytest removes after
        three runs. The examples' ``mkdtemp()`` and Dask's scratch space each left a
        directory in the system's temporary directory per run."""
        import tempfile

        where = str(tmp_path_factory.mktemp("tmp"))
        with pytest.MonkeyPatch.context() as mpatch:
            mpatch.setattr(tempfile, "tempdir", where)
            mpatch.setenv("TMPDIR", where)
            yield

    @pytest.fixture(scope="session", autouse=True)
    @classmethod
    def _ctrl_c_delivered(cls):
        """SIGINT delivered, as in a terminal, to the test processes and to those they
        start: a run started in the background by a shell without job control
        (``python -m pytest &`` in a script) or under ``nohup`` inherits it ignored, and
        the 15 tests of what a Ctrl-C does then failed (their processes ignored it)."""
        import signal

        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            yield
            return
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def pytest_configure(config):
    config.pluginmanager.register(_TheRunsEnvironment(), "slr-theory-environment")
    # here, not in a fixture: every xdist worker runs it before it collects (test_dd's
    # list of doors is read at collection)
    if config.getoption("--double-double-door"):
        from slr_theory import doubledouble

        doubledouble.EXTENDED = False
    # the slow mpmath references, kept for the reruns of the precise tests (tests/references.py)
    cache = getattr(config, "cache", None)
    try:
        remember_in(cache.mkdir("mp-references") if cache is not None else None)
    except OSError:  # a checkout that cannot be written: every reference computed
        remember_in(None)


# --- door_free: a test that never reads the door of the exponents -----------------------------
# .ci/run runs the precision-sensitive tests again on NumPy's baseline loops: those that read
# the door through the double-double door (--double-double-door), the door_free ones as they
# are (through that door they would only repeat themselves). The mark says so, every run
# without the flag verifies it (the door is watched while the test runs in this process),
# and the run with the flag deselects what carries it, counted for the summary.
_door_free: list[int] = []


class _WatchedDoor:
    """Stands for ``doubledouble.EXTENDED`` while a ``door_free`` test runs: its truth is
    the door's, and every reading of it is counted."""

    def __init__(self, value: bool) -> None:
        self.value, self.reads = bool(value), 0

    def __bool__(self) -> bool:
        self.reads += 1
        return self.value


@pytest.fixture(autouse=True)
def _door_free_verified(request):
    if request.node.get_closest_marker("door_free") is None:
        yield
        return
    from slr_theory import doubledouble

    real = doubledouble.EXTENDED
    door = doubledouble.EXTENDED = _WatchedDoor(real)
    try:
        yield
    finally:
        replaced = doubledouble.EXTENDED is not door
        doubledouble.EXTENDED = real
    if door.reads or replaced:
        pytest.fail(
            "marked door_free, but it "
            + ("sets" if replaced else f"read the door {door.reads} time(s)")
            + " (slr_theory.doubledouble.EXTENDED): remove the mark, the run with "
            "--double-double-door must see it",
            pytrace=False,
        )


@pytest.hookimpl(trylast=True)  # after -m: a slow test is counted as slow
def pytest_collection_modifyitems(config, items):
    if not config.getoption("--double-double-door"):
        return
    free = [item for item in items if item.get_closest_marker("door_free")]
    if free:
        items[:] = [item for item in items if not item.get_closest_marker("door_free")]
        config.hook.pytest_deselected(items=free)
        _door_free.append(len(free))


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
def shared(tmp_path_factory):
    """``shared(name, compute)``: ``compute()`` once per run, whichever worker asks first.

    Under pytest-xdist each worker holds its own session fixtures, so a session fixture
    is computed by every worker that needs it. Here the first worker to ask computes it
    under a lock and leaves its pickle in the run's directory (beside the workers' own:
    a new run has a new one); a worker that asks later, or while it is being computed,
    waits and reads it, the same objects bit for bit (a pickle keeps every type; the
    report's JSON would turn tuples into lists and NumPy floats into floats). Without
    workers, or where no lock can be taken, ``compute()`` is called.
    """
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): each worker computes its own
        fcntl = None
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None or fcntl is None:
        return lambda name, compute: compute()
    root = tmp_path_factory.getbasetemp().parent  # the run's, shared by its workers

    def get(name: str, compute):
        import pickle

        path = root / f"shared-{name}.pickle"
        with open(root / f"shared-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
            if path.exists():
                return pickle.loads(path.read_bytes())
            value = compute()
            part = path.with_suffix(f".{worker}.part")
            try:
                part.write_bytes(pickle.dumps(value))
                os.replace(part, path)  # whole or absent
            except OSError:  # a full disk: the other worker computes its own
                part.unlink(missing_ok=True)
            return value

    return get


@pytest.fixture(scope="session")
def small_study(shared):
    """A real :class:`slr_theory.study.Study` at small parameters, computed once per run
    (:func:`shared`).

    Everything at the study's own parameters is computed as the report computes it; the
    parts at fixed parameters are shrunk (two checks, the paper's experiments at 2 repeats
    and 1/500 of their steps) and the portrait and the continuation on coarser grids, to
    keep it cheap.
    """
    return shared("small_study", _small_study)


def _small_study():
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
        workeroutput["door_free"] = sum(_door_free)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    out = getattr(node, "workeroutput", {})
    if out.get("deselected") is not None:  # every worker collects the whole suite: one count
        _deselected[:] = [out["deselected"]]
        _door_free[:] = [out.get("door_free", 0)]


def pytest_terminal_summary(terminalreporter, config):
    n = sum(_deselected)
    if n and "not slow" in config.option.markexpr:
        terminalreporter.write_line(
            f"{n} tests marked slow (the long sweeps) were deselected by -m "
            f"'{config.option.markexpr}'; `python -m pytest -m slow` runs them."
        )
    m = sum(_door_free)
    if m:
        terminalreporter.write_line(
            f"{m} tests marked door_free (verified in every run without --double-double-door "
            "never to read the door) were deselected: the door cannot change them."
        )
