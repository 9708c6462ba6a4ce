"""Sweep one masking parameter of a spec and evaluate every value: the data for choosing k.

    from duckdb_sdc.release import load_spec, sweep, parse_values
    data = sweep(load_spec("people.toml"), "k", parse_values("k", "3..50"))

For each value v the spec is re-read with v for the parameter (k, c or epsilon) of every masked
column whose method has it (a box method's parameter is refused: the plotted measures need released
values, which boxes do not have) (other columns keep their rules; for epsilon, masking.total_epsilon is
dropped and every differentially private column gets epsilon = v), masked in memory exactly as a
release would mask it (the same generated SQL, no file written), and evaluated by the report's
sections. The result is the report's tidy rows with the parameter's name and value in front.
`plot.py` draws it.

Every value is checked before the first point is computed: the values themselves when they are
parsed (at most MAX_POINTS of them), and a swept k against the data (`check_range`), so an
out-of-range k fails at once instead of after every smaller k has been masked and evaluated.
"""

from __future__ import annotations

import copy
import math
import re

import pandas as pd
from sqlglot import exp

from .._validate import SdcError
from ..measures import catalog
from .methods import COLUMN, EPSILON, METHODS
from .plan import DIALECT, SOURCE, column, ident, key_step, literal, mask_steps, mask_table, released_query, resolve, table
from .progress import Progress
from .report import LOSS, RISK, create_views, evaluate_relations, evaluation, section_of
from .spec import Rule, Spec, SpecError, parse_spec

PARAMETERS = ("k", "c", EPSILON)  # what `tradeoff` can sweep
INTEGER_PARAMETERS = ("k", "c")
DEFAULT_POINTS = 10  # values of an epsilon range A..B without :N
MAX_POINTS = 1000  # a sweep masks and evaluates the whole data once per value
RELEASED = "__sdc_eval_released"


class SweepError(SdcError):
    """A bad sweep request (the command exits with code 2)."""


def _number(param: str, text: str, whole: str):
    try:
        value = int(text) if param in INTEGER_PARAMETERS else float(text)
    except ValueError:
        kind = "whole number" if param in INTEGER_PARAMETERS else "number"
        raise SweepError(f"--{param} {whole!r}: {text!r} is not a {kind}") from None
    if not math.isfinite(value) or value <= 0:
        raise SweepError(f"--{param} {whole!r}: values must be > 0, got {text}")
    return value


def parse_values(param: str, text: str) -> list:
    """The values of a sweep. For k and c (whole numbers >= 1): `3..50` every value from 3 to 50,
    `3..50:5` every fifth (3, 8, ..., 48), or a list `3,5,10`. For epsilon (> 0): `0.1..10` ten values
    evenly spaced on a log scale, `0.1..10:20` twenty, or a list `0.5,1,2`. Sorted, duplicates removed."""
    if param not in PARAMETERS:
        raise SweepError(f"cannot sweep {param!r}; the parameters are {', '.join(PARAMETERS)}")
    m = re.fullmatch(r"\s*([^:,]+?)\s*\.\.\s*([^:,]+?)\s*(?::\s*([^:,]+?)\s*)?", text)
    if m is None:
        parts = text.split(",")
        _check_points(param, text, len(parts))
        values = [_number(param, part.strip(), text) for part in parts]
    else:
        lo, hi = _number(param, m.group(1), text), _number(param, m.group(2), text)
        if hi < lo:
            raise SweepError(f"--{param} {text!r}: the range ends below its start")
        if param in INTEGER_PARAMETERS:
            step = 1 if m.group(3) is None else _number(param, m.group(3), text)
            _check_points(param, text, (hi - lo) // step + 1)
            values = list(range(lo, hi + 1, step))
        else:
            n = DEFAULT_POINTS if m.group(3) is None else _number("k", m.group(3), text)
            _check_points(param, text, n)
            if n == 1 or lo == hi:
                values = [lo]
            else:
                values = [float(lo * (hi / lo) ** (i / (n - 1))) for i in range(n)]
    return sorted(set(values))


def _check_points(param: str, text: str, n: int) -> None:
    if n > MAX_POINTS:
        raise SweepError(f"--{param} {text!r}: {n} values; a sweep masks and evaluates the data once per value, "
                         f"so it takes at most {MAX_POINTS} (give a step, e.g. 3..500:5, or fewer values)")


def swept_columns(spec: Spec, param: str) -> list[str]:
    """The masked columns whose method has the parameter."""
    return [c for r in spec.masked() if r.method.param(param) is not None for c in r.columns]


def variant(spec: Spec, param: str, value) -> Spec:
    """The spec with `param` = value in every masking rule whose method has it (re-checked)."""
    doc = copy.deepcopy(spec.text)
    rules = [*doc.get("columns", {}).items(), *((None, g) for g in doc.get("groups", []))]
    for name, rule in rules:
        if isinstance(rule, str) and rule not in ("keep", "drop"):
            rule = doc["columns"][name] = {"method": rule}
        if isinstance(rule, dict) and rule.get("method") in METHODS and METHODS[rule["method"]].param(param):
            rule[param] = value
    if param == EPSILON:
        doc.get("masking", {}).pop("total_epsilon", None)
    return parse_spec(doc, base=spec.base, name=spec.name)


def check_measures(il: str, dr: str) -> None:
    """`il` must be an information-loss measure and `dr` a disclosure-risk measure of the report that
    exists per column or overall (`catalog`: evaluate's measures that the report shows)."""
    known = [m for m in dict.fromkeys([*catalog.per_column(), *catalog.overall()]) if catalog.measure(m).report]
    for option, name, section in (("--il", il, LOSS), ("--dr", dr, RISK)):
        choices = [m for m in known if section_of(m) == section]
        if name not in choices:
            raise SweepError(f"{option} {name!r} is not a{'n' if section == LOSS else ''} {section} measure; "
                             f"choose one of {', '.join(choices)}")


def check_defined(data: pd.DataFrame, param: str, il: str, dr: str) -> None:
    """A sweep whose --il or --dr measure has no value at any point would plot nothing: say why
    (the report's note, e.g. global linkage not run on that many records)."""
    for option, name in (("--il", il), ("--dr", dr)):
        rows = data[data["measure"] == name]
        if rows["value"].isna().all():
            notes = "; ".join(sorted(set(rows["note"].dropna()))) or "undefined for these data"
            raise SweepError(f"{option} {name!r} has no value at any {param} ({notes})")


def _usable(rule) -> exp.Expression:
    """The records a rule's method masks: the column non-NULL (one column), or no column of the
    group NULL (a group of columns: one vector per record)."""
    return exp.and_(*(exp.Not(this=exp.Is(this=column(c), expression=exp.Null())) for c in rule.columns))


def _smallest_strata(con, spec: Spec, rule) -> list[tuple[str, int, str]]:
    """Per column the rule's method sees alone (every column of a one-column method, the group as a
    whole for a group method): (what, the fewest usable records of a stratum, that stratum), over
    the strata that have any."""
    strata = spec.strata_of(rule)
    per = [(c, _usable(Rule(column=c, action="mask"))) for c in rule.columns] if rule.method.kind == COLUMN \
        else [(", ".join(rule.columns), _usable(rule))]
    out = []
    for what, usable in per:
        n = exp.func("count_if", usable).as_(ident("__sdc_n"))
        query = exp.select(n, *(column(c) for c in strata)).from_(table(SOURCE))
        if strata:
            query = query.group_by(*(column(c) for c in strata))
        query = exp.select("*").from_(query.subquery(ident("__sdc_s"))).where(
            exp.GT(this=column("__sdc_n"), expression=literal(0))).order_by(column("__sdc_n")).limit(1)
        found = con.execute(query.sql(dialect=DIALECT)).fetchall()
        if found:
            count, *key = found[0]
            where = " and ".join(f"{c} = {v!r}" for c, v in zip(strata, key)) if strata else "the whole source"
            out.append((what, count, where if not strata else f"the stratum {where}"))
    return out


def check_range(con, spec: Spec, param: str, values: list) -> None:
    """Refuse, before any point is computed, a swept k larger than the smallest stratum of a swept
    column: k is the minimum group (cluster) size of every method that has it, at most the number
    of non-NULL values of a column (records without NULL for a group) in each stratum the method
    masks apart (tests check that every such method refuses k = n + 1). c has no upper bound, and
    epsilon's only bound (> 0) is checked when the values are parsed. The methods' lower bounds
    (iDP-CBLS needs k >= 3) fail at the first, smallest, value. With [masking] small_strata 'nearest' or
    'rest', small strata are pooled for each point instead (`_mask_in_memory`)."""
    if param != "k" or spec.small_strata != "refuse":
        return
    top = max(values)
    limits = [(rule, *smallest) for rule in spec.masked() if rule.method.param("k") is not None
              for smallest in _smallest_strata(con, spec, rule)]
    for rule, what, count, where in limits:
        if top > count:
            unit = "non-NULL values" if rule.method.kind == COLUMN else "records without NULL"
            largest = min(c for _, _, c, _ in limits)
            raise SweepError(f"{spec.name}: {rule.where}: {rule.method.name}: k = {top} is larger than the "
                             f"number of {unit} of {what} ({count}) in {where}; nothing was computed: sweep k "
                             f"up to {largest}")


def _execute(con, statement: exp.Expression, spec: Spec, where: str, at: str) -> None:
    """Run one statement; a failure is a SpecError naming the rule and the swept value."""
    import duckdb

    from .._validate import error_message

    try:
        con.execute(statement.sql(dialect=DIALECT)).fetchall()
    except duckdb.Error as e:
        raise SpecError(f"{spec.name}: {where}: {error_message(e)} ({at})") from None


def _mask_in_memory(con, spec: Spec, source_columns, at: str) -> None:
    """The release table of `spec` as the temporary table RELEASED (the masking steps of a release,
    after its small strata are counted and refused or pooled for this point's k)."""
    from . import pooling
    from .plan import keyed_step
    from .safeguards import Facts
    from .source import run_step

    facts = Facts()
    try:
        for step in ([keyed_step(spec, source_columns)] + pooling.count_steps(spec, source_columns, facts)
                     + pooling.recode_steps(spec, source_columns, facts)):
            run_step(con, step, spec)
    except SpecError as e:
        raise SpecError(f"{e} ({at})") from None
    for i, step in enumerate(mask_steps(spec), start=1):
        _execute(con, exp.Drop(tables=[table(mask_table(i))], kind="TABLE", exists=True), spec, step.label, at)
        _execute(con, step.sql, spec, step.where or step.label, at)
    create = exp.Create(this=table(RELEASED), kind="TABLE", replace=True,
                        expression=released_query(spec, source_columns),
                        properties=exp.Properties(expressions=[exp.TemporaryProperty()]))
    _execute(con, create, spec, "joining the masked columns", at)


def sweep(spec: Spec, param: str, values: list, *, progress: Progress | None = None,
          resources=None) -> pd.DataFrame:
    """The report of the spec's masking for every value of `param`, in memory (nothing is written): a
    tidy DataFrame with columns parameter, parameter_value and the report's (section, measure, column,
    value, note). The source is read in a private workspace, as a release reads it (`resources`: the
    spec's [resources], or these)."""
    from ..workspace import Workspace
    from .source import Snapshot, private_connection

    if param not in PARAMETERS:
        raise SweepError(f"cannot sweep {param!r}; the parameters are {', '.join(PARAMETERS)}")
    if not values:
        raise SweepError(f"--{param}: no value to sweep")
    boxed = [r for r in spec.masked() if r.boxed and r.method.param(param) is not None]
    if boxed:
        raise SweepError(f"{spec.name}: {boxed[0].where}: {boxed[0].method.name} releases boxes, and a sweep plots "
                         f"measures that compare released values with the original ones; sweep {param} in a spec "
                         "without box methods, or evaluate each value of a box method with duckdb-sdc evaluate")
    swept = swept_columns(spec, param)
    if not swept:
        methods = sorted(m.name for m in METHODS.values() if m.param(param) is not None)
        raise SweepError(f"{spec.name}: no masked column has the parameter {param} "
                         f"(methods with it: {', '.join(methods)})")
    snapshot = Snapshot.take(spec)
    progress = progress or Progress(enabled=False)
    resources = resources or spec.resources
    with Workspace(resources.temp_directory) as workspace:
        con = private_connection(workspace, resources)
        try:
            return _sweep(con, spec, param, values, snapshot, progress)
        finally:
            con.close()


def _sweep(con, spec: Spec, param: str, values: list[float], snapshot, progress) -> pd.DataFrame:
    from .source import open_source, run_step

    _, source_columns = open_source(con, spec, snapshot)
    resolve(spec, source_columns)
    run_step(con, key_step(spec), spec)
    check_range(con, spec, param, values)
    frames = []
    with progress.task(f"tradeoff {param}", len(values)) as task:
        for value in values:
            at = f"at {param} = {value:g}"
            task.advance(at)
            try:
                point = variant(spec, param, value)
            except SpecError as e:
                raise SpecError(f"{e} ({at})") from None
            _mask_in_memory(con, point, source_columns, at)
            create_views(con, point, table(RELEASED))
            df = evaluate_relations(evaluation(con, point))
            df.insert(0, "parameter_value", value)
            df.insert(0, "parameter", param)
            frames.append(df)
    return pd.concat(frames, ignore_index=True)


__all__ = ["MAX_POINTS", "PARAMETERS", "SweepError", "check_defined", "check_measures", "check_range", "parse_values",
           "sweep", "swept_columns", "variant"]
