"""Command-line interface: ``slr-theory <command>`` (also ``python -m slr_theory``).

Usage errors print one line on stderr and exit with status 2; failed checks
exit with status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump, no traceback
        raise _UsageError(f"{self.prog}: error: {message}")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def _build_parser() -> _Parser:
    parser = _Parser(
        prog="slr-theory",
        description="Closed-form analysis of single-location regression (Marion et al., 2025).",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    v = sub.add_parser(
        "verify",
        help="check every closed form against mpmath quadrature and Monte Carlo",
        description="Run the registry of checks; exit 1 if any check fails.",
    )
    v.add_argument("--samples", type=_positive_int, default=200_000, help="Monte Carlo draws")
    v.add_argument("--seed", type=_nonnegative_int, default=0, help="random seed")
    v.add_argument("--json", action="store_true", help="print results as JSON")
    v.add_argument(
        "--random", action="store_true", help="draw parameters at random instead of defaults"
    )
    v.add_argument(
        "--only", action="append", metavar="PATTERN", help="run checks matching a shell pattern"
    )
    return parser


def _format_table(results) -> str:
    header = ("check", "closed form", "mpmath", "rel.err", "tol", "MC mean", "MC s.e.", "z", "")
    rows = []
    for r in results:
        rows.append(
            (
                r.name,
                f"{r.value:.16g}",
                f"{r.reference:.16g}",
                f"{r.rel_error:.1e}",
                f"{r.rtol:.0e}",
                f"{r.mc_mean:.6g}",
                f"{r.mc_stderr:.1e}",
                f"{r.z:+.2f}",
                "ok" if r.passed else "FAIL",
            )
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    n_fail = sum(not r.passed for r in results)
    lines.append(f"{len(results) - n_fail} passed, {n_fail} failed")
    return "\n".join(lines)


def _cmd_verify(args) -> int:
    from .verify import run_checks

    try:
        results = run_checks(
            args.only,
            samples=args.samples,
            seed=args.seed,
            random_params=args.random,
            progress=not args.json,
        )
    except ValueError as exc:
        raise _UsageError(f"slr-theory verify: error: {exc}") from None
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        print(_format_table(results))
    return 0 if all(r.passed for r in results) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slr-theory`` console script; returns the exit status."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        return {"verify": _cmd_verify}[args.command](args)
    except _UsageError as exc:
        print(str(exc), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
