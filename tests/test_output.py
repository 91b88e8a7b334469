"""The output discipline (slr_theory/output.py): nothing slr-theory writes can cost a file.

Every case ends by checking the destination file by file (names and bytes), and that no
staging folder, lock or partial file is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from slr_theory import output
from slr_theory.output import (
    LOCK_NAME,
    MARKER_NAME,
    STAGING_PREFIX,
    Destination,
    DestinationBusy,
    OutputConflict,
    Refusal,
    Terminated,
)


def state(d: Path) -> dict[str, bytes]:
    """Every entry of `d` with its bytes (folders as None): the whole observable state."""
    if not d.exists():
        return {}
    return {p.name: (p.read_bytes() if p.is_file() else None) for p in sorted(d.iterdir())}


def debris(d: Path) -> list[str]:
    return [
        p.name for p in d.iterdir() if p.name.startswith(STAGING_PREFIX) or p.name == LOCK_NAME
    ]


def write(d: Path, files: dict[str, str], **kw) -> Destination:
    with Destination(d, expect=list(files), **kw) as dest:
        for name, text in files.items():
            dest.file(name).write_text(text)
    return dest


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_writes_files_and_a_marker_with_their_digests(tmp_path):
    import hashlib

    dest = write(tmp_path / "out", {"a.txt": "A", "b.csv": "B"})
    assert sorted(p.name for p in dest.committed) == ["a.txt", "b.csv"]
    s = state(tmp_path / "out")
    assert set(s) == {"a.txt", "b.csv", MARKER_NAME}
    marker = json.loads(s[MARKER_NAME])
    assert marker["written_by"] == "slr-theory"
    assert marker["files"] == {
        "a.txt": hashlib.sha256(b"A").hexdigest(),
        "b.csv": hashlib.sha256(b"B").hexdigest(),
    }


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002, 0o027])
def test_permissions_follow_the_umask(tmp_path, mask):
    with umask(mask):
        write(tmp_path / "out", {"a.txt": "A"})
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o777 & ~mask
    for name in ("a.txt", MARKER_NAME):
        assert (tmp_path / "out" / name).stat().st_mode & 0o777 == 0o666 & ~mask


def test_an_existing_file_needs_force_and_force_replaces_only_our_own(tmp_path):
    d = tmp_path / "out"
    write(d, {"a.txt": "first"})
    with pytest.raises(OutputConflict, match="exists; pass --force"):
        write(d, {"a.txt": "second"})
    assert (d / "a.txt").read_text() == "first"
    write(d, {"a.txt": "second"}, force=True)  # ours, unchanged: replaced
    assert (d / "a.txt").read_text() == "second"
    (d / "mine.txt").write_text("the user's")
    with pytest.raises(OutputConflict, match="not written by slr-theory"):
        write(d, {"mine.txt": "x"}, force=True)
    (d / "a.txt").write_text("edited by the user")  # ours once, changed since: the user's
    with pytest.raises(OutputConflict, match="changed since"):
        write(d, {"a.txt": "third"}, force=True)
    assert (d / "a.txt").read_text() == "edited by the user"
    assert (d / "mine.txt").read_text() == "the user's"
    assert not debris(d)


def test_a_conflict_is_refused_at_the_door_before_any_work(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    (d / "a.txt").write_text("the user's")
    ran = []
    with pytest.raises(OutputConflict) as info:
        with Destination(d, expect=["a.txt"], force=True):
            ran.append(1)
    assert not ran and isinstance(info.value, Refusal) and info.value.argument == "out"
    assert state(d) == {"a.txt": b"the user's"}


def test_exclusive_keeps_the_users_files_and_drops_only_our_stale_ones(tmp_path):
    d = tmp_path / "report"
    write(d, {"report.md": "one", "fig1.png": "1", "fig2.png": "2"}, exclusive=True)
    with pytest.raises(OutputConflict, match="not empty"):
        write(d, {"report.md": "two"}, exclusive=True)
    (d / "notes.txt").write_text("keep me")
    write(d, {"report.md": "two", "fig1.png": "1b"}, exclusive=True, force=True)
    s = state(d)
    assert set(s) == {"report.md", "fig1.png", "notes.txt", MARKER_NAME}  # fig2 was ours
    assert s["notes.txt"] == b"keep me" and s["report.md"] == b"two"
    assert set(json.loads(s[MARKER_NAME])["files"]) == {"report.md", "fig1.png"}


def test_force_into_a_folder_that_never_held_a_result_deletes_nothing(tmp_path):
    d = tmp_path / "photos"
    d.mkdir()
    (d / "cat.jpg").write_bytes(b"\xff\xd8 cat")
    write(d, {"report.md": "r"}, exclusive=True, force=True)
    assert (d / "cat.jpg").read_bytes() == b"\xff\xd8 cat"


def test_a_file_added_meanwhile_is_never_replaced_and_the_commit_says_so(tmp_path):
    d = tmp_path / "out"
    with pytest.raises(OutputConflict, match="appeared while the run was writing"):
        with Destination(d, expect=["report.md"], exclusive=True) as dest:
            dest.file("report.md").write_text("ours")
            (d / "report.md").write_text("the user's, written meanwhile")
    assert state(d) == {"report.md": b"the user's, written meanwhile"}
    # an unrelated file added meanwhile is simply left where it is
    with Destination(d, expect=["r.md"], force=True, exclusive=True) as dest:
        dest.file("r.md").write_text("ours")
        (d / "other.txt").write_text("user")
    assert (d / "other.txt").read_text() == "user" and (d / "r.md").read_text() == "ours"
    assert not debris(d)


def test_a_failed_or_interrupted_run_leaves_the_old_state_and_no_debris(tmp_path):
    d = tmp_path / "out"
    for exc in (KeyboardInterrupt, Terminated, RuntimeError):
        with pytest.raises(exc):
            with Destination(d, expect=["a.txt"]) as dest:
                dest.file("a.txt").write_text("half")
                raise exc()
        assert not d.exists()  # the run created it, so the run removes it
    write(d, {"a.txt": "old"})
    before = state(d)
    with pytest.raises(KeyboardInterrupt):
        with Destination(d, expect=["a.txt"], force=True) as dest:
            dest.file("a.txt").write_text("new")
            raise KeyboardInterrupt
    assert state(d) == before


def _count_renames(tmp_path) -> int:
    """How many renames one commit of the scenario below makes (the kill points)."""
    calls = []
    real = output.destination._rename

    def counting(src, dst):
        calls.append(1)
        real(src, dst)

    d = tmp_path / "count"
    write(d, {"a.txt": "0", "b.txt": "0", "stale.txt": "0"}, exclusive=True)
    output.destination._rename = counting
    try:
        write(d, {"a.txt": "1", "b.txt": "1", "c.txt": "1"}, exclusive=True, force=True)
    finally:
        output.destination._rename = real
    return len(calls)


def _scenario(d: Path, monkeypatch, at: int, fault) -> None:
    """Commit new files over an earlier run's, with `fault()` at the `at`-th rename."""
    real = output.destination._rename
    seen = []

    def faulty(src, dst):
        seen.append(1)
        if len(seen) == at:
            fault()
        real(src, dst)

    monkeypatch.setattr(output.destination, "_rename", faulty)
    write(d, {"a.txt": "1", "b.txt": "1", "c.txt": "1"}, exclusive=True, force=True)


@pytest.fixture
def earlier(tmp_path):
    d = tmp_path / "out"
    write(d, {"a.txt": "0", "b.txt": "0", "stale.txt": "0"}, exclusive=True)
    (d / "user.txt").write_text("the user's")
    return d, state(d)


def _new_state_holds(d: Path) -> None:
    s = state(d)
    assert {k: v for k, v in s.items() if k != MARKER_NAME} == {
        "a.txt": b"1",
        "b.txt": b"1",
        "c.txt": b"1",
        "user.txt": b"the user's",
    }
    assert set(json.loads(s[MARKER_NAME])["files"]) == {"a.txt", "b.txt", "c.txt"}


def test_the_kill_points_are_counted(tmp_path):
    # a, b, c and the marker each: back up the old (if any), move the new in; stale: back up
    assert _count_renames(tmp_path) == 2 + 2 + 1 + 2 + 1


@pytest.mark.parametrize("at", range(1, 9))
def test_an_error_at_any_rename_of_the_commit_restores_the_old_state(earlier, monkeypatch, at):
    d, before = earlier

    def fault():
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        _scenario(d, monkeypatch, at, fault)
    assert state(d) == before and not debris(d)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("at", range(1, 9))
def test_a_signal_at_any_rename_of_the_commit_waits_for_the_new_state(
    earlier, monkeypatch, at, sig
):
    d, _ = earlier
    expected = KeyboardInterrupt if sig == signal.SIGINT else Terminated
    with pytest.raises(expected):
        _scenario(d, monkeypatch, at, lambda: os.kill(os.getpid(), sig))
    _new_state_holds(d)
    assert not debris(d)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


def test_a_second_writer_is_refused_while_the_first_runs(tmp_path):
    d = tmp_path / "out"
    with Destination(d, expect=["a.txt"]) as first:
        first.file("a.txt").write_text("first")
        with pytest.raises(DestinationBusy, match=f"pid {os.getpid()}"):
            with Destination(d, expect=["b.txt"]):
                pass
    assert (d / "a.txt").read_text() == "first" and not debris(d)
    write(d, {"b.txt": "second"})  # free again afterwards


HOLDER = textwrap.dedent(
    """
    import sys, time
    from slr_theory.output import Destination
    with Destination(sys.argv[1], expect=["held.txt"]) as dest:
        dest.file("held.txt").write_text("from the holder")
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


def _holder(d: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(d), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "holding"
    proc.stdout.close()
    return proc


def test_two_processes_into_one_destination(tmp_path):
    d = tmp_path / "out"
    proc = _holder(d, 30)
    try:
        with pytest.raises(DestinationBusy, match=f"pid {proc.pid}"):
            write(d, {"a.txt": "x"})
    finally:
        proc.send_signal(signal.SIGTERM)  # the holder cleans up on SIGTERM, too
        assert proc.wait(20) == 1  # Terminated propagates: Python's exit status 1
    assert state(d) == {}  # the holder created d, committed nothing, and removed it
    assert not d.exists()


def test_a_killed_writer_never_blocks_the_next_and_its_debris_is_cleared(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    proc = _holder(d, 30)
    proc.kill()  # SIGKILL: nothing can clean up
    proc.wait(20)
    assert debris(d)  # the abandoned lock and staging folder
    write(d, {"a.txt": "next run"})
    assert state(d).keys() == {"a.txt", MARKER_NAME} and not debris(d)


def test_a_symlinked_destination_stays_a_symlink(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    write(link, {"a.txt": "A"}, exclusive=True)
    write(link, {"a.txt": "B"}, exclusive=True, force=True)
    assert link.is_symlink() and (real / "a.txt").read_text() == "B"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="symlink to a missing"):
        write(dangling, {"a.txt": "A"})
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_symlink_inside_the_destination_is_the_users(tmp_path):
    d = tmp_path / "out"
    write(d, {"a.txt": "A"})
    target = tmp_path / "elsewhere.txt"
    target.write_text("precious")
    (d / "a.txt").unlink()
    (d / "a.txt").symlink_to(target)
    with pytest.raises(OutputConflict):
        write(d, {"a.txt": "B"}, force=True)
    assert target.read_text() == "precious" and (d / "a.txt").is_symlink()


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda t: (t / "f").write_text("x") and t / "f", "must be a directory"),
        (lambda t: (t / "f").write_text("x") and t / "f" / "sub", "is not a directory"),
        (lambda t: t / "missing" / "sub", "does not exist"),
        (lambda t: "", "must name a directory"),
    ],
)
def test_bad_destinations_are_refused_naming_the_argument(tmp_path, make, match):
    with pytest.raises((ValueError, OSError)) as info:
        Destination(make(tmp_path), argument="out")
    assert isinstance(info.value, Refusal) and match in str(info.value)
    assert "`out`" in str(info.value)


def test_an_unwritable_destination_is_refused(tmp_path):
    # /proc and /sys refuse new files even to root, whom permission bits do not stop
    for d in (Path("/proc"), Path("/sys/slr-theory-test")):
        with pytest.raises(PermissionError, match=r"cannot (write in|create)"):
            write(d, {"a.txt": "A"})
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        with pytest.raises(PermissionError, match="cannot write"):
            write(ro, {"a.txt": "A"})


def test_reserved_and_nested_names_are_refused(tmp_path):
    for bad in (MARKER_NAME, LOCK_NAME, "a/b.txt", "..", ""):
        with pytest.raises(ValueError, match="name"):
            Destination(tmp_path / "o", expect=[bad])


def test_deferred_signals_deliver_after_the_block():
    seen = []
    old = signal.signal(signal.SIGUSR1, lambda s, f: seen.append(s))
    try:
        with output.deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
            seen.append("inside, not interrupted")
        pytest.fail("the held SIGINT must be raised at the end of the block")
    except KeyboardInterrupt:
        assert seen == ["inside, not interrupted"]
    finally:
        signal.signal(signal.SIGUSR1, old)


@pytest.mark.parametrize("text", ["[1, 2]", "not json", '{"written_by": "someone else"}', "{}"])
def test_a_marker_that_is_not_ours_makes_nothing_replaceable(tmp_path, text):
    d = tmp_path / "out"
    write(d, {"a.txt": "A"})
    (d / MARKER_NAME).write_text(text)
    with pytest.raises(OutputConflict, match="not written by slr-theory"):
        write(d, {"a.txt": "B"}, force=True)
    assert (d / "a.txt").read_text() == "A"


# -- files committed one at a time (the atlas's cells) -----------------------------------


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_commit_file_records_each_file_in_the_journal_and_the_marker_stays(tmp_path):
    d = tmp_path / "out"
    with Destination(d) as dest:
        dest.file("spec.json").write_text("{}")
        dest.commit()
        marker = (d / MARKER_NAME).read_bytes()
        for i in range(3):
            dest.file(f"cell-{i}.json").write_text(f"cell {i}")
            assert dest.commit_file(f"cell-{i}.json") == d / f"cell-{i}.json"
            assert (d / MARKER_NAME).read_bytes() == marker  # not rewritten per file
        dest.file("table.csv").write_text("a,b")
    lines = (d / output.JOURNAL_NAME).read_text().splitlines()
    assert [json.loads(x) for x in lines] == [
        {"file": f"cell-{i}.json", "sha256": _sha(f"cell {i}".encode())} for i in range(3)
    ]
    assert output.written_files(d) == {
        "spec.json": _sha(b"{}"),
        "table.csv": _sha(b"a,b"),
        **{f"cell-{i}.json": _sha(f"cell {i}".encode()) for i in range(3)},
    }
    assert set(json.loads((d / MARKER_NAME).read_text())["files"]) == {"spec.json", "table.csv"}
    assert not debris(d)


def test_a_file_committed_alone_is_never_replaced_unless_ours_and_forced(tmp_path):
    d = tmp_path / "out"
    with Destination(d) as dest:
        dest.file("c.json").write_text("first")
        dest.commit_file("c.json")
    with pytest.raises(OutputConflict, match="appeared while the run was writing"):
        with Destination(d) as dest:
            dest.file("c.json").write_text("second")
            dest.commit_file("c.json")  # no force: even our own file stays
    assert (d / "c.json").read_text() == "first"
    with Destination(d, force=True) as dest:
        dest.file("c.json").write_text("third")
        dest.commit_file("c.json")  # ours and unchanged: replaced
    assert (d / "c.json").read_text() == "third"
    (d / "c.json").write_text("the user's edit")
    (d / "mine.json").write_text("the user's file")
    for name in ("c.json", "mine.json"):
        with pytest.raises(OutputConflict, match="was not written by slr-theory"):
            with Destination(d, force=True) as dest:
                dest.file(name).write_text("ours")
                dest.commit_file(name)
    assert (d / "c.json").read_text() == "the user's edit"
    assert (d / "mine.json").read_text() == "the user's file"
    assert output.written_files(d)["c.json"] == _sha(b"third")  # the record did not move
    assert not debris(d)


def test_a_torn_journal_line_records_nothing_and_the_rest_stands(tmp_path):
    d = tmp_path / "out"
    with Destination(d) as dest:
        dest.file("a.json").write_text("a")
        dest.commit_file("a.json")
    with open(d / output.JOURNAL_NAME, "ab") as f:  # a kill in the middle of an append
        f.write(b'{"file": "b.json", "sha2')
    assert output.written_files(d) == {"a.json": _sha(b"a")}
    with Destination(d) as dest:  # the next run appends after the torn line
        dest.file("b.json").write_text("b")
        dest.commit_file("b.json")
    assert output.written_files(d) == {"a.json": _sha(b"a"), "b.json": _sha(b"b")}


def test_a_whole_commit_of_a_journaled_name_takes_it_out_of_the_journal(tmp_path):
    d = tmp_path / "out"
    with Destination(d) as dest:
        dest.file("a.json").write_text("a")
        dest.commit_file("a.json")
        dest.file("b.json").write_text("b")
        dest.commit_file("b.json")
    with Destination(d, force=True, expect=["a.json"]) as dest:
        dest.file("a.json").write_text("a, whole")
    assert [json.loads(x)["file"] for x in (d / output.JOURNAL_NAME).read_text().splitlines()] == [
        "b.json"
    ]
    assert output.written_files(d) == {"a.json": _sha(b"a, whole"), "b.json": _sha(b"b")}


def test_an_exclusive_result_folds_the_journal_and_drops_our_stale_files(tmp_path):
    d = tmp_path / "out"
    with Destination(d) as dest:
        dest.file("cell.json").write_text("c")
        dest.commit_file("cell.json")
    (d / "notes.txt").write_text("the user's")
    with Destination(d, exclusive=True, force=True, expect=["report.md"]) as dest:
        dest.file("report.md").write_text("r")
    assert set(state(d)) == {"report.md", "notes.txt", MARKER_NAME}  # journal and cell gone
    assert output.written_files(d) == {"report.md": _sha(b"r")}


def test_set_aside_keeps_the_bytes_under_a_new_name_and_frees_the_name(tmp_path):
    d = tmp_path / "out"
    with Destination(d) as dest:
        dest.file("c.json").write_text("ours")
        dest.commit_file("c.json")
    (d / "c.json").write_text("edited")
    (d / "c.json.rejected").write_text("an earlier rejected copy")
    with Destination(d) as dest:
        moved = dest.set_aside("c.json")
        assert moved == d / "c.json.rejected-2"
        dest.file("c.json").write_text("again")
        dest.commit_file("c.json")
    assert (d / "c.json.rejected-2").read_text() == "edited"
    assert (d / "c.json.rejected").read_text() == "an earlier rejected copy"
    assert (d / "c.json").read_text() == "again"
    assert output.written_files(d)["c.json"] == _sha(b"again")


def test_commit_file_needs_a_staged_file_and_a_shared_destination(tmp_path):
    with Destination(tmp_path / "a") as dest:
        with pytest.raises(ValueError, match=r"`name`.*not staged"):
            dest.commit_file("nothing.json")
    with Destination(tmp_path / "b", exclusive=True) as dest:
        dest.file("x").write_text("x")
        with pytest.raises(RuntimeError, match="exclusive"):
            dest.commit_file("x")


def test_file_digest_is_the_sha256_the_record_holds(tmp_path):
    import hashlib

    from slr_theory.output import Destination, file_digest, written_files

    with Destination(tmp_path / "out") as dest:
        dest.file("a.bin").write_bytes(bytes(range(256)) * 5000)  # over one read block
    path = tmp_path / "out" / "a.bin"
    assert file_digest(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert written_files(tmp_path / "out")["a.bin"] == file_digest(path)
