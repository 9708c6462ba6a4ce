"""What fails each limit of a policy: the equivalence classes, records and cells behind a failed
verdict, as counts and as the combinations of released values that identify them (what sdcMicro
prints as the violating key combinations).

    from duckdb_sdc.release.failures import failures, class_sizes
    found = failures(ev, df)        # ev: a report.Evaluation; df: its report (report.evaluate_relations)

One `Failing` per limit of the evaluation's policy, in the policy's order:

* min_k: the classes of the released quasi-identifiers (all together, NULL a value: the gate's
  classes) with fewer than min_k records;
* max_unique_share: the classes of one record;
* max_record_linkage: the records that distance-based record linkage re-identifies (nearest original
  is the true one, `record_linkage_credits`: credit 1/t when t originals tie), over the columns and
  records the measure uses;
* max_interval_disclosure: the records whose original values all lie in the interval around their
  released values (`interval_disclosure_flags`);
* max_sensitive_share: the cells that the dominance or the p% rule flags, per attribute.

A combination is always made of released values (the quasi-identifiers as released; a record's
released values of the risk columns; a cell's released strata and cluster values): never an
original value of a masked column. A stratum column that is dropped is shown by the stratum's number,
not its value. At most `limit` combinations are listed per failed limit, the ones with the most
records first (then in the order of their values); the counts cover all of them. A limit that holds
lists none: the records a share counts (re-identified, inside their interval) are only failures when
there are too many of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlglot import exp

from . import policy as pol
from .plan import DIALECT, column, ident, literal, table

LIST_LIMIT = 20
NULL = "NULL"


@dataclass(frozen=True)
class Failing:
    key: str  # the [policy] key
    measure: str
    bound: float
    value: float | None  # as the report measured it (None: could not be measured)
    passed: bool
    what: str  # what `count` counts, in words
    count: int  # classes, records or cells that fail the limit
    records: int  # records in them
    columns: tuple[str, ...]  # the released columns of a combination (and 'records')
    rows: tuple[tuple, ...]  # up to `limit` combinations: released values as text, then the records
    note: str | None = None  # why nothing could be listed

    @property
    def listed_all(self) -> bool:
        return self.passed or len(self.rows) >= self.count


def _quasi_columns(ev) -> list[str]:
    return [r for c in ev.quasi_identifiers for r in ev.released(c)]


def _text(expression: exp.Expression) -> exp.Expression:
    return exp.Coalesce(this=exp.Cast(this=expression, to=exp.DataType.build("VARCHAR")), expressions=[literal(NULL)])


def class_sizes(ev) -> list[tuple[int, int]]:
    """(size, number of classes of that size) of the released quasi-identifiers, all together, NULL
    a value (the classes the policy's min_k and max_unique_share judge), by size."""
    from .report import MASKED

    cols = _quasi_columns(ev)
    if not cols:
        return []
    size = ident("__sdc_n")
    inner = exp.select(exp.Count(this=exp.Star()).as_(size)).from_(table(MASKED)).group_by(
        *(column(c) for c in cols))
    query = (exp.select(exp.Column(this=size.copy()), exp.Count(this=exp.Star()))
             .from_(inner.subquery(ident("__sdc_c"))).group_by(exp.Column(this=size.copy()))
             .order_by(exp.Column(this=size.copy())))
    return [(int(n), int(c)) for n, c in ev.fetch(query)]


def _classes(ev, having: exp.Expression, limit: int) -> tuple[int, int, tuple[tuple, ...]]:
    """(classes, records, the first `limit` classes: values and size) of the quasi-identifier classes
    whose size satisfies `having` (an expression of the column __sdc_n)."""
    from .report import MASKED

    cols = _quasi_columns(ev)
    size = ident("__sdc_n")
    inner = (exp.select(*(_text(column(c)).as_(ident(f"__sdc_v{i}")) for i, c in enumerate(cols)),
                        exp.Count(this=exp.Star()).as_(size))
             .from_(table(MASKED)).group_by(*(column(c) for c in cols)))
    failing = exp.select(exp.Star()).from_(inner.subquery(ident("__sdc_c"))).where(having)
    count, records = ev.fetch(exp.select(exp.Count(this=exp.Star()), exp.Sum(this=exp.Column(this=size.copy())))
                              .from_(failing.subquery(ident("__sdc_f"))))[0]
    order = [exp.Ordered(this=exp.Column(this=size.copy()), desc=True)]
    order += [exp.Ordered(this=exp.Column(this=ident(f"__sdc_v{i}"))) for i in range(len(cols))]
    listed = ev.fetch(failing.order_by(*order).limit(limit))
    return int(count or 0), int(records or 0), tuple(tuple(r[:-1]) + (int(r[-1]),) for r in listed)


def _size_is(op, bound: int) -> exp.Expression:
    return op(this=exp.Column(this=ident("__sdc_n")), expression=literal(bound))


def record_linkage_credits(x: np.ndarray, xm: np.ndarray) -> np.ndarray:
    """Each record's credit in `measures.record_linkage` (rank 1), in input order: 1/t when its true
    original is among the t originals nearest to its released record, else 0; their mean is the
    measure. x, xm: n x p, complete records."""
    from ..measures.risk import linkage_kd, pair, standardise

    X, XM = pair("record_linkage", x, xm)
    n = X.shape[0]
    Z, ZM = standardise("record_linkage", X, XM)
    if Z.shape[1] == 0:  # every original record is the same point: each is found with credit 1/n
        return np.full(n, 1.0 / n)
    a, t = linkage_kd(np.ascontiguousarray(Z), np.ascontiguousarray(ZM), 1)
    found = (a < 1) & (1 <= a + t)  # t is 0 only where the true original is not found
    return np.divide(1.0, t, out=np.zeros(n), where=found)


def interval_disclosure_flags(x: np.ndarray, xm: np.ndarray, k: float = 0.05) -> np.ndarray:
    """Whether each record is at risk in `measures.interval_disclosure` (every original value in the
    closed interval released value +- k sd of the released column, sample sd), computed as the
    measure computes it; their mean is the measure. x, xm: n x p, complete records."""
    from ..measures.risk import column_spread, pair, unit_columns

    X, XM, _ = unit_columns(*pair("interval_disclosure", x, xm))
    half = k * column_spread(XM)
    return ((X >= XM - half) & (X <= XM + half)).all(axis=1)


def _risk_records(ev) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """Original and released values (float) of `ev.risk_columns` over the records complete in them
    (as the policy's linkage measures take them), and each record's released values as text."""
    from .report import KEY, MASKED, ORIGINAL

    cols = ev.risk_columns
    double = exp.DataType.build("DOUBLE")
    pick = [exp.Cast(this=column(c, "__sdc_o"), to=double) for c in cols]
    pick += [exp.Cast(this=column(c, "__sdc_m"), to=double) for c in cols]
    pick += [_text(column(c, "__sdc_m")) for c in cols]
    query = (exp.select(*pick)
             .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=ident("__sdc_o"))))
             .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=ident("__sdc_m"))), using=[ident(KEY)])
             .order_by(column(KEY, "__sdc_o")))
    rows = ev.fetch(query)
    p = len(cols)
    values = np.array([[np.nan if v is None else float(v) for v in r[:2 * p]] for r in rows],
                      dtype=np.float64).reshape(len(rows), 2 * p)
    x, xm = values[:, :p], values[:, p:]
    complete = ~(np.isnan(x).any(axis=1) | np.isnan(xm).any(axis=1))
    shown = [tuple(r[2 * p:]) for r, ok in zip(rows, complete) if ok]
    return x[complete], xm[complete], shown


def _grouped(shown: list[tuple], hit: np.ndarray, limit: int) -> tuple[int, tuple[tuple, ...]]:
    """(records hit, the combinations of the hit records with their numbers of records, most first)."""
    picked = [s for s, h in zip(shown, hit) if h]
    if not picked:
        return 0, ()
    counts = pd.Series(picked).value_counts(sort=False)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return len(picked), tuple(tuple(k) + (int(v),) for k, v in ordered[:limit])


def _sensitive_cells(ev, limit: int) -> tuple[int, int, tuple[str, ...], tuple[tuple, ...]]:
    """(sensitive cells, records in them, columns, the first `limit` cells): per masked attribute
    the cells (records of a stratum sharing the rule's released values, or a box) that the
    dominance or the p% rule of the report flags."""
    from ..methods import sensitivity as sv
    from .._validate import reporting
    from .report import KEY, MASKED, ORIGINAL

    rules = ev.spec.sensitivity
    kept = {c for c in ev.spec.rules if ev.spec.rules[c].action == "keep"}
    found, total, records = [], 0, 0
    for rule in ev.spec.masked():
        if not rule.in_table:
            continue
        strata = ev.spec.strata_of(rule)
        clusters = (rule.box_column,) if rule.boxed else tuple(rule.columns)
        order = exp.Order(expressions=[exp.Ordered(this=column(c, "__sdc_o")) for c in strata]
                          + [exp.Ordered(this=column(c, "__sdc_m")) for c in clusters])
        cell = exp.Window(this=exp.Anonymous(this="dense_rank"), order=order)
        stratum = (exp.Window(this=exp.Anonymous(this="dense_rank"),
                              order=exp.Order(expressions=[exp.Ordered(this=column(c, "__sdc_o")) for c in strata]))
                   if strata else literal(1))
        shown = [_text(column(c, "__sdc_o")) if c in kept else exp.Concat(expressions=[
            literal("stratum "), exp.Cast(this=stratum.copy(), to=exp.DataType.build("VARCHAR"))]) for c in strata]
        shown += [_text(column(c, "__sdc_m")) for c in clusters]
        for attribute in rule.columns:
            query = (exp.select(exp.Cast(this=column(attribute, "__sdc_o"), to=exp.DataType.build("DOUBLE")),
                                cell.copy(), *(s.copy() for s in shown))
                     .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=ident("__sdc_o"))))
                     .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=ident("__sdc_m"))),
                           using=[ident(KEY)])
                     .where(exp.and_(*(exp.Not(this=exp.Is(this=column(c, "__sdc_m"), expression=exp.Null()))
                                       for c in clusters))))
            got = ev.fetch(query)
            if not got:
                continue
            v = np.array([np.nan if r[0] is None else float(r[0]) for r in got])
            cells = np.unique(np.array([r[1] for r in got], dtype=np.int64), return_inverse=True)[1]
            present = ~np.isnan(v)
            with reporting("policy"):
                dominance = sv.sensitive_cells(v[present].reshape(-1, 1), cells[present],
                                               sv.dominance_rule(rules.dominance_n, rules.dominance_r, absolute=True))
                p_cells = sv.sensitive_cells(v[present].reshape(-1, 1), cells[present],
                                             sv.p_percent_rule(rules.p, absolute=True))
            labels = np.unique(cells[present])
            size = np.bincount(cells[present])
            first = {}
            for r, c in zip(got, cells):
                first.setdefault(int(c), r[2:])
            for j, label in enumerate(labels):
                flagged = [name for name, flags in (("dominance", dominance), ("p%", p_cells)) if flags[j, 0]]
                if flagged:
                    total += 1
                    records += int(size[label])
                    key = tuple(first[int(label)])
                    found.append((attribute, ", ".join(key[:len(strata)]) if strata else "",
                                  ", ".join(key[len(strata):]), " and ".join(flagged), int(size[label])))
    found.sort(key=lambda r: (-r[-1], r[:-1]))
    return total, records, ("attribute", "stratum", "released values", "rule"), tuple(found[:limit])


def failures(ev, df: pd.DataFrame, *, limit: int = LIST_LIMIT) -> list[Failing]:
    """One Failing per limit of `ev.policy`, judged on the report `df` (the figures the verdicts and
    the gate use), with what fails it (see the module's docstring)."""
    from .report import measured

    out = []
    for outcome in pol.judge(ev.policy, measured(df)):
        key, bound = outcome.limit.key, outcome.bound
        base = dict(key=key, measure=outcome.limit.measure, bound=bound, value=outcome.value, passed=outcome.passed)
        if outcome.value is None:
            out.append(Failing(**base, what="", count=0, records=0, columns=(), rows=(), note=outcome.reason))
            continue
        if key in ("min_k", "max_unique_share"):
            cols = tuple(_quasi_columns(ev))
            having = _size_is(exp.LT, int(bound)) if key == "min_k" else _size_is(exp.EQ, 1)
            count, records, rows = _classes(ev, having, 0 if outcome.passed else limit)
            what = (f"classes of fewer than {int(bound)} records" if key == "min_k"
                    else "classes of one record (unique combinations)")
            out.append(Failing(**base, what=what, count=count, records=records, columns=cols + ("records",),
                               rows=rows))
        elif key in ("max_record_linkage", "max_interval_disclosure"):
            x, xm, shown = _risk_records(ev)
            if key == "max_record_linkage":
                hit, what = record_linkage_credits(x, xm) > 0, "records re-identified by record linkage"
            else:
                hit, what = interval_disclosure_flags(x, xm), "records inside their interval (interval disclosure)"
            records, rows = _grouped(shown, hit, 0 if outcome.passed else limit)
            out.append(Failing(**base, what=what, count=records, records=records,
                               columns=tuple(ev.risk_columns) + ("records",), rows=rows))
        else:  # max_sensitive_share
            count, records, cols, rows = _sensitive_cells(ev, 0 if outcome.passed else limit)
            out.append(Failing(**base, what="cells sensitive under the dominance or the p% rule", count=count,
                               records=records, columns=cols + ("records",), rows=rows))
    return out


__all__ = ["Failing", "LIST_LIMIT", "class_sizes", "failures", "interval_disclosure_flags", "record_linkage_credits"]
