"""The report as a document: computed or redrawn from its results, its parts drawn in order, written under the output discipline."""

from __future__ import annotations

from pathlib import Path

from ..output import Destination, file_digest, written_files
from ..params import Params, check_params
from ..study import check_certifying, findings
from ..survey import Atlas, read_atlas
from ..trajectory import MAX_ALPHA
from ..validate import boolean, positive_int, positive_real
from .picture import atlas_section, experiments_section, landscape_section, statistics_section
from .tables import RESULTS
from .theory import (
    critical_section,
    findings_section,
    header_section,
    portrait_section,
    risk_section,
    verification_section,
)

__all__ = ["redraw_report", "write_report"]


#: The census ``certify=True`` computes, beside the report.
CENSUS = "census.json.gz"


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
        the report's own search, on the cores the report leaves free; 20 s at the paper's
        parameters, ten minutes at ``lam = 0.9`` on one core), write it beside the report as ``census.json.gz`` and use it as
        `certificate` (needs a model with rigorous enclosures and ``pip install
        'slr-theory[certify]'``).

    Returns
    -------
    Path
        The report file.
    """
    from tqdm.auto import tqdm

    from ..study import study

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
    from ..study import Study

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
        header_section,
        findings_section,
        verification_section,
        risk_section,
        critical_section,
        portrait_section,
        landscape_section,
        experiments_section,
        statistics_section,
        atlas_section,
    ):
        lines += section(s, dest)
        lines.append("")
    text = "\n".join(lines) + "\n"
    dest.file("report.md").write_text(text)
    if html:
        from ..render import markdown_html

        page = markdown_html(text, lambda name: dest.file(name).read_bytes())
        dest.file("report.html").write_text(page)
