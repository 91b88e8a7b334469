"""``slr-theory report``: one self-contained Markdown report with its figures, on any parameters.

The computation (:func:`slr_theory.study.study`) and the drawing are apart: the report
directory holds ``results.json`` (the :class:`slr_theory.study.Study`), and
:func:`redraw_report` (``slr-theory report --from DIR``) draws every figure and
``report.md`` again from it, in seconds, without computing.

Sections: what this shows (findings built from the results), the verification table, the
risk and its decomposition, the critical points on M (with the proof) and in the full
space (with the evidence) and the center-stable manifold conclusion, the phase portrait,
the global picture (stability of M, one basin ensemble, escape times, the continuation in
``lambda``), the paper's experiments, and the statistics of the paper's section 4.

The report is written under the output discipline of :mod:`slr_theory.output`: built in
a staging folder, committed by rename when complete (an error, Ctrl-C or SIGTERM leaves
the directory as it was), and ``force`` replaces only what an earlier report wrote.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .critical import overlaps_text, symmetries
from .output import Destination, file_digest, written_files
from .params import Params, check_params
from .render import bayes_text
from .study import check_certifying, findings
from .survey import Atlas, found_text, read_atlas
from .trajectory import MAX_ALPHA
from .validate import boolean, positive_int, positive_real

__all__ = ["RESULTS", "redraw_report", "write_report"]

#: The file of the results, next to ``report.md``.
RESULTS = "results.json"
#: The census ``certify=True`` computes, beside the report.
CENSUS = "census.json.gz"


def _md_table(header, rows) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return out


def _num(x, digits=4) -> str:
    x = float(x)
    if x == 0:
        return "0"
    return f"{x:.{digits}g}"


def write_report(
    out: str | Path,
    params: Params | None = None,
    *,
    alpha: float = 4e-3,
    seed: int = 0,
    full: bool = False,
    force: bool = False,
    progress: bool = False,
    jobs: int | None = None,
    atlas=None,
    html: bool = False,
    certificate=None,
    certify: bool = False,
) -> Path:
    """Compute everything and write ``report.md``, ``results.json`` and the figures into `out`.

    Parameters
    ----------
    out : str or Path
        Output directory; created (its parent must exist). A non-empty one is refused
        unless `force` (:class:`slr_theory.output.Destination` with ``exclusive=True``).
    params : Params, optional
        Default: the paper's ``d = 400, L = 10, gamma^2 = 1/2, lambda = 0.1``. The
        report searches the full space, so ``d >= 4``.
    alpha : float
        PGD step size for the dynamics and the center-stable manifold check,
        ``0 < alpha <= 1e100``.
    seed : int
        Seed of every random draw.
    full : bool
        The paper's experiments with all 30 repeats and full SGD (several minutes);
        by default 5 repeats and a tenth of the SGD steps.
    force : bool
        Replace the files an earlier report wrote in `out` (listed in its marker and
        unchanged since); files the user put there are never replaced or deleted.
    progress : bool
        A progress bar on stderr.
    jobs : int, optional
        Processes (:func:`slr_theory.study.study`; the same report for any value).
    atlas : Atlas or path, optional
        An atlas to show in a last section (:func:`slr_theory.atlas`, or the directory
        or table it wrote); read, not computed.
    html : bool
        Also write ``report.html``: the same report as one self-contained page, its
        figures embedded (:func:`slr_theory.render.markdown_html`).
    certificate : Census or path, optional
        A census certificate at `params` (``slr-theory certify --out``): re-verified, and
        the full-space list is then "complete by proof" where it is complete and agrees
        with the search, "found by search" otherwise.
    certify : bool
        Compute the census here (:func:`slr_theory.certify_critical_points`, seeded by
        the report's own search; half a minute at the paper's parameters, ten minutes at
        ``lam = 0.9``), write it beside the report as ``census.json.gz`` and use it as
        `certificate` (needs a model with rigorous enclosures and ``pip install
        'slr-theory[certify]'``).

    Returns
    -------
    Path
        The report file.
    """
    from tqdm.auto import tqdm

    from .study import study

    params = Params.paper() if params is None else params
    check_params(params)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}.")
    alpha = positive_real(alpha, "alpha", upper=MAX_ALPHA)
    if params.d < 4:
        raise ValueError(
            f"`params.d` must be >= 4 for the report (it searches the full space, where k, v, "
            f"k*, v* span four dimensions), got {params.d}."
        )
    full = boolean(full, "full")
    html = boolean(html, "html")
    if jobs is not None:
        jobs = positive_int(jobs, "jobs", upper=1024)
    if atlas is not None and not isinstance(atlas, Atlas):  # refused before any computing
        atlas = read_atlas(atlas)
    certify = boolean(certify, "certify")
    check_certifying(params, certificate, certify)  # refused before any computing
    expect = [*_EXPECT, CENSUS] if certify else _EXPECT
    proof = bool(certify) or certificate is not None  # a last part: the re-verification
    parts = _PARTS + ((_PROOF_PART,) if proof else ())
    ends = _ENDS + ((_PROOF_END,) if proof else ())
    with Destination(out, force=force, exclusive=True, expect=expect) as dest:
        # the bar names the part under way; no ETA: the parts take unequal times (the
        # continuation can take most of it), and a linear extrapolation would mislead
        with tqdm(
            total=len(parts),
            desc=f"report: {parts[0]}",
            unit="part",
            bar_format="{desc} | part {n_fmt} of {total_fmt} done, {elapsed} so far",
            disable=not progress,
        ) as bar:

            def done(label: str) -> None:
                bar.update(1)
                i = ends.index(label) + 1 if label in ends else len(parts)
                bar.set_description_str(
                    f"report: {parts[i] if i < len(parts) else 'drawing the figures'}"
                )

            result = study(
                params,
                alpha=alpha,
                seed=seed,
                full=full,
                jobs=jobs,
                progress=done,
                atlas=atlas,
                certificate=certificate,
                certify=dest.file(CENSUS) if certify else False,
            )
        result.save(dest.file(RESULTS))
        _draw(result, dest, html)
    return dest.directory / "report.md"


#: The parts of the computation, in order, as the bar names them, and the label
#: :func:`slr_theory.study.study` gives as each ends.
_PARTS = (
    "critical points",
    "Lipschitz bound",
    "phase portrait",
    "stability of M and basins (runs followed to their end)",
    "continuation in λ",
    "checks, experiments and statistics",
)
_ENDS = ("critical points", "lipschitz", "portrait", "basins", "continuation", "experiments")
#: The part a census certificate adds after those (minutes at ``lam = 0.9``), and its label.
_PROOF_PART, _PROOF_END = "the census certificate, re-verified box by box", "certificate"

#: What a report writes besides its figures and data files.
_EXPECT = ["report.md", "report.html", RESULTS]


def redraw_report(
    source: str | Path, out: str | Path | None = None, *, force: bool = False, html: bool = False
) -> Path:
    """Draw ``report.md`` and every figure again from a report's ``results.json``.

    Nothing is computed: the figures and the text come from the saved results.

    Parameters
    ----------
    source : str or Path
        A report directory (holding ``results.json``) or the ``results.json`` file.
    out : str or Path, optional
        Where to draw (default: the source directory, whose earlier report files are
        replaced; files the user changed there are refused, as with `force`).
    force : bool
        With `out`: replace the files an earlier report wrote there.
    html : bool
        Also write ``report.html``, self-contained (as :func:`write_report`).

    Returns
    -------
    Path
        The report file.

    Raises
    ------
    ValueError
        When `source` holds no readable ``results.json``, one changed since slr-theory
        wrote it (where its digest was recorded beside it), or one with a parameter
        outside its domain.
    """
    from .study import Study

    src = Path(source)
    path = src if src.is_file() else src / RESULTS
    if not path.is_file():
        raise ValueError(f"`from` must be a report directory with {RESULTS}, got {str(source)!r}.")
    recorded = written_files(path.parent).get(path.name)
    if recorded is not None and recorded != file_digest(path):
        raise ValueError(
            f"`from`: {str(path)!r} changed since slr-theory wrote it (its digest is not the "
            "one recorded beside it), so its parameters may no longer be those its numbers "
            "were computed at; compute the report again"
        )
    try:
        result = Study.load(path)
    except ValueError as exc:
        raise ValueError(f"`from`: {exc}") from None
    # the sentences are drawn from the numbers again, never taken from the file
    result.findings = findings(result)
    html = boolean(html, "html")
    if out is None:
        out, force = path.parent, True
    with Destination(out, force=force, exclusive=True, expect=_EXPECT) as dest:
        result.save(dest.file(RESULTS))
        try:
            _draw(result, dest, html)
        except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as exc:
            # what check_study does not foresee of an edited file is still its fault, not
            # an internal error: the Destination removes the partial drawing
            raise ValueError(
                f"`from`: {str(path)!r} holds a value the report cannot be drawn from "
                f"({type(exc).__name__}: {exc}); compute the report again"
            ) from None
    return dest.directory / "report.md"


def _draw(s, dest, html: bool = False) -> None:
    """Write ``report.md`` (and with `html` ``report.html``), the figures and the CSV files
    of a study into a Destination."""
    lines: list[str] = []
    for section in (
        _header,
        _findings,
        _verification,
        _risk,
        _critical,
        _portrait,
        _landscape,
        _experiments,
        _statistics,
        _atlas,
    ):
        lines += section(s, dest)
        lines.append("")
    text = "\n".join(lines) + "\n"
    dest.file("report.md").write_text(text)
    if html:
        from .render import markdown_html

        page = markdown_html(text, lambda name: dest.file(name).read_bytes())
        dest.file("report.html").write_text(page)


def _seconds(s, *names) -> str:
    total = sum(s.seconds.get(n, 0.0) for n in names)
    return f"<sub>(computed in {total:.1f} s)</sub>"


def _header(s, dest) -> list[str]:
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


def _findings(s, dest) -> list[str]:
    out = ["## 1. What this shows", ""]
    for paragraph in s.findings:
        out += [paragraph, ""]
    return out


def _verification(s, dest) -> list[str]:
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
        *_md_table(("check", "at", "closed form", "rel. error", "z", ""), rows),
        "",
        _seconds(s, "identities", "verification"),
    ]


def _risk(s, dest) -> list[str]:
    rows = [
        (
            r.name,
            _num(r.total, 8),
            _num(r.informative),
            _num(r.distractors),
            _num(r.interactions),
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
        *_md_table(("point", "risk", "informative", "distractors", "interactions"), rows),
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


def _critical(s, dest) -> list[str]:
    rows = [
        (
            overlaps_text(q.overlaps, 4),
            q.name + (" — **global minimum**" if q.global_minimum else ""),
            _num(q.risk, 6),
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
        *_md_table(
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
        _seconds(s, "critical points", "lipschitz"),
    ]


def _portrait(s, dest) -> list[str]:
    from .plotting import phase_portrait

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
            else _no_separatrix(s.portrait)
        )
        + "flow trajectories and PGD iterates, the basins and the risk contours.",
        "",
        *_portrait_times(s.portrait),
        _seconds(s, "portrait"),
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


def _arrival(b, dest) -> list[str]:
    """The subsection "How long it takes": the same starts followed to their end."""
    from .plotting import arrival_figure

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
        *_md_table(
            ("end", "fraction ± s.e.", "log10 steps", *(f"after {n:.0e}" for n in budgets)),
            rows,
        ),
        "",
        *_plateau_lines(b),
        "![arrival times](arrival.png)",
        "",
    ]


def _plateau_lines(b) -> list[str]:
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


def _saddle_place(at) -> str:
    """Where the escape's saddle is, in words: ``at the origin`` or its ``(kappa, nu)``."""
    if at is None or np.abs(at).max() < 1e-9:  # M's saddle at the origin, to rounding
        return "at the origin"
    return f"of M at (κ, ν) = ({at[0]:.4g}, {at[1]:.4g})"


def _no_separatrix(portrait) -> str:
    """Why the portrait has no separatrix, from its saved points."""
    inner = int(portrait.interior.sum())
    if inner == 0:
        return "no separatrix (M has no critical point inside the square: `R_ν ≠ 0` there), "
    return f"no separatrix (M has {inner} critical points inside the square, not one saddle), "


def _landscape(s, dest) -> list[str]:
    from .plotting import bifurcation_figure, off_manifold_figure, stability_figure

    stability_figure([s.stability], dest.file("stability.png"))
    b = s.basins
    rows = [
        (overlaps_text(m), name, f"{f:.2f} ± {se:.2f}")
        for m, name, f, se in zip(b.minima, b.names, b.fractions, b.stderr, strict=True)
    ]
    rows.append(
        (
            "—",
            f"at no minimum within the budget of {b.max_steps} steps",
            f"{b.unconverged / b.n:.2f}",
        )
    )
    off_manifold_figure(b, dest.file("off_manifold.png"))
    lines = [
        "## 6. The global picture",
        "",
        f"**Stability of M.** M attracts transversally on {s.stability.attracting_share:.1%} "
        "of the open square (the leading transverse eigenvalue of the overlap flow is "
        "negative there):",
        "",
        "![stability of M](stability.png)",
        "",
        f"**Basins.** {b.n} runs of PGD (`α = {b.alpha:g}`) from initialisations uniform on "
        f"the spheres, each run continued {b.steps} steps at a time until it is at a minimum "
        "(distance below 1e-3 and gradient norm below 1e-3), stops moving, or reaches "
        f"{b.max_steps} steps. The same runs are drawn below.",
        "",
        *_md_table(("minimum", "what", "fraction ± s.e."), rows),
        "",
        "![distance to M](off_manifold.png)",
        "",
        *_arrival(b, dest),
    ]
    if s.escape is not None:
        e = s.escape
        lines += [
            f"**Escape from the saddle {_saddle_place(e.at)}** (unstable rate "
            f"`μ = {e.mu:.4g}`): flow "
            "time to leave a 0.01-neighbourhood from distance "
            f"{', '.join(f'{x:g}' for x in e.r0)}: measured "
            f"{', '.join(f'{x:.2f}' for x in e.measured)}; linearised `log(r/r₀)/μ`: "
            f"{', '.join(f'{x:.2f}' for x in e.predicted)}.",
            "",
        ]
    gap = s.continuation.optimum_branch() is not None
    bifurcation_figure(
        s.continuation,
        dest.file("bifurcation.png"),
        names=s.branch_names,
        quantity="gap" if gap else "risk",
        mark=s.params.lam,
    )
    rows = [
        (
            e.lam_text,
            e.type,
            e.detail,
            f"b{e.branch}: {e.branch_name}",
            f"{e.width:.0e}",
        )
        for e in s.events
    ]
    lines += [
        f"**Continuation in λ** over [{s.lam_range[0]:g}, {s.lam_range[1]:g}]: "
        f"{len(s.continuation.branches)} branches (each named by its point at the λ of its "
        f"grid nearest {s.params.lam:g}). Each branch is followed in λ and, where that "
        "fails, in arc length. Index changes are located by bisection on the index; a "
        "branch that meets a more symmetric one (a pitchfork) where λ turns back along it, "
        "by extrapolation to the meeting; a fold at the extremum of λ along the branch. "
        "Each event once, with the width of the interval that holds it; a pitchfork "
        "shows twice, as the meeting and as the index change of the symmetric branch, "
        "located independently.",
        "",
        *_md_table(("λ", "event", "what", "branch", "located to"), rows),
        "",
        "![bifurcation diagram](bifurcation.png)",
        "",
        (
            "Each branch's risk minus the optimum's at the same λ (a symmetric log scale: "
            "below 0, the branches lower than `(k*, v*)`), its index class by colour, "
            f"the report's λ = {s.params.lam:g} dashed; the tags `b<i>` at the ends are "
            "named in the legend."
            if gap
            else "Each branch's risk, its index class by colour, the report's "
            f"λ = {s.params.lam:g} dashed; the tags `b<i>` at the ends are named in the legend."
        ),
        "",
        _seconds(s, "stability", "basins", "continuation"),
    ]
    return lines


def _experiments(s, dest) -> list[str]:
    from .plotting import experiment_figure
    from .render import write_trajectory_csv

    lines = [
        "## 7. The paper's experiments",
        "",
        "The paper's configurations, at their own parameters (not the report's); "
        + (
            "all 30 repeats at the paper's step counts."
            if s.full
            else "5 repeats each, the SGD experiment at a tenth of its steps (`--full` for "
            "the paper's 30 repeats and all steps)."
        ),
        "",
    ]
    for res in s.experiments:
        e = res.experiment
        name = e.name
        experiment_figure(res, dest.file(f"{name}.png"))
        write_trajectory_csv(res.trajectory, dest.file(f"{name}.csv"), eps=e.eps)
        tr = res.trajectory
        lines += [
            f"### {name}",
            "",
            f"{e.description} (`d = {e.d}`, `L = {e.L}`, `λ₀ = {e.lam0:g}`, `α = {e.alpha:g}`, "
            f"{int(tr.step[-1])} steps). Final risk − ε²: median "
            f"{float(np.median(tr.risk[-1] - e.eps**2)):.4g} over "
            f"{tr.overlaps.shape[1]} runs. Data: [{name}.csv]({name}.csv).",
            "",
            f"![{name}]({name}.png)",
            "",
        ]
    lines.append(_seconds(s, "experiments"))
    return lines


def _statistics(s, dest) -> list[str]:
    p = s.params
    table = []
    for r in s.statistics:
        bayes_txt = bayes_text(r)
        table.append(
            (
                r["d"],
                r["L"],
                f"{r['lam_opt']:.4g}",
                f"{r['attention']:.4e}",
                bayes_txt,
                f"{r['linear']:.4f}",
            )
        )
    return [
        "## 8. Attention against the Bayes and linear risks (the paper's section 4)",
        "",
        f"Risk − ε² at the report's `γ = {p.gamma:.4g}`, `ε = {p.eps:g}`"
        + (f", `s = {p.s}`" if p.s != 1 else "")
        + ", over the paper's dimensions with `L = ⌈√d⌉`: the attention predictor "
        f"`{p.predictor}` at `(k*, v*)` and its best temperature, the Bayes risk ("
        + _bayes_method(s.statistics)
        + ") and the best linear predictor.",
        "",
        *_md_table(("d", "L", "λ*", "attention", "Bayes (MC)", "linear"), table),
        "",
        _seconds(s, "statistics"),
    ]


def _bayes_method(rows: list[dict]) -> str:
    """How the rows' Bayes risks were estimated, with their numbers."""
    if not rows or "bayes_n" not in rows[0]:  # saved before 0.5.0: the model's samples
        return (
            "Monte Carlo over samples of the model, as saved before 0.5.0: at large `d` it "
            "misses the rare samples that carry the Bayes risk and is far too low"
        )
    worst = max(r["bayes_rel_se"] for r in rows)
    return (
        f"importance sampling, {rows[0]['bayes_n']} draws per kind of pair of subsets, "
        f"relative standard error at most {worst:.1%}; printed from its logarithm, so below "
        "the double range too"
    )


def _atlas(s, dest) -> list[str]:
    a = s.atlas
    if a is None:
        return []
    from .plotting import atlas_figure
    from .study import atlas_finding

    lines = [
        "## 9. The atlas over parameter space",
        "",
        "Given with the report, read and not computed here (`slr-theory atlas`). "
        + atlas_finding(a),
        "",
    ]
    spread = [k for k, v in a.axes.items() if len(v) > 1 and k != "nonlinearity"]
    flat = [k for k, v in a.axes.items() if len(v) == 1 and k != "nonlinearity"]
    if len(spread) <= 2 and len(a.axes["nonlinearity"]) == 1 and a.rows:
        x, y = [*spread, *flat, "L"][:2]
        if x == y:
            y = "d"
        atlas_figure(a, dest.file("atlas.png"), x=x, y=y)
        fates = all(np.isfinite(r["fate_optimum_fraction"]) for r in a.rows)
        middle = (
            "the share of uniform starts PGD takes to it, each run followed to its end, "
            "with its standard error and the median steps of their arrival (1en: 10^n)"
            if fates
            else "the share of uniform starts PGD takes to it within the budget, with its "
            "standard error (a share with ≥ and a percentage: more than a tenth of the "
            "cell's runs did not converge)"
        )
        lines += [
            "![The atlas](atlas.png)",
            "",
            f"Left: what `(k*, v*)` is in each cell. Middle: {middle}. Right: the share of "
            "M where M attracts transversally.",
            "",
        ]
    else:
        lines += [
            f"(No figure: the atlas spans {', '.join(spread)}; the table has every cell.)",
            "",
        ]
    table = [
        (
            r["cell"],
            f"{r['lam']:.4g}",
            r["L"],
            f"{r['gamma']:.4g}",
            r["d"],
            r["s"],
            r["nonlinearity"],
            found_text(r),
            r["optimum_index"],
            "yes" if r["optimum_is_global"] else "no",
            *_fate_cells(r),
            f"{1.0 - r['basin_unconverged_fraction']:.2f}",
            f"{r['m_attracting_fraction']:.2f}",
        )
        for r in a.rows
    ]
    lines += _md_table(
        (
            "cell",
            "λ",
            "L",
            "γ",
            "d",
            "s",
            "σ",
            "critical points (found by search)",
            "index of (k*, v*)",
            "global",
            "to (k*, v*), followed to the end",
            "log10 steps to (k*, v*)",
            f"at a minimum after {a.settings.get('max_steps')} steps",
            "M attracts",
        ),
        table,
    )
    return lines


def _fate_cells(r: dict) -> tuple[str, str]:
    """An atlas row's share at ``(k*, v*)`` followed to the end and its median arrival;
    a dash for a table written before the fates (NaN)."""
    if not np.isfinite(r["fate_optimum_fraction"]):
        return "—", "—"
    return (
        f"{r['fate_optimum_fraction']:.2f} ± {r['fate_optimum_se']:.2f}",
        f"{r['optimum_log10_steps']:.1f}",
    )
