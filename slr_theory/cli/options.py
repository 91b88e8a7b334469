"""What every command shares: the parser and its errors, the types of its options, the model's and the overlaps' options, the output flag, and the parameters they give."""

from __future__ import annotations

import argparse
import contextlib
import sys

from ..render import to_json

__all__ = []


class UsageError(Exception):
    pass


class Stop(Exception):
    """A command that ends early, with one line on stderr and its own exit status."""

    def __init__(self, code: int, line: str) -> None:
        super().__init__(line)
        self.code, self.line = code, line


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples kept as written; every option's default shown (unless its help says it)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "default" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
        ):
            return text
        shown = f"{default:.6g}" if isinstance(default, float) else default
        return f"{text} (default: {shown})"


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)  # `--d 400` is not `--d-max 400`
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # one line, no usage dump, no traceback
        raise UsageError(f"{self.prog}: error: {message}")


def number_type(cast, ok, what: str):
    """An argparse type: `cast` the text, then require `ok(value)`, else name `what`."""

    def parse(text: str):
        try:
            value = cast(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return parse


def between(cast, lo, hi):
    """An argparse type for numbers in ``[lo, hi]`` (the library's documented bounds)."""
    kind = "an integer" if cast is int else "a number"
    return number_type(cast, lambda v: lo <= v <= hi, f"{kind} in [{lo:g}, {hi:g}]")


def max_minutes(p) -> None:
    """``--max-minutes``: the ceiling on the estimated wall time (slr_theory.work)."""
    from ..work import DEFAULT_MINUTES

    p.add_argument(
        "--max-minutes",
        type=number_type(
            float, lambda v: v > 0, "a positive number of minutes ('inf': no ceiling)"
        ),
        default=DEFAULT_MINUTES,
        metavar="M",
        help="refuse work estimated beyond M minutes ('inf' lifts the ceiling)",
    )


def within(command: str, estimate, args) -> None:
    """Refuse, before computing, work estimated beyond ``--max-minutes``."""
    from ..work import WorkLimit

    try:
        estimate.check(args.max_minutes)
    except WorkLimit as exc:
        raise UsageError(
            f"slr-theory {command}: error: argument {exc.flag}: {exc.detail}"
        ) from None


def jobs_used(args) -> int:
    """The processes ``--jobs`` asks for, at most the usable cores (default: all of them)."""
    from ..work import usable_cores

    return min(args.jobs or usable_cores(), usable_cores())


def jobs_option(p, what: str) -> None:
    """``--jobs``: processes, the same flag in every command (default: the usable cores)."""
    p.add_argument(
        "--jobs",
        type=between(int, 1, 4096),
        default=None,
        help=f"processes, at most the cores ({what}; default: every usable core)",
    )


positive_int = number_type(int, lambda v: v > 0, "a positive integer")


nonnegative_int = number_type(int, lambda v: v >= 0, "a non-negative integer")


_nonnegative_float = number_type(float, lambda v: 0 <= v < float("inf"), "a non-negative number")


def in_domain(name: str, cast):
    from ..params import DOMAIN

    lo, hi = DOMAIN[name]
    kind = "an integer" if cast is int else "a number"
    return number_type(cast, lambda v: lo <= v <= hi, f"{kind} in [{lo:g}, {hi:g}]")


def model_options(p, lam: float = 0.1, d_min: int | None = None) -> None:
    """The model's parameters, defaulting to the paper's ``d = 400, L = 10, gamma^2 = 1/2``.

    `d_min` raises the lower bound of ``--d`` where a command needs it (the full-space
    search needs ``d >= 4``)."""
    from ..params import DOMAIN

    d_type = in_domain("d", int) if d_min is None else between(int, d_min, DOMAIN["d"][1])
    p.add_argument("--d", type=d_type, default=400, help="dimension")
    p.add_argument("--L", type=in_domain("L", int), default=10, help="sequence length")
    p.add_argument("--lam", type=in_domain("lam", float), default=lam, help="temperature")
    p.add_argument(
        "--gamma", type=in_domain("gamma", float), default=0.5**0.5, help="informative spread"
    )
    p.add_argument("--eps", type=in_domain("eps", float), default=0.0, help="label noise")
    token_options(
        p,
        s_help="informative tokens per sequence, at most --L (1: the paper's model)",
        sigma_help="the attention's sigma (erf: the paper's, closed forms; others by quadrature)",
    )
    attention_option(p)


def attention_option(p) -> None:
    """``--attention``: every registered attention, each with its predictor."""
    from ..models import attention_names, model_of, takes_nonlinearity

    each = [
        f"{name}: {model_of(name).predictor}"
        + (", erf or --nonlinearity's σ" if takes_nonlinearity(name) else ", no --nonlinearity")
        for name in attention_names()
    ]
    p.add_argument(
        "--attention",
        type=attention_value,
        default="pointwise",
        metavar="ATTENTION",
        help="; ".join(each) + "; or package.module:attr, a model of one's own by its path",
    )


def token_options(p, *, s_help: str, sigma_help: str) -> None:
    """``--s`` and ``--nonlinearity``: the model beyond the paper's, for every command."""
    from ..nonlinearity import BUILTIN_NONLINEARITIES

    p.add_argument("--s", type=in_domain("L", int), default=1, help=s_help)
    p.add_argument(
        "--nonlinearity",
        type=nonlinearity_value,
        default="erf",
        metavar="SIGMA",
        help=f"{sigma_help}: one of {', '.join(BUILTIN_NONLINEARITIES)}, or "
        "package.module:attr, a slr_theory.Nonlinearity of one's own by its path (a module on "
        "PYTHONPATH or in the current directory; imported in workers too)",
    )


def nonlinearity_value(text: str) -> str:
    """An argparse type: a built-in nonlinearity's name, or the path of a user's
    (``package.module:attr``, imported here to be checked); the text is kept, so that the
    output echoes what was typed and workers import it again."""
    from ..nonlinearity import resolve_nonlinearity

    try:
        resolve_nonlinearity(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(_unquoted(exc)) from None
    return text


def attention_value(text: str) -> str:
    """An argparse type: a registered attention's name, or the path of a model object."""
    from ..models import model_of

    try:
        model_of(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(_unquoted(exc)) from None
    return text


def _unquoted(exc: ValueError) -> str:
    """A refusal's message without its argument's name (argparse names the flag)."""
    text = str(exc)
    return text.split(" ", 1)[1] if text.startswith("`") else text


_unit = number_type(float, lambda v: -1 <= v <= 1, "a number in [-1, 1]")


def overlap_options(p, suffix: str = "") -> None:
    for name, default in (
        ("kappa", None),
        ("nu", None),
        ("theta", 0.0),
        ("eta", 0.0),
        ("rho", 0.0),
    ):
        p.add_argument(
            f"--{name}{suffix}",
            type=_unit,
            default=default,
            required=default is None,
            help=f"overlap {name}{suffix}",
        )


def nonlinearity_choices(text: str):
    """Distinct nonlinearities separated by commas: built-ins' names or paths."""
    return _distinct(text, nonlinearity_value)


def attention_choices(text: str):
    """Distinct attentions separated by commas: registered names or paths."""
    return _distinct(text, attention_value)


def _distinct(text: str, each) -> list:
    names = text.split(",")
    if len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"must be distinct, separated by commas, got {text!r}")
    return [each(n) for n in names]


@contextlib.contextmanager
def out_flag(command: str, flag: str = "--out"):
    """A destination refused (at the door or at the commit) is a usage error naming the
    flag that gave it (`flag`: --out, or --from where the run writes into what it read)."""
    from ..output import Refusal

    try:
        yield
    except (OSError, ValueError) as exc:  # every Refusal is one of these
        if not isinstance(exc, Refusal):
            raise
        raise UsageError(f"slr-theory {command}: error: argument {flag}: {exc.detail}") from None


def params_of(args):
    """The model of the command's flags; ``--s`` above ``--L`` is a usage error."""
    from ..params import Params

    if args.s > args.L:
        raise UsageError(
            f"slr-theory {args.command}: error: argument --s: must be at most --L = {args.L}, "
            f"got {args.s}"
        )
    try:
        return Params(
            d=args.d,
            L=args.L,
            lam=args.lam,
            gamma=args.gamma,
            eps=args.eps,
            s=args.s,
            nonlinearity=args.nonlinearity,
            attention=args.attention,
        )
    except ValueError as e:  # a combination of flags no model has (e.g. softmax with tanh)
        raise UsageError(f"slr-theory {args.command}: error: {e}") from None


def overlaps_of(args, suffix: str = ""):
    from ..params import check_overlaps

    ov = [getattr(args, f"{n}{suffix}") for n in ("kappa", "nu", "theta", "eta", "rho")]
    try:
        check_overlaps(*ov, d=args.d)
    except ValueError as exc:
        raise UsageError(f"slr-theory: error: the overlaps (--kappa{suffix} ...): {exc}") from None
    return ov


#: Attributes of the parsed arguments that are not parameters of the computation.
_NOT_PARAMETERS = {
    "computing_defaults",
    "run",
    "json",
    "command",
    "kind",
    "debug",
    "force",
    "out",
    "source",
    "max_minutes",
}


def _used(args) -> dict:
    """The options a command computed with: every output echoes them.

    A ``None`` is an option not given whose value nothing used (no PGD-map check without
    ``--alpha``), so it is not echoed; a command whose value is derived sets it first
    (``stats``: ``L = ceil(sqrt(d))``), and one that does not use an option removes it
    (``critical --where manifold``: no search; an attention without a nonlinearity: no
    ``nonlinearity``). The output never says ``None``.
    """
    skip = _NOT_PARAMETERS | set(getattr(args, "not_applied", ()))
    attention = getattr(args, "attention", None)
    if isinstance(attention, str):  # one model (the atlas's attention is an axis)
        from ..models import takes_nonlinearity

        if not takes_nonlinearity(attention):  # softmax: no sigma, so none is echoed
            skip = skip | {"nonlinearity"}
    return {
        k: v
        for k, v in sorted(vars(args).items())
        if k not in skip and k != "not_applied" and v is not None and not callable(v)
    }


def emit(args, data, text) -> None:
    """Print a command's result after the parameters it used, as text or as JSON.

    JSON is an object whose ``"parameters"`` holds the options; a dict result's keys
    follow, a list result is under ``"rows"``. `data` and `text` may be callables.
    """
    if args.json:
        data = data() if callable(data) else data
        body = {"parameters": _used(args)}
        body.update(data if isinstance(data, dict) else {"rows": data})
        print(to_json(body))
        return
    echo = ", ".join(
        f"{k} = {v!r}" if isinstance(v, float) else f"{k} = {v}" for k, v in _used(args).items()
    )
    print(f"parameters: {echo}\n" + (text() if callable(text) else text))


# what str.splitlines breaks at: a value a user typed (a path with a carriage return) is shown
# escaped, so that the error stays the one line the command promises
_ESCAPED = str.maketrans({c: repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})


def quiet_stderr(line: str) -> None:
    """Print one line on stderr (line breaks inside it escaped); a closed stderr is not worth a traceback."""
    with contextlib.suppress(OSError, ValueError):
        print(line.strip().translate(_ESCAPED), file=sys.stderr)
