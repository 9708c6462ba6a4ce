"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

* `on_page_markdown`: the titles that tell the test harness a block is not run (```` title="not
  executed: ..." ````, tests/docs_examples.py) stay in the Markdown and are dropped from the page:
  they are for the tests, not for readers.
* `on_files`: the figures of the pages, drawn at build time from real runs of the package (seeded,
  so every build draws the same): `figures/tradeoff.png` (`duckdb-sdc tradeoff` of the demo's data),
  `figures/microaggregation.svg` (MDAV groups of 30 values), `figures/boxes.svg` (the boxes of
  `box_release` over two columns), and `figures/report.html` with `figures/report-classes.svg` (the
  HTML report of a release refused by its policy, and its class-size chart). They are added to the
  site as generated files, never written into docs/. matplotlib draws the first three (the docs
  extra installs it).
"""

from __future__ import annotations

import io
import re
import tempfile
from pathlib import Path

_TITLE = re.compile(r'^(?P<fence>\s*(`{3,}|~{3,})\w*)(?P<attrs>[^\n]*?)\s*title="not executed:[^"]*"(?P<rest>[^\n]*)$',
                    re.M)
_FIGURES: dict[str, bytes] = {}  # drawn once per process (mkdocs serve rebuilds often)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return _TITLE.sub(lambda m: f"{m['fence']}{m['attrs']}{m['rest']}".rstrip(), markdown)


def on_files(files, config):
    from mkdocs.structure.files import File

    if not _FIGURES:
        _FIGURES.update(figures())
    for name, content in _FIGURES.items():
        files.append(File.generated(config, f"figures/{name}", content=content))
    return files


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "duckdb-sdc", "svg.fonttype": "none", "font.size": 9})
    return plt


def _svg(fig) -> bytes:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue().encode("utf-8")


def microaggregation_figure() -> bytes:
    """30 skewed values, their MDAV groups of k = 3 (one colour each) and the released group means."""
    import numpy as np

    from duckdb_sdc import methods

    plt = _plt()
    rng = np.random.default_rng(20261122)
    x = np.round(rng.lognormal(10, 0.5, 30), -2)
    labels = methods.partition(x, 3, "mdav")
    masked = methods.represent(x, labels, "mean")
    fig, ax = plt.subplots(figsize=(8, 2.4))
    colours = plt.get_cmap("tab10")
    for g in np.unique(labels):
        mine = labels == g
        ax.scatter(x[mine], np.full(mine.sum(), 1.0), color=colours(int(g) % 10), s=28, zorder=3)
        ax.scatter(masked[mine][:1], [0.0], color=colours(int(g) % 10), marker="D", s=40, zorder=3)
        for v in x[mine]:
            ax.plot([v, masked[mine][0]], [1.0, 0.0], color=colours(int(g) % 10), linewidth=0.8, alpha=0.6)
    ax.set_yticks([0, 1], ["released (group mean)", "original"])
    ax.set_ylim(-0.4, 1.4)
    ax.set_xlabel("income")
    ax.set_title("mdav_round(income, k = 3): each colour is a group of at least 3 records, released as its mean")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    out = _svg(fig)
    plt.close(fig)
    return out


def boxes_figure() -> bytes:
    """Records of two correlated columns and the boxes of box_release (k = 5) that replace them."""
    import numpy as np
    from matplotlib.patches import Rectangle

    from duckdb_sdc.methods import boxes

    plt = _plt()
    rng = np.random.default_rng(7)
    height = rng.normal(170, 9, 60)
    weight = 0.9 * (height - 170) + rng.normal(72, 7, 60)
    X = np.column_stack([height, weight])
    got = boxes.box_release(X, "corr(height, weight)", 5, names=["height", "weight"])
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    colours = plt.get_cmap("tab20")
    for b in np.unique(got.labels):
        i = int(np.flatnonzero(got.labels == b)[0])
        lo, hi = got.lower[i], got.upper[i]
        ax.add_patch(Rectangle((lo[0], lo[1]), hi[0] - lo[0], hi[1] - lo[1], facecolor=colours(int(b) % 20),
                               alpha=0.25, edgecolor=colours(int(b) % 20), linewidth=1.2))
    ax.scatter(height, weight, s=10, color="black", zorder=3)
    ax.set_xlabel("height")
    ax.set_ylabel("weight")
    ax.set_title("box_release(k = 5, characteristic corr(height, weight)): every record is released as its box")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    out = _svg(fig)
    plt.close(fig)
    return out


_SPEC = """
[source]
files = ["people.csv"]
key = "person_id"

[output]
database = "release/people.duckdb"
table = "people"
linkage = "private/people_link.duckdb"

[masking]
strata = ["region"]

[columns]
person_id = "drop"
region = "keep"
age = "keep"
household_size = "drop"
income = { method = "mdav_round", k = 5 }
expenses = { method = "mdav_round", k = 5 }
savings = "drop"
"""


def tradeoff_and_report() -> dict[str, bytes]:
    """The trade-off plot of 500 of the demo's people (k = 3, 5, 10, 20, 30) and the HTML report of the same spec
    with a [policy] that refuses it (the would-be release's page, with the trade-off inside)."""
    from duckdb_sdc.cli import main
    from duckdb_sdc.demo import make_microdata

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        make_microdata(500).to_csv(work / "people.csv", index=False)
        (work / "people.toml").write_text(_SPEC + "\n[policy]\nmin_k = 5\nmax_record_linkage = 0.25\n")
        if main(["tradeoff", str(work / "people.toml"), "--k", "3,5,10,20,30", "--quiet", "--out", str(work)]) != 0:
            raise RuntimeError("docs figures: duckdb-sdc tradeoff failed")
        page = work / "report.html"
        code = main(["release", str(work / "people.toml"), "--quiet", "--report", str(page),
                     "--tradeoff", str(work / "people_tradeoff_k.html")])
        if code != 3:
            raise RuntimeError(f"docs figures: the report's release should be refused, it exited {code}")
        text = page.read_text(encoding="utf-8")
        classes = re.search(r'<svg class="chart"[^>]*><title>records by equivalence class size</title>.*?</svg>',
                            text, re.S)
        return {"tradeoff.png": (work / "people_tradeoff_k.png").read_bytes(), "report.html": text.encode("utf-8"),
                "report-classes.svg": classes.group(0).encode("utf-8")}


def figures() -> dict[str, bytes]:
    import contextlib

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        out = tradeoff_and_report()
    out["microaggregation.svg"] = microaggregation_figure()
    out["boxes.svg"] = boxes_figure()
    return out
