"""``slr-theory report``: the report, computed or redrawn from its results."""

from __future__ import annotations

from .options import (
    HelpFormatter,
    UsageError,
    between,
    jobs_option,
    jobs_used,
    max_minutes,
    model_options,
    nonnegative_int,
    out_flag,
    params_of,
    within,
)

__all__ = []


def report_parser(sub) -> None:
    from ..trajectory import MAX_ALPHA

    r = sub.add_parser(
        "report",
        help="the main job: a Markdown report with figures on the paper's parameters (or yours)",
        description="Verify every closed form, locate and classify the critical points, draw "
        "the phase portrait and the global picture, run the paper's experiments and the "
        "section-4 statistics; write report.md and its figures into --out.",
        epilog="examples:\n  slr-theory report --out report\n"
        "  slr-theory report --out report-09 --lam 0.9 --alpha 1e-3 --force\n"
        "  slr-theory report --from report",
        formatter_class=HelpFormatter,
    )
    model_options(r, d_min=4)
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
        "--alpha", type=between(float, 1e-300, MAX_ALPHA), default=4e-3, help="PGD step size"
    )
    r.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
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
    jobs_option(r, "with 2 or more, the checks and the paper's experiments run beside the rest")
    max_minutes(r)
    computing = (
        *("d", "L", "lam", "gamma", "eps", "s", "nonlinearity", "attention"),
        *("alpha", "seed", "full", "atlas", "certify", "certificate", "jobs", "max_minutes"),
    )
    r.set_defaults(run="cmd_report", computing_defaults={k: r.get_default(k) for k in computing})


def cmd_report(args) -> int:
    from ..report import write_report

    if args.source is not None:
        from ..report import redraw_report

        given = [k for k, v in args.computing_defaults.items() if getattr(args, k) != v]
        if given:
            raise UsageError(
                "slr-theory report: error: argument --from: redraws the saved results, which "
                f"hold their own parameters; drop --{given[0]}"
            )

        try:
            with out_flag("report", "--out" if args.out is not None else "--from"):
                path = redraw_report(args.source, args.out, force=args.force, html=args.html)
        except ValueError as exc:
            if not str(exc).startswith("`from`"):
                raise
            detail = str(exc).removeprefix("`from`: ")
            raise UsageError(f"slr-theory report: error: argument --from: {detail}") from None
        print(f"wrote {path}" + (f" and {path.with_suffix('.html')}" if args.html else ""))
        return 0
    params = params_of(args)
    atlas = None
    if args.atlas is not None:
        from ..survey import read_atlas

        try:
            atlas = read_atlas(args.atlas)
        except (OSError, ValueError, KeyError) as exc:
            raise UsageError(
                f"slr-theory report: error: argument --atlas: cannot read an atlas from "
                f"{args.atlas!r} ({type(exc).__name__}: {exc})"
            ) from None
    if args.certify:
        from ..certify import model_table

        if args.certificate is not None:
            raise UsageError(
                "slr-theory report: error: argument --certify: computes the certificate; "
                "drop --certificate"
            )
        try:
            model_table(params)
        except ValueError as exc:
            raise UsageError(f"slr-theory report: error: argument --certify: {exc}") from None
    if args.certificate is not None:
        from ..study import read_certificate

        try:
            read_certificate(params, args.certificate)
        except ValueError as exc:
            detail = str(exc).removeprefix("`certificate` ").rstrip(".")
            raise UsageError(
                f"slr-theory report: error: argument --certificate: {detail}"
            ) from None
    from ..study import cost

    jobs = jobs_used(args)
    within("report", cost(params, full=args.full, jobs=jobs), args)
    with out_flag("report"):
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
