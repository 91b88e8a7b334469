"""The command as a process: signals, closed pipes, full disks, worker processes.

Each test runs ``python -m slr_theory`` in a subprocess, as a user's shell would, and
checks its exit status, its one line on stderr, the files it left and the processes.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from slr_theory import cli
from slr_theory.output import LOCK_NAME, STAGING_PREFIX

CMD = [sys.executable, "-m", "slr_theory"]


def _descendants(pid: int) -> set[int]:
    """Every process below `pid` (Linux /proc)."""
    out: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = Path(f"/proc/{p}/task/{t}/children").read_text().split()
            except OSError:
                kids = []
            for k in map(int, kids):
                if k not in out:
                    out.add(k)
                    todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize(
    "sig, group",
    [(signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGINT, True)],
    ids=["SIGTERM-to-main", "SIGTERM-to-group", "Ctrl-C"],
)
def test_a_signal_to_reproduce_with_workers_leaves_no_process_and_no_file(tmp_path, sig, group):
    out = tmp_path / "figures"
    proc = subprocess.Popen(
        [
            *CMD,
            "reproduce",
            "all",
            "--out",
            str(out),
            "--repeats",
            "2",
            "--steps-scale",
            "0.5",
            "--jobs",
            "2",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    seen: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (out.exists() and len(seen) >= 2):
        seen |= _descendants(proc.pid)  # the SGD worker and the spawn's helper
        time.sleep(0.05)
    time.sleep(0.5)
    seen |= _descendants(proc.pid)
    assert proc.poll() is None and len(seen) >= 2, "the run ended before the signal"
    if group:
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    code = proc.wait(60)
    err = proc.stderr.read()
    proc.stderr.close()
    assert code == (143 if sig == signal.SIGTERM else 130)
    assert "interrupted" in err and "Traceback" not in err
    time.sleep(0.5)
    assert not [p for p in seen if _alive(p)]
    assert not out.exists()  # the run created it and committed nothing: it is gone


def _report(out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*CMD, "report", "--jobs", "2", "--out", str(out)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own group: a Ctrl-C goes to all of it, as in a terminal
    )


def _workers_of(proc: subprocess.Popen, at_least: int = 2, timeout: float = 60) -> set[int]:
    """`proc`'s descendants once there are `at_least` (its worker and the spawn's tracker)."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and len(seen) < at_least and proc.poll() is None:
        seen |= _descendants(proc.pid)
        time.sleep(0.05)
    time.sleep(2.0)  # into the worker's computing (its checks: tqdm's lock made)
    seen |= _descendants(proc.pid)
    assert proc.poll() is None and len(seen) >= at_least, "the run ended before the signal"
    return seen


def test_kill_9_of_a_report_with_a_worker_leaves_no_process(tmp_path):
    """The report's worker exits with its parent, even one killed by SIGKILL."""
    proc = _report(tmp_path / "r")
    seen = _workers_of(proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    proc.stderr.close()
    deadline = time.monotonic() + 15
    while [p for p in seen if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in seen if _alive(p)]


def test_kill_9_of_reproduce_with_workers_leaves_no_process(tmp_path):
    proc = subprocess.Popen(
        [*CMD, "reproduce", "all", "--out", str(tmp_path / "f"), "--repeats", "2", "--jobs", "2"],
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    seen = _workers_of(proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    deadline = time.monotonic() + 15
    while [p for p in seen if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in seen if _alive(p)]


def test_ctrl_c_of_a_report_with_a_worker_is_one_line_and_no_leak_warning(tmp_path):
    """The worker's progress bars hold no process-shared lock that its end would leak:
    the resource tracker has nothing to warn about after the one line."""
    proc = _report(tmp_path / "r")
    seen = _workers_of(proc)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(60) == 130
    time.sleep(1.0)  # the tracker's warning, if any, comes as it exits
    err = proc.stderr.read()
    proc.stderr.close()
    lines = [line for line in err.splitlines() if line and not line.startswith("report: ")]
    assert lines == [
        "slr-theory: interrupted (Ctrl-C); outputs are committed only when complete, so "
        "every destination holds what it held before"
    ], err
    assert not [p for p in seen if _alive(p)]


@pytest.mark.parametrize("entry", ["script", "module"])
def test_ctrl_c_while_the_command_starts_is_one_line_and_exit_130(entry):
    """At every moment of the start (13 moments spread over the time the command takes
    uninterrupted, measured first): one line and 130,
    never an import's traceback, or an ImportError NumPy makes of an interrupted import.
    Before the interpreter has run any of our code, SIGINT ends it silently (a shell's
    130 too: killed by signal 2), or, under load, inside CPython's own import of its site
    module ("Fatal Python error: init_import_site", exit 1), which no package can change."""
    import shutil

    script = shutil.which("slr-theory", path=os.path.dirname(sys.executable))
    if entry == "script" and script is None:
        pytest.skip("no slr-theory script beside this interpreter")
    argv = [script] if entry == "script" else CMD
    lines = {
        "slr-theory: interrupted (Ctrl-C) while starting; nothing was written",
        "slr-theory: interrupted (Ctrl-C); outputs are committed only when complete, so "
        "every destination holds what it held before",
    }
    command = [*argv, "risk", "--kappa", "0.5", "--nu", "0.5"]
    t0 = time.perf_counter()  # the whole start, uninterrupted: the moments to interrupt
    subprocess.run(command, capture_output=True, check=True, timeout=60)
    whole = time.perf_counter() - t0
    for delay in np.linspace(0.0, whole, 13):
        proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(60)
        err = proc.stderr.read()
        proc.stderr.close()
        if code == 0:  # the command had finished: nothing was interrupted
            continue
        if code == 1 and err.startswith("Fatal Python error: init_import_site"):
            continue  # CPython's own start-up (its site module), before any code of ours
        assert code in (130, -signal.SIGINT), (delay, code, err)
        assert set(err.splitlines()) <= lines and err.count("\n") <= 1, (delay, err)


def test_a_closed_stdout_ends_quietly():
    proc = subprocess.Popen(
        [*CMD, "risk", "--kappa", "0.5", "--nu", "0.5", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # `| head` that has read enough
    code = proc.wait(60)
    err = proc.stderr.read()
    proc.stderr.close()
    assert code == 141 and err == b""


def test_a_full_disk_is_an_io_error_in_one_line():
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*CMD, "risk", "--kappa", "0.5", "--nu", "0.5"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert done.returncode == 74
    assert done.stderr.strip() == "slr-theory: I/O error: No space left on device"


def test_a_full_disk_while_writing_a_figure_leaves_nothing(tmp_path, monkeypatch, capsys):
    import slr_theory.plotting as plotting

    def full(params, path, **kw):
        Path(path).write_bytes(b"\x89PNG partial")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(plotting, "phase_portrait", full)
    assert cli.main(["portrait", "--out", str(tmp_path / "p.png")]) == 74
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("slr-theory: I/O error writing")
    assert list(tmp_path.iterdir()) == []


def _holds(pid: int, lock: Path) -> bool:
    """Whether process `pid` holds the lock file `lock` (its pid written there)."""
    try:
        return lock.read_text().strip() == str(pid)
    except FileNotFoundError:
        return False


def test_two_runs_into_one_folder_at_once_the_second_is_refused(tmp_path):
    """The first holds the lock for its whole run; the second exits 2 naming --out, and the
    first, held still (SIGSTOP) while the second tries, then completes as if alone."""
    out = tmp_path / "figures"
    out.mkdir()
    first = subprocess.Popen(
        [*CMD, "reproduce", "gd_manifold", "--out", str(out), "--repeats", "1",
         "--steps-scale", "0.01", "--jobs", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    # held, not only created: the holder writes its pid into the lock file once its flock
    # is taken (held still between the two, the first left the lock to the second)
    while not _holds(first.pid, out / LOCK_NAME) and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(first.pid, signal.SIGSTOP)
    try:
        assert first.poll() is None, "the first run ended before it could be held"
        second = subprocess.run(
            [*CMD, "portrait", "--out", str(out / "q.png")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert first.wait(300) == 0
    assert second.returncode == 2
    assert second.stderr.count("\n") == 1
    assert "argument --out: another slr-theory run" in second.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [".slr-theory.json", "gd_manifold.csv", "gd_manifold.png"]
    assert not [n for n in names if n.startswith(STAGING_PREFIX)]


def test_a_report_into_a_folder_another_run_holds_is_refused_at_once(tmp_path, capsys):
    out = tmp_path / "report"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from slr_theory.output import Destination\n"
            "with Destination(sys.argv[1]):\n"
            "    print('holding', flush=True)\n"
            "    time.sleep(60)\n",
            str(out),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        t0 = time.monotonic()
        assert cli.main(["report", "--out", str(out)]) == 2
        assert time.monotonic() - t0 < 5  # at the door, before any section runs
    finally:
        holder.stdout.close()
        holder.send_signal(signal.SIGTERM)
        holder.wait(30)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("slr-theory report: error: argument --out: another slr-theory run")
    assert not out.exists()
