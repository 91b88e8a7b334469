"""``slr-theory critical``: the critical points, located and classified."""

from __future__ import annotations

from .options import (
    HelpFormatter,
    between,
    emit,
    max_minutes,
    model_options,
    nonnegative_int,
    params_of,
    within,
)

__all__ = []


def critical_parser(sub) -> None:
    from ..trajectory import MAX_ALPHA
    from ..validate import MAX_STARTS

    c = sub.add_parser(
        "critical",
        help="every critical point on M (by proof) or on the spheres (by search), classified",
        description="Locate and classify the critical points of the risk; with --alpha, the "
        "PGD map's spectrum at each one (the center-stable manifold check).",
        epilog="examples:\n  slr-theory critical --where manifold\n"
        "  slr-theory critical --lam 0.9 --alpha 1e-3 --starts 2048",
        formatter_class=HelpFormatter,
    )
    model_options(c)
    c.add_argument(
        "--where",
        choices=("sphere", "manifold"),
        default="sphere",
        help="on the spheres (a search) or on M (by proof)",
    )
    c.add_argument(
        "--starts",
        type=between(int, 1, MAX_STARTS),
        default=512,
        help="random starts (sphere)",
    )
    c.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    c.add_argument(
        "--alpha",
        type=between(float, 1e-300, MAX_ALPHA),
        default=None,
        help="PGD step size to check",
    )
    max_minutes(c)
    c.add_argument("--json", action="store_true", help="print the points as JSON")
    c.set_defaults(run="cmd_critical")


def cmd_critical(args) -> int:
    from ..critical import critical_points, lipschitz_bound, pgd_map_spectrum
    from ..render import critical_records, critical_text

    params = params_of(args)
    if args.where == "sphere":
        from ..work import critical_cost, model_cost_factor

        factor = model_cost_factor(params, points=1)
        within("critical", critical_cost(args.starts, model_factor=factor), args)
    pts = critical_points(
        params, args.where, starts=args.starts, rng=args.seed, progress=not args.json
    )
    if args.where == "manifold":  # the points of M are located, not searched for
        args.not_applied = ("starts", "seed")
    spectra = [pgd_map_spectrum(q, args.alpha) for q in pts] if args.alpha else None
    bound = lipschitz_bound(params, rng=args.seed) if args.alpha else None
    emit(
        args,
        lambda: critical_records(pts, spectra, bound, args.alpha),
        lambda: critical_text(pts, spectra, bound, args.alpha),
    )
    return 0
