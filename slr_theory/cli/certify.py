"""``slr-theory certify``: the certified census of critical points, and its check."""

from __future__ import annotations

import contextlib

from .options import (
    HelpFormatter,
    UsageError,
    between,
    emit,
    jobs_option,
    jobs_used,
    model_options,
    nonnegative_int,
    out_flag,
    params_of,
)

__all__ = []


def certify_parser(sub) -> None:
    from ..validate import MAX_STARTS

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
        formatter_class=HelpFormatter,
    )
    model_options(c)
    c.add_argument("--out", default=None, help="save the census (a .json.gz file)")
    c.add_argument(
        "--force",
        action="store_true",
        help="replace --out if an earlier slr-theory run wrote it (never another file)",
    )
    c.add_argument("--check", default=None, metavar="FILE", help="re-verify a saved census")
    c.add_argument(
        "--max-boxes",
        type=between(int, 1, 10**8),
        default=30_000_000,
        help="boxes per part before the open ones are left unresolved",
    )
    c.add_argument(
        "--min-width",
        type=between(float, 1e-15, 0.5),
        default=1e-12,
        help="boxes are not bisected below this width",
    )
    c.add_argument(
        "--starts",
        type=between(int, 0, MAX_STARTS),
        default=512,
        help="random starts of the search",
    )
    c.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    jobs_option(c, "they judge the boxes; the census is the same whatever their number")
    c.add_argument("--json", action="store_true", help="print the census summary as JSON")
    c.set_defaults(run="cmd_certify")


def cmd_certify(args) -> int:
    from pathlib import Path

    from ..certify import Census, certify_critical_points, check_certificate
    from ..params import params_record
    from ..render import census_text

    if args.check is not None:
        path = Path(args.check)
        if not path.is_file():
            raise UsageError(f"slr-theory certify: error: argument --check: no file {path}")
        try:
            census = Census.load(path)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise UsageError(
                f"slr-theory certify: error: argument --check: {path} is not a census ({exc})"
            ) from None
        result = check_certificate(census, jobs=jobs_used(args))
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
        emit(
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
            raise UsageError(
                f"slr-theory certify: error: argument --out: must end in .json.gz, got {args.out!r}"
            )
        if not out.absolute().parent.is_dir():
            raise UsageError(
                f"slr-theory certify: error: argument --out: no directory {out.absolute().parent}"
            )
    params = params_of(args)
    from tqdm.auto import tqdm

    from ..output import Destination

    with contextlib.ExitStack() as stack:
        dest = None
        if out is not None:  # refused at the door (taken, not ours, not writable): before
            stack.enter_context(out_flag("certify"))  # the census, not after its minutes
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
                    jobs=jobs_used(args),
                )
        except ValueError as exc:
            if "rigorous enclosures" not in str(exc):
                raise
            raise UsageError(
                f"slr-theory certify: error: argument --attention/--nonlinearity: {exc}"
            ) from None
        if dest is not None:
            census.save(dest.file(out.name))
    emit(
        args,
        lambda: {
            "complete": census.complete,
            "summary": census.summary(),
            "points": [list(q.overlaps) for q in census.points],
        },
        lambda: census_text(census) + (f"\nwrote {out}" if out is not None else ""),
    )
    return 0
