"""``slr-theory risk``: the population risk at given overlaps."""

from __future__ import annotations

from ..render import risk_text
from .options import HelpFormatter, emit, model_options, overlap_options, overlaps_of, params_of

__all__ = []


def risk_parser(sub) -> None:
    r = sub.add_parser(
        "risk",
        help="the exact risk, its components and gradient at given overlaps",
        description="The population risk at (kappa, nu, theta, eta, rho), its decomposition, "
        "its gradient in the overlaps and the Riemannian gradient norms.",
        epilog="example:\n  slr-theory risk --kappa 0.5 --nu 0.5 --lam 0.1",
        formatter_class=HelpFormatter,
    )
    model_options(r)
    overlap_options(r)
    r.add_argument("--json", action="store_true", help="print as JSON")
    r.set_defaults(run="cmd_risk")


def cmd_risk(args) -> int:
    import numpy as np

    from ..geometry import gradient_norms
    from ..risk import risk_components, risk_grad

    p = params_of(args)
    ov = overlaps_of(args)
    c = risk_components(p, *ov)
    g = risk_grad(p, *ov)
    data = {
        "overlaps": dict(zip(("kappa", "nu", "theta", "eta", "rho"), map(float, ov), strict=True)),
        "risk": float(c.total),
        "components": {
            k: float(getattr(c, k))
            for k in ("noise", "informative", "distractors", "interactions")
        },
        "gradient": dict(zip(("kappa", "nu", "theta", "eta", "rho"), map(float, g), strict=True)),
        "riemannian_gradient_norms": [float(x) for x in gradient_norms(np.array(ov), g)],
    }
    emit(args, data, lambda: risk_text(data))
    return 0
