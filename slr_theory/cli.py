"""Command-line interface: ``slr-theory <command>`` (also ``python -m slr_theory``).

It parses and dispatches: one parser builder per command, the work in the
numerical modules, the tables in :mod:`slr_theory.render`. Usage errors print
one line on stderr and exit with status 2; failed checks exit with status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Sequence
from functools import lru_cache

from .interrupts import STARTING_INTERRUPTED, interrupts_held
from .render import risk_text, statistics_text, to_json, trajectory_text, verification_text

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Stop(Exception):
    """A command that ends early, with one line on stderr and its own exit status."""

    def __init__(self, code: int, line: str) -> None:
        super().__init__(line)
        self.code, self.line = code, line


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; every option's default shown (unless its help says it)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "default" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
        ):
            return text
        shown = f"{default:.6g}" if isinstance(default, float) else default
        return f"{text} (default: {shown})"


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # `--d 400` is not `--d-max 400`
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, no usage dump, no traceback
        raise _UsageError(f"{self.prog}: error: {message}")


def _number(cast, ok, what: str):
    """An argparse type: `cast` the text, then require `ok(value)`, else name `what`."""

    def parse(text: str):
        try:
            value = cast(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


def _between(cast, lo, hi):
    """An argparse type for numbers in ``[lo, hi]`` (the library's documented bounds)."""
    kind = "an integer" if cast is int else "a number"
    return _number(cast, lambda v: lo <= v <= hi, f"{kind} in [{lo:g}, {hi:g}]")


def _max_minutes(p) -> None:
    """``--max-minutes``: the ceiling on the estimated wall time (slr_theory.work)."""
    from .work import DEFAULT_MINUTES

    p.add_argument(
        "--max-minutes",
        type=_number(float, lambda v: v > 0, "a positive number of minutes ('inf': no ceiling)"),
        default=DEFAULT_MINUTES,
        metavar="M",
        help="refuse work estimated beyond M minutes ('inf' lifts the ceiling)",
    )


def _within(command: str, estimate, args) -> None:
    """Refuse, before computing, work estimated beyond ``--max-minutes``."""
    from .work import WorkLimit

    try:
        estimate.check(args.max_minutes)
    except WorkLimit as exc:
        raise _UsageError(
            f"slr-theory {command}: error: argument {exc.flag}: {exc.detail}"
        ) from None


def _jobs_used(args) -> int:
    """The processes ``--jobs`` asks for, at most the usable cores (default: all of them)."""
    from .work import usable_cores

    return min(args.jobs or usable_cores(), usable_cores())


def _jobs(p, what: str) -> None:
    """``--jobs``: processes, the same flag in every command (default: the usable cores)."""
    p.add_argument(
        "--jobs",
        type=_between(int, 1, 4096),
        default=None,
        help=f"processes, at most the cores ({what}; default: every usable core)",
    )


_positive_int = _number(int, lambda v: v > 0, "a positive integer")
_nonnegative_int = _number(int, lambda v: v >= 0, "a non-negative integer")
_nonnegative_float = _number(float, lambda v: 0 <= v < float("inf"), "a non-negative number")


def _verify_parser(sub) -> None:
    from .verify import MAX_SAMPLES, MIN_SAMPLES

    v = sub.add_parser(
        "verify",
        help="check every closed form against mpmath quadrature and Monte Carlo",
        description="Run the registry of checks; exit 1 if any check fails.",
        epilog="examples:\n  slr-theory verify\n  slr-theory verify --only 'risk.*' --json\n"
        "  slr-theory verify --random --seed 3 --samples 100000",
        formatter_class=_HelpFormatter,
    )
    v.add_argument(
        "--samples",
        type=_number(
            int,
            lambda v: MIN_SAMPLES <= v <= MAX_SAMPLES,
            f"an integer in [{MIN_SAMPLES}, {MAX_SAMPLES:g}] (below, the z-test's normal "
            "approximation fails)",
        ),
        default=200_000,
        help="Monte Carlo draws (>= 1000: below, the z-test's normal approximation fails)",
    )
    v.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    for flag, kind, what in (
        ("d", int, "dimension"),
        ("L", int, "sequence length"),
        ("lam", float, "temperature"),
        ("gamma", float, "informative spread"),
        ("eps", float, "label noise"),
        ("s", int, "informative tokens"),
    ):
        v.add_argument(
            f"--{flag}",
            type=_in_domain("L" if flag == "s" else flag, kind),
            default=None,
            help=f"{what}: run the model's checks at the paper's parameters with this one "
            "(default: each check at its own point)",
        )
    from .models import attention_names
    from .nonlinearity import BUILTIN_NONLINEARITIES

    for flag, choices in (
        ("nonlinearity", tuple(BUILTIN_NONLINEARITIES)),
        ("attention", attention_names()),
    ):
        v.add_argument(
            f"--{flag}",
            choices=choices,
            default=None,
            help=f"the model's {flag}: run its checks at the paper's parameters with this "
            "one (default: each check at its own model)",
        )
    _max_minutes(v)
    v.add_argument("--json", action="store_true", help="print results as JSON")
    v.add_argument(
        "--random", action="store_true", help="draw parameters at random instead of defaults"
    )
    v.add_argument(
        "--only", action="append", metavar="PATTERN", help="run checks matching a shell pattern"
    )
    v.set_defaults(run="_cmd_verify")


_STATS_SAMPLES = 100_000  # the default of `stats --samples`


def _stats_parser(sub) -> None:
    from .params import DOMAIN
    from .statistics import MAX_TOKENS

    st = sub.add_parser(
        "stats",
        help="attention vs Bayes vs linear risk as d grows (paper section 4)",
        description="Oracle attention risk at the optimal temperature, the Bayes risk "
        "(Monte Carlo) and the best linear risk, minus eps^2, for growing d.",
        epilog="examples:\n  slr-theory stats --d-max 10000\n  slr-theory stats --L 10 --json",
        formatter_class=_HelpFormatter,
    )
    st.add_argument(
        "--gamma", type=_in_domain("gamma", float), default=0.5**0.5, help="informative spread"
    )
    st.add_argument("--eps", type=_in_domain("eps", float), default=0.0, help="label noise")
    st.add_argument(
        "--L",
        type=_between(int, 1, MAX_TOKENS),
        default=None,
        help="sequence length (default: ceil(sqrt(d)))",
    )
    st.add_argument(
        "--d-max",
        type=_between(int, 100, DOMAIN["d"][1]),
        default=10**6,
        help="largest dimension (powers of 10 from 100)",
    )
    st.add_argument(
        "--samples",
        type=_between(int, 2, 10**12),
        default=_STATS_SAMPLES,
        help="Monte Carlo draws per row (>= 2: a standard error needs two)",
    )
    st.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    _token_options(
        st,
        s_help="informative tokens per sequence, at most every row's L (1: the paper's model)",
        sigma_help="the attention's sigma (the attention column; Bayes and linear do not use it)",
    )
    _attention_option(st)
    _max_minutes(st)
    st.add_argument("--json", action="store_true", help="print rows as JSON")
    st.set_defaults(run="_cmd_stats")


def _reproduce_parser(sub) -> None:
    rp = sub.add_parser(
        "reproduce",
        help="the paper's Section 5 experiments, exactly, with figures and CSVs",
        description="Run all repeats of an experiment (or all five) and write "
        "<name>.csv and <name>.png (four panels) into --out.",
        epilog="examples:\n  slr-theory reproduce all --out figures\n"
        "  slr-theory reproduce gd_manifold --out figures --repeats 5 --force",
        formatter_class=_HelpFormatter,
    )
    rp.add_argument("name", nargs="?", default="all", help="experiment name or 'all' (default)")
    rp.add_argument("--out", required=True, help="output directory")
    rp.add_argument(
        "--force",
        action="store_true",
        help="replace files an earlier slr-theory run wrote in --out (never other files)",
    )
    rp.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    rp.add_argument(
        "--repeats", type=_positive_int, default=None, help="repeats (default: the paper's 30)"
    )
    rp.add_argument(
        "--steps-scale",
        type=_number(float, lambda v: 0 < v <= 1, "a number in (0, 1]"),
        default=1.0,
        help="fraction of the paper's step counts to run",
    )
    _jobs(rp, "with 2 or more, SGD runs beside the PGD loop")
    _max_minutes(rp)
    rp.set_defaults(run="_cmd_reproduce")


def _in_domain(name: str, cast):
    from .params import DOMAIN

    lo, hi = DOMAIN[name]
    kind = "an integer" if cast is int else "a number"
    return _number(cast, lambda v: lo <= v <= hi, f"{kind} in [{lo:g}, {hi:g}]")


def _model_options(p, lam: float = 0.1, d_min: int | None = None) -> None:
    """The model's parameters, defaulting to the paper's ``d = 400, L = 10, gamma^2 = 1/2``.

    `d_min` raises the lower bound of ``--d`` where a command needs it (the full-space
    search needs ``d >= 4``)."""
    from .params import DOMAIN

    d_type = _in_domain("d", int) if d_min is None else _between(int, d_min, DOMAIN["d"][1])
    p.add_argument("--d", type=d_type, default=400, help="dimension")
    p.add_argument("--L", type=_in_domain("L", int), default=10, help="sequence length")
    p.add_argument("--lam", type=_in_domain("lam", float), default=lam, help="temperature")
    p.add_argument(
        "--gamma", type=_in_domain("gamma", float), default=0.5**0.5, help="informative spread"
    )
    p.add_argument("--eps", type=_in_domain("eps", float), default=0.0, help="label noise")
    _token_options(
        p,
        s_help="informative tokens per sequence, at most --L (1: the paper's model)",
        sigma_help="the attention's sigma (erf: the paper's, closed forms; others by quadrature)",
    )
    _attention_option(p)


def _attention_option(p) -> None:
    """``--attention``: every registered attention, each with its predictor."""
    from .models import attention_names, model_of, takes_nonlinearity

    each = [
        f"{name}: {model_of(name).predictor}"
        + (", erf or --nonlinearity's σ" if takes_nonlinearity(name) else ", no --nonlinearity")
        for name in attention_names()
    ]
    p.add_argument(
        "--attention",
        choices=attention_names(),
        default="pointwise",
        help="; ".join(each),
    )


def _token_options(p, *, s_help: str, sigma_help: str) -> None:
    """``--s`` and ``--nonlinearity``: the model beyond the paper's, for every command."""
    from .nonlinearity import BUILTIN_NONLINEARITIES

    p.add_argument("--s", type=_in_domain("L", int), default=1, help=s_help)
    p.add_argument(
        "--nonlinearity", choices=tuple(BUILTIN_NONLINEARITIES), default="erf", help=sigma_help
    )


def _critical_parser(sub) -> None:
    from .critical import MAX_STARTS
    from .trajectory import MAX_ALPHA

    c = sub.add_parser(
        "critical",
        help="every critical point on M (by proof) or on the spheres (by search), classified",
        description="Locate and classify the critical points of the risk; with --alpha, the "
        "PGD map's spectrum at each one (the center-stable manifold check).",
        epilog="examples:\n  slr-theory critical --where manifold\n"
        "  slr-theory critical --lam 0.9 --alpha 1e-3 --starts 2048",
        formatter_class=_HelpFormatter,
    )
    _model_options(c)
    c.add_argument(
        "--where",
        choices=("sphere", "manifold"),
        default="sphere",
        help="on the spheres (a search) or on M (by proof)",
    )
    c.add_argument(
        "--starts",
        type=_between(int, 1, MAX_STARTS),
        default=512,
        help="random starts (sphere)",
    )
    c.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    c.add_argument(
        "--alpha",
        type=_between(float, 1e-300, MAX_ALPHA),
        default=None,
        help="PGD step size to check",
    )
    _max_minutes(c)
    c.add_argument("--json", action="store_true", help="print the points as JSON")
    c.set_defaults(run="_cmd_critical")


def _certify_parser(sub) -> None:
    from .critical import MAX_STARTS

    c = sub.add_parser(
        "certify",
        help="prove what can be proved of the critical points (interval arithmetic), or "
        "check a saved proof",
        description="A computer-assisted proof about the critical points: each point the "
        "search finds proved to exist, alone in its box, with its index at d (Krawczyk and "
        "rigorous inertia); a branch and bound that proves parts of the list complete. "
        "Needs python-flint (pip install 'slr-theory[certify]').",
        epilog="examples:\n  slr-theory certify --lam 0.1 --out census.json.gz\n"
        "  slr-theory certify --check census.json.gz",
        formatter_class=_HelpFormatter,
    )
    _model_options(c)
    c.add_argument("--out", default=None, help="save the census (a .json.gz file)")
    c.add_argument(
        "--force",
        action="store_true",
        help="replace --out if an earlier slr-theory run wrote it (never another file)",
    )
    c.add_argument("--check", default=None, metavar="FILE", help="re-verify a saved census")
    c.add_argument(
        "--max-boxes",
        type=_between(int, 1, 10**8),
        default=30_000_000,
        help="boxes per part before the open ones are left unresolved",
    )
    c.add_argument(
        "--min-width",
        type=_between(float, 1e-15, 0.5),
        default=1e-12,
        help="boxes are not bisected below this width",
    )
    c.add_argument(
        "--starts",
        type=_between(int, 0, MAX_STARTS),
        default=512,
        help="random starts of the search",
    )
    c.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    c.add_argument("--json", action="store_true", help="print the census summary as JSON")
    c.set_defaults(run="_cmd_certify")


def _report_parser(sub) -> None:
    from .trajectory import MAX_ALPHA

    r = sub.add_parser(
        "report",
        help="the main job: a Markdown report with figures on the paper's parameters (or yours)",
        description="Verify every closed form, locate and classify the critical points, draw "
        "the phase portrait and the global picture, run the paper's experiments and the "
        "section-4 statistics; write report.md and its figures into --out.",
        epilog="examples:\n  slr-theory report --out report\n"
        "  slr-theory report --out report-09 --lam 0.9 --alpha 1e-3 --force\n"
        "  slr-theory report --from report",
        formatter_class=_HelpFormatter,
    )
    _model_options(r, d_min=4)
    r.add_argument(
        "--out",
        default=None,
        help="output directory (default: slr-report; with --from, that directory itself)",
    )
    r.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        default=None,
        help="redraw report.md and every figure from DIR/results.json, computing nothing "
        "(the model options are then read from the results)",
    )
    r.add_argument(
        "--alpha", type=_between(float, 1e-300, MAX_ALPHA), default=4e-3, help="PGD step size"
    )
    r.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    r.add_argument("--full", action="store_true", help="all 30 repeats of every experiment")
    r.add_argument(
        "--html",
        action="store_true",
        help="also write report.html: the report as one self-contained page, figures embedded",
    )
    r.add_argument(
        "--force",
        action="store_true",
        help="write into a non-empty --out, replacing what an earlier report wrote there "
        "(never other files)",
    )
    r.add_argument(
        "--atlas",
        metavar="DIR",
        default=None,
        help="an atlas (the --out of slr-theory atlas, or its table) to show in a last section",
    )
    r.add_argument(
        "--certify",
        action="store_true",
        help="compute the census of the critical points here (half a minute at the paper's "
        "parameters, ten at --lam 0.9; pip install 'slr-theory[certify]'), write it as "
        "census.json.gz and "
        "use it as --certificate",
    )
    r.add_argument(
        "--certificate",
        metavar="FILE",
        default=None,
        help="a census certificate at these parameters (the --out of slr-theory certify): "
        "re-verified, it makes the full-space list 'complete by proof' where it is complete",
    )
    _jobs(r, "with 2 or more, the checks and the paper's experiments run beside the rest")
    _max_minutes(r)
    computing = (
        *("d", "L", "lam", "gamma", "eps", "s", "nonlinearity", "attention"),
        *("alpha", "seed", "full", "atlas", "certify", "certificate", "jobs", "max_minutes"),
    )
    r.set_defaults(run="_cmd_report", computing_defaults={k: r.get_default(k) for k in computing})


_unit = _number(float, lambda v: -1 <= v <= 1, "a number in [-1, 1]")


def _overlap_options(p, suffix: str = "") -> None:
    for name, default in (
        ("kappa", None),
        ("nu", None),
        ("theta", 0.0),
        ("eta", 0.0),
        ("rho", 0.0),
    ):
        p.add_argument(
            f"--{name}{suffix}",
            type=_unit,
            default=default,
            required=default is None,
            help=f"overlap {name}{suffix}",
        )


def _risk_parser(sub) -> None:
    r = sub.add_parser(
        "risk",
        help="the exact risk, its components and gradient at given overlaps",
        description="The population risk at (kappa, nu, theta, eta, rho), its decomposition, "
        "its gradient in the overlaps and the Riemannian gradient norms.",
        epilog="example:\n  slr-theory risk --kappa 0.5 --nu 0.5 --lam 0.1",
        formatter_class=_HelpFormatter,
    )
    _model_options(r)
    _overlap_options(r)
    r.add_argument("--json", action="store_true", help="print as JSON")
    r.set_defaults(run="_cmd_risk")


def _trajectory_parser(sub, name: str) -> None:
    from .flows import MIN_T_MAX
    from .trajectory import MAX_ALPHA, MAX_RECORDS, MAX_STEPS

    is_flow = name == "flow"
    t = sub.add_parser(
        name,
        help="the gradient flow from given overlaps"
        if is_flow
        else "the paper's projected gradient descent, exactly, from given overlaps",
        description=(
            "Integrate the gradient flow of the overlaps (on M in its own "
            "coordinates when theta = eta = rho = 0)."
            if is_flow
            else "Run PGD exactly on the overlaps and print the recorded steps."
        ),
        epilog=(
            f"example:\n  slr-theory {name} --kappa0 0.1 --nu0 0.05 "
            + ("--t-max 300" if is_flow else "--alpha 4e-3 --steps 20000")
        ),
        formatter_class=_HelpFormatter,
    )
    _model_options(t)
    _overlap_options(t, "0")
    if is_flow:
        t.add_argument(
            "--t-max", type=_between(float, MIN_T_MAX, 1e300), required=True, help="flow time"
        )
        t.add_argument(
            "--records", type=_between(int, 2, MAX_RECORDS), default=11, help="output times"
        )
    else:
        t.add_argument(
            "--alpha", type=_between(float, 1e-300, MAX_ALPHA), required=True, help="step size"
        )
        t.add_argument("--steps", type=_between(int, 1, MAX_STEPS), required=True, help="steps")
        t.add_argument(
            "--records", type=_between(int, 2, MAX_RECORDS), default=11, help="recorded steps"
        )
    if not is_flow:
        _max_minutes(t)
    t.add_argument("--json", action="store_true", help="print as JSON")
    t.set_defaults(run="_cmd_trajectory", kind=name)


def _portrait_parser(sub) -> None:
    from .trajectory import MAX_ALPHA

    pp = sub.add_parser(
        "portrait",
        help="the phase portrait of the flow on M (PNG, SVG or PDF)",
        description="Streamlines, nullclines, critical points, separatrix, trajectories, "
        "basins and risk contours of the flow on M; with --alpha, PGD iterates too.",
        epilog="example:\n  slr-theory portrait --out portrait.png --lam 0.1 --alpha 4e-3",
        formatter_class=_HelpFormatter,
    )
    _model_options(pp)
    pp.add_argument("--out", required=True, help="output file (.png, .svg or .pdf)")
    pp.add_argument(
        "--alpha",
        type=_between(float, 1e-300, MAX_ALPHA),
        default=None,
        help="also PGD at this step",
    )
    pp.add_argument(
        "--force",
        action="store_true",
        help="replace --out if an earlier slr-theory run wrote it (never another file)",
    )
    pp.set_defaults(run="_cmd_portrait")


def _axis_values(name: str, cast, geometric: bool):
    """An argparse type for one axis of the atlas: ``v``, ``a,b,c`` or ``lo:hi:n``."""
    import numpy as np

    from .params import DOMAIN

    lo, hi = DOMAIN[name]
    spacing = "log-spaced" if geometric else "evenly spaced"
    what = f"a value, a list a,b,c or a range lo:hi:n (n {spacing} values) in [{lo:g}, {hi:g}]"

    def parse(text: str):
        try:
            if ":" in text:
                a, b, n = text.split(":")
                a, b, n = float(a), float(b), int(n)
                if (
                    not (1 <= n <= 10_000 and a > 0 and b > 0)
                    if geometric
                    else not 1 <= n <= 10_000
                ):
                    raise ValueError
                grid = np.geomspace(a, b, n) if geometric else np.linspace(a, b, n)
                values = [cast(round(x)) if cast is int else float(x) for x in grid]
            else:
                values = [cast(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not all(lo <= v <= hi for v in values):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        if len(set(values)) < len(values):
            raise argparse.ArgumentTypeError(f"must not repeat a value, got {text!r}")
        return values

    return parse


def _names_among(choices: tuple):
    """An argparse type: distinct names among `choices`, separated by commas."""

    def parse(text: str):
        names = text.split(",")
        if not all(n in choices for n in names) or len(set(names)) < len(names):
            raise argparse.ArgumentTypeError(
                f"must be distinct names among {', '.join(choices)}, separated by commas, "
                f"got {text!r}"
            )
        return names

    return parse


def _nonlinearities(text: str):
    from .nonlinearity import BUILTIN_NONLINEARITIES

    return _names_among(tuple(BUILTIN_NONLINEARITIES))(text)


def _attentions(text: str):
    from .models import attention_names

    return _names_among(attention_names())(text)


def _atlas_parser(sub) -> None:
    from .trajectory import MAX_ALPHA

    a = sub.add_parser(
        "atlas",
        help="the landscape over a grid of parameters: where (k*, v*) is the global minimum",
        description="One row per cell of the grid of the given axes around the paper's "
        "parameters: the critical points, whether (k*, v*) is the global minimum, the share "
        "of uniform starts PGD takes to it, where M attracts. Every finished cell is written "
        "into --out at once: run the same command again to resume. Local processes, or a "
        "Dask cluster (--scheduler, or --dask for a local one).",
        epilog="examples:\n  slr-theory atlas --lam 0.02:2:40 --L 4,10,30 --out atlas\n"
        "  slr-theory atlas --lam 0.1,0.9 --basin-runs 200 --out atlas --scheduler "
        "tcp://10.0.0.1:8786",
        formatter_class=_HelpFormatter,
    )
    a.add_argument("--out", default=None, help="output directory (resumed if it holds this atlas)")
    a.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        default=None,
        help="read the atlas in DIR (an --out of this command) instead of computing: print "
        "its table, and with --plot draw DIR/atlas.png",
    )
    a.add_argument(
        "--plot",
        action="store_true",
        help="write the phase diagram, atlas.png, into the atlas's directory (over the two "
        "axes the grid spans)",
    )
    a.add_argument(
        "--lam",
        type=_axis_values("lam", float, True),
        default=[0.1],
        help="temperatures: v, a,b,c or lo:hi:n (log-spaced)",
    )
    a.add_argument(
        "--L", type=_axis_values("L", int, False), default=[10], help="sequence lengths"
    )
    a.add_argument(
        "--gamma",
        type=_axis_values("gamma", float, True),
        default=[0.5**0.5],
        help="informative spreads",
    )
    a.add_argument("--d", type=_axis_values("d", int, False), default=[400], help="dimensions")
    a.add_argument(
        "--s", type=_axis_values("L", int, False), default=[1], help="informative tokens"
    )
    a.add_argument(
        "--nonlinearity", type=_nonlinearities, default=["erf"], help="the attention's sigma"
    )
    a.add_argument(
        "--attention",
        type=_attentions,
        default=["pointwise"],
        help="pointwise and/or softmax (softmax cells need --nonlinearity erf)",
    )
    a.add_argument("--eps", type=_in_domain("eps", float), default=0.0, help="label noise")
    a.add_argument(
        "--starts",
        type=_between(int, 0, 10**6),
        default=512,
        help="random starts of each cell's critical-point search",
    )
    a.add_argument(
        "--grid",
        type=_between(int, 1, 1000),
        default=9,
        help="size of each cell's structured starts (grid**2 on M and in span{k*, v*})",
    )
    a.add_argument(
        "--stability-grid",
        type=_between(int, 1, 2000),
        default=61,
        help="points per side of the grid on M where its transverse stability is read",
    )
    a.add_argument(
        "--basin-runs",
        type=_between(int, 1, 10**6),
        default=1000,
        help="PGD runs from uniform starts per cell",
    )
    a.add_argument(
        "--alpha",
        type=_between(float, 1e-300, MAX_ALPHA),
        default=None,
        help="PGD step (default: per cell, 95%% of the largest step stable at every minimum)",
    )
    a.add_argument(
        "--steps", type=_between(int, 1, 10**12), default=20_000, help="steps per round"
    )
    a.add_argument(
        "--max-steps",
        type=_between(int, 1, 10**12),
        default=200_000,
        help="most steps a run takes",
    )
    a.add_argument(
        "--certify",
        action="store_true",
        help="also a census of the critical points in each cell whose model has rigorous "
        "enclosures (pip install 'slr-theory[certify]'): columns census_complete, "
        "census_points, census_agrees",
    )
    a.add_argument(
        "--certify-boxes",
        type=_between(int, 1, 10**12),
        default=10**7,
        metavar="BOXES",
        help="with --certify, the census's budget of boxes per part",
    )
    a.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    _jobs(a, "local workers; with --scheduler, the cluster's workers")
    a.add_argument(
        "--scheduler", default=None, metavar="ADDRESS", help="a Dask scheduler to run the cells on"
    )
    a.add_argument("--dask", action="store_true", help="a local Dask cluster of --jobs workers")
    _max_minutes(a)
    a.add_argument("--json", action="store_true", help="print the rows as JSON")
    computing = [x.dest for x in a._actions if x.dest not in _ATLAS_READING]
    a.set_defaults(run="_cmd_atlas", computing_defaults={k: a.get_default(k) for k in computing})


#: The atlas's options that apply when it is read back (``--from``) instead of computed.
_ATLAS_READING = ("help", "source", "plot", "json", "max_minutes")


def _cmd_atlas(args) -> int:
    from .models import model_of
    from .output import Refusal, Terminated
    from .survey import AtlasIncomplete

    if args.source is not None:
        return _atlas_from(args)
    if args.out is None:
        raise _UsageError(
            "slr-theory atlas: error: argument --out: required (or --from DIR to read an atlas)"
        )
    for attention in args.attention:  # every pair is a model, or one usage line
        for sigma in args.nonlinearity:
            try:
                model_of(attention, sigma)
            except ValueError as exc:
                raise _UsageError(
                    f"slr-theory atlas: error: argument --attention: {attention} cells with "
                    f"--nonlinearity {sigma}: {exc}"
                ) from None
    if args.plot:
        _plot_axes(_spans(vars(args)), "--plot")  # refused at the door, not after the cells
    if args.scheduler is not None and args.jobs is not None:
        raise _UsageError(
            "slr-theory atlas: error: argument --jobs: the cells run on the workers of the "
            "--scheduler's cluster; --jobs is for local workers"
        )
    try:
        kw = _atlas_arguments(args)
    except ValueError as exc:
        raise _atlas_usage(exc) from None
    quiet = contextlib.ExitStack()
    if args.dask or args.scheduler is not None:  # the CLI says what happened, in one line
        quiet.enter_context(_quiet_dask())
    client = None
    try:
        client = _dask_client(args.scheduler) if args.scheduler is not None else None
        _within("atlas", _atlas_estimate(args, kw, client), args)
        result = _atlas_run(args, kw, client)
    except AtlasIncomplete as exc:
        raise _Stop(75, f"slr-theory atlas: stopped: {exc}") from None
    except (KeyboardInterrupt, Terminated) as exc:
        name = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        kept = _cells_written(args.out)
        raise _Stop(
            143 if isinstance(exc, Terminated) else 130,
            f"slr-theory atlas: interrupted ({name}); {kept} finished cells are kept in "
            f"{args.out}: run the same command again to resume",
        ) from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, Refusal):
            raise _UsageError(f"slr-theory atlas: error: argument --out: {exc.detail}") from None
        if isinstance(exc, ValueError) and not isinstance(exc, OSError):
            raise _atlas_usage(exc) from None
        raise
    finally:
        with quiet:
            if client is not None:
                client.close()
    for name, why in result.rejected.items():
        print(
            f"slr-theory atlas: note: {name} {why}; its cell was computed again", file=sys.stderr
        )
    figure = _atlas_plot(result, args.out) if args.plot else None
    _emit(args, lambda: result.rows, lambda: _atlas_text(result, args.out, figure))
    return 0


_DASK_LOGGERS = ("distributed", "tornado")


@contextlib.contextmanager
def _quiet_dask():
    """Dask's own log lines (reconnects, workers ended at a close) held back: what
    happened is said in the command's one line."""
    import logging

    try:
        import distributed  # noqa: F401  (its loggers, each at the level its config gives)
    except ImportError:  # the optional extra: refused where the cluster is asked for
        yield
        return

    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in _DASK_LOGGERS]
    loggers = [logging.getLogger(n) for n in {*names, *_DASK_LOGGERS}]
    levels = [x.level for x in loggers]
    for x in loggers:
        x.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for x, level in zip(loggers, levels, strict=True):
            x.setLevel(level)


def _atlas_usage(exc: ValueError) -> _UsageError:
    """A library error naming its argument, as a usage error naming the flag."""
    import re

    named = re.search(r"`(\w+)`", str(exc))  # the library names its argument
    flag = f"--{named.group(1).replace('_', '-')}" if named else "--lam"
    return _UsageError(f"slr-theory atlas: error: argument {flag}: {exc}")


def _atlas_arguments(args) -> dict:
    from .params import Params

    base = Params(d=args.d[0], L=args.L[0], lam=args.lam[0], gamma=args.gamma[0], eps=args.eps)
    axes = ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention")
    settings = ("basin_runs", "alpha", "steps", "max_steps", "stability_grid", "starts", "grid")
    return {
        "base": base,
        **{a: getattr(args, a) for a in axes},
        **{k: getattr(args, k) for k in settings},
        "certify": args.certify_boxes if args.certify else 0,
        "rng": args.seed,
    }


def _atlas_estimate(args, kw: dict, client):
    """The atlas's cost on the workers that will run it, at its most expensive model."""
    from .work import atlas_cost, model_cost_factor

    cells = 1
    for a in ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention"):
        cells *= len(kw[a])
    if client is not None:
        workers = max(1, sum(client.nthreads().values()))
    else:
        workers = _jobs_used(args)
    base = kw["base"]
    models = []
    for nl in kw["nonlinearity"]:
        for at in kw["attention"]:
            with contextlib.suppress(ValueError):  # a model Params refuses has no cells
                models.append(base.replace(nonlinearity=nl, attention=at))
    factor = max((model_cost_factor(m) for m in models), default=1.0)
    return atlas_cost(
        cells,
        basin_runs=kw["basin_runs"],
        max_steps=kw["max_steps"],
        starts=kw["starts"],
        workers=workers,
        model_factor=factor,
    )


def _atlas_run(args, kw: dict, client):
    from .survey import atlas

    base = kw.pop("base")
    return atlas(
        base,
        **kw,
        backend="dask" if (args.dask or client is not None) else "processes",
        client=client,
        jobs=args.jobs,
        out=args.out,
        progress=not args.json,
    )


def _cells_written(out) -> int:
    """The cell files slr-theory has recorded in `out` that are there (after a Ctrl-C)."""
    from pathlib import Path

    from .output import written_files

    with contextlib.suppress(OSError):
        d = Path(out)
        return sum(n.startswith("cell-") and (d / n).is_file() for n in written_files(d))
    return 0


def _spans(axes: dict) -> list[str]:
    order = ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention")
    return [a for a in order if len(axes[a]) > 1]


def _plot_axes(spanned: list[str], flag: str) -> tuple[str, str]:
    """The figure's x and y: the axes the grid spans (numbers), filled in with lam and L."""
    named = [a for a in spanned if a in ("nonlinearity", "attention")]
    if named or len(spanned) > 2:
        raise _UsageError(
            f"slr-theory atlas: error: argument {flag}: the phase diagram shows two numeric "
            f"axes; this atlas spans {', '.join(spanned)}: draw a sub-grid "
            "(slr_theory.plotting.atlas_figure) or span at most two of lam, L, gamma, d, s"
        )
    picked = list(spanned)
    for a in ("lam", "L", "gamma", "d", "s"):
        if len(picked) == 2:
            break
        if a not in picked:
            picked.append(a)
    return picked[0], picked[1]


def _atlas_plot(result, directory) -> str:
    from pathlib import Path

    from .output import Destination
    from .plotting import atlas_figure

    x, y = _plot_axes(_spans(result.axes), "--plot")
    directory = Path(directory)
    with (
        _out_flag("atlas", "--from"),
        Destination(directory, force=True, expect=["atlas.png"]) as dest,
    ):
        atlas_figure(result, dest.file("atlas.png"), x=x, y=y)
    return str(directory / "atlas.png")


def _atlas_from(args) -> int:
    from .survey import read_atlas

    if args.out is not None:
        raise _UsageError(
            "slr-theory atlas: error: argument --out: does not apply with --from "
            "(the atlas is read from, and drawn into, DIR)"
        )
    for k, default in args.computing_defaults.items():
        if k != "out" and getattr(args, k) != default:
            raise _UsageError(
                f"slr-theory atlas: error: argument --{k.replace('_', '-')}: does not apply "
                "with --from (the atlas is read, not computed)"
            )
    try:
        result = read_atlas(args.source)
    except (OSError, ValueError) as exc:
        detail = getattr(exc, "detail", None) or str(exc)
        raise _UsageError(
            f"slr-theory atlas: error: argument --from: cannot read an atlas from "
            f"{args.source!r} ({detail})"
        ) from None
    for name, why in result.rejected.items():
        print(f"slr-theory atlas: note: {name} {why}; its cell is missing", file=sys.stderr)
    figure = _atlas_plot(result, args.source) if args.plot else None
    used = argparse.Namespace(**{k: getattr(args, k) for k in ("source", "plot", "json")})
    _emit(used, lambda: result.rows, lambda: _atlas_text(result, args.source, figure, wrote=False))
    return 0


def _dask_client(address: str):
    """A client of the scheduler at `address` (``tcp://host:port``); a usage error if not."""
    import re

    def refuse(why: str):
        return _UsageError(f"slr-theory atlas: error: argument --scheduler: {why}")

    if not re.fullmatch(r"(tcp|tls|inproc|ucx|ws|wss)://[\w.\-\[\]:]+:\d{1,5}", address):
        raise refuse(f"must be a scheduler address such as tcp://host:8786, got {address!r}")
    try:
        from dask.distributed import Client
    except ImportError:
        raise refuse("needs dask.distributed (pip install 'slr-theory[dask]')") from None
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise refuse(f"cannot reach {address} ({type(exc).__name__})") from None


def _last_new_text(r: dict) -> str:
    """The search's evidence of an atlas row: ``324/851`` (the start of the last new point
    of the starts), a dash in a table written before it was kept."""
    return "—" if r["search_starts"] < 0 else f"{r['search_last_new']}/{r['search_starts']}"


def _atlas_text(result, out, figure: str | None = None, *, wrote: bool = True) -> str:
    budget = result.settings.get("max_steps")
    lines = [
        "cell  lam        L    gamma     d     s  sigma      attention  crit  last new   "
        "opt index  global  "
        f"to opt, followed  log10 steps  at a min after {budget}  M attracts"
    ]
    for r in result.rows:
        fates = math.isfinite(r["fate_optimum_fraction"])  # NaN: a table written before them
        to_opt = f"{r['fate_optimum_fraction']:.3f} ± {r['fate_optimum_se']:.3f}" if fates else "—"
        steps = f"{r['optimum_log10_steps']:.1f}" if fates else "—"
        seen = 1.0 - r["basin_unconverged_fraction"]
        lines.append(
            f"{r['cell']:<5d} {r['lam']:<10.4g} {r['L']:<4d} {r['gamma']:<9.4g} {r['d']:<5d} "
            f"{r['s']:<2d} {r['nonlinearity']:<10s} {r['attention']:<10s} {r['n_critical']:<5d} "
            f"{_last_new_text(r):<10s} "
            f"{r['optimum_index']:<10d} {'yes' if r['optimum_is_global'] else 'no':<7s} "
            f"{to_opt:<17s} {steps:<12s} {seen:<{16 + len(str(budget))}.3f} "
            f"{r['m_attracting_fraction']:.3f}"
        )
    missing = len(result.missing)
    lines.append(
        "crit: critical points found by search, up to symmetry (not a proof); last new: "
        "the start at which the last new one appeared / the starts"
    )
    if wrote:
        lines.append(f"wrote {os.path.join(out, 'atlas.csv')} ({len(result.rows)} cells)")
    else:
        lines.append(
            f"read {out}: {len(result.rows)} of {result.cells} cells"
            + (f" ({missing} missing: run the atlas again to compute them)" if missing else "")
        )
    if figure is not None:
        lines.append(f"wrote {figure}")
    return "\n".join(lines)


def _build_parser() -> _Parser:
    """The command line's parser, built once per set of registered attentions (its
    choices): 30 ms of argparse and gettext per build, which every in-process call of
    :func:`main` (a notebook's, a test's) paid again."""
    from .models import attention_names

    return _parser_for(attention_names())


@lru_cache(maxsize=4)
def _parser_for(attentions: tuple[str, ...]) -> _Parser:
    parser = _Parser(
        prog="slr-theory",
        description="Closed-form analysis of single-location regression (Marion et al., 2025).",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    from . import __version__

    parser.add_argument("--version", action="version", version=f"slr-theory {__version__}")
    for build in (
        _report_parser,
        _verify_parser,
        _risk_parser,
        lambda sub: _trajectory_parser(sub, "flow"),
        lambda sub: _trajectory_parser(sub, "pgd"),
        _critical_parser,
        _certify_parser,
        _portrait_parser,
        _stats_parser,
        _reproduce_parser,
        _atlas_parser,
    ):
        build(sub)
    return parser


@contextlib.contextmanager
def _out_flag(command: str, flag: str = "--out"):
    """A destination refused (at the door or at the commit) is a usage error naming the
    flag that gave it (`flag`: --out, or --from where the run writes into what it read)."""
    from .output import Refusal

    try:
        yield
    except (OSError, ValueError) as exc:  # every Refusal is one of these
        if not isinstance(exc, Refusal):
            raise
        raise _UsageError(f"slr-theory {command}: error: argument {flag}: {exc.detail}") from None


def _cmd_reproduce(args) -> int:
    from .experiments import cost, experiments, output_paths, run, write
    from .output import Destination

    table = experiments()
    if args.name != "all" and args.name not in table:
        raise _UsageError(
            f"slr-theory reproduce: error: argument name: must be 'all' or one of "
            f"{', '.join(table)}, got {args.name!r}"
        )
    names = list(table) if args.name == "all" else [args.name]
    expect = [p.name for n in names for p in output_paths(n, args.out or ".")]
    _within("reproduce", cost(names, repeats=args.repeats, steps_scale=args.steps_scale), args)
    lines = []
    with (
        _out_flag("reproduce"),
        Destination(args.out, force=args.force, expect=expect) as dest,
    ):
        results = run(
            names,
            seed=args.seed,
            repeats=args.repeats,
            steps_scale=args.steps_scale,
            progress=True,
            jobs=_jobs_used(args),
        )
        import numpy as np

        from .critical import canonical, end_groups, overlaps_text, symmetries

        for name, res in results.items():
            csv_path, png_path = write(res, dest)
            tr = res.trajectory
            group = symmetries(res.experiment.params)
            ends = [  # group by group: a mean over runs that ended apart describes none
                f"{g.size} near {overlaps_text(canonical(tr.overlaps[-1, g[0]], group), 2)} "
                f"(risk - eps^2 {float(np.mean(tr.risk[-1, g]) - res.experiment.eps**2):.3e})"
                for g in end_groups(tr.overlaps[-1], group)
            ]
            lines.append(
                f"{name}: {tr.overlaps.shape[1]} repeats x {int(tr.step[-1])} steps; "
                f"ends up to symmetry: {'; '.join(ends)} -> {csv_path}, {png_path}"
            )
    print("\n".join(lines))
    return 0


#: Attributes of the parsed arguments that are not parameters of the computation.
_NOT_PARAMETERS = {
    "computing_defaults",
    "run",
    "json",
    "command",
    "kind",
    "debug",
    "force",
    "out",
    "source",
    "max_minutes",
}


def _used(args) -> dict:
    """The options a command computed with: every output echoes them.

    A ``None`` is an option not given whose value nothing used (no PGD-map check without
    ``--alpha``), so it is not echoed; a command whose value is derived sets it first
    (``stats``: ``L = ceil(sqrt(d))``), and one that does not use an option removes it
    (``critical --where manifold``: no search; an attention without a nonlinearity: no
    ``nonlinearity``). The output never says ``None``.
    """
    skip = _NOT_PARAMETERS | set(getattr(args, "not_applied", ()))
    attention = getattr(args, "attention", None)
    if isinstance(attention, str):  # one model (the atlas's attention is an axis)
        from .models import takes_nonlinearity

        if not takes_nonlinearity(attention):  # softmax: no sigma, so none is echoed
            skip = skip | {"nonlinearity"}
    return {
        k: v
        for k, v in sorted(vars(args).items())
        if k not in skip and k != "not_applied" and v is not None and not callable(v)
    }


def _emit(args, data, text) -> None:
    """Print a command's result after the parameters it used, as text or as JSON.

    JSON is an object whose ``"parameters"`` holds the options; a dict result's keys
    follow, a list result is under ``"rows"``. `data` and `text` may be callables.
    """
    if args.json:
        data = data() if callable(data) else data
        body = {"parameters": _used(args)}
        body.update(data if isinstance(data, dict) else {"rows": data})
        print(to_json(body))
        return
    echo = ", ".join(
        f"{k} = {v!r}" if isinstance(v, float) else f"{k} = {v}" for k, v in _used(args).items()
    )
    print(f"parameters: {echo}\n" + (text() if callable(text) else text))


def _cmd_stats(args) -> int:
    import numpy as np

    from .statistics import statistics_table

    k = round(np.log10(args.d_max)) if args.d_max > 0 else 0
    if args.d_max < 100 or 10**k != args.d_max:
        raise _UsageError(
            "slr-theory stats: error: argument --d-max: must be a power of 10 >= 100 (the rows "
            f"are d = 100, 1000, ..., d-max), got {args.d_max}"
        )
    dims = [10**j for j in range(2, k + 1)]
    from tqdm.auto import tqdm

    from .work import statistics_cost

    lengths = [args.L or int(np.ceil(np.sqrt(d))) for d in dims]
    if args.s > min(lengths):
        which = "--L" if args.L is not None else "the first row's L = ceil(sqrt(100))"
        raise _UsageError(
            f"slr-theory stats: error: argument --s: must be at most {which} = {min(lengths)}, "
            f"got {args.s}"
        )
    # name --L or --d-max when even the default samples would be too long
    blame = "--samples"
    if statistics_cost(_STATS_SAMPLES, lengths).seconds > 60 * args.max_minutes:
        blame = "--L" if args.L is not None else "--d-max"
    _within("stats", statistics_cost(args.samples, lengths, flag=blame), args)
    with tqdm(total=len(dims), desc="stats", unit="d", disable=args.json) as bar:
        rows = statistics_table(
            args.gamma,
            args.eps,
            args.L,
            dims,
            args.samples,
            np.random.default_rng(args.seed),
            progress=bar.update,
            s=args.s,
            nonlinearity=args.nonlinearity,
            attention=args.attention,
        )
    if args.L is None:
        args.L = "ceil(sqrt(d))"  # each row's, as its L column says
    _emit(
        args,
        rows,
        lambda: statistics_text(
            rows, args.gamma, args.eps, s=args.s, sigma=args.nonlinearity, attention=args.attention
        ),
    )
    return 0


def _cmd_verify(args) -> int:
    from .verify import run_checks
    from .work import verify_cost

    _within("verify", verify_cost(args.samples), args)
    model = ("d", "L", "lam", "gamma", "eps", "s", "nonlinearity", "attention")
    given = {k: getattr(args, k) for k in model}
    given = {k: v for k, v in given.items() if v is not None}
    at = None
    if given:
        from .params import Params

        if args.random:
            raise _UsageError(
                f"slr-theory verify: error: argument --{next(iter(given))}: not with --random "
                "(which draws every check's parameters)"
            )
        paper = Params.paper()  # the flags' defaults elsewhere: the paper's parameters
        L = given.get("L", paper.L)
        if given.get("s", 1) > L:
            raise _UsageError(
                f"slr-theory verify: error: argument --s: must be at most --L = {L}, "
                f"got {given['s']}"
            )
        try:
            at = paper.replace(**given)
        except ValueError as e:  # a combination no model has (softmax with tanh)
            raise _UsageError(f"slr-theory verify: error: {e}") from None
        for k in model:  # the echo: every value used
            setattr(args, k, getattr(at, k))
    try:
        results = run_checks(
            args.only,
            samples=args.samples,
            seed=args.seed,
            random_params=args.random,
            progress=not args.json,
            at=at,
        )
    except ValueError as exc:
        flag = "--samples" if "`samples`" in str(exc) else "--only"
        raise _UsageError(f"slr-theory verify: error: argument {flag}: {exc}") from None
    _emit(args, [r.as_dict() for r in results], lambda: verification_text(results))
    return 0 if all(r.passed for r in results) else 1


def _cmd_critical(args) -> int:
    from .critical import critical_points, lipschitz_bound, pgd_map_spectrum
    from .render import critical_records, critical_text

    params = _params(args)
    if args.where == "sphere":
        from .work import critical_cost, model_cost_factor

        factor = model_cost_factor(params, points=1)
        _within("critical", critical_cost(args.starts, model_factor=factor), args)
    pts = critical_points(
        params, args.where, starts=args.starts, rng=args.seed, progress=not args.json
    )
    if args.where == "manifold":  # the points of M are located, not searched for
        args.not_applied = ("starts", "seed")
    spectra = [pgd_map_spectrum(q, args.alpha) for q in pts] if args.alpha else None
    bound = lipschitz_bound(params, rng=args.seed) if args.alpha else None
    _emit(
        args,
        lambda: critical_records(pts, spectra, bound, args.alpha),
        lambda: critical_text(pts, spectra, bound, args.alpha),
    )
    return 0


def _cmd_certify(args) -> int:
    from pathlib import Path

    from .certify import Census, certify_critical_points, check_certificate
    from .params import params_record
    from .render import census_text

    if args.check is not None:
        path = Path(args.check)
        if not path.is_file():
            raise _UsageError(f"slr-theory certify: error: argument --check: no file {path}")
        try:
            census = Census.load(path)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise _UsageError(
                f"slr-theory certify: error: argument --check: {path} is not a census ({exc})"
            ) from None
        result = check_certificate(census)
        # the certificate carries its own model: none of the command line's is used
        args.not_applied = (
            *params_record(census.params),
            "max_boxes",
            "min_width",
            "starts",
            "seed",
        )
        model = ", ".join(
            f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
            for k, v in params_record(census.params).items()
        )
        verdict = (
            f"certificate {path} ({model}): {'checked' if result.ok else 'FAILED'} "
            f"({result.boxes} boxes); "
            + (
                "the list is complete by proof."
                if result.complete
                else "the list is not proved complete."
            )
        )
        _emit(
            args,
            lambda: {
                "ok": result.ok,
                "complete": result.complete,
                "failures": result.failures,
                "boxes": result.boxes,
            },
            lambda: "\n".join([verdict, *(f"  {f}" for f in result.failures)]),
        )
        return 0 if result.ok else 1
    out = None
    if args.out is not None:
        out = Path(args.out)
        if not out.name.endswith(".json.gz"):
            raise _UsageError(
                f"slr-theory certify: error: argument --out: must end in .json.gz, got {args.out!r}"
            )
        if not out.absolute().parent.is_dir():
            raise _UsageError(
                f"slr-theory certify: error: argument --out: no directory {out.absolute().parent}"
            )
    params = _params(args)
    from tqdm.auto import tqdm

    from .output import Destination

    with contextlib.ExitStack() as stack:
        dest = None
        if out is not None:  # refused at the door (taken, not ours, not writable): before
            stack.enter_context(_out_flag("certify"))  # the census, not after its minutes
            dest = stack.enter_context(
                Destination(out.parent, force=args.force, expect=[out.name])
            )
        try:
            with tqdm(desc="certify", unit="box", disable=args.json) as bar:
                census = certify_critical_points(
                    params,
                    max_boxes=args.max_boxes,
                    min_width=args.min_width,
                    starts=args.starts,
                    seed=args.seed,
                    progress=bar.update,
                )
        except ValueError as exc:
            if "rigorous enclosures" not in str(exc):
                raise
            raise _UsageError(
                f"slr-theory certify: error: argument --attention/--nonlinearity: {exc}"
            ) from None
        if dest is not None:
            census.save(dest.file(out.name))
    _emit(
        args,
        lambda: {
            "complete": census.complete,
            "summary": census.summary(),
            "points": [list(q.overlaps) for q in census.points],
        },
        lambda: census_text(census) + (f"\nwrote {out}" if out is not None else ""),
    )
    return 0


def _cmd_report(args) -> int:
    from .report import write_report

    if args.source is not None:
        from .report import redraw_report

        given = [k for k, v in args.computing_defaults.items() if getattr(args, k) != v]
        if given:
            raise _UsageError(
                "slr-theory report: error: argument --from: redraws the saved results, which "
                f"hold their own parameters; drop --{given[0]}"
            )

        try:
            with _out_flag("report", "--out" if args.out is not None else "--from"):
                path = redraw_report(args.source, args.out, force=args.force, html=args.html)
        except ValueError as exc:
            if not str(exc).startswith("`from`"):
                raise
            detail = str(exc).removeprefix("`from`: ")
            raise _UsageError(f"slr-theory report: error: argument --from: {detail}") from None
        print(f"wrote {path}" + (f" and {path.with_suffix('.html')}" if args.html else ""))
        return 0
    params = _params(args)
    atlas = None
    if args.atlas is not None:
        from .survey import read_atlas

        try:
            atlas = read_atlas(args.atlas)
        except (OSError, ValueError, KeyError) as exc:
            raise _UsageError(
                f"slr-theory report: error: argument --atlas: cannot read an atlas from "
                f"{args.atlas!r} ({type(exc).__name__}: {exc})"
            ) from None
    if args.certify:
        from .certify import model_table

        if args.certificate is not None:
            raise _UsageError(
                "slr-theory report: error: argument --certify: computes the certificate; "
                "drop --certificate"
            )
        try:
            model_table(params)
        except ValueError as exc:
            raise _UsageError(f"slr-theory report: error: argument --certify: {exc}") from None
    if args.certificate is not None:
        from .study import read_certificate

        try:
            read_certificate(params, args.certificate)
        except ValueError as exc:
            detail = str(exc).removeprefix("`certificate` ").rstrip(".")
            raise _UsageError(
                f"slr-theory report: error: argument --certificate: {detail}"
            ) from None
    from .study import cost

    jobs = _jobs_used(args)
    _within("report", cost(params, full=args.full, jobs=jobs), args)
    with _out_flag("report"):
        path = write_report(
            args.out or "slr-report",
            params,
            alpha=args.alpha,
            seed=args.seed,
            full=args.full,
            force=args.force,
            progress=True,
            jobs=jobs,
            atlas=atlas,
            html=args.html,
            certificate=args.certificate,
            certify=args.certify,
        )
    print(f"wrote {path}" + (f" and {path.with_suffix('.html')}" if args.html else ""))
    return 0


def _params(args):
    """The model of the command's flags; ``--s`` above ``--L`` is a usage error."""
    from .params import Params

    if args.s > args.L:
        raise _UsageError(
            f"slr-theory {args.command}: error: argument --s: must be at most --L = {args.L}, "
            f"got {args.s}"
        )
    try:
        return Params(
            d=args.d,
            L=args.L,
            lam=args.lam,
            gamma=args.gamma,
            eps=args.eps,
            s=args.s,
            nonlinearity=args.nonlinearity,
            attention=args.attention,
        )
    except ValueError as e:  # a combination of flags no model has (e.g. softmax with tanh)
        raise _UsageError(f"slr-theory {args.command}: error: {e}") from None


def _overlaps(args, suffix: str = ""):
    from .params import check_overlaps

    ov = [getattr(args, f"{n}{suffix}") for n in ("kappa", "nu", "theta", "eta", "rho")]
    try:
        check_overlaps(*ov, d=args.d)
    except ValueError as exc:
        raise _UsageError(
            f"slr-theory: error: the overlaps (--kappa{suffix} ...): {exc}"
        ) from None
    return ov


def _cmd_risk(args) -> int:
    import numpy as np

    from .geometry import gradient_norms
    from .risk import risk_components, risk_grad

    p = _params(args)
    ov = _overlaps(args)
    c = risk_components(p, *ov)
    g = risk_grad(p, *ov)
    data = {
        "overlaps": dict(zip(("kappa", "nu", "theta", "eta", "rho"), map(float, ov), strict=True)),
        "risk": float(c.total),
        "components": {
            k: float(getattr(c, k))
            for k in ("noise", "informative", "distractors", "interactions")
        },
        "gradient": dict(zip(("kappa", "nu", "theta", "eta", "rho"), map(float, g), strict=True)),
        "riemannian_gradient_norms": [float(x) for x in gradient_norms(np.array(ov), g)],
    }
    _emit(args, data, lambda: risk_text(data))
    return 0


def _cmd_trajectory(args) -> int:
    import numpy as np

    p = _params(args)
    ov0 = _overlaps(args, "0")
    if args.kind == "flow":
        from .flows import manifold_flow, overlap_flow

        t_eval = np.linspace(0, args.t_max, args.records)
        if not any(ov0[2:]):
            res = manifold_flow(p, ov0[0], ov0[1], args.t_max, t_eval=t_eval)
        else:
            res = overlap_flow(p, ov0, args.t_max, t_eval=t_eval)
        rows = [
            (float(t), *map(float, o), float(r))
            for t, o, r in zip(res.t, res.overlaps, res.risk, strict=True)
        ]
        header = "t"
    else:
        from .dynamics import pgd
        from .work import model_cost_factor, pgd_cost

        factor = model_cost_factor(p, points=1)  # one run: one point a step
        _within("pgd", pgd_cost(args.steps, model_factor=factor), args)
        every = max(1, args.steps // max(1, args.records - 1))
        res = pgd(p, ov0, args.alpha, args.steps, record_every=every, progress=True)
        rows = [
            (int(s), *map(float, o), float(r))
            for s, o, r in zip(res.step, res.overlaps, res.risk, strict=True)
        ]
        header = "step"
    _emit(
        args,
        {"columns": [header, "kappa", "nu", "theta", "eta", "rho", "risk"], "rows": rows},
        lambda: trajectory_text(header, rows),
    )
    return 0


def _cmd_portrait(args) -> int:
    from pathlib import Path

    from .output import Destination
    from .plotting import phase_portrait

    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise _UsageError(
            f"slr-theory portrait: error: argument --out: must end in .png, .svg "
            f"or .pdf, got {args.out!r}"
        )
    if out.is_dir():
        raise _UsageError(
            f"slr-theory portrait: error: argument --out: must name a file, got the "
            f"directory {out}"
        )
    if not out.absolute().parent.is_dir():
        raise _UsageError(
            f"slr-theory portrait: error: argument --out: no directory {out.absolute().parent}"
        )
    with (
        _out_flag("portrait"),
        Destination(out.parent, force=args.force, expect=[out.name]) as dest,
    ):
        phase_portrait(_params(args), dest.file(out.name), pgd_alpha=args.alpha, progress=True)
    print(f"wrote {out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slr-theory`` console script; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 ok, 1 a check failed, 2 usage error (one line naming the flag),
        3 an unexpected internal error (one line; ``--debug`` shows the traceback),
        74 an I/O error (disk full, read-only file system, ...), 75 work that stopped
        because what ran it was lost (a worker process, a Dask scheduler or client: the
        atlas keeps its finished cells, and the same command resumes), 130 interrupted
        by Ctrl-C, 141 standard output closed by its reader (``| head``), 143 SIGTERM.
    """
    with interrupts_held() as noted:  # an import cut half-way is not an interruption's line
        from .output import Terminated, is_io_error, terminate_raises

        parser = _build_parser()
    if noted:
        _quiet_stderr(STARTING_INTERRUPTED)
        return 130
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    try:
        with terminate_raises():
            args = parser.parse_args(argv)
            # the handler by name, as the module holds it now: the parser is built once
            code = globals()[args.run](args)
            sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
            return code
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except _Stop as exc:
        _quiet_stderr(exc.line)
        return exc.code
    except BrokenPipeError:  # `slr-theory ... | head`: the reader left; end quietly
        _stdout_to_devnull()
        return 141  # 128 + SIGPIPE, as a shell tool killed by SIGPIPE
    except (KeyboardInterrupt, Terminated) as exc:
        name = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        _quiet_stderr(
            f"slr-theory: interrupted ({name}); outputs are committed only when complete, "
            "so every destination holds what it held before"
        )
        return 143 if isinstance(exc, Terminated) else 130
    except OSError as exc:
        if not is_io_error(exc) or debug:
            if debug:
                raise
            return _internal(exc)
        where = f" writing {exc.filename}" if exc.filename else ""
        _quiet_stderr(f"slr-theory: I/O error{where}: {exc.strerror or exc}")
        if exc.filename is None:  # stdout itself failed
            _stdout_to_devnull()
        return 74  # EX_IOERR of sysexits.h
    except Exception as exc:  # a bug, not a usage error: one line, the traceback on request
        if debug:
            raise
        return _internal(exc)


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _internal(exc: BaseException) -> int:
    _quiet_stderr(
        f"slr-theory: internal error: {type(exc).__name__}: {exc} "
        "(rerun with --debug for the traceback)"
    )
    return 3


def _quiet_stderr(line: str) -> None:
    """Print one line on stderr; a closed stderr is not worth a traceback."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
