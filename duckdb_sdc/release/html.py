"""The release report as one self-contained HTML page: `duckdb-sdc evaluate SPEC --html FILE` (the
release file written from the spec) and `duckdb-sdc release SPEC --report FILE` (the release just
written, or, when the policy refuses it, the would-be release: nothing else is written then).

The page holds, with nothing loaded from elsewhere (inline CSS and SVG, no script):

* the status (released, or refused and why), the verdicts of every section against the policy (the
  spec's [policy], else the documented defaults), and the report's own figures;
* per column, what was done and what it guarantees (the manifest's words), and a before/after
  summary: records with a value, distinct values, mean and sd of the original (never its minimum,
  maximum or quantiles, which are original values of a masked column), and the same with the
  minimum and maximum of the released values;
* charts: each column's risk against its limit (k-anonymity, record linkage, interval disclosure),
  the distribution of the sizes of the quasi-identifiers' equivalence classes (records per class
  size, the sizes below min_k marked), information loss per masked column, and cells suppressed per
  column where a rule suppresses cells;
* what fails each limit (`failures.failures`): the classes, records and cells, counted, and the
  combinations of released values that identify them (never an original value of a masked column);
* the trade-off plot of a `duckdb-sdc tradeoff` page, when one is given (`tradeoff=`);
* every figure of the report, and the page's data as JSON in `<script type="application/json"
  id="report-data">` (no original value there either).
"""

from __future__ import annotations

import html
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from sqlglot import exp

from .._version import __version__
from .failures import LIST_LIMIT, Failing, class_sizes, failures
from .plan import DIALECT, column, table
from .spec import MANIFEST_TABLE, Spec, SpecError, is_numeric, public_path

DATA_ID = "report-data"
PASS, FAIL, NEUTRAL = "#2e7d32", "#c62828", "#3f51b5"
WIDTH = 760


# ---------------------------------------------------------------------------------------------
# entry points

def check_target(spec: Spec, path: Path, where: str) -> Path:
    """The page's path, checked before anything runs: not a folder, not the release, the source or
    the spec, its folder made."""
    path = Path(path)
    if path.is_dir():
        raise SpecError(f"{spec.name}: {where}: {str(path)!r} is a folder")
    taken = [spec.output.database, spec.output.linkage, spec.source.database, spec.base / spec.name]
    if any(p is not None and path.resolve() == Path(p).resolve() for p in taken):
        raise SpecError(f"{spec.name}: {where}: {str(path)!r} is a file of the release itself; name a new .html file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SpecError(f"{spec.name}: {where}: cannot create {str(path.parent)!r} ({e.strerror})") from None
    return path


def evaluate_page(spec: Spec, path: Path, *, tradeoff: Path | None = None, progress=None,
                  resources=None) -> pd.DataFrame:
    """The report of the release file written from `spec` (release.report, `resources` as there),
    written as the page `path`; returns the report."""
    from .report import RELEASE_DB, report

    extra = read_tradeoff(spec, tradeoff) if tradeoff is not None else None
    pages = []

    def inspect(ev, df):
        rows = ev.fetch(exp.select(exp.Star()).from_(table(MANIFEST_TABLE, "main", RELEASE_DB)))
        names = [r[0] for r in ev.con.execute(exp.Describe(this=table(MANIFEST_TABLE, "main", RELEASE_DB))
                                              .sql(dialect=DIALECT)).fetchall()]
        manifest = [dict(zip(names, r)) for r in rows]
        pages.append(render(page_data(ev, df, manifest, refused=None), extra))

    df = report(spec, progress=progress, resources=resources, inspect=inspect)
    _write(path, pages[0])
    return df


def breach_writer(spec: Spec, path: Path, *, tradeoff: Path | None = None):
    """`release(..., on_breach=...)`: writes the page of the would-be release a policy refuses."""
    extra = read_tradeoff(spec, tradeoff) if tradeoff is not None else None

    def on_breach(con, manifest_rows):
        from .report import evaluate_relations, evaluation

        ev = evaluation(con, spec)
        df = evaluate_relations(ev)
        refused = "the release breaches its policy: nothing was written; this page shows the would-be release"
        _write(path, render(page_data(ev, df, manifest_rows(), refused=refused), extra))

    return on_breach


def _write(path: Path, text: str) -> None:
    """Written beside the target and renamed over it, so a reader never sees half a page."""
    import os
    import secrets

    temporary = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def read_tradeoff(spec: Spec, path: Path) -> dict:
    """The figure (inline SVG) and points of a page written by `duckdb-sdc tradeoff` for this spec."""
    from .plot import DATA_ID as TRADEOFF_ID

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"{spec.name}: --tradeoff: cannot read {str(path)!r} ({getattr(e, 'strerror', None) or e})"
                        ) from None
    found = re.search(rf'<script type="application/json" id="{TRADEOFF_ID}">(.*?)</script>', text, re.S)
    svg = re.search(r"<svg\b.*?</svg>", text, re.S)
    if found is None or svg is None:
        raise SpecError(f"{spec.name}: --tradeoff: {str(path)!r} is not a page written by duckdb-sdc tradeoff")
    payload = json.loads(found.group(1).replace("<\\/", "</"))
    if payload.get("spec") != spec.name:
        raise SpecError(f"{spec.name}: --tradeoff: {str(path)!r} is the trade-off of {payload.get('spec')!r}, "
                        f"not of {spec.name!r}")
    return {"svg": svg.group(0), "parameter": payload["parameter"], "il": payload["information_loss"],
            "dr": payload["disclosure_risk"], "points": payload["points"], "file": path.name}


# ---------------------------------------------------------------------------------------------
# the page's data

def _number(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, (int, float)) and float(v).is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.4g}" if isinstance(v, (int, float)) else str(v)


def summaries(ev, manifest: list[dict]) -> list[dict]:
    """Per column of the release table (manifest order), and per dropped column: before (the source
    column: records with a value, distinct values, mean and sd when numeric) and after (the released
    column: the same, with its minimum and maximum)."""
    from .report import MASKED, ORIGINAL

    out = []
    for row in manifest:
        if row["release_table"] != ev.spec.output.table and row["released_as"] is not None:
            continue  # a centroids table
        entry = {k: row[k] for k in ("column_name", "source_column", "rule", "method", "released_as",
                                     "source_type", "released_type", "privacy_model", "guarantee")}
        entry["parameters"] = row["parameters"]
        if row["source_column"] is not None:
            entry["before"] = _stats(ev, ORIGINAL, row["source_column"], row["source_type"] or "", extremes=False)
        if row["position"] is not None:
            entry["after"] = _stats(ev, MASKED, row["column_name"], row["released_type"] or "", extremes=True)
        out.append(entry)
    return out


def _stats(ev, relation: str, name: str, type_: str, *, extremes: bool) -> dict:
    c = column(name)
    select = [exp.Count(this=c.copy()), exp.Count(this=exp.Distinct(expressions=[c.copy()]))]
    numeric = is_numeric(type_)
    if numeric:
        double = exp.Cast(this=c.copy(), to=exp.DataType.build("DOUBLE"))
        select += [exp.Avg(this=double.copy()), exp.func("stddev_samp", double.copy())]
    if extremes:
        select += [exp.Cast(this=exp.Min(this=c.copy()), to=exp.DataType.build("VARCHAR")),
                   exp.Cast(this=exp.Max(this=c.copy()), to=exp.DataType.build("VARCHAR"))]
    got = ev.fetch(exp.select(*select).from_(table(relation)))[0]
    out = {"values": int(got[0]), "distinct": int(got[1])}
    rest = list(got[2:])
    if numeric:
        out["mean"], out["sd"] = rest[0], rest[1]
        rest = rest[2:]
    if extremes:
        out["min"], out["max"] = rest[0], rest[1]
    return out


def _per_column(df: pd.DataFrame, section: str, measure: str) -> list[tuple[str, float | None]]:
    part = df[(df["section"] == section) & (df["measure"] == measure)]
    return [("all columns" if not isinstance(c, str) else c, None if pd.isna(v) else float(v))
            for c, v in zip(part["column"], part["value"])]


def page_data(ev, df: pd.DataFrame, manifest: list[dict], *, refused: str | None) -> dict:
    """Everything the page shows (and its JSON holds)."""
    from .policy import K_ANONYMITY, RISK
    from .report import LOSS, VERDICT

    spec = ev.spec
    bounds = {limit.measure: bound for limit, bound in ev.policy.limits()}
    first = manifest[0] if manifest else {}
    created = first.get("created_at")
    suppressed = []
    for row in manifest:
        cells = json.loads(row["parameters"]).get("cells") if row.get("parameters") else None
        if cells and "primary_cells" in cells and row["released_as"] in ("value", None):
            suppressed.append((row["column_name"], cells["primary_cells"], cells["secondary_cells"]))
    return {
        "spec": spec.name, "table": spec.output.table, "database": public_path(spec.output.database, spec.base),
        "release_id": first.get("release_id"), "source": first.get("source"),
        "created_at": str(created)[:19] if created is not None else None,
        "package_version": __version__, "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "refused": refused, "policy": ev.policy.origin, "limits": ev.policy.as_dict(),
        "quasi_identifiers": list(ev.quasi_identifiers), "risk_columns": list(ev.risk_columns),
        "verdicts": [{"section": r.section, "value": None if pd.isna(r.value) else int(r.value), "note": r.note}
                     for r in df[df["measure"] == VERDICT].itertuples()],
        "columns": summaries(ev, manifest),
        "charts": {
            "k_anonymity": _per_column(df, K_ANONYMITY, "k_anonymity"),
            "record_linkage": _per_column(df, RISK, "record_linkage"),
            "interval_disclosure": _per_column(df, RISK, "interval_disclosure"),
            "il1s": _per_column(df, LOSS, "il1s"),
            "class_sizes": class_sizes(ev),
            "suppressed": suppressed,
        },
        "bounds": bounds,
        "failures": [f.__dict__ | {"listed_all": f.listed_all} for f in failures(ev, df, limit=LIST_LIMIT)],
        "report": _records(df),
    }


def _records(df: pd.DataFrame) -> dict:
    rows = [[None if (isinstance(v, float) and math.isnan(v)) else v for v in r] for r in df.itertuples(index=False)]
    return {"columns": list(df.columns), "rows": rows}


# ---------------------------------------------------------------------------------------------
# SVG charts (drawn here: the page needs no plotting library)

def _e(text) -> str:
    return html.escape(str(text), quote=True)


def bar_chart(title: str, items: list[tuple[str, float | None]], *, bound: float | None, higher: bool,
              unit: str, scale_max: float | None = None) -> str:
    """Horizontal bars, one per (label, value), against a limit: a bar that meets it is green, one
    that breaches it red (blue without a limit); the limit is a dashed line."""
    if not items:
        return ""
    row, left, right, top = 24, 170, 70, 34
    height = top + row * len(items) + 30
    finite = [v for _, v in items if v is not None]
    top_value = max(finite + ([bound] if bound is not None else []) + [scale_max or 0]) or 1.0
    span = WIDTH - left - right
    x = (lambda v: left + span * v / top_value)
    parts = [f'<svg class="chart" role="img" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{_e(title)}</title>',
             f'<text x="0" y="18" class="chart-title">{_e(title)}</text>']
    for i, (label, value) in enumerate(items):
        y = top + i * row
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end" class="label">{_e(label)}</text>')
        if value is None:
            parts.append(f'<text x="{left + 4}" y="{y + 15}" class="value">n/a</text>')
            continue
        ok = None if bound is None else (value >= bound if higher else value <= bound)
        colour = NEUTRAL if ok is None else PASS if ok else FAIL
        width = max(1.0, x(value) - left)
        parts.append(f'<rect class="bar" x="{left}" y="{y + 3}" width="{width:.1f}" height="{row - 8}" '
                     f'fill="{colour}"><title>{_e(label)}: {_e(_number(value))}</title></rect>')
        parts.append(f'<text x="{left + width + 4:.1f}" y="{y + 15}" class="value">{_e(_number(value))}</text>')
    if bound is not None:
        bx = x(bound)
        parts.append(f'<line class="limit" x1="{bx:.1f}" x2="{bx:.1f}" y1="{top - 4}" y2="{top + row * len(items)}" '
                     f'stroke="#222" stroke-dasharray="5,3"/>')
        parts.append(f'<text x="{bx:.1f}" y="{top - 8}" text-anchor="middle" class="value">limit {_e(_number(bound))}'
                     '</text>')
    parts.append(f'<text x="{left}" y="{height - 6}" class="axis">{_e(unit)}; '
                 f'{"higher" if higher else "lower"} is better</text></svg>')
    return "".join(parts)


def _bins(sizes: list[tuple[int, int]], min_k: int | None) -> list[tuple[str, int, int, int]]:
    """(label, lowest size, highest size, records) of the class-size histogram: each size up to
    max(10, 2 min_k) alone, then ranges ending at 20, 50, 100, 200, ... (empty ranges left out)."""
    alone = max(10, 2 * (min_k or 0))
    edges = [(s, s) for s in range(1, alone + 1)]
    largest = max((s for s, _ in sizes), default=0)
    low, scale = alone + 1, 10
    while low <= largest:
        for step in (2, 5, 10):
            high = step * scale
            if high >= low:
                edges.append((low, high))
                low = high + 1
        scale *= 10
    out = []
    for lo, hi in edges:
        records = sum(s * c for s, c in sizes if lo <= s <= hi)
        if hi <= alone or records:
            out.append((str(lo) if lo == hi else f"{lo}-{hi}", lo, hi, records))
    return out


def class_histogram(sizes: list[tuple[int, int]], min_k: int | None) -> str:
    """Records per equivalence-class size (vertical bars); sizes below min_k red."""
    if not sizes:
        return ""
    bins = _bins(sizes, min_k)
    left, bottom, top = 60, 50, 34
    height = 260
    span = WIDTH - left - 20
    w = span / len(bins)
    most = max(r for *_, r in bins) or 1
    parts = [f'<svg class="chart" role="img" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>records by equivalence class size</title>',
             '<text x="0" y="18" class="chart-title">Records by the size of their equivalence class '
             '(the quasi-identifiers, all together)</text>']
    plot = height - bottom - top
    for j, (label, lo, hi, records) in enumerate(bins):
        h = plot * records / most
        x = left + j * w
        colour = FAIL if min_k is not None and hi < min_k else PASS if min_k is not None else NEUTRAL
        parts.append(f'<rect class="bar" x="{x + 2:.1f}" y="{top + plot - h:.1f}" width="{max(w - 4, 1):.1f}" '
                     f'height="{h:.1f}" fill="{colour}"><title>classes of {_e(label)} records: {records} records'
                     '</title></rect>')
        if records:
            parts.append(f'<text x="{x + w / 2:.1f}" y="{top + plot - h - 3:.1f}" text-anchor="middle" '
                         f'class="value">{records}</text>')
        parts.append(f'<text x="{x + w / 2:.1f}" y="{height - bottom + 16}" text-anchor="middle" '
                     f'class="label">{_e(label)}</text>')
    parts.append(f'<text x="{left}" y="{height - 8}" class="axis">class size (records sharing one combination)'
                 f'{"; red: below min_k = " + str(min_k) if min_k is not None else ""}; bar height: records</text>')
    parts.append("</svg>")
    return "".join(parts)


def suppression_chart(rows: list[tuple[str, int, int]]) -> str:
    """Cells suppressed per column: primary (sensitive) and secondary (to protect them)."""
    if not rows:
        return ""
    items = [(f"{name} (primary)", float(p)) for name, p, _ in rows] + [(f"{name} (secondary)", float(s))
                                                                       for name, _, s in rows]
    return bar_chart("Cells suppressed per column", items, bound=None, higher=False, unit="cells")


# ---------------------------------------------------------------------------------------------
# the page

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d1d1f;
       background: #fafafa; line-height: 1.45; }
main { max-width: 1100px; margin: 0 auto; padding: 1.5em 2em 3em; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
.status { padding: 0.7em 1em; border-radius: 6px; font-weight: 600; margin: 1em 0; }
.status.ok { background: #e8f5e9; color: #1b5e20; } .status.refused { background: #ffebee; color: #b71c1c; }
.verdict { display: inline-block; min-width: 4.5em; text-align: center; border-radius: 4px; color: #fff;
           font-weight: 700; padding: 0.05em 0.4em; margin-right: 0.5em; }
.verdict.pass { background: #2e7d32; } .verdict.fail { background: #c62828; } .verdict.none { background: #757575; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.55em; text-align: left; vertical-align: top; }
th { background: #f2f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.wide { overflow-x: auto; max-width: 100%; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 0.92em; }
svg.chart { display: block; margin: 0.8em 0; max-width: 100%; height: auto; }
svg.chart text { font-size: 12px; fill: #333; } svg.chart .chart-title { font-size: 14px; font-weight: 600; }
svg.chart .axis { fill: #666; } .tradeoff svg { max-width: 100%; height: auto; }
.note { color: #555; font-size: 0.9em; } details { margin: 0.5em 0; }
"""


def _table(head: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    out = ['<div class="wide"><table><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f'<td class="num">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>"
                                    for i, c in enumerate(r)) + "</tr>")
    return "".join(out) + "</tbody></table></div>"


def _verdicts(data: dict) -> str:
    rows = []
    for v in data["verdicts"]:
        word, cls = {1: ("pass", "pass"), 0: ("FAIL", "fail")}.get(v["value"], ("not judged", "none"))
        rows.append(f'<li><span class="verdict {cls}">{word}</span><strong>{_e(v["section"])}</strong>: '
                    f'{_e(v["note"])}</li>')
    return "<ul class=\"verdicts\">" + "".join(rows) + "</ul>"


def _columns(data: dict) -> str:
    head = ["column", "rule", "method", "privacy model", "guarantee"]
    rows = [[c["column_name"], c["rule"] + (f" ({c['released_as']})" if c["released_as"] not in (None, "value") else ""),
             c["method"] or "", c["privacy_model"] or "", c["guarantee"]] for c in data["columns"]]
    stats = ["column", "type before", "type after", "values before", "values after", "distinct before",
             "distinct after", "mean before", "mean after", "sd before", "sd after", "min after", "max after"]
    srows = []
    for c in data["columns"]:
        b, a = c.get("before", {}), c.get("after", {})
        srows.append([c["column_name"], c["source_type"] or "", c["released_type"] or "not released",
                      _number(b.get("values")) if b else "", _number(a.get("values")) if a else "",
                      _number(b.get("distinct")) if b else "", _number(a.get("distinct")) if a else "",
                      _number(b.get("mean")) if "mean" in b else "", _number(a.get("mean")) if "mean" in a else "",
                      _number(b.get("sd")) if "sd" in b else "", _number(a.get("sd")) if "sd" in a else "",
                      a.get("min") if a.get("min") is not None else "", a.get("max") if a.get("max") is not None else ""])
    params = [[c["column_name"], c["parameters"]] for c in data["columns"] if c.get("parameters")]
    return ("<h3>What was done, and what it guarantees</h3>" + _table(head, rows)
            + "<h3>Before and after</h3><p class=\"note\">The original column's minimum, maximum and quantiles "
              "are not shown: they are original values.</p>" + _table(stats, srows, set(range(3, 11)))
            + ("<details><summary>Parameters (as the manifest records them)</summary>"
               + _table(["column", "parameters"], params) + "</details>" if params else ""))


def _charts(data: dict) -> str:
    ch, bounds = data["charts"], data["bounds"]
    parts = [
        bar_chart("k-anonymity per quasi-identifier (within its strata) and of all together", ch["k_anonymity"],
                  bound=bounds.get("k_anonymity"), higher=True, unit="records in the smallest class"),
        bar_chart("Record linkage per column and of all together", ch["record_linkage"],
                  bound=bounds.get("record_linkage"), higher=False, unit="share of records re-identified",
                  scale_max=1.0),
        bar_chart("Interval disclosure per column and of all together", ch["interval_disclosure"],
                  bound=bounds.get("interval_disclosure"), higher=False, unit="share of records inside their "
                                                                               "interval", scale_max=1.0),
        class_histogram(ch["class_sizes"], bounds.get("k_anonymity")),
        bar_chart("Information loss (IL1s) per masked column and of all together", ch["il1s"], bound=None,
                  higher=False, unit="sd units / sqrt(2)"),
        suppression_chart(ch["suppressed"]),
    ]
    return "".join(p for p in parts if p)


def _failures(data: dict) -> str:
    if not data["failures"]:
        return ("<p>The policy sets no limit" + (" (the report judges against the documented defaults)"
                if "defaults" in data["policy"] else "") + ".</p>")
    out = []
    for f in data["failures"]:
        verdict = "pass" if f["passed"] else "fail"
        word = "meets" if f["passed"] else "breaches"
        head = (f'<h3><span class="verdict {verdict}">{"pass" if f["passed"] else "FAIL"}</span>{_e(f["key"])} = '
                f'{_e(_number(f["bound"]))}: {_e(f["measure"])} = {_e(_number(f["value"]))} {word} it</h3>')
        if f["value"] is None:
            out.append(head + f"<p>Not measured: {_e(f['note'])}.</p>")
            continue
        text = f"<p>{f['count']} {_e(f['what'])}" + (f", {f['records']} records in them" if f["records"] != f["count"]
                                                      else "") + ".</p>"
        if f["rows"]:
            shown = "" if f["listed_all"] else f" (the {len(f['rows'])} with the most records)"
            text += (f"<details{' open' if not f['passed'] else ''}><summary>The combinations of released values"
                     f"{shown}</summary>" + _table(list(f["columns"]), [list(r) for r in f["rows"]],
                                                   {len(f["columns"]) - 1}) + "</details>")
        out.append(head + text)
    return "".join(out)


def _report_tables(data: dict) -> str:
    from ..measures.catalog import direction as direction_of
    from .report import VERDICT

    frame = pd.DataFrame(data["report"]["rows"], columns=data["report"]["columns"])
    out = []
    for section in dict.fromkeys(frame["section"]):
        part = frame[(frame["section"] == section) & (frame["measure"] != VERDICT)]
        if not len(part):
            continue
        cols = list(dict.fromkeys(c for c in part["column"] if isinstance(c, str)))
        has_all = part["column"].isna().any()
        head = [section] + cols + (["all columns"] if has_all else []) + ["better", "unit"]
        rows = []
        for measure in dict.fromkeys(part["measure"]):
            of = part[part["measure"] == measure]
            cells = {(c if isinstance(c, str) else "all columns"): v for c, v in zip(of["column"], of["value"])}
            direction, unit = direction_of(measure)
            rows.append([measure] + [_number(cells[c]) if c in cells else "" for c in head[1:-2]]
                        + [direction or "-", unit])
        out.append(_table(head, rows, set(range(1, len(head) - 2))))
    notes = sorted({f"{s}: {n}" for s, n in zip(frame["section"], frame["note"]) if isinstance(n, str)})
    return "".join(out) + ("<details><summary>Notes</summary><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes)
                           + "</ul></details>" if notes else "")


def _tradeoff(extra: dict | None) -> str:
    if extra is None:
        return ""
    pts = extra["points"]
    return (f'<h2 id="tradeoff">Trade-off: {_e(extra["il"])} against {_e(extra["dr"])} as {_e(extra["parameter"])} '
            f'varies</h2><p class="note">From {_e(extra["file"])}, written by duckdb-sdc tradeoff.</p>'
            f'<div class="tradeoff">{extra["svg"]}</div><details><summary>The points</summary>'
            + _table(pts["columns"], [["" if v is None else _number(v) if isinstance(v, (int, float)) else v for v in r]
                                      for r in pts["rows"]]) + "</details>")


def render(data: dict, tradeoff: dict | None = None) -> str:
    """The page (see the module's docstring)."""
    blob = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str).replace("</", "<\\/")
    title = f"Release report: {data['spec']}, table {data['table']}"
    status = (f'<div class="status refused">REFUSED: {_e(data["refused"])}.</div>' if data["refused"] else
              '<div class="status ok">Released: the release file holds this table.</div>')
    facts = [["release file", data["database"]], ["table", data["table"]], ["source", data["source"] or ""],
             ["release id", data["release_id"] or "(none: nothing was written)"],
             ["written", f"{data['created_at']} UTC" if data["created_at"] else ""],
             ["judged against", data["policy"]],
             ["quasi-identifiers", ", ".join(data["quasi_identifiers"]) or "none"],
             ["risk measured on", ", ".join(data["risk_columns"]) or "none"],
             ["page written by", f"duckdb-sdc {data['package_version']} at {data['written_at']}"]]
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{_e(title)}</title>
<style>{CSS}</style>
</head>
<body>
<main>
<h1>{_e(title)}</h1>
{status}
{_table(["", ""], facts)}
<h2 id="verdicts">Verdicts</h2>
{_verdicts(data)}
<h2 id="columns">Columns</h2>
{_columns(data)}
<h2 id="charts">Risk and utility</h2>
{_charts(data)}
<h2 id="failures">What fails each limit</h2>
<p class="note">Combinations are of released values (as the release table holds them); an original value of a
masked column is never shown.</p>
{_failures(data)}
{_tradeoff(tradeoff)}
<h2 id="report">Every figure of the report</h2>
{_report_tables(data)}
<script type="application/json" id="{DATA_ID}">{blob}</script>
</main>
</body>
</html>
"""


__all__ = ["DATA_ID", "bar_chart", "breach_writer", "check_target", "class_histogram", "evaluate_page", "page_data",
           "read_tradeoff", "render"]
