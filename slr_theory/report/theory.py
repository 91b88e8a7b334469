"""The report's sections on the theory: its header and findings, the checks, the risk, the critical points and their proof, the phase portrait and when runs arrive."""

from __future__ import annotations

import numpy as np

from ..critical import overlaps_text, symmetries
from .tables import RESULTS, md_table, no_separatrix, num, plateau_lines, seconds

__all__ = []


def header_section(s, dest) -> list[str]:
    p = s.params
    return [
        "# Single-location regression: the report",
        "",
        f"slr-theory {s.version}. Parameters: `d = {p.d}`, `L = {p.L}`, `λ = {p.lam:g}`, "
        f"`γ = {p.gamma:.6g}` (`γ² = {p.gamma**2:.4g}`), `ε = {p.eps:g}`"
        + (f", `s = {p.s}` informative tokens" if p.s > 1 else "")
        + (f", `{p.attention_tag[2:]}`" if p.attention_tag else "")
        + "; PGD step "
        f"`α = {s.alpha:g}`; seed {s.seed}. Every number below is at these parameters, "
        "except in sections 7 and 8, which say which they use. All numbers are in "
        f"[{RESULTS}]({RESULTS}).",
        "",
        (
            "The model: tokens `X_ℓ ∈ R^d`, one of them informative (`N(√(d/2) k*, γ² I)`), "
            "the label `Y = X_{J0}·v* + ξ`"
            if p.s == 1
            else f"The model: tokens `X_ℓ ∈ R^d`, {p.s} of them informative (`N(√(d/2) k*, "
            "γ² I)`, at a uniform subset `J` of the positions), the label "
            "`Y = Σ_{j∈J} X_j·v* + ξ`"
        )
        + f", the predictor `{p.predictor}` with unit "
        "`k, v`; its risk depends on five overlaps `(κ, ν, θ, η, ρ) = (k·k*, v·v*, v·k*, "
        "k·v*, k·v)`. See `docs/theory.md`.",
        "",
    ]


def findings_section(s, dest) -> list[str]:
    out = ["## 1. What this shows", ""]
    for paragraph in s.findings:
        out += [paragraph, ""]
    return out


def verification_section(s, dest) -> list[str]:
    rows = [
        (
            r.name,
            "your parameters" if "d" in r.params else "fixed arguments",
            f"{r.value:.12g}",
            f"{r.rel_error:.1e}",
            f"{r.z:+.2f}",
            "ok" if r.passed else "FAIL",
        )
        for r in s.verification
    ]
    n_fail = sum(not r.passed for r in s.verification)
    samples = s.verification[0].samples if s.verification else 0
    return [
        "## 2. Every closed form, checked two independent ways",
        "",
        "Each identity against a high-precision mpmath quadrature of its defining "
        f"expectation (relative error) and a Monte Carlo estimate (z-score, {samples} "
        "draws). The checks of the model run at the report's parameters (with the "
        "overlaps `(0.6, 0.5, 0.2, −0.3, 0.25)`); the identities of Gaussian expectations "
        f"at their own arguments. {len(rows) - n_fail} passed, {n_fail} failed.",
        "",
        *md_table(("check", "at", "closed form", "rel. error", "z", ""), rows),
        "",
        seconds(s, "identities", "verification"),
    ]


def risk_section(s, dest) -> list[str]:
    rows = [
        (
            r.name,
            num(r.total, 8),
            num(r.informative),
            num(r.distractors),
            num(r.interactions),
        )
        for r in s.risk_rows
    ]
    return [
        "## 3. The risk",
        "",
        "`R = ε² + informative + distractors + interactions`; the interactions vanish on M "
        "and the informative part is computed to relative precision even where it is "
        "exponentially small.",
        "",
        *md_table(("point", "risk", "informative", "distractors", "interactions"), rows),
        "",
        _lam_star_sentence(s),
    ]


def _lam_star_sentence(s) -> str:
    """Where the risk at ``(k*, v*)`` is smallest in ``lam``: an interior optimum, or the
    edge of the model's domain when it still falls there (softmax attention)."""
    if s.lam_star >= s.params.lam_max:
        return (
            f"At `(k*, v*)` the risk still falls at `λ = {s.lam_star:.4g}`, the largest "
            "temperature this model takes (its domain's edge): over that range it has no "
            "interior optimum."
        )
    return f"At `(k*, v*)` the risk is smallest at `λ* = {s.lam_star:.4g}` for these `d, L, γ, ε`."


def _proof_lines(p) -> list[str]:
    """What a checked census certificate says about the search's list (every number from it)."""
    head = (
        f"A census certificate (`{p.source}`, `slr-theory certify`) was re-verified box by "
        f"box here ({p.boxes} boxes, {p.check_seconds:.0f} s)"
    )
    if not p.checked:
        return [
            f"{head}: it FAILED ({len(p.failures)} failures, the first: {p.failures[0]}), "
            "so it proves nothing."
        ]
    lines = []
    if p.complete:
        lines.append(
            f"{head}: every box is closed, so the census's {p.points} points up to symmetry "
            f"are all the critical points, {p.indices} of them with their index proved."
        )
    else:
        lines.append(
            f"{head}: it proves {p.points} points up to symmetry ({p.indices} with their "
            "index) but leaves boxes open, so it does not prove the list complete."
        )
    if p.missing or p.extra or p.differ:
        lines.append(
            f"It disagrees with the search: {len(p.missing)} proved points the search did not "
            f"find, {len(p.extra)} points of the search it does not hold, {len(p.differ)} with "
            "another index or nullity."
        )
    else:
        lines.append("The search's points are the census's, with the same indices and nullities.")
    return lines


def critical_section(s, dest) -> list[str]:
    rows = [
        (
            overlaps_text(q.overlaps, 4),
            q.name + (" — **global minimum**" if q.global_minimum else ""),
            num(q.risk, 6),
            q.index,
            q.nullity,
            q.kind,
            q.map_conclusion,
        )
        for q in s.points
    ]
    minima = [q for q in s.points if q.index == 0]
    lip = s.lipschitz
    return [
        "## 4. Critical points",
        "",
        "### On M: complete by proof" if s.manifold_proved else "### On M: located by scans",
        "",
        *[f"- {line}" for line in s.manifold_certificate],
        "",
        "### On the spheres: complete by proof"
        if s.proof is not None and s.proof.proves_search
        else "### On the spheres: found by search",
        "",
        *[f"- {line}" for line in s.search_certificate],
        *([f"- {line}" for line in _proof_lines(s.proof)] if s.proof is not None else []),
        "",
        *md_table(
            (
                "overlaps",
                "what",
                "risk",
                "index",
                "nullity",
                "kind",
                f"PGD map at α = {s.alpha:g}",
            ),
            rows,
        ),
        "",
        f"{len(minima)} {'minimum' if len(minima) == 1 else 'minima'} (one per orbit of "
        f"the {len(symmetries(s.params))} overlap maps that leave this model's risk "
        "unchanged: `critical.symmetries`). Index and nullity count Hessian "
        f"eigenvalues with their multiplicities at `d = {s.params.d}`; zero modes along an "
        "orbit of the rotations fixing `k*, v*` are listed in the kind.",
        "",
        "**The center-stable manifold argument.** A strict saddle (an unstable direction of "
        "the PGD map) attracts PGD only from a set of measure zero, provided the PGD map is "
        "a global diffeomorphism, which the theorem gets from `α < 1/Lip`. "
        + (
            "Here σ is unbounded, so no Lipschitz bound is certified and the hypothesis "
            "cannot be checked. "
            if lip is None
            else f"Here `{lip.lower:.4g} ≤ Lip ≤ {lip.upper:.4g}` (the lower bound attained at "
            f"{overlaps_text(lip.lower_at)}"
            + (
                "; the upper bound rests on sampled sups of σ's derivatives: checked, not proved"
                if not s.params.model.feature_bounds_proved
                else ""
            )
            + f"), so `α < 1/Lip` **{lip.condition}** at `α = {lip.alpha:g}`. "
        )
        + "Section 1 says what follows.",
        "",
        seconds(s, "critical points", "lipschitz"),
    ]


def portrait_section(s, dest) -> list[str]:
    from ..plotting import phase_portrait

    phase_portrait(s.portrait, dest.file("portrait.png"))
    return [
        "## 5. The flow on M",
        "",
        "![phase portrait](portrait.png)",
        "",
        "Streamlines of the flow on M (drawn at every speed: the title gives the largest), "
        + (
            "the edges that are lines of critical points (the risk does not depend on k, "
            "so R_κ = 0 and there is no κ-nullcline) by their kind on M, "
            if s.portrait.critical_lines is not None
            else "its nullclines, the critical points by their kind on M, "
        )
        + (
            "the separatrix (the saddle's stable manifold), "
            if len(s.portrait.separatrix)
            else no_separatrix(s.portrait)
        )
        + "and the basins (bounded by the separatrix where every cell followed to its end "
        "agrees; else drawn cell by cell). Risk contours, flow-time contours, sample "
        "trajectories and PGD iterates are further layers "
        "(`slr-theory portrait --layers`, `phase_portrait(..., layers=...)`).",
        "",
        *_portrait_times(s.portrait),
        seconds(s, "portrait"),
    ]


def _portrait_times(portrait) -> list[str]:
    """What the portrait's arrival layer says, from its saved fates (none before 0.3.1)."""
    t = portrait.basin_time
    if t is None:
        return []
    f = portrait.basin_fates
    t = f.steps  # one entry per start (a cell of the fine grid may show its coarse cell's)
    fin = np.isfinite(t)
    refined = t.size != portrait.basin_label.size  # a fine grid where the end changes
    out = (
        "The basins follow the flow from "
        + (
            f"{t.size} starts (the cells' centres, on a finer grid where neighbours end apart)"
            if refined
            else f"each of the {t.size} cells' centres"
        )
        + f" to its end (`fate` on M, balls of radius {f.tol:g}): "
    )
    if fin.any():
        e = np.log10(np.maximum(t[fin], 1e-300))
        out += (
            f"{int(fin.sum())} reach a minimum on M after a flow time of 10^{e.min():.2f} to "
            f"10^{e.max():.2f} (median 10^{np.median(e):.2f}; largest relative error "
            f"{np.nanmax(f.relative_error):.1e})"
        )
    else:
        out += "none reaches a minimum on M"
    rest = [
        f"{int(n)} {what}"
        for n, what in (
            (np.sum(np.isinf(t)), "end at a saddle (on its stable manifold)"),
            (np.sum(np.isnan(t)), "are undecided"),
        )
        if n
    ]
    return [out + ("; " + ", ".join(rest) if rest else "") + ".", ""]


def arrival_section(b, dest) -> list[str]:
    """The subsection "How long it takes": the same starts followed to their end."""
    from ..plotting import arrival_figure

    f = b.fates
    if f is None:  # a study saved before the fates
        return []
    arrival_figure(f, dest.file("arrival.png"), budget=b.max_steps)
    budgets = sorted({10**4, 10**6, 10**8, int(b.max_steps)})
    rows = []
    for j, name in enumerate(f.names):
        mine = f.label == j
        if not np.any(mine):
            continue
        q = f.quantiles([0.1, 0.5, 0.9], j) if f.minimum[j] else None
        rows.append(
            (
                name,
                f"{f.fractions[j]:.2f} ± {f.stderr[j]:.2f}",
                " / ".join(f"{x:.1f}" for x in q) if q is not None else "never (∞)",
                *(f"{f.within(n)[j]:.2f}" for n in budgets),
            )
        )
    if np.any(f.label < 0):
        rows.append(
            (
                f"undecided: held in exact steps beyond {f.max_exact_steps:.3g}",
                f"{f.undecided:.2f}",
                "—",
                *("—" for _ in budgets),
            )
        )
    finite = np.isfinite(f.relative_error)
    precision = (
        f", estimated to a relative error of at most {float(np.max(f.relative_error[finite])):.1e}"
        if np.any(finite)
        else ""
    )
    return [
        "### How long it takes",
        "",
        f"The same {f.n} starts, each followed to its end: exact PGD steps where the "
        "dynamics are fast, the step map's modified equation (order 2) integrated where "
        f"they are slow, until the run enters the {f.tol:g}-ball of a minimum (or of a "
        f"symmetric image). Arrival times in `log10` steps (10 / 50 / 90 %){precision}; the "
        "last columns are the share of the runs at each end after that many steps: what a "
        "run with that budget sees.",
        "",
        *md_table(
            ("end", "fraction ± s.e.", "log10 steps", *(f"after {n:.0e}" for n in budgets)),
            rows,
        ),
        "",
        *plateau_lines(b),
        "![arrival times](arrival.png)",
        "",
    ]
