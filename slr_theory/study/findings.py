"""What a study shows, in sentences whose every number comes from it."""

from __future__ import annotations

import math

import numpy as np

from ..critical import overlaps_text, plural_kind, same_point, symmetries
from ..landscape import FOLD_TOL
from ..longrun import UNLISTED
from ..survey import AXES, Atlas
from .record import Study
from .schema import Event

__all__ = ["atlas_finding", "fates_sentence", "findings"]


def findings(s: Study) -> list[str]:
    """The report's "What this shows": sentences built from a study's numbers.

    Parameters
    ----------
    s : Study

    Returns
    -------
    list of str
        Markdown paragraphs.
    """
    p = s.params
    out = []
    kinds: dict[str, int] = {}
    for q in s.points:
        base = q.kind.split(" (")[0]
        kinds[base] = kinds.get(base, 0) + 1
    counts = ", ".join(f"{n} {plural_kind(k) if n > 1 else k}" for k, n in kinds.items())
    n_m = len([q for q in s.points if q.on_manifold])
    if s.manifold_proved:
        on_m = (
            "On M there are exactly five critical points (a proof, below): the origin and the "
            "four corners `(±1, ±1)`."
        )
    else:
        on_m = p.model.manifold_summary(p) or _located_on_m(s.portrait)

    proved = (
        " A checked census certificate proves that list complete."
        if s.proof is not None and s.proof.proves_search
        else ""
    )
    out.append(
        f"**Critical points.** {on_m} In the full space the search "
        f"finds {len(s.points)} up to symmetry ({counts}), {n_m} of them on M.{proved}"
    )
    optimum = next((q for q in s.points if q.on_manifold and q.name.startswith("(k*, v*)")), None)
    best = min(s.points, key=lambda q: q.risk)
    if optimum is not None:
        role = (
            "a minimum"
            if optimum.index == 0
            else f"a saddle of index {optimum.index} (a strict saddle: "
            f"{optimum.index} descent direction{'s' if optimum.index > 1 else ''} leave"
            f"{'' if optimum.index > 1 else 's'} M)"
        )
        if optimum.global_minimum:
            tail = "and the global minimum: no critical point has a lower risk."
        else:
            tail = (
                f"but **not the global minimum**: {best.name} at {overlaps_text(best.overlaps)} has "
                f"risk {best.risk:.6g}, {optimum.risk - best.risk:.3g} below the optimum's "
                f"{optimum.risk:.6g}."
            )
        out.append(
            f"**Is `(k*, v*)` the global minimum?** At λ = {p.lam:g}, `(k*, v*)` (risk "
            f"{optimum.risk:.6g}) is {role} in the full space, {tail}"
        )
    off = [q for q in s.points if q.index == 0 and not q.on_manifold]
    b = s.basins
    at = [int((b.label == j).sum()) for j in range(len(b.names))]
    ends = (
        "; ".join(f"{a} at {name}" for a, name in zip(at, b.names, strict=True) if a)
        or "none at a minimum"
    )
    sentence = (
        f"**Where runs end.** Of {b.n} PGD runs from uniform starts on the spheres "
        f"(α = {b.alpha:g}, up to {b.max_steps} steps): {ends}."
    )
    if off:
        q = off[0]
        gap = q.risk - (optimum.risk if optimum is not None else best.risk)
        group = symmetries(p)
        j = next(
            (j for j, m in enumerate(b.minima) if same_point(m, q.overlaps, 1e-6, group)), None
        )
        reached = j is not None and at[j] > 0
        sentence += (
            (" Runs end off M because the" if reached else " The")
            + f" full space has a minimum off M: {q.name} at {overlaps_text(q.overlaps)}, risk "
            f"{q.risk:.6g} ({'above' if gap > 0 else 'below'} the optimum by {abs(gap):.3g})."
            + (
                " M is invariant (computed on a grid of M), but a run that starts off M need "
                "not reach it."
                if reached and s.manifold_invariant
                else ""
            )
        )
    if b.fates is not None:
        sentence += " " + fates_sentence(b)
    elif b.unconverged:
        stalled = int(b.stalled.sum())
        far = b.distance[b.label < 0]
        moving = b.unconverged - stalled
        sentence += (
            f" {b.unconverged} runs are **not converged** within the budget of {b.max_steps} "
            f"steps ({moving} still moving at it; distance to the nearest minimum "
            f"{far.min():.3g} to {far.max():.3g}, gradient norm up to "
            f"{b.gradient[b.label < 0].max():.3g})"
            + (
                f"; {stalled} of them no longer move: they sit on a cycle or a fixed point "
                "of the PGD map that is no minimum."
                if stalled
                else "."
            )
        )
    out.append(sentence)
    saddles = [q for q in s.points if q.index > 0]
    strict = [q for q in saddles if q.map_conclusion == "strict saddle"]
    # a minimum the step makes unstable (a Hessian eigenvalue above 2/alpha); a degenerate
    # one whose map is only non-hyperbolic (zero modes, a multiplier 1) is not that
    unstable_min = [q for q in s.points if q.index == 0 and q.largest_eigenvalue > 2.0 / s.alpha]
    lip = s.lipschitz
    cs = (
        f"**What the center-stable manifold theorem gives at α = {s.alpha:g}.** "
        f"{len(strict)} of the {len(saddles)} saddles and maxima are strict for the PGD map "
        f"(an unstable direction), and the map is a local diffeomorphism at "
        f"{sum(q.local_diffeomorphism for q in s.points)} of the {len(s.points)} critical "
        "points. "
    )
    if lip is None:
        cs += (
            "The theorem's global hypothesis `α < 1/Lip` cannot be checked: σ is unbounded, "
            "so no Lipschitz bound of the gradient over the spheres is certified. "
        )
    else:
        cs += (
            f"The theorem's global hypothesis `α < 1/Lip` {lip.condition}: "
            f"`{lip.lower:.4g} ≤ Lip ≤ {lip.upper:.4g}` (the upper bound certified), so "
            + (
                f"`α·Lip ≤ {lip.alpha * lip.upper:.3g}`. "
                if lip.condition == "holds"
                else f"`α·Lip` is at least {lip.alpha * lip.lower:.3g}"
                + (
                    f"; it would hold for `α < 1/{lip.upper:.4g} = {1.0 / lip.upper:.2g}`. "
                    if lip.condition == "fails"
                    else f" and at most {lip.alpha * lip.upper:.3g}. "
                )
            )
        )
    runs = (
        f"{b.n - b.unconverged} of {b.n} are at a minimum"
        + (f", {b.unconverged} did not converge." if b.unconverged else ".")
        if b.unconverged < b.n
        else f"none of the {b.n} runs converged."
    )
    if b.fates is not None:
        f = b.fates
        arrived = int(np.sum(f.minimum[f.label[f.label >= 0]]))
        elsewhere = (
            "they end at a saddle, at a point the search did not list, or are undecided "
            "(the table of section 6)."
        )
        within = b.n - b.unconverged
        if not arrived:
            runs = f"none of the {b.n} runs reaches a minimum: " + elsewhere
        else:
            runs = (
                f"{arrived} of {b.n} reach a minimum ("
                + (
                    f"{within} within {b.max_steps} steps)"
                    if within
                    else f"none within {b.max_steps} steps)"
                )
                + (f"; {b.n - arrived} do not: " + elsewhere if arrived < b.n else ".")
            )
    if lip is not None and lip.condition == "holds":
        cs += (
            "So PGD from almost every start avoids every strict saddle: whatever it "
            "converges to is a minimum (of runs that do not converge it says nothing). "
            "The runs: " + runs
        )
    else:
        cs += (
            "So the theorem does not guarantee here that PGD avoids the saddles; it only "
            "says the saddles repel locally. What the runs show instead: " + runs
        )
    if unstable_min:
        q = unstable_min[0]
        cs += (
            f" At this step the PGD map is unstable even at a minimum ({q.name}: "
            f"{q.map_conclusion}: its largest Hessian eigenvalue {q.largest_eigenvalue:.4g} "
            f"is above 2/α = {2 / s.alpha:.4g}), so runs near it cannot settle there; "
            f"a step below {2 / q.largest_eigenvalue:.3g} would let them."
        )
    out.append(cs)
    if s.events:
        out.append(
            f"**How λ changes the picture** (continuation over [{s.lam_range[0]:g}, "
            f"{s.lam_range[1]:g}], {len(s.continuation.branches)} branches): "
            + "; ".join(_event_clauses(s.events))
            + ". "
            + _nearest_event(s.events, s.params.lam)
        )
    if s.atlas is not None and s.atlas.rows:
        out.append(atlas_finding(s.atlas))
    return out


def fates_sentence(b) -> str:
    """Where the runs of an ensemble end when followed to their end, and when they get
    there, from its :class:`~slr_theory.longrun.Fates` (one sentence of the findings).

    Parameters
    ----------
    b : slr_theory.landscape.Basins
        An ensemble with its fates.

    Returns
    -------
    str
    """
    f = b.fates
    parts = []
    for j, name in enumerate(f.names):
        count = int(np.sum(f.label == j))
        if not count:
            continue
        if f.minimum[j]:
            q = f.quantiles([0.5], j)[0]
            parts.append(f"{count} reach {name} (median 10^{q:.1f} steps)")
        elif f.kinds[j] == UNLISTED:
            parts.append(f"{count} stop at {name}")
        else:
            parts.append(f"{count} end at the {name}, on its stable manifold (never a minimum)")
    if np.any(f.label < 0):
        parts.append(
            f"{int(np.sum(f.label < 0))} are undecided (held in exact steps beyond "
            f"{f.max_exact_steps:.3g}: no flow stood for the PGD map where they are)"
        )
    text = "Followed to their end: " + "; ".join(parts) + "."
    if b.unconverged:
        seen = f"{b.n - b.unconverged} of them" if b.unconverged < b.n else "none of them"
        text += f" A budget of {b.max_steps} steps sees {seen} at a minimum"
        late = (b.label < 0) & np.isfinite(f.steps) & (f.label >= 0)
        if np.any(late):
            text += (
                f": {int(late.sum())} others are on their way (section 6, *How long it takes*)."
            )
        else:
            text += "."
    return text


def atlas_finding(a: Atlas) -> str:
    """The atlas in one paragraph: where ``(k*, v*)`` is the global minimum, a minimum, a
    saddle, and how much of the sphere flows to it (every number from the rows).

    Parameters
    ----------
    a : Atlas

    Returns
    -------
    str
    """
    rows = a.rows
    spans = []
    for name, values in a.axes.items():
        if len(values) > 1:
            shown = (
                f"{min(values):.3g} to {max(values):.3g} ({len(values)} values)"
                if name in ("lam", "gamma")
                else "{" + ", ".join(map(str, values)) + "}"
            )
            spans.append(f"{'λ' if name == 'lam' else 'γ' if name == 'gamma' else name} {shown}")
    fixed = ", ".join(
        f"{'λ' if k == 'lam' else 'γ' if k == 'gamma' else k} = "
        + (f"{v[0]:.4g}" if isinstance(v[0], float) else str(v[0]))
        for k, v in a.axes.items()
        if len(v) == 1
    )
    glob = [r for r in rows if r["optimum_is_global"]]
    local = [r for r in rows if r["optimum_index"] == 0 and not r["optimum_is_global"]]
    saddle = [r for r in rows if r["optimum_index"] > 0]
    text = (
        f"**Over parameter space** (an atlas of {len(rows)} cells: "
        + ("; ".join(spans) or "one cell")
        + (f"; at {fixed}" if fixed else "")
        + "): `(k*, v*)` is "
        + ", ".join(
            f"{what} in {len(cells) if cells else 'none'}"
            for what, cells in (
                ("the global minimum", glob),
                ("a minimum that is not global", local),
                ("a saddle", saddle),
            )
        )
        + (
            f" (not found in {len(rows) - len(glob) - len(local) - len(saddle)})"
            if len(glob) + len(local) + len(saddle) < len(rows)
            else ""
        )
        + "."
    )
    if "lam" in a.axes and len(a.axes["lam"]) > 1:
        others = [k for k in AXES if k != "lam" and len(a.axes[k]) > 1]
        groups: dict[tuple, list[dict]] = {}
        for r in rows:
            groups.setdefault(tuple(r[k] for k in others), []).append(r)
        clauses = []
        for key, group in groups.items():
            at = ", ".join(f"{k} = {v}" for k, v in zip(others, key, strict=True))
            lams = sorted(r["lam"] for r in group)
            best = [
                i
                for i, lam in enumerate(lams)
                if any(r["optimum_is_global"] for r in group if r["lam"] == lam)
            ]
            if not best:
                said = "it is global at none of the λ"
            elif best == list(range(best[0], best[-1] + 1)):  # one window of the grid
                said = f"it is global for λ from {lams[best[0]]:.3g} to {lams[best[-1]]:.3g}"
            else:
                said = "it is global at λ = " + ", ".join(f"{lams[i]:.3g}" for i in best)
            clauses.append((f"at {at}, " if at else "") + said)
        text += " By λ: " + "; ".join(clauses) + "."
    unconv = max(r["basin_unconverged_fraction"] for r in rows)
    budget = a.settings.get("max_steps")
    if all(math.isfinite(r["fate_optimum_fraction"]) for r in rows):  # followed to the end
        share = [r["fate_optimum_fraction"] for r in rows]
        times = [r["optimum_log10_steps"] for r in rows if math.isfinite(r["optimum_log10_steps"])]
        text += (
            f" Followed to their end, PGD runs from uniform starts reach `(k*, v*)` in "
            f"{min(share):.2f} to {max(share):.2f} of the runs ({rows[0]['basin_runs']} per cell)"
            + (
                f", after a median of 10^{min(times):.1f} to 10^{max(times):.1f} steps"
                if times
                else ""
            )
            + (
                f"; a budget of {budget} steps sees up to {unconv:.2f} of a cell's runs at no "
                "minimum."
                if unconv
                else "."
            )
        )
        return text
    share = [r["optimum_basin_fraction"] for r in rows]
    text += (
        f" PGD from uniform starts reaches `(k*, v*)` in {min(share):.2f} to {max(share):.2f} "
        f"of the runs ({rows[0]['basin_runs']} per cell"
        + (
            f"; up to {unconv:.2f} of a cell's runs did not converge in {budget} steps"
            if unconv
            else ""
        )
        + ")."
    )
    return text


def _short(name: str) -> str:
    """A branch's name without its last parenthesis (the kind and index where it was named)."""
    return name.rsplit(" (", 1)[0]


def _nearest_event(events: list[Event], lam: float) -> str:
    """How far the report's temperature is from the nearest event, in a sentence."""
    e = min(events, key=lambda ev: abs(ev.lam - lam))
    gap = lam - e.lam
    where = "above" if gap > 0 else "below"
    what = f"changes {e.detail}" if e.type == "index change" else e.detail
    if abs(gap) <= 0.5 * e.width:
        return (
            f"The report's λ = {lam:g} is at an event, within its width: {e.lam_phrase} "
            f"{_short(e.branch_name)} {what}."
        )
    return (
        f"The report's λ = {lam:g} is {abs(gap):.2g} {where} the nearest of them "
        f"({abs(gap) / e.lam:.1%} of its λ): {e.lam_phrase} {_short(e.branch_name)} {what}."
    )


#: Widest bracket of an event said to be one with another (a pitchfork's index change and
#: meeting): the continuation's stated accuracy for located events.
PAIRED_WIDTH = FOLD_TOL


def _event_clauses(events: list[Event]) -> list[str]:
    """The events in words, a pitchfork once: the symmetric branch's index change and the
    meeting of the branch born (or ending) there, when both are located (brackets of at
    most :data:`PAIRED_WIDTH`) and their brackets overlap. An event the bisection could not
    narrow is said with its bracket ("between λ = a and b"), and paired with nothing."""
    paired: dict[int, Event] = {}
    for i, e in enumerate(events):
        if e.type != "meets" or e.other is None:
            continue
        for j, c in enumerate(events):
            if (
                c.type == "index change"
                and c.branch == e.other
                and j not in paired
                and max(c.width, e.width) <= PAIRED_WIDTH
                and abs(c.lam - e.lam) <= 0.5 * (c.width + e.width) + 1e-12
            ):
                paired[j] = e
                paired[i] = c
                break
    out = []
    for i, e in enumerate(events):
        if e.type == "meets" and i in paired:
            continue  # said with its index change
        if e.type == "index change" and i in paired:
            m = paired[i]
            what = "is born there" if m.detail.startswith("is born") else "ends there"
            out.append(
                f"{e.lam_phrase} {_short(e.branch_name)} changes {e.detail}, and "
                f"{_short(m.branch_name)} {what} (a pitchfork; the meeting, located "
                f"independently, {m.lam_phrase})"
            )
        elif e.type == "index change":
            out.append(f"{e.lam_phrase} {_short(e.branch_name)} changes {e.detail}")
        else:
            out.append(f"{e.lam_phrase} {_short(e.branch_name)} {e.detail}")
    return out


def _located_on_m(portrait) -> str:
    """The finding on M's critical points where the proof does not apply, from the saved
    points of the portrait (each with its symmetric copies)."""
    pts = np.asarray(portrait.points, dtype=float).reshape(-1, 2)
    kinds = list(portrait.point_kinds)
    inner = [(o, k) for o, k, i in zip(pts, kinds, portrait.interior, strict=True) if i]
    edge = [(o, k) for o, k in zip(pts, kinds, strict=True) if int(np.sum(np.abs(o) == 1)) == 1]
    where = lambda o: f"({o[0]:.4g}, {o[1]:.4g})"  # noqa: E731
    parts = ["the four corners `(±1, ±1)`"]
    parts += [f"a {k} at (κ, ν) = {where(o)}" for o, k in inner]
    parts += [f"a {k} on the edge at {where(o)}" for o, k in edge]
    origin = (
        ""
        if any(np.abs(o).max() < 1e-9 for o, _k in inner)  # a root of R_nu: 0 to rounding
        else " The origin is not one of them: this σ's weights are not odd."
    )
    return (
        "On M the proof for an odd, monotone σ bounded by 1 does not apply; scans locate "
        f"{len(pts)} critical points (what is proved of them, below): "
        f"{', '.join(parts[:-1]) + ' and ' + parts[-1] if len(parts) > 1 else parts[0]}."
        f"{origin}"
    )
