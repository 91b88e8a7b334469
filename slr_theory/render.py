"""Text, CSV and JSON renderings of the toolkit's results (tables for the CLI, files for users)."""

from __future__ import annotations

import csv
import html
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .results import dumps
from .trajectory import PGDResult

__all__ = [
    "census_text",
    "critical_records",
    "critical_text",
    "markdown_html",
    "math_html",
    "risk_text",
    "statistics_text",
    "to_json",
    "trajectory_text",
    "verification_text",
    "write_trajectory_csv",
]

TRAJECTORY_COLUMNS = (
    "step",
    "lam",
    "repeat",
    "kappa",
    "nu",
    "theta",
    "eta",
    "rho",
    "risk",
    "risk_minus_eps2",
    "dist_to_M",
)


def to_json(obj) -> str:
    """Indented, strict JSON of plain data (lists, dicts, numbers, strings, arrays).

    The one writer of :mod:`slr_theory.results` (non-finite floats as ``"NaN"``,
    ``"Infinity"``, ``"-Infinity"``), indented by 2 for the terminal.

    Parameters
    ----------
    obj : object

    Returns
    -------
    str
    """
    return dumps(obj, indent=2)


def write_trajectory_csv(tr: PGDResult, path: str | Path, *, eps: float = 0.0) -> Path:
    """Write a recorded trajectory in long format, one row per step and repeat.

    Parameters
    ----------
    tr : PGDResult
        With overlaps of shape ``(n_records, repeats, 5)``.
    path : str or Path
    eps : float
        Label noise, for the ``risk_minus_eps2`` column.

    Returns
    -------
    Path
    """
    ov = tr.overlaps
    dist = np.sqrt(np.sum(ov[..., 2:] ** 2, axis=-1))
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(TRAJECTORY_COLUMNS)
        for i, step in enumerate(tr.step):
            for r in range(ov.shape[1]):
                w.writerow(
                    [int(step), repr(float(tr.lam[i])), r]
                    + [repr(float(x)) for x in ov[i, r]]
                    + [
                        repr(float(tr.risk[i, r])),
                        repr(float(tr.risk[i, r] - eps**2)),
                        repr(float(dist[i, r])),
                    ]
                )
    return Path(path)


def verification_text(results: Sequence) -> str:
    """The table ``slr-theory verify`` prints: one row per check, then a count.

    Parameters
    ----------
    results : sequence of slr_theory.verify.CheckResult

    Returns
    -------
    str
    """
    header = ("check", "closed form", "mpmath", "rel.err", "tol", "MC mean", "MC s.e.", "z", "")
    rows = [
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
        for r in results
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    n_fail = sum(not r.passed for r in results)
    lines.append(f"{len(results) - n_fail} passed, {n_fail} failed")
    points: dict[str, list[str]] = {}  # where the model's checks ran, said once per point
    for r in results:
        if {"d", "L", "lam", "gamma", "eps"} <= set(r.params):
            p = r.params
            at = (
                f"d = {int(p['d'])}, L = {int(p['L'])}, λ = {p['lam']:g}, γ = {p['gamma']:g}, "
                f"ε = {p['eps']:g}" + (f", s = {int(p['s'])}" if p.get("s", 1) != 1 else "")
            )
            points.setdefault(at, []).append(r.name)
    for at, names in points.items():
        lines.append(f"at {at}: {', '.join(names)}")
    return "\n".join(lines)


def statistics_text(
    rows: Sequence[dict],
    gamma: float,
    eps: float,
    *,
    s: int = 1,
    sigma: str = "erf",
    attention: str = "pointwise",
) -> str:
    """The table ``slr-theory stats`` prints (rows of :func:`slr_theory.statistics.statistics_table`).

    Parameters
    ----------
    rows : sequence of dict
    gamma, eps : float
    s : int, optional
        Informative tokens of the rows' model (named in the title when not 1).
    sigma : str, optional
        The attention's nonlinearity; with `attention`, the model, named in the title
        as it differs from the paper's (:attr:`slr_theory.models.Model.tag`).
    attention : str, optional
        The attention.

    Returns
    -------
    str
    """
    from .models import model_of

    model = (f", s = {s}" if s != 1 else "") + model_of(attention, sigma).tag
    lines = [
        f"risk - eps^2 at gamma = {gamma:.4g}, eps = {eps:.4g}{model} "
        "(attention at k*, v* and its best lambda)",
        f"{'d':>9} {'L':>6} {'lambda*':>10} {'attention':>11} {'Bayes (MC)':>22} {'linear':>9}",
    ]
    for r in rows:
        bayes = bayes_text(r, "+-")
        lines.append(
            f"{r['d']:>9} {r['L']:>6} {r['lam_opt']:>10.4g} {r['attention']:>11.4e} "
            f"{bayes:>22} {r['linear']:>9.4f}"
        )
    return "\n".join(lines)


def critical_records(points, spectra=None, bound=None, alpha=None) -> dict:
    """Plain data of :func:`slr_theory.critical_points` (and of the PGD-map check) for JSON.

    Parameters
    ----------
    points : slr_theory.critical.CriticalPoints
    spectra : list of slr_theory.critical.MapSpectrum, optional
        One per point, at step size `alpha`.
    bound : slr_theory.critical.LipschitzBound, optional
    alpha : float, optional

    Returns
    -------
    dict
    """
    rows = []
    for i, q in enumerate(points):
        row = {
            "overlaps": [float(x) for x in q.overlaps],
            "risk": q.risk,
            "grad_norm": q.grad_norm,
            "index": q.index,
            "nullity": q.nullity,
            "orbit_dimension": q.orbit_dimension,
            "kind": q.kind,
            "hessian_eigenvalues": [float(x) for x in q.hessian_eigenvalues],
            "multiplicities": [int(x) for x in q.multiplicities],
            "symmetry_copies": [[float(x) for x in c] for c in q.symmetry_copies],
            "below_range": list(q.below_range),
        }
        if spectra is not None:
            s = spectra[i]
            row["pgd_map"] = {
                "unstable": s.unstable,
                "center": s.center,
                "stable": s.stable,
                "conclusion": s.conclusion,
            }
        rows.append(row)
    out = {"where": points.where, "certificate": points.certificate, "points": rows}
    if bound is not None:
        out["lipschitz"] = {
            "lower": bound.lower,
            "upper": bound.upper,
            "alpha": alpha,
            "alpha_below_one_over_lip": bound.step_condition(alpha),
        }
    return out


def critical_text(points, spectra=None, bound=None, alpha=None) -> str:
    """The text ``slr-theory critical`` prints: the table, the evidence, the PGD-map check.

    Parameters
    ----------
    points : slr_theory.critical.CriticalPoints
    spectra : list of slr_theory.critical.MapSpectrum, optional
    bound : slr_theory.critical.LipschitzBound, optional
    alpha : float, optional

    Returns
    -------
    str
    """
    n = len(points)
    head = f"{n} critical {'point' if n == 1 else 'points'} up to symmetry (each stands for its images):"
    lines = [head, points.table(), "", *points.certificate]
    if spectra is not None:
        lines += ["", f"PGD map at alpha = {alpha:g} (unstable / center / stable dimensions):"]
        for q, s in zip(points, spectra, strict=True):
            o = " ".join(f"{x:+.4f}" for x in q.overlaps)
            lines.append(f"  ({o})  {s.unstable} / {s.center} / {s.stable}  {s.conclusion}")
    if bound is not None:
        lines.append(
            f"Lip(grad R) in [{bound.lower:.4g}, {bound.upper:.4g}]; "
            f"alpha < 1/Lip: {bound.step_condition(alpha)}"
        )
    return "\n".join(lines)


def census_text(census) -> str:
    """The text ``slr-theory certify`` prints: the proved points, then what is proved.

    Parameters
    ----------
    census : slr_theory.certify.Census

    Returns
    -------
    str
    """
    head = f"{'kappa':>8} {'nu':>8} {'theta':>8} {'eta':>8} {'rho':>8} {'risk':>11}  r  index  nullity  kind"
    lines = [head]
    for q in census.points:
        o = " ".join(f"{x:8.4f}" for x in q.overlaps)

        def text(x) -> str:
            return "?" if x is None else str(x)

        lines.append(
            f"{o} {q.risk:11.6f}  {text(q.span_dim)}  {text(q.index):>5}  {text(q.nullity):>7}  {q.kind}"
        )
    lines += ["", census.summary()]
    for ov in census.search.get("unproved", []):
        lines.append("  not proved: (" + ", ".join(f"{x:+.4f}" for x in ov) + ")")
    return "\n".join(lines)


def risk_text(data: dict) -> str:
    """The text ``slr-theory risk`` prints.

    Parameters
    ----------
    data : dict
        ``overlaps``, ``risk``, ``components``, ``gradient``, ``riemannian_gradient_norms``.

    Returns
    -------
    str
    """
    o = ", ".join(f"{k} = {v:g}" for k, v in data["overlaps"].items())
    lines = [f"at {o}:", f"  risk          {data['risk']:.17g}"]
    lines += [f"  {k:<13} {v:.17g}" for k, v in data["components"].items()]
    lines.append(
        "  dR/d(overlap) " + "  ".join(f"{k} {v:.6g}" for k, v in data["gradient"].items())
    )
    gk, gv = data["riemannian_gradient_norms"]
    lines.append(f"  |grad_k R| = {gk:.6g}, |grad_v R| = {gv:.6g} (Riemannian)")
    return "\n".join(lines)


def trajectory_text(header: str, rows) -> str:
    """A trajectory as a table (``slr-theory flow`` and ``slr-theory pgd``).

    Parameters
    ----------
    header : str
        ``"t"`` or ``"step"``.
    rows : sequence of tuples
        ``(time or step, kappa, nu, theta, eta, rho, risk)``.

    Returns
    -------
    str
    """
    lines = [
        f"{header:>10} {'kappa':>10} {'nu':>10} {'theta':>10} {'eta':>10} {'rho':>10} {'risk':>12}"
    ]
    for r in rows:
        first = f"{r[0]:>10.4g}" if header == "t" else f"{r[0]:>10d}"
        lines.append(first + "".join(f" {x:>10.6f}" for x in r[1:6]) + f" {r[6]:>12.8f}")
    return "\n".join(lines)


_INLINE = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)|`([^`]+)`|\*\*(.+?)\*\*|(</?sub>)")


#: The Greek letters the plain-text formulas spell out (certificates, findings), as the
#: HTML shows them.
_GREEK = {
    "alpha": "α", "gamma": "γ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ",
    "mu": "μ", "nu": "ν", "rho": "ρ", "sigma": "σ", "tau": "τ", "zeta": "ζ",
}  # fmt: skip
_GREEK["pi"] = "π"
_GREEK_WORD = re.compile(r"\b(" + "|".join(_GREEK) + r")\b")
#: ``R_kappa``: a one-letter name with a Greek subscript (not ``gd_sphere_large_lambda``)
_GREEK_INDEX = re.compile(r"\b([A-Za-z])_(" + "|".join(_GREEK) + r")\b")
_SYMBOLS = ((">=", "≥"), ("<=", "≤"), ("+-", "±"), ("sqrt(", "√("))
_EXPONENT = re.compile(r"\^(?:\{([^{}]*)\}|\(([^()]*)\)|([-−]?[\w.]*\w))")
_SUBSCRIPT = re.compile(r"_(?:\{([^{}]*)\}|([0-9A-Za-zα-ωℓ])(?!\w))")


def math_html(text: str) -> str:
    """A plain-text formula typeset in HTML: Greek names as letters (``R_kappa`` as
    ``R`` with a subscript ``κ``), ``x^2``, ``e^{...}`` and ``e^(...)`` as superscripts,
    ``X_{J0}`` and ``X_ℓ`` as subscripts (identifiers such as ``phase_portrait``
    untouched), ``>=``, ``+-`` and ``sqrt(`` as ``≥``, ``±`` and ``√(``. `text` is
    escaped.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> from slr_theory.render import math_html
    >>> math_html("E = e^{-c^2 kappa^2}, 10^2.33 < x_1")
    'E = e<sup>-c<sup>2</sup> κ<sup>2</sup></sup>, 10<sup>2.33</sup> &lt; x<sub>1</sub>'
    >>> math_html("R_kappa >= 2 gamma^2 / sqrt(pi), gd_sphere_large_lambda")
    'R<sub>κ</sub> ≥ 2 γ<sup>2</sup> / √(π), gd_sphere_large_lambda'
    """
    for ascii_, symbol in _SYMBOLS:
        text = text.replace(ascii_, symbol)
    text = _GREEK_INDEX.sub(lambda m: f"{m.group(1)}_{_GREEK[m.group(2)]}", text)
    out = _GREEK_WORD.sub(lambda m: _GREEK[m.group(1)], html.escape(text))

    def sup(m) -> str:
        inner = next(g for g in m.groups() if g is not None)
        return f"<sup>{math_html_escaped(inner)}</sup>"

    def sub(m) -> str:
        inner = next(g for g in m.groups() if g is not None)
        return f"<sub>{inner}</sub>"

    def math_html_escaped(t: str) -> str:
        return _SUBSCRIPT.sub(sub, _EXPONENT.sub(sup, t))

    return math_html_escaped(out)


def _inline(text: str, images) -> str:
    """One line of the report's Markdown as HTML: code, bold, links, images, ``<sub>``;
    formulas typeset (:func:`math_html`), everything else escaped."""
    out, at = [], 0
    for m in _INLINE.finditer(text):
        out.append(math_html(text[at : m.start()]))
        at = m.end()
        bang, label, href, code, bold, sub = m.groups()
        if code is not None:
            out.append(f"<code>{math_html(code)}</code>")
        elif bold is not None:
            out.append(f"<strong>{_inline(bold, images)}</strong>")
        elif sub is not None:
            out.append(sub)
        elif bang:
            out.append(f'<img alt="{html.escape(label, quote=True)}" src="{images(href)}">')
        else:
            out.append(f'<a href="{html.escape(href, quote=True)}">{html.escape(label)}</a>')
    out.append(math_html(text[at:]))
    return "".join(out)


def markdown_html(text: str, images=None, title: str = "slr-theory report") -> str:
    r"""The Markdown the report writes, as one self-contained HTML page.

    Headings, paragraphs, ``-`` lists, pipe tables, inline code, bold, links and images
    (the subset :mod:`slr_theory.report` writes); every other character is escaped.
    `images` maps an image's file name to its bytes, embedded as a ``data:`` URI, so the
    page needs no file beside it (links to the data files stay relative).

    Parameters
    ----------
    text : str
        The Markdown.
    images : callable or mapping, optional
        File name -> bytes (PNG or SVG, from the suffix); without it, images keep their
        relative source.
    title : str

    Returns
    -------
    str

    Examples
    --------
    >>> page = markdown_html("# A\n\nSome `x < 1`, **bold**.\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    >>> "<h1>A</h1>" in page, "<code>x &lt; 1</code>" in page, "<td>2</td>" in page
    (True, True, True)
    """
    import base64

    if not isinstance(text, str):
        raise ValueError(f"`text` must be a str of Markdown, got {type(text).__name__}.")
    get = images if callable(images) or images is None else images.__getitem__

    def source(name: str) -> str:
        if get is None:
            return html.escape(name, quote=True)
        kind = "image/svg+xml" if name.lower().endswith(".svg") else "image/png"
        return f"data:{kind};base64,{base64.b64encode(get(name)).decode('ascii')}"

    body, para, lines = [], [], text.splitlines()

    def flush():
        if para:
            body.append(f"<p>{_inline(' '.join(para), source)}</p>")
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
        elif stripped.startswith("#"):
            flush()
            level = min(len(stripped) - len(stripped.lstrip("#")), 6)
            body.append(f"<h{level}>{_inline(stripped[level:].strip(), source)}</h{level}>")
            i += 1
        elif stripped.startswith("- "):
            flush()
            items = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(f"<li>{_inline(lines[i].strip()[2:], source)}</li>")
                i += 1
            body.append(f"<ul>{''.join(items)}</ul>")
        elif stripped.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            head, rest = rows[0], [r for r in rows[1:] if not all(set(c) <= set("-:") for c in r)]
            table = "<tr>" + "".join(f"<th>{_inline(c, source)}</th>" for c in head) + "</tr>"
            for r in rest:
                table += "<tr>" + "".join(f"<td>{_inline(c, source)}</td>" for c in r) + "</tr>"
            body.append(f"<table>{table}</table>")
        else:
            para.append(stripped)
            i += 1
    flush()
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45}"
        "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
        "padding:2px 6px}img{max-width:100%}code{background:#f4f4f4}"
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>'
        f"{html.escape(title)}</title><style>{style}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def from_log10(log10: float, digits: int = 3) -> str:
    """A number given by its ``log10`` in scientific notation, below the double range too.

    Examples
    --------
    >>> from slr_theory.render import from_log10
    >>> from_log10(-39.72), from_log10(-451.5), from_log10(float("-inf"))
    ('1.905e-40', '3.162e-452', '0')
    """
    if log10 == -np.inf:
        return "0"
    e = int(np.floor(log10))
    m = 10.0 ** (log10 - e)
    if round(m, digits) >= 10.0:  # 9.9996 rounds up: the next decade
        m, e = m / 10.0, e + 1
    return f"{m:.{digits}f}e{e:+03d}"


def bayes_text(row: dict, pm: str = "±") -> str:
    """A statistics row's Bayes excess with its standard error, from their logs when the
    row has them (results saved before 0.5.0 have the plain values only)."""
    if "bayes_log10" not in row:
        if row["bayes"] == 0 and row["bayes_se"] == 0:
            return "< 2.2e-308"
        return f"{row['bayes']:.3e} {pm} {row['bayes_se']:.1e}"
    log10, rel = row["bayes_log10"], row["bayes_rel_se"]
    if log10 == -np.inf:
        return "0"
    se = from_log10(log10 + np.log10(rel), 1) if rel > 0 else "0"
    return f"{from_log10(log10)} {pm} {se}"
