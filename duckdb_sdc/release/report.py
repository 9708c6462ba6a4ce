"""The risk/utility report of a release: the same spec, evaluated.

    from duckdb_sdc.release import load_spec, report, format_report
    df = report(load_spec("people.toml"))   # tidy: section, measure, column, value, note
    print(format_report(df))

The report compares the release file written from a spec (`release(spec)`) with the spec's source,
record by record on the key. It is made of sections, each a function of an `Evaluation` (a
connection on which the original and the released records are two relations, ORIGINAL and MASKED,
with a common key column) returning rows; `SECTIONS` lists them in the order they are printed:

* `measures_section`: every measure of `evaluate_masking` (the SQL table macro backed by
  `duckdb_sdc.measures.evaluate`) on the masked columns released as values, each column alone and
  all together, filed as information loss, disclosure risk or the combined IL-DR score; a boxed
  column (released as bounds by a box method) gets a row saying why it has none;
* `boxes_section`: what the boxes cost instead: their mean width (also in sd units), the bounds of
  each column's mean they give, the share of records inside their box, and per box rule the number
  of boxes;
* `k_anonymity_section`: k-anonymity of the released quasi-identifiers (`Spec.quasi_identifiers`; a
  boxed column counts as its two bounds), and of each box rule's box ids;
* `sensitivity_section`: attribute disclosure, the cells (records sharing a released value, or a
  box) that the dominance and p% rules flag as sensitive.

A new kind of evidence is one more function in `SECTIONS`. `tradeoff.py` evaluates in-memory
maskings of spec variants through the same sections.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import duckdb
import pandas as pd
from sqlglot import exp

from ..sql import connect
from ..sql.measures import GROUP_RISK
from ..sql.registry import REGISTRY
from .plan import DIALECT, SOURCE, column, ident, literal, resolve, table
from .spec import MANIFEST_TABLE, Rule, Spec, SpecError, bound_columns

ORIGINAL, MASKED, KEY = "__sdc_eval_original", "__sdc_eval_masked", "__sdc_eval_key"
RELEASE_DB = "__sdc_evaluated"

LOSS, RISK, SCORE, K_ANONYMITY = "information loss", "disclosure risk", "IL-DR score", "k-anonymity"
SENSITIVE, BOXES = "sensitive cells", "boxes"
COLUMNS = ("section", "measure", "column", "value", "note")
ALL = "all columns"  # how format_report labels the overall rows (column None)

# measures of evaluate_masking that name a disclosure-risk SQL function (record_linkage_second is
# record_linkage with rank 2); il_dr_score combines both sides; every other measure is a loss
_RISK = frozenset(f.name for f in REGISTRY if f.group == GROUP_RISK)


def section_of(measure: str) -> str:
    if measure == "il_dr_score":
        return SCORE
    base = measure.split(".")[0].removesuffix("_second")
    return RISK if base in _RISK else LOSS


@dataclass(frozen=True)
class Row:
    section: str
    measure: str
    column: str | None  # None: all columns together
    value: float | None  # None: undefined for these data (note says why)
    note: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """What a section sees: `con` holds the relations ORIGINAL (the source's records) and MASKED
    (the released records), both with the key column KEY and the columns under their own names."""
    con: duckdb.DuckDBPyConnection
    spec: Spec
    masked: tuple[str, ...]  # the masked columns released as values, in the order of the spec's rules
    quasi_identifiers: tuple[str, ...]
    boxes: tuple[Rule, ...] = ()  # the box rules (their columns are released as bounds and a box id)

    def fetch(self, query: exp.Expression) -> list[tuple]:
        return self.con.execute(query.sql(dialect=DIALECT)).fetchall()

    def released(self, name: str) -> tuple[str, ...]:
        """The released columns (in MASKED) of a released source column: its bounds if boxed."""
        return bound_columns(name) if self.spec.rules[name].boxed else (name,)


def measures_section(ev: Evaluation) -> list[Row]:
    """Every measure of evaluate_masking(ORIGINAL, MASKED, KEY, columns := the masked columns
    released as values); a row per boxed column saying why it has none."""
    boxed = [Row(LOSS, "measures", c, None,
                 f"{', '.join(map(repr, r.columns))} released as boxes ({r.method.name}, {r.where}): these "
                 "measures compare released values with the original ones, and a box has bounds, not a value; "
                 "see the boxes section")
             for r in ev.boxes for c in r.columns]
    if not ev.masked:
        return boxed or [Row(LOSS, "measures", None, None, "the spec masks no column")]
    call = exp.Anonymous(this="evaluate_masking", expressions=[
        literal(ORIGINAL), literal(MASKED), literal(KEY),
        exp.PropertyEQ(this=exp.to_identifier("columns"), expression=literal(list(ev.masked)))])
    query = exp.select("measure", "column", "value", "note").from_(exp.Table(this=call))
    return [Row(section_of(m), m, c, v, n) for m, c, v, n in ev.fetch(query)] + boxed


def _box_column_rows(ev: Evaluation, name: str) -> list[Row]:
    """The boxes of one boxed column over the records that have one: mean width, mean width / sd of
    the original values, the range of the mean [avg(lower), avg(upper)] (box_mean_bounds), and the
    share of records whose original value lies in their box."""
    lower, upper = (column(c, "__sdc_m") for c in bound_columns(name))
    original = column(name, "__sdc_o")
    bounds = exp.Anonymous(this="box_mean_bounds", expressions=[lower.copy(), upper.copy()])
    inside = exp.Between(this=original.copy(), low=lower.copy(), high=upper.copy())
    query = (exp.select(
        exp.Avg(this=exp.Sub(this=upper.copy(), expression=lower.copy())),
        exp.func("stddev_pop", original.copy()),
        exp.StructExtract(this=bounds.copy(), expression=exp.Literal.string("lower")),
        exp.StructExtract(this=bounds, expression=exp.Literal.string("upper")),
        exp.Avg(this=exp.If(this=inside, true=literal(1.0), false=literal(0.0))),
        exp.Count(this=exp.Star()))
        .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=ident("__sdc_o"))))
        .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=ident("__sdc_m"))), using=[ident(KEY)])
        .where(exp.and_(exp.Not(this=exp.Is(this=lower.copy(), expression=exp.Null())),
                        exp.Not(this=exp.Is(this=upper.copy(), expression=exp.Null())))))
    width, sd, mean_lower, mean_upper, inside_share, n = ev.fetch(query)[0]
    if n == 0:
        return [Row(BOXES, m, name, None, f"no record of {name!r} has a box")
                for m in ("mean_width", "mean_width_sd", "mean_lower", "mean_upper", "in_box_share")]
    scaled = (None, f"{name!r} is constant: no sd to scale by") if not sd else (width / sd, None)
    return [Row(BOXES, "mean_width", name, width), Row(BOXES, "mean_width_sd", name, *scaled),
            Row(BOXES, "mean_lower", name, mean_lower), Row(BOXES, "mean_upper", name, mean_upper),
            Row(BOXES, "in_box_share", name, inside_share)]


def boxes_section(ev: Evaluation) -> list[Row]:
    """Information loss of the boxed columns, which the measures cannot judge (see
    `_box_column_rows`), then per box rule, under its box id column: `boxes`, the number of boxes,
    and `records_per_box`, their mean size."""
    rows = []
    for rule in ev.boxes:
        rows += [r for c in rule.columns for r in _box_column_rows(ev, c)]
        box = column(rule.box_column)
        boxes, records = ev.fetch(exp.select(exp.Count(this=exp.Distinct(expressions=[box.copy()])),
                                             exp.Count(this=box.copy())).from_(table(MASKED)))[0]
        rows += [Row(BOXES, "boxes", rule.box_column, float(boxes)),
                 Row(BOXES, "records_per_box", rule.box_column, records / boxes if boxes else None,
                     None if boxes else "no record has a box")]
    return rows


def _classes(ev: Evaluation, total: int, by: tuple[str, ...], present: tuple[str, ...],
             col: str | None) -> list[Row]:
    """k-anonymity of the `total` released records grouped by the columns `by`, over the records where
    every column of `present` is non-NULL: the smallest group, the number of groups, the share of
    records alone in their group."""
    size = ident("__sdc_n")
    inner = exp.select(exp.Count(this=exp.Star()).as_(size)).from_(table(MASKED))
    inner = inner.group_by(*(column(c) for c in by))
    if present:
        inner = inner.where(exp.and_(*(exp.Not(this=exp.Is(this=column(c), expression=exp.Null()))
                                       for c in present)))
    n = exp.Column(this=size.copy())
    query = exp.select(
        exp.Min(this=n.copy()), exp.Count(this=exp.Star()),
        exp.Sum(this=exp.If(this=exp.EQ(this=n.copy(), expression=literal(1)), true=literal(1), false=literal(0))),
        exp.Sum(this=n.copy()),
    ).from_(inner.subquery(ident("__sdc_classes")))
    smallest, classes, alone, counted = ev.fetch(query)[0]
    counted = counted or 0
    note = None
    if counted < total:
        what = f"a NULL {col!r}" if col is not None else "a NULL quasi-identifier"
        note = f"{total - counted} of {total} records with {what} left out"
    if counted == 0:
        return [Row(K_ANONYMITY, m, col, None, note) for m in ("k_anonymity", "classes", "unique_share")]
    return [Row(K_ANONYMITY, "k_anonymity", col, float(smallest), note),
            Row(K_ANONYMITY, "classes", col, float(classes), note),
            Row(K_ANONYMITY, "unique_share", col, alone / counted, note)]


def k_anonymity_section(ev: Evaluation) -> list[Row]:
    """k-anonymity of the released quasi-identifiers Q. A column of Q that is not a stratum column is
    counted alone together with the strata columns in Q (the strata are released, and the masking
    guarantee holds within a stratum): the smallest number of released records sharing its value in
    a stratum, over the records where it is non-NULL; a boxed column's "value" is its pair of bounds.
    Then all of Q together (column None), over the records where no column of Q is NULL (NULLs are
    not masked; they are reported as left out). Last, the box ids of each box rule, under the id
    column's name (ids are unique in the release, so no stratum is needed)."""
    q = ev.quasi_identifiers
    strata = tuple(c for c in q if c in set(ev.spec.strata_columns()))
    total = ev.fetch(exp.select(exp.Count(this=exp.Star())).from_(table(MASKED)))[0][0]
    rows = []
    for c in q:
        if c not in strata:
            rows += _classes(ev, total, strata + ev.released(c), ev.released(c), c)
    every = tuple(r for c in q for r in ev.released(c))
    rows += _classes(ev, total, every, every, None)
    for rule in ev.boxes:
        rows += _classes(ev, total, (rule.box_column,), (rule.box_column,), rule.box_column)
    return rows


def _sensitive_cells(ev: Evaluation, attribute: str, clusters: tuple[str, ...], strata: tuple[str, ...]):
    """(cells, dominance-sensitive cells, p%-sensitive cells) of one released attribute. A cell is
    the group of records of a stratum that share the released values of `clusters` (the attribute
    itself, every column of its multivariate group, or its box id); its contributions are their original values
    of `attribute`. Records whose released value is NULL are in no cell."""
    rules = ev.spec.sensitivity
    original, masked = ident("__sdc_o"), ident("__sdc_m")
    value = column(attribute, "__sdc_o")
    absolute = exp.PropertyEQ(this=exp.to_identifier("absolute"), expression=literal(True))
    dominance = exp.Anonymous(this="dominance_sensitive", expressions=[
        value.copy(), literal(rules.dominance_n), literal(rules.dominance_r), absolute.copy()])
    p_percent = exp.Anonymous(this="p_percent_sensitive", expressions=[value.copy(), literal(rules.p), absolute])
    cells = (exp.select(dominance.as_(ident("__sdc_d")), p_percent.as_(ident("__sdc_p")))
             .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=original)))
             .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=masked)), using=[ident(KEY)])
             .where(exp.and_(*(exp.Not(this=exp.Is(this=column(c, "__sdc_m"), expression=exp.Null()))
                               for c in clusters)))
             .group_by(*(column(c, "__sdc_o") for c in strata), *(column(c, "__sdc_m") for c in clusters)))
    query = exp.select(
        exp.Count(this=exp.Star()),
        exp.func("count_if", column("__sdc_d")),
        exp.func("count_if", column("__sdc_p")),
    ).from_(cells.subquery(ident("__sdc_cells")))
    return ev.fetch(query)[0]


def sensitivity_section(ev: Evaluation) -> list[Row]:
    """Attribute disclosure in the released groups: per masked attribute, the number and share of
    cells that the (n, r) dominance rule and the p% rule (Hundepool et al.; [evaluation]
    dominance_n, dominance_r, p_percent) flag as sensitive, then all attributes together. The rules
    are applied to absolute contributions, so columns with negative values are judged too."""
    rules = ev.spec.sensitivity
    rows, totals = [], [0, 0, 0]
    for rule in ev.spec.masked():
        strata = ev.spec.strata_of(rule)
        clusters = (rule.box_column,) if rule.boxed else tuple(rule.columns)  # a box is a cell
        for attribute in rule.columns:
            cells, dominant, p_cells = _sensitive_cells(ev, attribute, clusters, strata)
            totals = [totals[0] + cells, totals[1] + dominant, totals[2] + p_cells]
            rows += _sensitivity_rows(attribute, cells, dominant, p_cells)
    if not rows:
        return []
    note = (f"({rules.dominance_n}, {rules.dominance_r:g}) dominance rule and p% rule with "
            f"p = {rules.p:.4g}, on absolute contributions")
    return rows + _sensitivity_rows(None, *totals, note=note)


def _sensitivity_rows(col: str | None, cells: int, dominant: int, p_cells: int, note: str | None = None) -> list[Row]:
    share = (lambda x: x / cells) if cells else (lambda x: None)
    why = note if cells else "no released cell"
    return [Row(SENSITIVE, "cells", col, float(cells), why),
            Row(SENSITIVE, "dominance_cells", col, float(dominant), why),
            Row(SENSITIVE, "dominance_share", col, share(dominant), why),
            Row(SENSITIVE, "p_percent_cells", col, float(p_cells), why),
            Row(SENSITIVE, "p_percent_share", col, share(p_cells), why)]


Section = Callable[[Evaluation], list[Row]]
SECTIONS: tuple[Section, ...] = (measures_section, boxes_section, k_anonymity_section, sensitivity_section)
_ORDER = (LOSS, RISK, SCORE, BOXES, K_ANONYMITY, SENSITIVE)


def evaluate_relations(ev: Evaluation, progress=None) -> pd.DataFrame:
    """Every section's rows as one tidy DataFrame (columns COLUMNS), sections in _ORDER; with a
    `progress.Progress`, one step per section."""
    from .progress import Progress

    rows = []
    with (progress or Progress(enabled=False)).task(f"evaluate {ev.spec.name}", len(SECTIONS)) as task:
        for section in SECTIONS:
            task.advance(section.__name__.removesuffix("_section").replace("_", " "))
            rows += section(ev)
    df = pd.DataFrame([(r.section, r.measure, r.column, r.value, r.note) for r in rows], columns=list(COLUMNS))
    rank = {s: i for i, s in enumerate(_ORDER)}
    order = sorted(range(len(df)), key=lambda i: (rank.get(df.at[i, "section"], len(rank)), i))
    return df.iloc[order].reset_index(drop=True)


def create_views(con, spec: Spec, masked_relation: exp.Table, *, by_position: bool = False) -> None:
    """ORIGINAL over the source (__sdc_source) and MASKED over `masked_relation`, as temporary views
    with the record key KEY. The key is the spec's key; with `by_position` (a release file whose table
    has no key column) it is the record's position: the release table is written in key order, so
    its rowid matches the source's rank by key."""
    key = spec.source.key
    if by_position:
        original_key = exp.Sub(this=exp.Window(this=exp.RowNumber(), order=exp.Order(
            expressions=[exp.Ordered(this=column(key), nulls_first=False)])), expression=literal(1))
        masked_key = exp.Column(this=exp.to_identifier("rowid"))
    else:
        original_key, masked_key = column(key), column(key)
    for name, relation, k in ((ORIGINAL, table(SOURCE), original_key), (MASKED, masked_relation, masked_key)):
        body = exp.select(k.as_(ident(KEY)), exp.Star()).from_(relation)
        view = exp.Create(this=table(name), kind="VIEW", expression=body, replace=True,
                          properties=exp.Properties(expressions=[exp.TemporaryProperty()]))
        con.execute(view.sql(dialect=DIALECT)).fetchall()


def evaluation(con, spec: Spec) -> Evaluation:
    masked = tuple(c for r in spec.masked() if not r.boxed for c in r.columns)
    return Evaluation(con=con, spec=spec, masked=masked, quasi_identifiers=spec.quasi_identifiers(),
                      boxes=tuple(r for r in spec.masked() if r.boxed))


def _comparable(spec_text: dict) -> dict:
    """A spec as the manifest keeps it, without the [evaluation] section (it changes no release)."""
    text = json.loads(json.dumps(spec_text, default=str, ensure_ascii=False, sort_keys=True))
    text.pop("evaluation", None)
    return text


def _check_manifest(con, spec: Spec) -> None:
    path = spec.output.database
    query = exp.select(exp.func("any_value", column("spec")), exp.Count(this=exp.Star())).from_(
        table(MANIFEST_TABLE, "main", RELEASE_DB)).where(
        exp.EQ(this=column("release_table"), expression=literal(spec.output.table)))
    try:
        written, rows = con.execute(query.sql(dialect=DIALECT)).fetchall()[0]
    except duckdb.Error:
        raise SpecError(f"{spec.name}: output.database: {str(path)!r} is not a release file "
                        f"(no {MANIFEST_TABLE} table)") from None
    if not rows:
        raise SpecError(f"{spec.name}: output.database: {str(path)!r} holds no release of table "
                        f"{spec.output.table!r}")
    if _comparable(json.loads(written)) != _comparable(spec.public_text()):
        raise SpecError(f"{spec.name}: the release file {str(path)!r} was written from a different spec; "
                        f"release it again (duckdb-sdc release {spec.name}) before evaluating")


def report(spec: Spec, *, progress=None) -> pd.DataFrame:
    """The risk/utility report of the release file written from `spec`, against its source, as a
    tidy DataFrame (section, measure, column, value, note); column None means all columns together.
    Raises SpecError when the file is missing or was written from a different spec."""
    from .run import check_source, error_message, open_source

    check_source(spec)
    path = spec.output.database
    if not path.is_file():
        raise SpecError(f"{spec.name}: output.database: no release file {str(path)!r} yet; "
                        f"write it first (duckdb-sdc release {spec.name})")
    con = connect()
    try:
        con.execute("SET enable_progress_bar = false")
        _, source_columns = open_source(con, spec)
        resolve(spec, source_columns)
        attach = exp.Attach(this=exp.Alias(this=literal(str(path)), alias=ident(RELEASE_DB)),
                            expressions=[exp.AttachOption(this=exp.Var(this="READ_ONLY"))])
        try:
            con.execute(attach.sql(dialect=DIALECT)).fetchall()
        except duckdb.Error as e:
            raise SpecError(f"{spec.name}: output.database: cannot open {str(path)!r}: {error_message(e)}") from None
        _check_manifest(con, spec)
        released = table(spec.output.table, "main", RELEASE_DB)
        create_views(con, spec, released, by_position=spec.rules[spec.source.key].action == "drop")
        try:
            return evaluate_relations(evaluation(con, spec), progress)
        except duckdb.Error as e:
            raise SpecError(f"{spec.name}: evaluating the release: {error_message(e)}") from None
    finally:
        con.close()


def _number(value) -> str:
    if pd.isna(value):
        return "n/a"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(r):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    return [line(rows[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in rows[1:]]


def format_report(df: pd.DataFrame) -> str:
    """The report as text: per section a table with one row per measure and one column per evaluated
    column, then 'all columns' (the rows whose column is missing); an undefined value shows as n/a,
    and every note is listed below the tables."""
    lines, notes = [], []
    for section in dict.fromkeys(df["section"]):
        part = df[df["section"] == section]
        named = part["column"].notna()
        cols = list(dict.fromkeys(part.loc[named, "column"]))
        has_all = bool((~named).any())
        rows = [[section] + cols + ([ALL] if has_all else [])]
        for measure in dict.fromkeys(part["measure"]):
            of = part[part["measure"] == measure]
            cells = {(c if isinstance(c, str) else ALL): v for c, v in zip(of["column"], of["value"])}
            rows.append([measure] + [_number(cells[c]) if c in cells else "" for c in rows[0][1:]])
            for note in of["note"]:
                if isinstance(note, str) and f"{section}: {note}" not in notes:
                    notes.append(f"{section}: {note}")
        lines += _table(rows) + [""]
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines).rstrip() + "\n"
