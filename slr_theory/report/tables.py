"""How the report writes numbers, tables and the sentences several sections share."""

from __future__ import annotations

import numpy as np

__all__ = ["RESULTS"]


#: The file of the results, next to ``report.md``.
RESULTS = "results.json"


def md_table(header, rows) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return out


def num(x, digits=4) -> str:
    x = float(x)
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def seconds(s, *names) -> str:
    total = sum(s.seconds.get(n, 0.0) for n in names)
    return f"<sub>(computed in {total:.1f} s)</sub>"


def plateau_lines(b) -> list[str]:
    """Where the runs still on their way at the budget are, from the saved ends: on the
    edge ``nu = +-1`` of M (a plateau) or elsewhere."""
    f = b.fates
    late = np.flatnonzero((b.label < 0) & np.isfinite(f.steps) & (f.label >= 0))
    if not late.size:
        return []
    end = b.final[late]
    edge = (np.abs(np.abs(end[:, 1]) - 1.0) < 1e-3) & (np.max(np.abs(end[:, 2:]), axis=1) < 1e-3)
    lo, hi = np.log10(f.steps[late].min()), np.log10(f.steps[late].max())
    text = (
        f"**The plateau.** {late.size} runs are at no minimum after the budget of "
        f"{b.max_steps} steps; they arrive after 10^{lo:.1f} to 10^{hi:.1f} steps."
    )
    if np.any(edge):
        k = np.abs(end[edge, 0])
        text += (
            f" At the budget {int(edge.sum())} of them sit on the edge `ν = ±1` of M, at "
            f"`|κ|` from {k.min():.3g} to {k.max():.3g}, where the only drive is `κ' = -(1 - κ²) "
            "R_κ(κ, ±1)`: the steps above are what it takes to cross that edge."
        )
    return [text, ""]


def no_separatrix(portrait) -> str:
    """Why the portrait has no separatrix, from its saved points."""
    inner = int(portrait.interior.sum())
    if inner == 0:
        return "no separatrix (M has no critical point inside the square: `R_ν ≠ 0` there), "
    return f"no separatrix (M has {inner} critical points inside the square, not one saddle), "


def saddle_place(at) -> str:
    """Where the escape's saddle is, in words: ``at the origin`` or its ``(kappa, nu)``."""
    if at is None or np.abs(at).max() < 1e-9:  # M's saddle at the origin, to rounding
        return "at the origin"
    return f"of M at (κ, ν) = ({at[0]:.4g}, {at[1]:.4g})"
