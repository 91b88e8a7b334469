"""``slr-theory portrait``: the phase portrait of the flow on M."""

from __future__ import annotations

from .options import HelpFormatter, UsageError, between, model_options, out_flag, params_of

__all__ = []


def portrait_parser(sub) -> None:
    from ..trajectory import MAX_ALPHA

    pp = sub.add_parser(
        "portrait",
        help="the phase portrait of the flow on M (PNG, SVG or PDF)",
        description="Streamlines, nullclines, critical points, separatrix, trajectories, "
        "basins and risk contours of the flow on M; with --alpha, PGD iterates too.",
        epilog="example:\n  slr-theory portrait --out portrait.png --lam 0.1 --alpha 4e-3",
        formatter_class=HelpFormatter,
    )
    model_options(pp)
    pp.add_argument("--out", required=True, help="output file (.png, .svg or .pdf)")
    pp.add_argument(
        "--alpha",
        type=between(float, 1e-300, MAX_ALPHA),
        default=None,
        help="also PGD at this step",
    )
    pp.add_argument(
        "--force",
        action="store_true",
        help="replace --out if an earlier slr-theory run wrote it (never another file)",
    )
    pp.set_defaults(run="cmd_portrait")


def cmd_portrait(args) -> int:
    from pathlib import Path

    from ..output import Destination
    from ..plotting import phase_portrait

    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(
            f"slr-theory portrait: error: argument --out: must end in .png, .svg "
            f"or .pdf, got {args.out!r}"
        )
    if out.is_dir():
        raise UsageError(
            f"slr-theory portrait: error: argument --out: must name a file, got the "
            f"directory {out}"
        )
    if not out.absolute().parent.is_dir():
        raise UsageError(
            f"slr-theory portrait: error: argument --out: no directory {out.absolute().parent}"
        )
    with (
        out_flag("portrait"),
        Destination(out.parent, force=args.force, expect=[out.name]) as dest,
    ):
        phase_portrait(params_of(args), dest.file(out.name), pgd_alpha=args.alpha, progress=True)
    print(f"wrote {out}")
    return 0
