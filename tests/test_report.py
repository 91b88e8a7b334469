"""slr-theory report: complete, atomic, refuses to overwrite, and its sections render."""

import os
from pathlib import Path

import pytest

from slr_theory import Params
from slr_theory import report as rep
from slr_theory.cli import main
from slr_theory.output import LOCK_NAME, STAGING_PREFIX


@pytest.fixture
def quick(monkeypatch):
    """Every section replaced by a stub that writes one figure-like file (mechanics only)."""

    def stub(name):
        def section(ctx):
            (ctx["dir"] / f"{name}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"0" * 100)
            return [f"## {name}", "", f"![{name}]({name}.png)", ""]

        return section

    for name in (
        "_header",
        "_verification",
        "_risk",
        "_critical",
        "_portrait",
        "_landscape",
        "_experiments",
        "_statistics",
    ):
        monkeypatch.setattr(rep, name, stub(name))


def _leftovers(parent: Path):
    """Staging folders or locks anywhere below `parent` (the marker is meant to stay)."""
    return [
        p
        for p in parent.rglob(".slr-*")
        if p.name.startswith(STAGING_PREFIX) or p.name == LOCK_NAME
    ]


def test_writes_report_and_refuses_a_non_empty_directory(tmp_path, quick):
    out = tmp_path / "r"
    path = rep.write_report(out)
    assert path == out / "report.md" and "## _portrait" in path.read_text()
    with pytest.raises(FileExistsError, match="not empty"):
        rep.write_report(out)
    (out / "mine.txt").write_text("keep")
    with pytest.raises(FileExistsError):
        rep.write_report(out)
    assert (out / "mine.txt").read_text() == "keep"
    rep.write_report(out, force=True)  # the earlier report's files are replaced ...
    assert (out / "report.md").exists()
    assert (out / "mine.txt").read_text() == "keep"  # ... and the user's file is kept
    assert not _leftovers(tmp_path)


def test_an_interrupted_report_leaves_nothing_behind(tmp_path, quick, monkeypatch):
    def boom(ctx):
        (ctx["dir"] / "half.png").write_bytes(b"\x89PNG")
        raise KeyboardInterrupt

    monkeypatch.setattr(rep, "_landscape", boom)
    out = tmp_path / "r"
    with pytest.raises(KeyboardInterrupt):
        rep.write_report(out)
    assert not out.exists() and not _leftovers(tmp_path)
    # an existing report survives an interrupted --force rerun, then a rerun works
    monkeypatch.undo()
    monkeypatch.setattr(rep, "_landscape", lambda ctx: ["## ok"])
    for name in (
        "_header",
        "_verification",
        "_risk",
        "_critical",
        "_portrait",
        "_experiments",
        "_statistics",
    ):
        monkeypatch.setattr(rep, name, lambda ctx: ["## ok"])
    rep.write_report(out)
    monkeypatch.setattr(rep, "_landscape", boom)
    with pytest.raises(KeyboardInterrupt):
        rep.write_report(out, force=True)
    assert (out / "report.md").exists() and not _leftovers(tmp_path)


def test_bad_out_and_arguments(tmp_path, quick):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="directory"):
        rep.write_report(f)
    with pytest.raises(FileNotFoundError):
        rep.write_report(tmp_path / "missing" / "r")
    with pytest.raises(ValueError, match="seed"):
        rep.write_report(tmp_path / "r", seed=-1)
    with pytest.raises(ValueError, match="params"):
        rep.write_report(tmp_path / "r", params="paper")


def test_cli_report_usage_errors_are_one_line(tmp_path, quick, capsys):
    out = tmp_path / "r"
    out.mkdir()
    (out / "x").write_text("x")
    assert main(["report", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not empty" in err and len(err.strip().splitlines()) == 1
    assert main(["report", "--out", str(tmp_path / "ok"), "--lam", "0"]) == 2
    assert main(["report", "--out", str(tmp_path / "ok")]) == 0
    assert os.path.exists(tmp_path / "ok" / "report.md")


def test_sections_render_with_real_numbers(tmp_path):
    """The cheap sections on small parameters (the full report is in the slow suite)."""
    p = Params(d=12, L=4, lam=0.3, gamma=0.7)
    ctx = {"params": p, "alpha": 0.02, "seed": 0, "full": False, "dir": tmp_path}
    text = "\n".join(rep._risk(ctx) + rep._critical(ctx) + rep._statistics(ctx))
    assert "the optimum (1, 1)" in text and "complete by proof" in text
    assert "| d | L |" in text and "strict saddle" in text


@pytest.mark.slow
def test_the_full_report_on_the_paper_parameters(tmp_path):
    path = rep.write_report(tmp_path / "r")
    text = path.read_text()
    for heading in ("## 1.", "## 3.", "## 4.", "## 5.", "## 6.", "## 7."):
        assert heading in text
    pngs = list((tmp_path / "r").glob("*.png"))
    assert len(pngs) >= 9 and all(p.stat().st_size > 20_000 for p in pngs)
