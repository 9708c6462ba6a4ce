"""The risk/utility report of a release: the same spec, evaluated, and judged against its policy.

    from duckdb_sdc.release import load_spec, report, format_report
    df = report(load_spec("people.toml"))   # tidy: section, measure, column, value, note, direction, unit
    print(format_report(df))

The report compares the release file written from a spec (`release(spec)`) with the spec's source,
record by record: on the key where the release table has it, else through the private linkage file
the release wrote ([output] linkage), never by position (the rows are in a secret random order). It
is made of sections, each a function of an `Evaluation` (a connection on which the original and the
released records are two relations, ORIGINAL and MASKED, with a common key column) returning rows;
`SECTIONS` lists them in the order they are printed:

* `measures_section`: every measure of `evaluate_masking` (the SQL table macro backed by
  `duckdb_sdc.measures.evaluate`): information loss and the IL-DR score on the masked columns
  released as values, each alone and all together; disclosure risk on those and the numeric
  quasi-identifiers released as values (a kept numeric column is released exactly, and its risk is
  the intruder's gain: it takes part as it is released); a boxed column gets a row saying why it has
  none;
* `boxes_section`: what the boxes cost instead: their mean width (also in sd units), the bounds of
  each column's mean they give, the share of records inside their box, and per box rule the number
  of boxes;
* `k_anonymity_section`: k-anonymity of the released quasi-identifiers (`Spec.quasi_identifiers`; a
  boxed column counts as its two bounds; NULL counts as a value), and of each box rule's box ids;
* `sensitivity_section`: attribute disclosure, the cells (records sharing a released value, or a
  box) that the dominance and p% rules flag as sensitive.

Every row says its direction (lower or higher is better, or neither) and its unit, as the measure's
declaration in `duckdb_sdc.measures.catalog` states them, and
every section ends with a verdict row (measure "verdict": value 1 pass, 0 fail, NULL not judged)
against the spec's [policy], or without one against `policy.DEFAULTS`. A new kind of evidence is one
more function in `SECTIONS`. `tradeoff.py` evaluates in-memory maskings of spec variants through the
same sections.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Callable

import duckdb
import numpy as np
import pandas as pd
from sqlglot import exp

from .._validate import error_message
from ..measures import catalog
from ..measures.evaluate import evaluate as evaluate_measures
from . import policy as pol
from .plan import DIALECT, LINKAGE_TABLE, RAW, ROW_KEY, SOURCE, column, ident, literal, resolve, table, temporary
from .policy import K_ANONYMITY, RISK, SENSITIVE
from .sections import BOXES, KEY, LOSS, MASKED, ORIGINAL, SCORE, Evaluation, Row
from .source import Snapshot, open_source, private_connection
from .spec import MANIFEST_TABLE, Rule, Spec, SpecError, bound_columns, is_temporal

RELEASE_DB = "__sdc_evaluated"
LINKAGE_DB = "__sdc_evaluated_linkage"
EVALUATED = "__sdc_eval_file"  # the release table with the row key, read from the file

VERDICT = "verdict"
COLUMNS = ("section", "measure", "column", "value", "note", "direction", "unit")
ALL = "all columns"  # how format_report labels the overall rows (column None)

# the measures, their sections, directions and units are declared in duckdb_sdc/measures/catalog.py
section_of = catalog.section_of


def collect(ev: Evaluation, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The original and the released values of `columns`, record by record (joined on the key, in the
    key's order), as two n x p float64 arrays with NaN for NULL: what every measure of the report and
    of the gate is computed on."""
    pick = [exp.Cast(this=column(c, side), to=exp.DataType.build("DOUBLE")).as_(ident(f"{side}{j}"))
            for side in ("__sdc_o", "__sdc_m") for j, c in enumerate(columns)]
    query = (exp.select(*pick)
             .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=ident("__sdc_o"))))
             .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=ident("__sdc_m"))), using=[ident(KEY)])
             .order_by(column(KEY, "__sdc_o")))
    got = ev.con.sql(query.sql(dialect=DIALECT)).to_arrow_table()
    p = len(columns)
    arrays = [got.column(j).to_numpy(zero_copy_only=False) for j in range(2 * p)]  # NULL -> NaN
    stacked = np.column_stack([np.asarray(a, dtype=np.float64) for a in arrays]) if arrays else np.zeros((0, 0))
    return stacked[:, :p], stacked[:, p:]


def _evaluate_masking(ev: Evaluation, columns: tuple[str, ...], only=None) -> list[tuple]:
    """measures.evaluate (what the SQL table macro evaluate_masking runs) on the collected columns:
    (measure, column, value, note) rows; `only`: the measures to compute (None: all)."""
    x, xm = collect(ev, columns)
    if x.shape[0] == 0:
        return []
    return [(r.measure, r.column, r.value, r.note) for r in evaluate_measures(x, xm, list(columns), measures=only)]


def measures_section(ev: Evaluation, only: frozenset[str] | None = None) -> list[Row]:
    """Every measure of `measures.evaluate` (what evaluate_masking computes): information loss and the
    score on the masked columns released as values, disclosure risk on `Evaluation.risk_columns`; a
    row per boxed column saying why it has none. `only`: just these measures (the policy gate)."""
    boxed = [Row(LOSS, "measures", c, None,
                 f"{', '.join(map(repr, r.columns))} released as boxes ({r.method.name}, {r.where}): these "
                 "measures compare released values with the original ones, and a box has bounds, not a value; "
                 "see the boxes section")
             for r in ev.boxes for c in r.columns] if only is None else []
    rows = []
    wanted = set(catalog.reported()) if only is None else set(only)
    risky = {m for m in wanted if section_of(m) == RISK}
    if ev.masked and ev.risk_columns == ev.masked and wanted - risky:  # one evaluation gives both sides
        rows += [Row(section_of(m), m, c, v, n) for m, c, v, n in _evaluate_masking(ev, ev.masked, wanted)]
        risky = set()
    elif ev.masked and wanted - risky:
        rows += [Row(section_of(m), m, c, v, n) for m, c, v, n in _evaluate_masking(ev, ev.masked, wanted - risky)]
    elif not ev.masked and not boxed and only is None:
        rows.append(Row(LOSS, "measures", None, None, "the spec masks no column"))
    if ev.risk_columns and risky:
        rows += [Row(RISK, m, c, v, n) for m, c, v, n in _evaluate_masking(ev, ev.risk_columns, risky)]
    elif not ev.risk_columns and risky and only is None:
        rows.append(Row(RISK, "record_linkage", None, None, NO_RISK_COLUMN))
    return rows + boxed


NO_RISK_COLUMN = ("no quasi-identifier is released as values that distances can compare (numbers, dates, "
                  "timestamps)")


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


def _classes(ev: Evaluation, by: tuple[str, ...], col: str | None, present: tuple[str, ...] = ()) -> list[Row]:
    """k-anonymity of the released records grouped by the columns `by` (`policy.classes_query`): the
    smallest group, the number of groups, the share of records alone in their group. With `present`,
    over the records where those columns are non-NULL (a note says how many are left out); without,
    NULL counts as a value."""
    relation: exp.Expression = table(MASKED)
    total = None
    if present:
        total = ev.fetch(exp.select(exp.Count(this=exp.Star())).from_(table(MASKED)))[0][0]
        relation = (exp.select(exp.Star()).from_(table(MASKED))
                    .where(exp.and_(*(exp.Not(this=exp.Is(this=column(c), expression=exp.Null())) for c in present)))
                    .subquery(ident("__sdc_present")))
    smallest, classes, alone, records = ev.fetch(pol.classes_query(relation, list(by)))[0]
    note = None
    if total is not None and (records or 0) < total:
        note = f"{total - (records or 0)} of {total} records with a NULL {col!r} left out"
    elif total is None and col is None:
        note = "NULL counts as a value (a record alone with a NULL is as identifiable as one alone with a value)"
    if not records:
        return [Row(K_ANONYMITY, m, col, None, note or "no released record")
                for m in ("k_anonymity", "classes", "unique_share")]
    return [Row(K_ANONYMITY, "k_anonymity", col, float(smallest), note),
            Row(K_ANONYMITY, "classes", col, float(classes), note),
            Row(K_ANONYMITY, "unique_share", col, float(alone) / float(records), note)]


def k_anonymity_section(ev: Evaluation) -> list[Row]:
    """k-anonymity of the released quasi-identifiers Q (`Spec.quasi_identifiers`: every column of the
    release table, whatever its type, unless the spec exempts it). A column of Q that is not a strata
    column is counted alone together with the strata columns in Q (the strata are released, and the
    masking guarantee holds within a stratum): the smallest number of released records sharing its
    value in a stratum, over the records where it is non-NULL (NULLs are not masked; they are reported
    as left out); a boxed column's "value" is its pair of bounds. Then all of Q together (column None),
    NULL counting as a value: the figure the policy's min_k and max_unique_share judge (a box rule of a
    column in Q adds its box id). Then the box ids of each box rule alone, under the id column's name
    (ids are unique in the release, so no stratum is needed). Last, with [evaluation]
    quasi_identifiers, the same three measures over that intruder scenario (column
    'evaluation.quasi_identifiers'), shown and never judged."""
    q = ev.quasi_identifiers
    if not q:
        return [Row(K_ANONYMITY, m, None, None, "no quasi-identifier is released")
                for m in ("k_anonymity", "classes", "unique_share")]
    strata = tuple(c for c in q if c in set(ev.spec.strata_columns()))
    rows = []
    for c in q:
        if c not in strata:
            rows += _classes(ev, strata + ev.released(c), c, ev.released(c))
    rows += _classes(ev, _together(ev, q), None)
    for rule in ev.boxes:
        rows += _classes(ev, (rule.box_column,), rule.box_column, (rule.box_column,))
    if ev.scenario:
        rows += [dataclasses.replace(r, column=SCENARIO) for r in _classes(ev, _together(ev, ev.scenario), None)]
    return rows


SCENARIO = "evaluation.quasi_identifiers"  # the column label of the [evaluation] scenario's rows


def _together(ev: Evaluation, columns: tuple[str, ...]) -> tuple[str, ...]:
    """The released columns of `columns` counted together: each one's value or bounds, and the box id of
    each box rule with a column among them."""
    out = [r for c in columns for r in ev.released(c)]
    for rule in ev.boxes:
        if any(c in columns for c in rule.columns):
            out.append(rule.box_column)
    return tuple(dict.fromkeys(out))


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
        if not rule.in_table:  # released unlinked, in a table of its own
            continue
        strata = ev.spec.strata_of(rule)
        clusters = (rule.box_column,) if rule.boxed else tuple(rule.columns)  # a box is a cell
        for attribute in rule.columns:
            cells, dominant, p_cells = _sensitive_cells(ev, attribute, clusters, strata)
            totals = [totals[0] + cells, totals[1] + dominant, totals[2] + p_cells]
            rows += _sensitivity_rows(attribute, cells, dominant, p_cells)
            if rule.cells is not None and rule.cells.action in ("suppress", "remove"):
                rows.append(_suppressed_records(ev, rule, attribute))
    if not rows:
        return []
    note = (f"({rules.dominance_n}, {rules.dominance_r:g}) dominance rule and p% rule with "
            f"p = {rules.p:.4g}, on absolute contributions")
    cells, dominant, p_cells = totals
    worst = max(dominant, p_cells) / cells if cells else None
    return rows + _sensitivity_rows(None, *totals, note=note) + [
        Row(SENSITIVE, "sensitive_share", None, worst, note if cells else "no released cell")]


def _suppressed_records(ev: Evaluation, rule: Rule, attribute: str) -> Row:
    """The records whose value of `attribute` its rule's `cells` suppressed (NULL released, a value in
    the source), with what the release checked of them (duckdb_sdc.guarantees.CELLS)."""
    query = (exp.select(exp.Count(this=exp.Star()))
             .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=ident("__sdc_o"))))
             .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=ident("__sdc_m"))), using=[ident(KEY)])
             .where(exp.and_(exp.Not(this=exp.Is(this=column(attribute, "__sdc_o"), expression=exp.Null())),
                             exp.Is(this=column(attribute, "__sdc_m"), expression=exp.Null()))))
    what = "suppressed" if rule.cells.action == "suppress" else "removed or suppressed"
    note = (f"cells of {', '.join(rule.columns)} {what} under {rule.cells.method_rule().describe()}: protection "
            "levels met, audited when the release was written (see its manifest)")
    return Row(SENSITIVE, "suppressed_records", attribute, float(ev.fetch(query)[0][0]), note)


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


def measured(df: pd.DataFrame) -> dict[str, tuple[float | None, str | None]]:
    """The overall value (column None) and note of every measure in the report's rows, as the policy
    reads them: {measure: (value, note)}."""
    out = {}
    overall = df[df["column"].isna()]
    for m, v, note in zip(overall["measure"], overall["value"], overall["note"]):
        out[m] = (None if pd.isna(v) else float(v), note if isinstance(note, str) else None)
    for m, (v, note) in list(out.items()):
        if v is None and not note:
            out[m] = (None, "undefined for these data")
    return out


def verdict_rows(df: pd.DataFrame, policy: pol.Policy) -> list[Row]:
    """One verdict row per section: value 1 when every limit of `policy` on the section's measures
    holds, 0 when one fails, NULL when the policy sets none for it; the note says which and why."""
    outcomes = pol.judge(policy, measured(df))
    rows = []
    for section in dict.fromkeys(df["section"]):
        mine = [o for o in outcomes if o.limit.section == section]
        keys = [limit.key for limit in pol.LIMITS if limit.section == section]
        if not mine:
            why = (f"no limit of {policy.origin} applies" + (f" (set {', '.join(keys)})" if keys else
                   ": a policy limits disclosure risk; this section is for you to weigh"))
            rows.append(Row(section, VERDICT, None, None, f"not judged: {why}"))
            continue
        ok = all(o.passed for o in mine)
        text = "; ".join(o.text() for o in mine)
        rows.append(Row(section, VERDICT, None, 1.0 if ok else 0.0,
                        f"{'pass' if ok else 'FAIL'} against {policy.origin}: {text}"))
    return rows


def evaluate_relations(ev: Evaluation, progress=None) -> pd.DataFrame:
    """Every section's rows as one tidy DataFrame (columns COLUMNS), sections in _ORDER, each ending
    with its verdict row against `ev.policy`; with a `progress.Progress`, one step per section."""
    from .progress import Progress

    sections = SECTIONS
    if ev.spec.ml_utility:  # opt-in: it trains models (the `ml` extra), seconds per 100k records
        from .report_ml import ml_section

        sections += (ml_section,)
    if ev.spec.source.weight is not None:  # the weighted measures (report_weights.py)
        from .report_weights import weights_section

        sections += (weights_section,)
    rows = []
    with (progress or Progress(enabled=False)).task(f"evaluate {ev.spec.name}", len(sections)) as task:
        for section in sections:
            task.advance(section.__name__.removesuffix("_section").replace("_", " "))
            rows += section(ev)
    frame = rows_frame(rows)
    frame = rows_frame(rows + verdict_rows(frame, ev.policy))
    rank = {s: i for i, s in enumerate(_ORDER)}
    order = sorted(range(len(frame)), key=lambda i: (rank.get(frame.at[i, "section"], len(rank)),
                                                      frame.at[i, "measure"] == VERDICT, i))
    return frame.iloc[order].reset_index(drop=True)


def rows_frame(rows: list[Row]) -> pd.DataFrame:
    """The report's tidy frame (COLUMNS) of `rows`, each with its measure's direction and unit."""
    data = [(r.section, r.measure, r.column, r.value, r.note, *catalog.direction(r.measure)) for r in rows]
    return pd.DataFrame(data, columns=list(COLUMNS))


def create_views(con, spec: Spec, masked_relation: exp.Table) -> None:
    """ORIGINAL over the keyed source (SOURCE) and MASKED over `masked_relation`, as temporary views
    with the record key KEY: both relations carry the row key ROW_KEY (the spec's key or the
    surrogate), so records are matched on it, never on their position. A date or timestamp column is
    seen as its seconds since 1970 (`epoch`, one to one: classes of equal values are unchanged), so
    that distance-based risk can measure it."""
    for name, relation in ((ORIGINAL, table(SOURCE)), (MASKED, masked_relation)):
        described = con.execute(exp.Describe(this=relation.copy()).sql(dialect=DIALECT)).fetchall()
        temporal = [n for n, t, *_ in described if is_temporal(t)]
        star = exp.Star(**({"replace": [exp.func("epoch", column(n)).as_(ident(n)) for n in temporal]}
                           if temporal else {}))
        body = exp.select(column(ROW_KEY).as_(ident(KEY)), star).from_(relation)
        con.execute(temporary(name, body, "VIEW", replace=True).sql(dialect=DIALECT)).fetchall()


def _types(con) -> dict[str, str]:
    return {r[0]: r[1] for r in con.execute(exp.Describe(this=table(RAW)).sql(dialect=DIALECT)).fetchall()}


def evaluation(con, spec: Spec, policy: pol.Policy | None = None) -> Evaluation:
    """The Evaluation of ORIGINAL and MASKED on `con` (see create_views): the quasi-identifiers and
    the columns disclosure risk is measured on, as the spec defines them for the gate and the report
    alike (`Spec.quasi_identifiers`, `Spec.risk_columns`). Verdicts judge against `policy`, else the
    spec's, else the documented defaults."""
    types = _types(con)
    return Evaluation(con=con, spec=spec, masked=spec.masked_values(), quasi_identifiers=spec.quasi_identifiers(),
                      boxes=tuple(r for r in spec.masked() if r.boxed), risk_columns=spec.risk_columns(types),
                      policy=policy or spec.policy or pol.DEFAULTS, scenario=spec.declared_quasi_identifiers or ())


# the sections each limit's measure comes from (the gate runs just these, the report all of them)
_GATE_SECTIONS = {K_ANONYMITY: lambda ev, only: k_anonymity_section(dataclasses.replace(ev, scenario=())),
                  RISK: measures_section, SENSITIVE: lambda ev, only: sensitivity_section(ev)}


def policy_measures(ev: Evaluation) -> dict[str, tuple[float | None, str | None]]:
    """The values the policy's limits need, as {measure: (value, note)}: the overall rows of the very
    sections the report prints (`k_anonymity_section`, `measures_section` restricted to the measures the
    limits name, `sensitivity_section`), read as `verdict_rows` reads the report, so that the gate
    and `duckdb-sdc evaluate` cannot measure different things. A limit whose measure the sections
    give no value gets the note saying why."""
    limits = [limit for limit, _ in ev.policy.limits()]
    rows = []
    for section in dict.fromkeys(limit.section for limit in limits):
        only = frozenset(limit.measure for limit in limits if limit.section == section)
        rows += _GATE_SECTIONS[section](ev, only)
    found = measured(rows_frame(rows)) if rows else {}
    return {limit.measure: found.get(limit.measure, (None, NO_RISK_COLUMN if limit.section == RISK
                                                    else "not measured")) for limit in limits}


def _comparable(spec_text: dict) -> dict:
    """A spec as the manifest keeps it, without the sections that change no release ([evaluation],
    [policy])."""
    text = json.loads(json.dumps(spec_text, default=str, ensure_ascii=False, sort_keys=True))
    text.pop("evaluation", None)
    text.pop("policy", None)
    return text


def _check_manifest(con, spec: Spec) -> str:
    """The release file was written from this spec; returns its release_id."""
    path = spec.output.database
    query = exp.select(exp.func("any_value", column("spec")), exp.func("any_value", column("release_id")),
                       exp.Count(this=exp.Star())).from_(
        table(MANIFEST_TABLE, "main", RELEASE_DB)).where(
        exp.EQ(this=column("release_table"), expression=literal(spec.output.table)))
    try:
        written, release_id, rows = con.execute(query.sql(dialect=DIALECT)).fetchall()[0]
    except duckdb.Error:
        raise SpecError(f"{spec.name}: output.database: {str(path)!r} is not a release file of this version "
                        f"(no {MANIFEST_TABLE} table with a release_id); release it again") from None
    if not rows:
        raise SpecError(f"{spec.name}: output.database: {str(path)!r} holds no release of table "
                        f"{spec.output.table!r}")
    if _comparable(json.loads(written)) != _comparable(spec.public_text()):
        raise SpecError(f"{spec.name}: the release file {str(path)!r} was written from a different spec; "
                        f"release it again (duckdb-sdc release {spec.name}) before evaluating")
    return release_id


def _released_relation(con, spec: Spec, release_id: str) -> exp.Table:
    """The release table with the row key ROW_KEY, as the temporary view EVALUATED: the key column
    itself where the table has it, else the key the private linkage file gives each row position.
    Refuses when neither exists: records are never matched by their position alone."""
    released = table(spec.output.table, "main", RELEASE_DB)
    if spec.key_released():
        body = exp.select(column(spec.source.key).as_(ident(ROW_KEY)), exp.Star()).from_(released)
    else:
        body = _linked(con, spec, release_id, released)
    con.execute(temporary(EVALUATED, body, "VIEW", replace=True).sql(dialect=DIALECT)).fetchall()
    return table(EVALUATED)


def _linked(con, spec: Spec, release_id: str, released: exp.Table) -> exp.Select:
    why = (f"the key {spec.source.key!r} is dropped" if spec.source.key is not None
           else "the spec has no source.key")
    path = spec.output.linkage
    if path is None:
        raise SpecError(f"{spec.name}: the release table {spec.output.table!r} has no key column ({why}) and the "
                        "spec writes no linkage file, so its records cannot be matched with the source's (never by "
                        "their position: the rows are in a secret random order); add [output] linkage = \"<a private "
                        "path>\" and release again")
    if not path.is_file():
        raise SpecError(f"{spec.name}: output.linkage: no linkage file {str(path)!r}; it is written by "
                        f"duckdb-sdc release {spec.name} beside the release")
    attach = exp.Attach(this=exp.Alias(this=literal(str(path)), alias=ident(LINKAGE_DB)),
                        expressions=[exp.AttachOption(this=exp.Var(this="READ_ONLY"))])
    try:
        con.execute(attach.sql(dialect=DIALECT)).fetchall()
        ids, links = con.execute(exp.select(exp.func("list", exp.Distinct(expressions=[column("release_id")])),
                                            exp.Count(this=exp.Star())).from_(
            table(LINKAGE_TABLE, "main", LINKAGE_DB)).sql(dialect=DIALECT)).fetchall()[0]
        rows = con.execute(exp.select(exp.Count(this=exp.Star())).from_(released).sql(dialect=DIALECT)).fetchall()[0][0]
    except duckdb.Error as e:
        raise SpecError(f"{spec.name}: output.linkage: {str(path)!r} is not a linkage file: {e}") from None
    if ids != [release_id] or links != rows:
        raise SpecError(f"{spec.name}: output.linkage: {str(path)!r} belongs to another release (release it again: "
                        "both files are written together)")
    position = exp.Add(this=exp.Column(this=ident("rowid")), expression=literal(1))
    rel = exp.select(position.as_(ident("__sdc_at")), exp.Star()).from_(released)
    link = table(LINKAGE_TABLE, "main", LINKAGE_DB)
    return (exp.select(column("key", "__sdc_l").as_(ident(ROW_KEY)),
                       exp.Star(**{"this": ident("__sdc_t"), "except": [column("__sdc_at")]}))
            .from_(rel.subquery(ident("__sdc_t")))
            .join(exp.Table(this=link.this, db=link.args.get("db"), catalog=link.args.get("catalog"),
                            alias=exp.TableAlias(this=ident("__sdc_l"))),
                  on=exp.EQ(this=column("position", "__sdc_l"), expression=column("__sdc_at", "__sdc_t"))))


def report(spec: Spec, *, policy: pol.Policy | None = None, progress=None, resources=None,
           inspect=None) -> pd.DataFrame:
    """The risk/utility report of the release file written from `spec`, against its source, as a
    tidy DataFrame (COLUMNS); column None means all columns together; each section ends with its
    verdict row against `policy`, the spec's [policy], or the documented defaults. Raises SpecError
    when the file is missing, was written from a different spec, or cannot be linked to the source.
    It reads the source as a release does: in a private workspace (`resources`: the spec's
    [resources], or these instead). `inspect(ev, df)`, when given, is called with the Evaluation and
    the report before the connection closes (the release file is attached there as RELEASE_DB:
    release/html.py)."""
    from ..workspace import Workspace

    snapshot = Snapshot.take(spec)
    path = spec.output.database
    if not path.is_file():
        raise SpecError(f"{spec.name}: output.database: no release file {str(path)!r} yet; "
                        f"write it first (duckdb-sdc release {spec.name})")
    resources = resources or spec.resources
    with Workspace(resources.temp_directory) as workspace:
        con = private_connection(workspace, resources)
        try:
            return _report(con, spec, path, snapshot, policy, progress, inspect)
        finally:
            con.close()


def _report(con, spec: Spec, path, snapshot, policy, progress, inspect) -> pd.DataFrame:
    _, source_columns = open_source(con, spec, snapshot)
    resolve(spec, source_columns)
    attach = exp.Attach(this=exp.Alias(this=literal(str(path)), alias=ident(RELEASE_DB)),
                        expressions=[exp.AttachOption(this=exp.Var(this="READ_ONLY"))])
    try:
        con.execute(attach.sql(dialect=DIALECT)).fetchall()
    except duckdb.Error as e:
        raise SpecError(f"{spec.name}: output.database: cannot open {str(path)!r}: {error_message(e)}") from None
    release_id = _check_manifest(con, spec)
    create_views(con, spec, _released_relation(con, spec, release_id))
    try:
        ev = evaluation(con, spec, policy)
        df = evaluate_relations(ev, progress)
        if inspect is not None:
            inspect(ev, df)
        return df
    except duckdb.Error as e:
        raise SpecError(f"{spec.name}: evaluating the release: {error_message(e)}") from None


def verdicts(df: pd.DataFrame) -> pd.DataFrame:
    """The verdict rows of a report."""
    return df[df["measure"] == VERDICT]


def _number(value) -> str:
    if pd.isna(value):
        return "n/a"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def line(r):
        last = len(widths) - 1
        return "  ".join(c.ljust(w) if i in (0, last) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    return [line(rows[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in rows[1:]]


def format_report(df: pd.DataFrame) -> str:
    """The report as text: per section a table with one row per measure and one column per evaluated
    column, then 'all columns' (the rows whose column is missing), then the measure's direction
    ("better": lower or higher) and unit; an undefined value shows as n/a. Each section ends with its
    verdict line, and every note is listed below the tables."""
    lines, notes = [], []
    for section in dict.fromkeys(df["section"]):
        part = df[df["section"] == section]
        verdict = part[part["measure"] == VERDICT]
        part = part[part["measure"] != VERDICT]
        if len(part):
            named = part["column"].notna()
            cols = list(dict.fromkeys(part.loc[named, "column"]))
            has_all = bool((~named).any())
            rows = [[section] + cols + ([ALL] if has_all else []) + ["better", "unit"]]
            for measure in dict.fromkeys(part["measure"]):
                of = part[part["measure"] == measure]
                cells = {(c if isinstance(c, str) else ALL): v for c, v in zip(of["column"], of["value"])}
                direction, unit = catalog.direction(measure)
                rows.append([measure] + [_number(cells[c]) if c in cells else "" for c in rows[0][1:-2]]
                            + [direction or "-", unit])
                for note in of["note"]:
                    if isinstance(note, str) and f"{section}: {note}" not in notes:
                        notes.append(f"{section}: {note}")
            lines += _table(rows)
        for note in verdict["note"]:
            lines.append(f"{VERDICT} ({section}): {note}")
        lines.append("")
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines).rstrip() + "\n"
