"""The contract of every command, fuzzed flag by flag.

Any value of any flag gives exit 0 (with output) or 1 (a check failed), or exit 2 with
one line on stderr that names the flag; never a traceback, never exit 3 (an internal
error). Each command has a cheap valid invocation in :data:`BASE`; its flags are
replaced one at a time. The commands that take minutes (``report``, ``reproduce``,
``portrait``, ``atlas``) run with their computation replaced by a stub that checks what it
receives, and ``critical --alpha`` with a stub Lipschitz bound: their flags are validated
before any computing, which is what is fuzzed here.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from slr_theory import OVERLAP_NAMES, cli
from slr_theory.verify import registry as verify_registry

MODEL = "--d 400 --L 10 --lam 0.1 --gamma 0.7 --eps 0.0 --attention pointwise"
BASE: dict[str, list[str]] = {
    name: argv.split()
    for name, argv in {
        "report": f"report --out rep --alpha 4e-3 --seed 0 {MODEL}",
        "verify": "verify --only gaussian.zeta --samples 1000 --seed 1",
        "risk": f"risk --kappa 0.5 --nu 0.4 --theta 0 --eta 0 --rho 0 {MODEL}",
        "flow": "flow --kappa0 0.1 --nu0 0.05 --theta0 0 --eta0 0 --rho0 0 --t-max 5 "
        f"--records 3 {MODEL}",
        "pgd": "pgd --kappa0 0.1 --nu0 0.05 --theta0 0 --eta0 0 --rho0 0 --alpha 1e-3 "
        f"--steps 20 --records 3 {MODEL}",
        "critical": f"critical --where manifold --starts 4 --seed 0 {MODEL}",
        "certify": f"certify --out c.json.gz --max-boxes 10 --min-width 0.1 --starts 0 --seed 0 {MODEL}",
        "portrait": f"portrait --out p.png --alpha 4e-3 {MODEL}",
        "stats": "stats --gamma 0.7 --eps 0.1 --L 5 --d-max 100 --samples 2000 --seed 0",
        "reproduce": "reproduce gd_manifold --out figs --seed 0 --repeats 2 "
        "--steps-scale 0.01 --jobs 1",
        "atlas": "atlas --out at --lam 0.3 --L 4 --gamma 0.7 --d 8 --s 1 --nonlinearity erf "
        "--attention pointwise --basin-runs 4 --steps 10 --max-steps 10 --jobs 1 --seed 0",
    }.items()
}
TEXTS = [
    "",
    " ",
    "x",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "0",
    "-0",
    "-1",
    "1",
    "2",
    "0.5",
    "2.5",
    "1e-300",
    "5e-324",
    "1e300",
    "1e-9",
    "100000000000000000000",
    "-100000000000000000000",
    "1_000",
    "0x10",
    "1e3",
    "--",
    "gaussian.*",
    "sphere",
    "a/b/c.png",
    "p.txt",
    ".",  # an existing directory: the working one (the stubs' own)
    "/proc",  # an existing directory no one can create a file in (Linux), root included
    "/proc/nope.png",
]


def confined(value: str) -> bool:
    """Whether a command given `value` as a path can write only inside its working
    directory (the stubs' temporary one): a relative path that does not climb (no ``..``),
    or one in ``/proc``, where (on Linux) no one can create a file, root included. The
    tests run as root on CI, where ``atlas --out /`` wrote an atlas into the machine's root
    directory."""
    if os.path.isabs(value):
        return value == "/proc" or value.startswith("/proc/")
    return ".." not in Path(value).parts


FLAG_VALUES = (
    st.sampled_from(TEXTS)
    | st.integers(-3, 64).map(str)
    | st.floats(-2.0, 2.0).map(repr)
    | st.floats().map(repr)
    | st.text(max_size=4).filter(confined)
)


def _flags(command: str) -> list[str]:
    """The value-taking flags (and the positional, for reproduce) of a command."""
    parser = cli.dispatch._build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for action in sub.choices[command]._actions:
        if action.option_strings and action.nargs != 0:
            out.append(action.option_strings[0])
        elif not action.option_strings and action.dest != "help":
            out.append(action.dest)  # a positional
    return out


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    assert confined(value), f"{value!r} could write outside the test's directory"
    argv = list(argv)
    if flag.startswith("--"):
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    else:  # the positional follows the command
        argv[1] = value
    return argv


@pytest.fixture
def stubs(monkeypatch, tmp_path):
    """Run in a fresh directory, with the minutes-long computations replaced by stubs."""
    monkeypatch.chdir(tmp_path)
    import slr_theory.experiments as experiments
    import slr_theory.plotting as plotting
    import slr_theory.report as report

    def write_report(out, params, **kw):  # the real output discipline, no computing
        from slr_theory.output import Destination

        assert params.d >= 4 and kw["alpha"] > 0
        with Destination(out, force=kw["force"], exclusive=True, expect=["report.md"]) as dest:
            dest.file("report.md").write_text("stub\n")
        return Path(out) / "report.md"

    def phase_portrait(params, path, **kw):
        Path(path).write_bytes(b"stub")
        return Path(path)

    monkeypatch.setattr(report, "write_report", write_report)
    monkeypatch.setattr(plotting, "phase_portrait", phase_portrait)
    monkeypatch.setattr(experiments, "run", lambda names, **kw: {})
    import slr_theory.survey as survey

    def atlas_cell(params, **kw):  # the cell's checks, no search: a row of the right shape
        from slr_theory.params import check_params

        p = check_params(params)
        row = dict.fromkeys(survey.COLUMNS[1:], 0)
        row.update(lam=p.lam, L=p.L, gamma=p.gamma, d=p.d, s=p.s, nonlinearity=p.sigma_name)
        row.update(attention=p.attention)
        row.update(eps=p.eps, optimum_is_global=True, global_min_overlaps=[1.0, 1, 0, 0, 0])
        return row

    monkeypatch.setattr(survey.run, "atlas_cell", atlas_cell)
    import slr_theory.certify as certify

    def certify_critical_points(params, **kw):  # the checks, no proof: an open census
        certify.model_table(params)
        assert kw["max_boxes"] >= 1 and 0 < kw["min_width"] < 1
        part = {
            "root": (-np.ones(5), np.ones(5)),
            "paths": [""],
            "verdicts": [4],
            "point": [-1],
            "zeros": [],
        }
        return certify.Census(
            params, [], False, {"strata": part, "overlaps": dict(part)}, [], 0.0, kw["min_width"]
        )

    monkeypatch.setattr(certify, "certify_critical_points", certify_critical_points)
    import numpy as np

    import slr_theory.critical as critical

    def lipschitz_bound(params, **kw):  # seconds of climbing per valid --alpha; tested elsewhere
        return critical.LipschitzBound(2.0e4, 1.0e3, np.zeros(5), 1)

    monkeypatch.setattr(critical, "lipschitz_bound", lipschitz_bound)

    def evaluate(check, params, samples, rng):  # each check computed once per worker
        key = (check.name, repr(sorted(params.items())), samples)
        if key not in _EVALUATED:
            _EVALUATED[key] = _real_evaluate(check, params, samples, rng)
        return _EVALUATED[key]

    monkeypatch.setattr(verify_registry, "evaluate", evaluate)
    return tmp_path


_EVALUATED: dict = {}
_real_evaluate = verify_registry.evaluate


CASES = [(c, f) for c in BASE for f in _flags(c)]


def _check(argv: list[str], flag: str, capsys) -> None:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), f"{argv}: exit {code}: {err.strip()}"
    assert "Traceback" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, f"{argv}: {err!r}"
        named = [flag] if flag.startswith("--") else ["argument name", "arguments"]
        if flag[2:].rstrip("0") in (*OVERLAP_NAMES, "d"):  # checked together
            named.append("the overlaps (--kappa")
        assert any(n in lines[0] for n in named), f"{argv}: {lines[0]!r} does not name {flag}"
    elif argv[0] != "reproduce":  # (its stub computes nothing, so prints nothing)
        assert out.strip(), f"{argv}: exit {code} with no output"


@pytest.mark.parametrize("command", sorted(BASE))
def test_the_base_invocation_succeeds(command, stubs, capsys):
    assert cli.main(BASE[command]) == 0, capsys.readouterr().err


def test_every_command_has_a_base_invocation():
    parser = cli.dispatch._build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(BASE)


@pytest.mark.parametrize("command, flag", CASES)
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=FLAG_VALUES)
@example(value="\r0")  # a line break inside the value: the error escapes it, still one line
@example(value="a\u2028b")
def test_any_value_of_any_flag_is_ok_or_one_line_naming_it(command, flag, value, stubs, capsys):
    _empty(stubs)  # each example starts from an empty directory
    _check(_with(BASE[command], flag, value), flag, capsys)


def _empty(directory) -> None:
    """Remove what the last invocation wrote (the stubs' directory is the working one)."""
    import shutil

    for name in os.listdir(directory):
        path = directory / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


@pytest.mark.parametrize("command, flag", CASES)
def test_each_odd_text_in_each_flag(command, flag, stubs, capsys):
    """Each text of TEXTS in the flag, from an empty directory each (a failure names the
    invocation, the text among its arguments)."""
    for value in TEXTS:
        _empty(stubs)
        try:
            _check(_with(BASE[command], flag, value), flag, capsys)
        except Exception as exc:  # the failure names the text the loop was at
            raise AssertionError(f"{command} {flag} {value!r}: {exc!r}") from exc


# Cases the fuzz found (each was exit 3 or a misattributed message), pinned.
PINNED = [
    ("flow", "--t-max", "1e-300"),  # LSODA never returned
    ("flow", "--records", "100000000000000000000"),
    ("pgd", "--alpha", "1e300"),
    ("pgd", "--steps", "100000000000000000000"),
    ("stats", "--samples", "1"),  # a standard error needs two
    ("stats", "--d-max", "100000000000000000000"),
    ("stats", "--s", "6"),  # above --L = 5: was an internal error (exit 3)
    ("portrait", "--out", "/proc/nope.png"),  # writable by access(), not in fact
    ("verify", "--only", "x"),
    ("verify", "--samples", "100000000000000000000"),
    ("atlas", "--out", "\x00"),  # an os error ('embedded null byte') the atlas blamed on --lam
    ("report", "--out", "a\x00b"),  # ... and the report called an internal error (exit 3)
]


@pytest.mark.parametrize("command, flag, value", PINNED)
def test_pinned_cases(command, flag, value, stubs, capsys):
    _check(_with(BASE[command], flag, value), flag, capsys)
