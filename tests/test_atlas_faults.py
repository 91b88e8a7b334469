"""The atlas through failures: Ctrl-C, kill -9, a lost worker, scheduler or client.

Each ends in one line and a documented exit status (the CLI) or AtlasIncomplete (the
library), leaves no process behind, and keeps every finished cell; the same command
then completes the atlas with the rows a serial run gives.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from slr_theory import Params, atlas
from slr_theory.output import JOURNAL_NAME
from slr_theory.survey import AtlasIncomplete, read_atlas

from .test_cli_process import _alive, _descendants

CMD = [sys.executable, "-m", "slr_theory"]
BASE = Params(d=8, L=4, lam=0.3, gamma=0.7)
CHEAP = {
    "basin_runs": 4,
    "steps": 50,
    "max_steps": 50,
    "stability_grid": 3,
    "starts": 4,
    "grid": 1,
}
FLAGS = [
    "--d", "8", "--L", "4", "--gamma", "0.7", "--basin-runs", "4", "--steps", "50",
    "--max-steps", "50", "--stability-grid", "3", "--starts", "4", "--grid", "1", "--json",
]  # fmt: skip


def _lams(n: int) -> list[float]:
    return [round(0.05 + 0.9 * i / max(n - 1, 1), 12) for i in range(n)]


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def _start(argv, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: a Ctrl-C goes to all of it, as in a terminal
        **kw,
    )


def _when_cells(out, n: int, proc, seen: set[int], timeout: float = 120) -> None:
    """Wait until `n` cells are committed in `out`, collecting `proc`'s descendants."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        seen |= _descendants(proc.pid)
        if len(list(out.glob("cell-*.json"))) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"{n} cells never appeared (exit {proc.poll()})")


def _all_gone(pids: set[int], timeout: float = 15) -> list[int]:
    deadline = time.monotonic() + timeout
    while [p for p in pids if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("backend", [[], ["--dask"]], ids=["processes", "dask"])
def test_ctrl_c_is_one_line_keeps_the_cells_and_leaves_no_process(tmp_path, backend):
    if backend:
        pytest.importorskip("dask.distributed")
    out = tmp_path / "a"
    argv = [*CMD, "atlas", "--out", str(out), "--lam", "0.05:1:300", *FLAGS, "--jobs", "2"]
    proc = _start([*argv, *backend])
    seen: set[int] = set()
    _when_cells(out, 3, proc, seen)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(60) == 130
    err = proc.stderr.read()
    proc.stderr.close()
    assert err.count("\n") == 1, err  # no worker's traceback, no log line
    kept = int(re.search(r"; (\d+) finished cells are kept in", err).group(1))
    assert "slr-theory atlas: interrupted (Ctrl-C)" in err and "run the same command again" in err
    assert not _all_gone(seen)
    partial = read_atlas(out)
    assert len(partial.rows) == kept >= 3 and partial.rejected == {}


def test_kill_9_of_the_atlas_leaves_no_worker(tmp_path):
    out = tmp_path / "a"
    proc = _start([*CMD, "atlas", "--out", str(out), "--lam", "0.05:1:300", *FLAGS, "--jobs", "2"])
    seen: set[int] = set()
    _when_cells(out, 2, proc, seen)
    seen |= _descendants(proc.pid)
    assert len(seen) >= 2  # the workers (and the spawn's resource tracker)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    proc.stderr.close()
    assert not _all_gone(seen)
    assert read_atlas(out).rejected == {}  # what was committed is whole


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_lost_scheduler_is_one_line_and_exit_75_and_the_run_resumes(tmp_path):
    pytest.importorskip("dask.distributed")
    dask = shutil.which("dask", path=os.path.dirname(sys.executable)) or shutil.which("dask")
    if dask is None:
        pytest.skip("no dask command")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = _start([dask, "scheduler", "--port", str(port), "--no-dashboard"])
    worker = _start(
        [dask, "worker", address, "--nthreads", "1", "--nworkers", "2", "--no-dashboard",
         "--preload", "slr_theory.survey"]
    )  # fmt: skip
    out = tmp_path / "a"
    try:
        proc = _start([*CMD, "atlas", "--out", str(out), "--scheduler", address,
                       "--lam", "0.05:1:24", *FLAGS])  # fmt: skip
        _when_cells(out, 3, proc, set())
        scheduler.kill()
        assert proc.wait(120) == 75
        err = proc.stderr.read()
        proc.stderr.close()
    finally:
        for p in (scheduler, worker):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(30)
            p.stderr.close()
    assert err.count("\n") == 1, err
    assert err.startswith("slr-theory atlas: stopped: the atlas stopped after ")
    kept = int(re.search(r"the (\d+) finished cells are kept", err).group(1))
    assert len(read_atlas(out).rows) == kept
    again = subprocess.run(
        [*CMD, "atlas", "--out", str(out), "--lam", "0.05:1:24", *FLAGS, "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert len(json.loads(again.stdout)["rows"]) == 24


def _fault_run(tmp_path, n: int) -> None:
    """A LocalCluster of 2 single-threaded workers runs `n` cells; a worker is killed a
    quarter of the way, the client is closed and a new one connected half of the way;
    the atlas resumes and ends with every cell once and the rows of a serial run."""
    distributed = pytest.importorskip("dask.distributed")
    lams = _lams(n)
    out = tmp_path / "a"
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        dashboard_address=None,
        silence_logs=50,
        preload=["slr_theory.survey"],
    )
    client = distributed.Client(cluster)
    killed = []
    try:

        def progress(done, total):
            if done == n // 4 and not killed:
                pid = next(iter(client.run(os.getpid).values()))
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            if done == n // 2:
                client.close()

        with pytest.raises(AtlasIncomplete, match=f"stopped after {n // 2} of {n} cells") as info:
            atlas(BASE, lam=lams, **CHEAP, backend="dask", client=client, out=out,
                  progress=progress)  # fmt: skip
        assert killed and info.value.done == n // 2
        client = distributed.Client(cluster)
        resumed = atlas(BASE, lam=lams, **CHEAP, backend="dask", client=client, out=out)
    finally:
        client.close()
        cluster.close()
    assert resumed.missing == [] and [r["cell"] for r in resumed.rows] == list(range(n))
    journal = [json.loads(x)["file"] for x in (out / JOURNAL_NAME).read_text().splitlines()]
    assert sorted(journal) == [f"cell-{i:06d}.json" for i in range(n)]  # each written once
    assert not [k for k, c in collections.Counter(journal).items() if c > 1]
    serial = atlas(BASE, lam=lams, **CHEAP, jobs=1)
    assert _strip(resumed.rows) == _strip(serial.rows)


def test_a_cluster_survives_a_killed_worker_and_a_restarted_client(tmp_path):
    _fault_run(tmp_path, 12)


@pytest.mark.slow
def test_two_thousand_cells_survive_a_killed_worker_and_a_restarted_client(tmp_path):
    _fault_run(tmp_path, 2000)


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--jobs", "4096"], "argument --jobs: `jobs` must be at most the"),
        (["--scheduler", "tcp://127.0.0.1:1", "--jobs", "1"], "argument --jobs: the cells run"),
        (["--d", "2"], "argument --d: `d` must be at least 4"),
        (["--lam", "1,1.0"], "argument --lam: must not repeat a value"),
        (["--lam", "0.1,0.2", "--L", "4,6", "--gamma", "0.5,0.7", "--plot"], "argument --plot"),
        (["--attention", "pointwise,softmax", "--plot"], "argument --plot"),
    ],
)
def test_bad_atlas_flags_are_refused_in_one_line_before_any_work(tmp_path, capsys, argv, match):
    from slr_theory.cli import main

    out = tmp_path / "a"
    assert main(["atlas", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err
    assert not out.exists()
