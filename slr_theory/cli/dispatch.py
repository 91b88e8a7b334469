"""The parser of every command, and :func:`main`: parse, dispatch, and turn every way a run can end into one line and an exit status."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import lru_cache

from ..interrupts import STARTING_INTERRUPTED, interrupts_held
from . import (
    atlas,
    certify,
    critical,
    portrait,
    report,
    reproduce,
    risk,
    stats,
    trajectory,
    verify,
)
from .atlas import atlas_parser
from .certify import certify_parser
from .critical import critical_parser
from .options import Parser, Stop, UsageError, quiet_stderr
from .portrait import portrait_parser
from .report import report_parser
from .reproduce import reproduce_parser
from .risk import risk_parser
from .stats import stats_parser
from .trajectory import trajectory_parser
from .verify import verify_parser

#: The modules of the commands; each holds its handler ``cmd_<name>(args) -> int``.
COMMANDS = (verify, stats, reproduce, critical, certify, report, risk, trajectory, portrait, atlas)


def handler(name: str):
    """The handler the parser named (``cmd_<name>``), as its module holds it now."""
    return next(getattr(m, name) for m in COMMANDS if hasattr(m, name))


__all__ = ["main"]


def _build_parser() -> Parser:
    """The command line's parser, built once per set of registered attentions (its
    choices): 30 ms of argparse and gettext per build, which every in-process call of
    :func:`main` (a notebook's, a test's) paid again."""
    from ..models import attention_names

    return _parser_for(attention_names())


@lru_cache(maxsize=4)
def _parser_for(attentions: tuple[str, ...]) -> Parser:
    parser = Parser(
        prog="slr-theory",
        description="Closed-form analysis of single-location regression (Marion et al., 2025).",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"slr-theory {__version__}")
    for build in (
        report_parser,
        verify_parser,
        risk_parser,
        lambda sub: trajectory_parser(sub, "flow"),
        lambda sub: trajectory_parser(sub, "pgd"),
        critical_parser,
        certify_parser,
        portrait_parser,
        stats_parser,
        reproduce_parser,
        atlas_parser,
    ):
        build(sub)
    return parser


def _current_directory_importable() -> None:
    """A user's ``--nonlinearity mysigma:attr`` is found in the current directory too, as
    under ``python -m`` (appended, so that it shadows no installed package); worker
    processes inherit the path."""
    import os

    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        sys.path.append(here)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slr-theory`` console script; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 ok, 1 a check failed, 2 usage error (one line naming the flag),
        3 an unexpected internal error (one line; ``--debug`` shows the traceback),
        74 an I/O error (disk full, read-only file system, ...), 75 work that stopped
        because what ran it was lost (a worker process, a Dask scheduler or client: the
        atlas keeps its finished cells, and the same command resumes), 130 interrupted
        by Ctrl-C, 141 standard output closed by its reader (``| head``), 143 SIGTERM.
    """
    with interrupts_held() as noted:  # an import cut half-way is not an interruption's line
        from ..output import Terminated, is_io_error, terminate_raises

        parser = _build_parser()
    if noted:
        quiet_stderr(STARTING_INTERRUPTED)
        return 130
    argv = list(sys.argv[1:] if argv is None else argv)
    _current_directory_importable()
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    try:
        with terminate_raises():
            args = parser.parse_args(argv)
            # the handler by name, as its module holds it now: the parser is built once
            code = handler(args.run)(args)
            sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
            return code
    except UsageError as exc:
        quiet_stderr(str(exc))
        return 2
    except Stop as exc:
        quiet_stderr(exc.line)
        return exc.code
    except BrokenPipeError:  # `slr-theory ... | head`: the reader left; end quietly
        _stdout_to_devnull()
        return 141  # 128 + SIGPIPE, as a shell tool killed by SIGPIPE
    except (KeyboardInterrupt, Terminated) as exc:
        name = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        quiet_stderr(
            f"slr-theory: interrupted ({name}); outputs are committed only when complete, "
            "so every destination holds what it held before"
        )
        return 143 if isinstance(exc, Terminated) else 130
    except OSError as exc:
        if not is_io_error(exc) or debug:
            if debug:
                raise
            return _internal(exc)
        where = f" writing {exc.filename}" if exc.filename else ""
        quiet_stderr(f"slr-theory: I/O error{where}: {exc.strerror or exc}")
        if exc.filename is None:  # stdout itself failed
            _stdout_to_devnull()
        return 74  # EX_IOERR of sysexits.h
    except Exception as exc:  # a bug, not a usage error: one line, the traceback on request
        if debug:
            raise
        return _internal(exc)


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot fail a second time."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _internal(exc: BaseException) -> int:
    quiet_stderr(
        f"slr-theory: internal error: {type(exc).__name__}: {exc} "
        "(rerun with --debug for the traceback)"
    )
    return 3
