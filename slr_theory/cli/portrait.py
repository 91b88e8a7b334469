"""``slr-theory portrait``: the phase portrait of the flow on M."""

from __future__ import annotations

from .options import HelpFormatter, UsageError, between, model_options, out_flag, params_of

__all__ = []


def _layers(text: str) -> tuple:
    """An argparse type: layers of the portrait, separated by commas."""
    import argparse

    from ..plotting.manifold import portrait_layers  # no matplotlib: drawing imports it

    try:
        return portrait_layers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(" ", 1)[1]) from None


def portrait_parser(sub) -> None:
    from ..trajectory import MAX_ALPHA

    pp = sub.add_parser(
        "portrait",
        help="the phase portrait of the flow on M (PNG, SVG or PDF)",
        description="Basins, streamlines, nullclines, separatrix and critical points of the "
        "flow on M (five layers); --layers adds risk contours, flow-time contours, sample "
        "trajectories and, with --alpha, PGD iterates.",
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
        "--layers",
        type=_layers,
        default=None,
        metavar="NAMES",
        help="layers to draw, separated by commas, among basins, risk, arrival, streamlines, "
        "nullclines, separatrix, flows, pgd, points (default: basins,streamlines,nullclines,"
        "separatrix,points, and pgd with --alpha)",
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
    from ..plotting import PORTRAIT_LAYERS, phase_portrait

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
        layers = args.layers
        if layers is None:
            layers = (*PORTRAIT_LAYERS, *(("pgd",) if args.alpha is not None else ()))
        phase_portrait(
            params_of(args),
            dest.file(out.name),
            pgd_alpha=args.alpha,
            progress=True,
            layers=layers,
        )
    print(f"wrote {out}")
    return 0
