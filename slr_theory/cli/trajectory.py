"""``slr-theory flow`` and ``slr-theory pgd``: one trajectory."""

from __future__ import annotations

from ..render import trajectory_text
from .options import (
    HelpFormatter,
    between,
    emit,
    max_minutes,
    model_options,
    overlap_options,
    overlaps_of,
    params_of,
    within,
)

__all__ = []


def trajectory_parser(sub, name: str) -> None:
    from ..flows import MIN_T_MAX
    from ..trajectory import MAX_ALPHA, MAX_RECORDS, MAX_STEPS

    is_flow = name == "flow"
    t = sub.add_parser(
        name,
        help="the gradient flow from given overlaps"
        if is_flow
        else "the paper's projected gradient descent, exactly, from given overlaps",
        description=(
            "Integrate the gradient flow of the overlaps (on M in its own "
            "coordinates when theta = eta = rho = 0)."
            if is_flow
            else "Run PGD exactly on the overlaps and print the recorded steps."
        ),
        epilog=(
            f"example:\n  slr-theory {name} --kappa0 0.1 --nu0 0.05 "
            + ("--t-max 300" if is_flow else "--alpha 4e-3 --steps 20000")
        ),
        formatter_class=HelpFormatter,
    )
    model_options(t)
    overlap_options(t, "0")
    if is_flow:
        t.add_argument(
            "--t-max", type=between(float, MIN_T_MAX, 1e300), required=True, help="flow time"
        )
        t.add_argument(
            "--records", type=between(int, 2, MAX_RECORDS), default=11, help="output times"
        )
    else:
        t.add_argument(
            "--alpha", type=between(float, 1e-300, MAX_ALPHA), required=True, help="step size"
        )
        t.add_argument("--steps", type=between(int, 1, MAX_STEPS), required=True, help="steps")
        t.add_argument(
            "--records", type=between(int, 2, MAX_RECORDS), default=11, help="recorded steps"
        )
    if not is_flow:
        max_minutes(t)
    t.add_argument("--json", action="store_true", help="print as JSON")
    t.set_defaults(run="cmd_trajectory", kind=name)


def cmd_trajectory(args) -> int:
    import numpy as np

    p = params_of(args)
    ov0 = overlaps_of(args, "0")
    if args.kind == "flow":
        from ..flows import manifold_flow, overlap_flow

        t_eval = np.linspace(0, args.t_max, args.records)
        if not any(ov0[2:]):
            res = manifold_flow(p, ov0[0], ov0[1], args.t_max, t_eval=t_eval)
        else:
            res = overlap_flow(p, ov0, args.t_max, t_eval=t_eval)
        rows = [
            (float(t), *map(float, o), float(r))
            for t, o, r in zip(res.t, res.overlaps, res.risk, strict=True)
        ]
        header = "t"
    else:
        from ..dynamics import pgd
        from ..work import model_cost_factor, pgd_cost

        factor = model_cost_factor(p, points=1)  # one run: one point a step
        within("pgd", pgd_cost(args.steps, model_factor=factor), args)
        every = max(1, args.steps // max(1, args.records - 1))
        res = pgd(p, ov0, args.alpha, args.steps, record_every=every, progress=True)
        rows = [
            (int(s), *map(float, o), float(r))
            for s, o, r in zip(res.step, res.overlaps, res.risk, strict=True)
        ]
        header = "step"
    emit(
        args,
        {"columns": [header, "kappa", "nu", "theta", "eta", "rho", "risk"], "rows": rows},
        lambda: trajectory_text(header, rows),
    )
    return 0
