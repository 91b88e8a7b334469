"""``slr-theory stats``: the paper's section 4."""

from __future__ import annotations

from ..render import statistics_text
from .options import (
    HelpFormatter,
    UsageError,
    attention_option,
    between,
    emit,
    in_domain,
    max_minutes,
    nonnegative_int,
    token_options,
    within,
)

__all__ = []


_STATS_SAMPLES = 100_000  # the default of `stats --samples`


def stats_parser(sub) -> None:
    from ..params import DOMAIN
    from ..statistics import MAX_TOKENS

    st = sub.add_parser(
        "stats",
        help="attention vs Bayes vs linear risk as d grows (paper section 4)",
        description="Oracle attention risk at the optimal temperature, the Bayes risk "
        "(Monte Carlo) and the best linear risk, minus eps^2, for growing d.",
        epilog="examples:\n  slr-theory stats --d-max 10000\n  slr-theory stats --L 10 --json",
        formatter_class=HelpFormatter,
    )
    st.add_argument(
        "--gamma", type=in_domain("gamma", float), default=0.5**0.5, help="informative spread"
    )
    st.add_argument("--eps", type=in_domain("eps", float), default=0.0, help="label noise")
    st.add_argument(
        "--L",
        type=between(int, 1, MAX_TOKENS),
        default=None,
        help="sequence length (default: ceil(sqrt(d)))",
    )
    st.add_argument(
        "--d-max",
        type=between(int, 100, DOMAIN["d"][1]),
        default=10**6,
        help="largest dimension (powers of 10 from 100)",
    )
    st.add_argument(
        "--samples",
        type=between(int, 2, 10**12),
        default=_STATS_SAMPLES,
        help="Monte Carlo draws per row (>= 2: a standard error needs two)",
    )
    st.add_argument("--seed", type=nonnegative_int, default=0, help="random seed")
    token_options(
        st,
        s_help="informative tokens per sequence, at most every row's L (1: the paper's model)",
        sigma_help="the attention's sigma (the attention column; Bayes and linear do not use it)",
    )
    attention_option(st)
    max_minutes(st)
    st.add_argument("--json", action="store_true", help="print rows as JSON")
    st.set_defaults(run="cmd_stats")


def cmd_stats(args) -> int:
    import numpy as np

    from ..statistics import statistics_table

    k = round(np.log10(args.d_max)) if args.d_max > 0 else 0
    if args.d_max < 100 or 10**k != args.d_max:
        raise UsageError(
            "slr-theory stats: error: argument --d-max: must be a power of 10 >= 100 (the rows "
            f"are d = 100, 1000, ..., d-max), got {args.d_max}"
        )
    dims = [10**j for j in range(2, k + 1)]
    from tqdm.auto import tqdm

    from ..work import statistics_cost

    lengths = [args.L or int(np.ceil(np.sqrt(d))) for d in dims]
    if args.s > min(lengths):
        which = "--L" if args.L is not None else "the first row's L = ceil(sqrt(100))"
        raise UsageError(
            f"slr-theory stats: error: argument --s: must be at most {which} = {min(lengths)}, "
            f"got {args.s}"
        )
    # name --L or --d-max when even the default samples would be too long
    blame = "--samples"
    if statistics_cost(_STATS_SAMPLES, lengths).seconds > 60 * args.max_minutes:
        blame = "--L" if args.L is not None else "--d-max"
    within("stats", statistics_cost(args.samples, lengths, flag=blame), args)
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
    emit(
        args,
        rows,
        lambda: statistics_text(
            rows, args.gamma, args.eps, s=args.s, sigma=args.nonlinearity, attention=args.attention
        ),
    )
    return 0
