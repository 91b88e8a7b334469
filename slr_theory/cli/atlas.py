"""``slr-theory atlas``: the landscape over a grid of parameters, on local processes or a Dask cluster, with its estimate, its progress and its figure."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys

from .options import (
    HelpFormatter,
    Stop,
    UsageError,
    attention_choices,
    between,
    emit,
    in_domain,
    jobs_option,
    jobs_used,
    max_minutes,
    nonlinearity_choices,
    nonnegative_int,
    out_flag,
    within,
)

__all__ = []


def _axis_values(name: str, cast, geometric: bool):
    """An argparse type for one axis of the atlas: ``v``, ``a,b,c`` or ``lo:hi:n``."""
    import numpy as np

    from ..params import DOMAIN

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


def atlas_parser(sub) -> None:
    from ..trajectory import MAX_ALPHA

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
        formatter_class=HelpFormatter,
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
        "--nonlinearity", type=nonlinearity_choices, default=["erf"], help="the attention's sigma"
    )
    a.add_argument(
        "--attention",
        type=attention_choices,
        default=["pointwise"],
        help="pointwise and/or softmax (softmax cells need --nonlinearity erf)",
    )
    a.add_argument("--eps", type=in_domain("eps", float), default=0.0, help="label noise")
    a.add_argument(
        "--starts",
        type=between(int, 0, 10**6),
        default=512,
        help="random starts of each cell's critical-point search",
    )
    a.add_argument(
        "--grid",
        type=between(int, 1, 1000),
        default=9,
        help="size of each cell's structured starts (grid**2 on M and in span{k*, v*})",
    )
    a.add_argument(
        "--stability-grid",
        type=between(int, 1, 2000),
        default=61,
        help="points per side of the grid on M where its transverse stability is read",
    )
    a.add_argument(
        "--basin-runs",
        type=between(int, 1, 10**6),
        default=1000,
        help="PGD runs from uniform starts per cell",
    )
    a.add_argument(
        "--alpha",
        type=between(float, 1e-300, MAX_ALPHA),
        default=None,
        help="PGD step (default: per cell, 95%% of the largest step stable at every minimum)",
    )
    a.add_argument("--steps", type=between(int, 1, 10**12), default=20_000, help="steps per round")
    a.add_argument(
        "--max-steps",
        type=between(int, 1, 10**12),
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
        type=between(int, 1, 10**12),
        default=10**7,
        metavar="BOXES",
        help="with --certify, the census's budget of boxes per part",
    )
    a.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    jobs_option(a, "local workers; with --scheduler, the cluster's workers")
    a.add_argument(
        "--scheduler", default=None, metavar="ADDRESS", help="a Dask scheduler to run the cells on"
    )
    a.add_argument("--dask", action="store_true", help="a local Dask cluster of --jobs workers")
    max_minutes(a)
    a.add_argument("--json", action="store_true", help="print the rows as JSON")
    computing = [x.dest for x in a._actions if x.dest not in _ATLAS_READING]
    a.set_defaults(run="cmd_atlas", computing_defaults={k: a.get_default(k) for k in computing})


#: The atlas's options that apply when it is read back (``--from``) instead of computed.
_ATLAS_READING = ("help", "source", "plot", "json", "max_minutes")


def cmd_atlas(args) -> int:
    from ..models import model_of
    from ..output import Refusal, Terminated
    from ..survey import AtlasIncomplete

    if args.source is not None:
        return _atlas_from(args)
    if args.out is None:
        raise UsageError(
            "slr-theory atlas: error: argument --out: required (or --from DIR to read an atlas)"
        )
    for attention in args.attention:  # every pair is a model, or one usage line
        for sigma in args.nonlinearity:
            try:
                model_of(attention, sigma)
            except ValueError as exc:
                raise UsageError(
                    f"slr-theory atlas: error: argument --attention: {attention} cells with "
                    f"--nonlinearity {sigma}: {exc}"
                ) from None
    if args.plot:
        _plot_axes(_spans(vars(args)), "--plot")  # refused at the door, not after the cells
    if args.scheduler is not None and args.jobs is not None:
        raise UsageError(
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
        within("atlas", _atlas_estimate(args, kw, client), args)
        result = _atlas_run(args, kw, client)
    except AtlasIncomplete as exc:
        raise Stop(75, f"slr-theory atlas: stopped: {exc}") from None
    except (KeyboardInterrupt, Terminated) as exc:
        name = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        kept = _cells_written(args.out)
        raise Stop(
            143 if isinstance(exc, Terminated) else 130,
            f"slr-theory atlas: interrupted ({name}); {kept} finished cells are kept in "
            f"{args.out}: run the same command again to resume",
        ) from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, Refusal):
            raise UsageError(f"slr-theory atlas: error: argument --out: {exc.detail}") from None
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
    emit(args, lambda: result.rows, lambda: _atlas_text(result, args.out, figure))
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


def _atlas_usage(exc: ValueError) -> UsageError:
    """A library error naming its argument, as a usage error naming the flag."""
    import re

    named = re.search(r"`(\w+)`", str(exc))  # the library names its argument
    flag = f"--{named.group(1).replace('_', '-')}" if named else "--lam"
    return UsageError(f"slr-theory atlas: error: argument {flag}: {exc}")


def _atlas_arguments(args) -> dict:
    from ..params import Params

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
    from ..work import atlas_cost, model_cost_factor

    cells = 1
    for a in ("lam", "L", "gamma", "d", "s", "nonlinearity", "attention"):
        cells *= len(kw[a])
    if client is not None:
        workers = max(1, sum(client.nthreads().values()))
    else:
        workers = jobs_used(args)
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
    from ..survey import atlas

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

    from ..output import written_files

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
        raise UsageError(
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

    from ..output import Destination
    from ..plotting import atlas_figure

    x, y = _plot_axes(_spans(result.axes), "--plot")
    directory = Path(directory)
    with (
        out_flag("atlas", "--from"),
        Destination(directory, force=True, expect=["atlas.png"]) as dest,
    ):
        atlas_figure(result, dest.file("atlas.png"), x=x, y=y)
    return str(directory / "atlas.png")


def _atlas_from(args) -> int:
    from ..survey import read_atlas

    if args.out is not None:
        raise UsageError(
            "slr-theory atlas: error: argument --out: does not apply with --from "
            "(the atlas is read from, and drawn into, DIR)"
        )
    for k, default in args.computing_defaults.items():
        if k != "out" and getattr(args, k) != default:
            raise UsageError(
                f"slr-theory atlas: error: argument --{k.replace('_', '-')}: does not apply "
                "with --from (the atlas is read, not computed)"
            )
    try:
        result = read_atlas(args.source)
    except (OSError, ValueError) as exc:
        detail = getattr(exc, "detail", None) or str(exc)
        raise UsageError(
            f"slr-theory atlas: error: argument --from: cannot read an atlas from "
            f"{args.source!r} ({detail})"
        ) from None
    for name, why in result.rejected.items():
        print(f"slr-theory atlas: note: {name} {why}; its cell is missing", file=sys.stderr)
    figure = _atlas_plot(result, args.source) if args.plot else None
    used = argparse.Namespace(**{k: getattr(args, k) for k in ("source", "plot", "json")})
    emit(used, lambda: result.rows, lambda: _atlas_text(result, args.source, figure, wrote=False))
    return 0


def _dask_client(address: str):
    """A client of the scheduler at `address` (``tcp://host:port``); a usage error if not."""
    import re

    def refuse(why: str):
        return UsageError(f"slr-theory atlas: error: argument --scheduler: {why}")

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
