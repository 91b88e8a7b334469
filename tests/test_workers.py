"""Local worker processes (slr_theory/workers.py): no __main__ re-run, none left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from slr_theory.output import quiet_workers
from slr_theory.workers import (
    end_pool,
    in_worker_bootstrap,
    process_pool,
    without_main_script,
)

from .test_cli_process import _alive


def test_a_pool_runs_importable_work_and_ends():
    pool = process_pool(2)
    with quiet_workers():
        futures = [pool.submit(pow, 2, k) for k in range(5)]
    assert [f.result(60) for f in futures] == [1, 2, 4, 8, 16]
    end_pool(pool)
    with pytest.raises(ValueError, match="`workers`"):
        process_pool(0)


def test_a_pool_ended_mid_work_has_closed_its_pipes_when_end_pool_returns():
    # CPython 3.11's exit hook writes to the pool's wake-up pipe; if the manager thread
    # were still closing it, the exit printed an ignored OSError traceback (a Ctrl-C's
    # one line became 17). end_pool returns only once that thread has finished.
    pool = process_pool(2)
    with quiet_workers():
        futures = [pool.submit(time.sleep, 30) for _ in range(4)]
    while not any(f.running() for f in futures):
        time.sleep(0.01)
    manager = pool._executor_manager_thread
    wakeup = pool._executor_manager_thread_wakeup
    end_pool(pool)
    assert not manager.is_alive() and wakeup._closed
    assert all(f.done() for f in futures)


def test_without_main_script_hides_the_script_and_puts_it_back():
    main = sys.modules["__main__"]
    with without_main_script():
        hidden = sys.modules["__main__"]
        assert getattr(hidden, "__file__", None) is None and hidden.__spec__ is None
    assert sys.modules["__main__"] is main
    assert not in_worker_bootstrap()


def _run(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python ARGS`, reading `script` on stdin (``python -``) when it is given."""
    return subprocess.run(
        [sys.executable, *args],
        input=script or None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_killed_parent_leaves_no_worker_computing(tmp_path):
    """kill -9 of the process that started the pool: each worker notices within
    PARENT_POLL and exits, instead of finishing work nobody will read."""
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(
            """
            import time
            from slr_theory.output import quiet_workers
            from slr_theory.workers import process_pool
            pool = process_pool(2)
            with quiet_workers():
                futures = [pool.submit(time.sleep, 120) for _ in range(2)]
            time.sleep(3)
            print(" ".join(str(p) for p in pool._processes), flush=True)
            time.sleep(120)
            """
        )
    )
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2 and all(_alive(p) for p in workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    proc.stdout.close()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if _alive(p)]


ATLAS = (
    "from slr_theory import Params, atlas\n"
    "a = atlas(Params(d=8, L=4, lam=0.3, gamma=0.7), lam=[0.1, 0.3], basin_runs=4, steps=50,\n"
    "          max_steps=50, stability_grid=3, starts=4, grid=1, jobs=2{extra})\n"
    "print('rows', [r['cell'] for r in a.rows])\n"
)


@pytest.mark.parametrize("extra", ["", ", backend='dask'"], ids=["processes", "dask"])
def test_a_plain_script_without_a_main_guard_runs_the_atlas(tmp_path, extra):
    if extra:
        pytest.importorskip("dask.distributed")
    script = tmp_path / "plain.py"
    script.write_text(ATLAS.format(extra=extra))
    done = _run("", str(script))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["rows [0, 1]"]  # once: no worker ran the script again


def test_a_main_without_a_file_runs_the_atlas():
    """As in a notebook or ``python -`` (``__main__`` has no file)."""
    done = _run(ATLAS.format(extra=""), "-")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["rows [0, 1]"]


def test_an_atlas_called_while_a_worker_runs_a_script_again_refuses_at_once():
    done = _run(
        "import sys\n"
        "sys.modules['__main__'].__name__ = '__mp_main__'  # as a spawned worker sees it\n"
        + ATLAS.format(extra=""),
        "-",
    )
    assert done.returncode == 1
    assert 'put the call under `if __name__ == "__main__":`' in done.stderr


def _remember(value) -> None:
    os.environ["SLR_TEST_INITIALIZED"] = str(value)


def _initialized() -> str | None:
    return os.environ.get("SLR_TEST_INITIALIZED")


def test_a_pool_runs_its_initializer_in_each_worker():
    pool = process_pool(1, initializer=_remember, initargs=(7,))
    with quiet_workers():
        f = pool.submit(_initialized)
    assert f.result(60) == "7"
    end_pool(pool)
    with pytest.raises(ValueError, match="`initializer` must be callable"):
        process_pool(1, initializer=3)


def _risk_of(p):
    from slr_theory import risk

    return float(risk(p, 0.5, 0.4, 0.1, 0.05, 0.2))


def test_a_users_nonlinearity_reaches_a_worker_by_its_path(tmp_path, monkeypatch):
    """Lambdas do not pickle: a Nonlinearity found by its path is sent as the path, and
    the worker (which inherits sys.path) imports it again; one built in place is sent
    field by field, which fails for lambdas as pickle says."""
    import pickle

    from slr_theory import Nonlinearity, Params

    (tmp_path / "user_sigma_mod.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from slr_theory import Nonlinearity

            two_tanh = Nonlinearity(
                "two_tanh",
                lambda u: 2 * np.tanh(u),
                lambda u: 2 / np.cosh(u) ** 2,
                lambda u: -4 * np.tanh(u) / np.cosh(u) ** 2,
            )
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    p = Params.paper().replace(nonlinearity="user_sigma_mod:two_tanh")
    assert pickle.loads(pickle.dumps(p)) == p
    pool = process_pool(1)
    try:
        with quiet_workers():
            there = pool.submit(_risk_of, p).result(120)
    finally:
        end_pool(pool)
    assert there == _risk_of(p)
    here = Nonlinearity("here", lambda u: 2 * np.tanh(u), p.nonlinearity.df, p.nonlinearity.d2f)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(here)
