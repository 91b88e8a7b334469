"""``slr-theory reproduce``: the paper's experiments."""

from __future__ import annotations

from .options import (
    HelpFormatter,
    UsageError,
    jobs_option,
    jobs_used,
    max_minutes,
    nonnegative_int,
    number_type,
    out_flag,
    positive_int,
    within,
)

__all__ = []


def reproduce_parser(sub) -> None:
    rp = sub.add_parser(
        "reproduce",
        help="the paper's Section 5 experiments, exactly, with figures and CSVs",
        description="Run all repeats of an experiment (or all five) and write "
        "<name>.csv and <name>.png (four panels) into --out.",
        epilog="examples:\n  slr-theory reproduce all --out figures\n"
        "  slr-theory reproduce gd_manifold --out figures --repeats 5 --force",
        formatter_class=HelpFormatter,
    )
    rp.add_argument("name", nargs="?", default="all", help="experiment name or 'all' (default)")
    rp.add_argument("--out", required=True, help="output directory")
    rp.add_argument(
        "--force",
        action="store_true",
        help="replace files an earlier slr-theory run wrote in --out (never other files)",
    )
    rp.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    rp.add_argument(
        "--repeats", type=positive_int, default=None, help="repeats (default: the paper's 30)"
    )
    rp.add_argument(
        "--steps-scale",
        type=number_type(float, lambda v: 0 < v <= 1, "a number in (0, 1]"),
        default=1.0,
        help="fraction of the paper's step counts to run",
    )
    jobs_option(rp, "with 2 or more, SGD runs beside the PGD loop")
    max_minutes(rp)
    rp.set_defaults(run="cmd_reproduce")


def cmd_reproduce(args) -> int:
    from ..experiments import cost, experiments, output_paths, run, write
    from ..output import Destination

    table = experiments()
    if args.name != "all" and args.name not in table:
        raise UsageError(
            f"slr-theory reproduce: error: argument name: must be 'all' or one of "
            f"{', '.join(table)}, got {args.name!r}"
        )
    names = list(table) if args.name == "all" else [args.name]
    expect = [p.name for n in names for p in output_paths(n, args.out or ".")]
    within("reproduce", cost(names, repeats=args.repeats, steps_scale=args.steps_scale), args)
    lines = []
    with (
        out_flag("reproduce"),
        Destination(args.out, force=args.force, expect=expect) as dest,
    ):
        results = run(
            names,
            seed=args.seed,
            repeats=args.repeats,
            steps_scale=args.steps_scale,
            progress=True,
            jobs=jobs_used(args),
        )
        import numpy as np

        from ..critical import canonical, end_groups, overlaps_text, symmetries

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
