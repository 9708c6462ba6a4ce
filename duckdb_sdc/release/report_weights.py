"""The report's weighted measures, for a spec with sampling weights ([source] weight).

`weights_section(ev)` is a report section (a function of an `Evaluation` returning `report.Row`s),
added by `report.evaluate_relations` when the spec names a weight column. The weights are the
original records' (joined on the key), so the measures estimate population quantities
(`duckdb_sdc.measures.weights`):

* information loss, per masked column released as values and masked with the weights (records with
  both values): `weighted_mae`, `weighted_mse`, `weighted_il1s` (the SQL aggregates of the same
  names); a column whose rule says weighted = false has none;
* disclosure risk over the released quasi-identifiers (a boxed one as its two bounds; records with a
  NULL in any of them take no part): `expected_reidentifications`, sum over the records of 1 / F_k,
  F_k the sum of the weights of the records sharing the record's released combination (the estimated
  population frequency, sdcMicro's Fk), and `expected_reidentification_share`, that sum over the
  number of records (`weighted_risk_summary`). A record with every quasi-identifier but no valid
  weight makes these undefined: the rows say why (value NULL) instead of failing the report.

Every other measure of the report stays unweighted: k-anonymity and the policy count records of the
file, which is what the masking guarantees.
"""

from __future__ import annotations

import duckdb
from sqlglot import exp

from .plan import column, ident, literal, temporary
from .policy import RISK
from .sections import KEY, LOSS, MASKED, ORIGINAL, Evaluation, Row
from .spec import weight_of

WEIGHTED_LOSS = ("weighted_mae", "weighted_mse", "weighted_il1s")
WEIGHTS_VIEW = "__sdc_eval_weighted"
WEIGHT_COLUMN = "__sdc_eval_weight"


def _loss(ev: Evaluation, weight: str, masked: tuple[str, ...]) -> list[Row]:
    o, m = ident("__sdc_o"), ident("__sdc_m")
    calls = [exp.Anonymous(this=f, expressions=[column(c, "__sdc_o"), column(c, "__sdc_m"), column(weight, "__sdc_o")])
             for c in masked for f in WEIGHTED_LOSS]
    query = (exp.select(*calls)
             .from_(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=o)))
             .join(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=m)), using=[ident(KEY)]))
    values = ev.fetch(query)[0]
    note = f"weighted by {weight!r}"
    rows, i = [], 0
    for c in masked:
        for f in WEIGHTED_LOSS:
            v = values[i]
            rows.append(Row(LOSS, f, c, v, note if v is not None else f"{note}; undefined for these data"))
            i += 1
    return rows


def _risk(ev: Evaluation, weight: str) -> list[Row]:
    q = [r for c in ev.quasi_identifiers for r in ev.released(c)]
    if not q:
        return [Row(RISK, "expected_reidentifications", None, None, "no quasi-identifier is released")]
    body = (exp.select(*(column(c, "__sdc_m") for c in q), column(weight, "__sdc_o").as_(ident(WEIGHT_COLUMN)))
            .from_(exp.Table(this=ident(MASKED), alias=exp.TableAlias(this=ident("__sdc_m"))))
            .join(exp.Table(this=ident(ORIGINAL), alias=exp.TableAlias(this=ident("__sdc_o"))), using=[ident(KEY)]))
    ev.con.execute(temporary(WEIGHTS_VIEW, body, "VIEW", replace=True).sql(dialect="duckdb")).fetchall()
    call = exp.Anonymous(this="weighted_risk_summary", expressions=[
        literal(WEIGHTS_VIEW), literal(list(q)), literal(WEIGHT_COLUMN), literal(1.0)])
    note = (f"over the released quasi-identifiers {', '.join(map(repr, q))}, weighted by {weight!r}; "
            "F_k = sum of the weights of the records sharing a combination")
    try:
        records, expected = ev.fetch(exp.select("records", "expected_reidentifications")
                                     .from_(exp.Table(this=call)))[0]
    except duckdb.Error as err:  # a NULL or invalid weight beside a complete record
        why = str(err).split("\n")[0].removeprefix("Invalid Input Error: ")
        return [Row(RISK, m, None, None, f"{note}; undefined: {why}")
                for m in ("expected_reidentifications", "expected_reidentification_share")]
    if not records:
        return [Row(RISK, "expected_reidentifications", None, None, "no record has every quasi-identifier")]
    return [Row(RISK, "expected_reidentifications", None, float(expected), note),
            Row(RISK, "expected_reidentification_share", None, float(expected) / records, note)]


def weights_section(ev: Evaluation) -> list[Row]:
    """The weighted measures (module docstring)."""
    weight = ev.spec.source.weight
    masked = tuple(c for c in ev.masked if weight_of(ev.spec, ev.spec.rules[c]) is not None)
    rows = _loss(ev, weight, masked) if masked else []
    return rows + _risk(ev, weight)


__all__ = ["WEIGHTED_LOSS", "weights_section"]
