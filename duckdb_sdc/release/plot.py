"""Plots of a sweep (`tradeoff.sweep`): information loss against disclosure risk, as a PNG and as a
self-contained HTML page (the figure inline as SVG, a table of the points, and every figure of the
sweep as JSON in a <script type="application/json"> element; nothing is loaded from elsewhere).

matplotlib is the optional extra `plot` (`tasks.py` installs it); `require_matplotlib` says in one line
how to install it where it is missing.
"""

from __future__ import annotations

import html
import io
import json
import math
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from .._version import __version__
from .report import ALL

DATA_ID = "tradeoff-data"
# duckdb-sdc is installed from a clone or a wheel built there (it is not on a package index)
INSTALL_HINT = ('plots need matplotlib: pip install matplotlib (or, in a clone of duckdb-sdc, '
                'pip install ".[plot]")')


class PlotUnavailable(Exception):
    """matplotlib is not installed."""


def require_matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable(INSTALL_HINT) from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def points(data: pd.DataFrame, il: str, dr: str, columns: list[str]) -> pd.DataFrame:
    """One row per (parameter value, curve): the swept columns alone, then ALL (every masked column
    together), with the two measures and the k-anonymity of that column (of all quasi-identifiers
    for ALL)."""
    wanted = data[data["measure"].isin([il, dr, "k_anonymity"])].copy()
    wanted["curve"] = wanted["column"].where(wanted["column"].notna(), ALL)
    wide = wanted.pivot_table(index=["parameter_value", "curve"], columns="measure", values="value",
                              aggfunc="first", dropna=False).reset_index()
    for m in (il, dr, "k_anonymity"):
        if m not in wide:
            wide[m] = float("nan")
    wide = wide[wide["curve"].isin([*columns, ALL])]
    order = {c: i for i, c in enumerate([*columns, ALL])}
    wide = wide.assign(_o=wide["curve"].map(order)).sort_values(["_o", "parameter_value"]).drop(columns="_o")
    wide = wide.dropna(subset=[il, dr], how="all")
    return wide[["parameter_value", "curve", il, dr, "k_anonymity"]].reset_index(drop=True)


def _labelled(values: list) -> set:
    """The parameter values written next to their points: all of up to 12, else about 8 spread out."""
    if len(values) <= 12:
        return set(values)
    step = (len(values) - 1) / 7
    return {values[round(i * step)] for i in range(8)}


def _fmt(v) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _scale(axis_setter, values) -> None:
    """A log scale where positive values span more than two orders of magnitude."""
    v = pd.Series(values, dtype=float).dropna()
    if len(v) and (v > 0).all() and v.max() / v.min() > 100:
        axis_setter("log")


def figure(pts: pd.DataFrame, *, param: str, il: str, dr: str, title: str):
    """Three panels, one quantity per axis. Left: disclosure risk against information loss, one curve
    per swept column and one for all columns, points labelled with the parameter. Right, one above the
    other on a common parameter axis: the information loss, then the disclosure risk, of the same
    curves. (No twin axes: two unrelated scales on one panel make curves cross at a point that
    means nothing.)"""
    plt = require_matplotlib()
    fig = plt.figure(figsize=(12, 5.6))
    grid = fig.add_gridspec(2, 2, width_ratios=[3, 2])
    left = fig.add_subplot(grid[:, 0])
    top = fig.add_subplot(grid[0, 1])
    bottom = fig.add_subplot(grid[1, 1], sharex=top)
    curves = list(dict.fromkeys(pts["curve"]))
    for curve in curves:
        c = pts[pts["curve"] == curve]
        overall = curve == ALL
        style = dict(marker="o", markersize=5 if overall else 3.5, linewidth=2.2 if overall else 1.2,
                     color="black" if overall else None, label=curve, zorder=3 if overall else 2)
        line, = left.plot(c[il], c[dr], **style)
        style.update(color=line.get_color(), markersize=3 if overall else 2.5)
        top.plot(c["parameter_value"], c[il], **style)
        bottom.plot(c["parameter_value"], c[dr], **style)
        # with several curves only the overall one is labelled (the columns' labels would overlap)
        shown = _labelled(list(c["parameter_value"])) if overall or len(curves) == 1 else set()
        for v, x, y in zip(c["parameter_value"], c[il], c[dr]):
            if v in shown and not (math.isnan(x) or math.isnan(y)):
                left.annotate(_fmt(v), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7,
                              color="black" if overall else "dimgray")
    _scale(left.set_xscale, pts[il])
    _scale(left.set_yscale, pts[dr])
    left.set_xlabel(f"information loss: {il}")
    left.set_ylabel(f"disclosure risk: {dr}")
    left.set_title(f"trade-off as {param} varies (labels: {param})", fontsize=10)
    left.legend(fontsize=8)
    if param == "epsilon":
        top.set_xscale("log")
    _scale(top.set_yscale, pts[il])
    _scale(bottom.set_yscale, pts[dr])
    top.set_ylabel(f"information loss: {il}")
    top.set_title(f"information loss and disclosure risk against {param}", fontsize=10)
    top.tick_params(labelbottom=False)
    bottom.set_ylabel(f"disclosure risk: {dr}")
    bottom.set_xlabel(param)
    for ax in (left, top, bottom):
        ax.grid(True, alpha=0.3)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    return fig


def write_png(fig, path: Path) -> None:
    fig.savefig(path, format="png", dpi=110)


def _svg(fig) -> str:
    plt = require_matplotlib()
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "duckdb-sdc"}):
        fig.savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _json_rows(df: pd.DataFrame) -> dict:
    rows = []
    for record in df.itertuples(index=False):
        rows.append([None if (isinstance(v, float) and math.isnan(v)) or v is pd.NA else v for v in record])
    return {"columns": list(df.columns), "rows": rows}


def write_html(fig, path: Path, *, pts: pd.DataFrame, data: pd.DataFrame, param: str, il: str, dr: str,
               title: str, spec_name: str) -> None:
    """A page with the figure (inline SVG), the table of plotted points and, as JSON, the points and
    every row of the sweep."""
    payload = {
        "spec": spec_name, "parameter": param, "information_loss": il, "disclosure_risk": dr,
        "package_version": __version__, "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "points": _json_rows(pts), "sweep": _json_rows(data),
    }
    # inside <script> only "</" could end the element early
    blob = json.dumps(payload, ensure_ascii=False, allow_nan=False).replace("</", "<\\/")
    head = ["<tr>" + "".join(f"<th>{html.escape(str(c))}</th>" for c in pts.columns) + "</tr>"]
    body = ["<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in r) + "</tr>"
            for r in pts.itertuples(index=False)]
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
svg {{ max-width: 100%; height: auto; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}
th {{ background: #f2f2f2; }}
</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p>Each point masks the source as spec <code>{html.escape(spec_name)}</code> does, with {html.escape(param)}
set to the point's value in every masked column whose method has it, and evaluates the result:
<code>{html.escape(il)}</code> (information loss) against <code>{html.escape(dr)}</code> (disclosure risk),
per column and for all masked columns together; k_anonymity is the smallest group of released records
sharing the column's value in its stratum (for all columns: sharing every quasi-identifier).
duckdb-sdc {html.escape(__version__)}.</p>
{_svg(fig)}
<h2>Points</h2>
<table>
{chr(10).join(head + body)}
</table>
<p>Every figure of the sweep is in the JSON element <code>#{DATA_ID}</code> of this page.</p>
<script type="application/json" id="{DATA_ID}">{blob}</script>
</body>
</html>
"""
    path.write_text(page, encoding="utf-8")


def _cell(v) -> str:
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.6g}"
    return str(v)


def plot_paths(spec_path: str | Path, param: str, out: Path) -> tuple[Path, Path]:
    """Where `duckdb-sdc tradeoff` writes: <out>/<spec file stem>_tradeoff_<param>.png and .html."""
    stem = f"{Path(spec_path).stem}_tradeoff_{param}"
    return out / f"{stem}.png", out / f"{stem}.html"


def plot_sweep(data: pd.DataFrame, *, param: str, il: str, dr: str, columns: list[str], spec_name: str,
               png: Path, html_path: Path) -> pd.DataFrame:
    """Write the PNG and the HTML page of a sweep; return the plotted points."""
    plt = require_matplotlib()
    pts = points(data, il, dr, columns)
    values = sorted(set(data["parameter_value"]))
    title = f"duckdb-sdc tradeoff: {spec_name}, {param} = {_fmt(values[0])} .. {_fmt(values[-1])}"
    fig = figure(pts, param=param, il=il, dr=dr, title=title)
    try:
        write_png(fig, png)
        write_html(fig, html_path, pts=pts, data=data, param=param, il=il, dr=dr, title=title, spec_name=spec_name)
    finally:
        plt.close(fig)
    return pts
