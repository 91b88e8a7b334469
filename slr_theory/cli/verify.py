"""``slr-theory verify``: every closed form against mpmath and Monte Carlo."""

from __future__ import annotations

from ..render import verification_text
from .options import (
    HelpFormatter,
    UsageError,
    attention_value,
    emit,
    in_domain,
    max_minutes,
    nonlinearity_value,
    nonnegative_int,
    number_type,
    within,
)

__all__ = []


def verify_parser(sub) -> None:
    from ..validate import MAX_CHECK_SAMPLES as MAX_SAMPLES
    from ..validate import MIN_CHECK_SAMPLES as MIN_SAMPLES

    v = sub.add_parser(
        "verify",
        help="check every closed form against mpmath quadrature and Monte Carlo",
        description="Run the registry of checks; exit 1 if any check fails.",
        epilog="examples:\n  slr-theory verify\n  slr-theory verify --only 'risk.*' --json\n"
        "  slr-theory verify --random --seed 3 --samples 100000",
        formatter_class=HelpFormatter,
    )
    v.add_argument(
        "--samples",
        type=number_type(
            int,
            lambda v: MIN_SAMPLES <= v <= MAX_SAMPLES,
            f"an integer in [{MIN_SAMPLES}, {MAX_SAMPLES:g}] (below, the z-test's normal "
            "approximation fails)",
        ),
        default=200_000,
        help="Monte Carlo draws (>= 1000: below, the z-test's normal approximation fails)",
    )
    v.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
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
            type=in_domain("L" if flag == "s" else flag, kind),
            default=None,
            help=f"{what}: run the model's checks at the paper's parameters with this one "
            "(default: each check at its own point)",
        )
    from ..models import attention_names
    from ..nonlinearity import BUILTIN_NONLINEARITIES

    for flag, kind, names in (
        ("nonlinearity", nonlinearity_value, tuple(BUILTIN_NONLINEARITIES)),
        ("attention", attention_value, attention_names()),
    ):
        v.add_argument(
            f"--{flag}",
            type=kind,
            default=None,
            metavar=flag.upper(),
            help=f"the model's {flag} ({', '.join(names)}, or package.module:attr, one of "
            "one's own by its path): run that model's checks, and no other model's, at "
            "the paper's parameters with this one (a nonlinearity of one's own gets the "
            "risk's check built for it) (default: each check at its own model)",
        )
    max_minutes(v)
    v.add_argument("--json", action="store_true", help="print results as JSON")
    v.add_argument(
        "--random", action="store_true", help="draw parameters at random instead of defaults"
    )
    v.add_argument(
        "--only", action="append", metavar="PATTERN", help="run checks matching a shell pattern"
    )
    v.set_defaults(run="cmd_verify")


def cmd_verify(args) -> int:
    from ..verify import run_checks
    from ..work import verify_cost

    within("verify", verify_cost(args.samples), args)
    model = ("d", "L", "lam", "gamma", "eps", "s", "nonlinearity", "attention")
    given = {k: getattr(args, k) for k in model}
    given = {k: v for k, v in given.items() if v is not None}
    at = None
    if given:
        from ..params import Params

        if args.random:
            raise UsageError(
                f"slr-theory verify: error: argument --{next(iter(given))}: not with --random "
                "(which draws every check's parameters)"
            )
        paper = Params.paper()  # the flags' defaults elsewhere: the paper's parameters
        L = given.get("L", paper.L)
        if given.get("s", 1) > L:
            raise UsageError(
                f"slr-theory verify: error: argument --s: must be at most --L = {L}, "
                f"got {given['s']}"
            )
        try:
            at = paper.replace(**given)
        except ValueError as e:  # a combination no model has (softmax with tanh)
            raise UsageError(f"slr-theory verify: error: {e}") from None
        from ..params import params_record

        for k, value in params_record(at).items():  # the echo: every value used, as named
            setattr(args, k, value)
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
        raise UsageError(f"slr-theory verify: error: argument {flag}: {exc}") from None
    emit(args, [r.as_dict() for r in results], lambda: verification_text(results))
    return 0 if all(r.passed for r in results) else 1
