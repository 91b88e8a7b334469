"""Draw the gallery (docs/gallery.md): every report figure at erf, tanh and softmax.

    python docs/figures/gallery/make.py            # three reports, about 3 minutes on 2 cores
    python docs/figures/gallery/make.py --from D   # redraw from D/erf, D/tanh, D/softmax

Each model's report is computed (or redrawn from its results.json) into a temporary
directory; its figures are copied beside this script, and docs/gallery.md lists them
with the command that made them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = {
    "erf": [],
    "tanh": ["--nonlinearity", "tanh"],
    "softmax": ["--attention", "softmax"],
}
FIGURES = (
    ("portrait", "the flow on M (section 5)"),
    ("stability", "where M attracts (section 6)"),
    ("off_manifold", "distance to M of 100 PGD runs (section 6)"),
    ("arrival", "when the runs arrive (section 6)"),
    ("bifurcation", "critical points followed in λ (section 6)"),
    ("gd_manifold", "the paper's experiment gd_manifold (section 7)"),
    ("gd_sphere_small_lambda", "gd_sphere_small_lambda (section 7)"),
    ("gd_sphere_large_lambda", "gd_sphere_large_lambda (section 7)"),
    ("gd_sphere_schedule", "gd_sphere_schedule (section 7)"),
    ("sgd_sphere_schedule", "sgd_sphere_schedule (section 7)"),
)


def _small_copy(source: Path, target: Path) -> None:
    """The figure in 256 colours (a third of the bytes; a figure has few colours)."""
    from PIL import Image  # matplotlib's own dependency

    image = (
        Image.open(source).convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    )
    image.save(target, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=None)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "slr_theory", "report"]
    with tempfile.TemporaryDirectory() as tmp:
        for model, flags in MODELS.items():
            out = Path(tmp) / model
            if args.source is None:
                command = [*cli, *flags, "--out", str(out)]
            else:
                command = [*cli, "--from", str(args.source / model), "--out", str(out)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            (HERE / model).mkdir(exist_ok=True)
            for name, _what in FIGURES:
                _small_copy(out / f"{name}.png", HERE / model / f"{name}.png")
    lines = [
        "# Gallery",
        "",
        "Every figure of the report at the paper's parameters (`d = 400, L = 10, λ = 0.1`),",
        "for the paper's model (erf), `--nonlinearity tanh` and `--attention softmax`, as",
        "`slr-theory report` draws them. Made by `python docs/figures/gallery/make.py`.",
        "",
    ]
    for name, what in FIGURES:
        lines += [f"## {what}", ""]
        for model in MODELS:
            lines += [
                f"**{model}**",
                "",
                f"![{name}, {model}](figures/gallery/{model}/{name}.png)",
                "",
            ]
    (HERE.parent.parent / "gallery.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
