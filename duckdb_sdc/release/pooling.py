"""Small strata in a release ([masking] small_strata, duckdb_sdc.strata), as sqlglot steps that run
after the key check and before any masking:

1. `count_steps`: per strata of the masked rules, one row per stratum in the order that numbers the
   strata (ascending strata values, NULLS LAST): its values, its records and each rule's usable
   records (non-NULL values; for a group, records without a NULL in its columns). The check decides
   (`duckdb_sdc.strata.pool`): with 'refuse' a small stratum fails the release, naming the rule, the
   stratum, its size and the k; with 'nearest' or 'rest' the decision is kept in `Facts`.
2. `recode_steps`: when some stratum is pooled, the table POOL_MAP (each stratum's values and the
   values of the pool it joins) and the source view SOURCE made again with the strata columns
   recoded. Masking, the safeguards, the policy gate and the release table all read SOURCE, so pooled
   records are masked as one stratum and, where a strata column is released, carry the pool's values:
   the released strata are the pools. The key (or surrogate key) is computed before the recoding.

The manifest reads the decision (`record`): how, the strata, what each rule needs, and which strata
were pooled into which with their sizes, only when every strata column is released (the values of a
dropped column are never written): otherwise the numbers of strata and records pooled.
"""

from __future__ import annotations

from sqlglot import exp

from .. import masking
from .. import strata as sm
from .._validate import SdcError
from .plan import SOURCE, Step, column, ident, keyed_step, literal, table, temporary
from .spec import Spec, SpecError

POOL_MAP = "__sdc_pool_map"
POOLING = "pooling"  # the key of the decision in safeguards.Facts
_INDEX = "__sdc_i"


def _usable(rule) -> exp.Expression:
    """The rule's usable records of a stratum: non-NULL values, or records without a NULL in the group."""
    present = exp.and_(*(exp.Not(this=exp.Is(this=column(c), expression=exp.Null())) for c in rule.columns))
    return exp.Sum(this=exp.If(this=present, true=exp.Literal.number(1), false=exp.Literal.number(0)))


def _numbered(strata: tuple[str, ...], extra: list[exp.Expression] = ()) -> exp.Select:
    """One row per stratum of SOURCE: its values, its number __sdc_i, then `extra` aggregates."""
    order = exp.Order(expressions=[exp.Ordered(this=column(c), nulls_first=False) for c in strata])
    number = exp.Sub(this=exp.Window(this=exp.Anonymous(this="row_number"), order=order),
                     expression=exp.Literal.number(1))
    return (exp.select(*(column(c) for c in strata), number.as_(ident(_INDEX)), *extra)
            .from_(table(SOURCE)).group_by(*(column(c) for c in strata)))


def _stratum_text(strata, values) -> str:
    return ", ".join(f"{c} = {v!r}" for c, v in zip(strata, values))


def _needs(spec: Spec, rules) -> list[sm.Need]:
    """What each rule needs of a stratum (duckdb_sdc.strata.need)."""
    out = []
    for rule in rules:
        try:
            need = sm.need(rule.method.name, rule.effective_params(), ", ".join(rule.columns), func=rule.method.name)
        except SdcError as e:  # a parameter the method refuses (k = 1), refused before anything runs
            raise SpecError(f"{spec.name}: {rule.where}: {e}") from None
        out.append(sm.Need(need.name, need.minimum, need.method, need.param, need.value, need.unit,
                           prefix=f"{rule.where}: {rule.method.name}: "))
    return out


def count_steps(spec: Spec, source_columns, facts) -> list[Step]:
    """The counts and the decision, one step per strata of the masked rules (see the module)."""
    by_strata: dict[tuple[str, ...], list] = {}
    for rule in spec.masked():
        if spec.strata_of(rule) and rule.method.name in masking.METHODS:  # a plug-in's method states no need
            by_strata.setdefault(spec.strata_of(rule), []).append(rule)
    types = dict(source_columns)
    steps = []
    for strata, rules in by_strata.items():
        how = spec.small_strata
        if how == sm.REST:
            for c in strata:
                if types.get(c) != "VARCHAR":
                    raise SpecError(f"{spec.name}: masking.rest_stratum: the rest stratum's label is text, and stratum "
                                    f"column {c!r} is {types.get(c)}; use small_strata = \"nearest\" (the pools take "
                                    "the values of existing strata), or stratify by a text column")
        needs = _needs(spec, rules)
        extra = [exp.Count(this=exp.Star()).as_(ident("__sdc_rows"))]
        extra += [_usable(r).as_(ident(f"__sdc_n{j}")) for j, r in enumerate(rules)]
        query = _numbered(strata, extra).order_by(column(_INDEX))

        def check(rows, strata=strata, needs=needs, how=how):
            d = len(strata)
            values = [tuple(r[:d]) for r in rows]
            labels = [_stratum_text(strata, v) for v in values]
            counts = [[int(x or 0) for x in r[d + 2:]] for r in rows]
            sizes = [int(r[d + 1]) for r in rows]
            rest = spec.rest_stratum
            rest_index = next((i for i, v in enumerate(values) if rest is not None and v == tuple(rest)), None)
            hint = ("set [masking] small_strata = \"rest\" (with rest_stratum = \"other\") to pool the small strata "
                    "into one stratum labelled so, or \"nearest\" to pool each into a neighbouring stratum, whose "
                    "values its records then carry (docs/releases/small-strata.md)")
            try:
                target = sm.pool(how, sizes, counts, needs, labels, rest_index=rest_index,
                                 rest_label=_stratum_text(strata, rest or ()), func=spec.name, hint=hint)
            except SdcError as e:
                raise SpecError(str(e)) from None
            if how != sm.REFUSE:
                facts[POOLING] = {"strata": strata, "values": values, "sizes": sizes, "target": target,
                                  "needs": needs}

        steps.append(Step(f"counting the strata of {', '.join(strata)}", query, check=check))
    return steps


def _target(strata, values, t, rest):
    return dict(zip(strata, rest if t == sm.REST_TARGET else values[t]))


def recode_steps(spec: Spec, source_columns, facts) -> list[Step]:
    """POOL_MAP and SOURCE recoded (see the module), built when they run, after the decision."""
    strata = spec.pooled_strata()
    if not strata:
        return []

    def decided() -> dict | None:
        return facts.get(POOLING)

    def pool_map() -> exp.Expression:
        got = decided()
        target = got["target"] if got else []
        targets = exp.Array(expressions=[literal(t) for t in target])
        s, t = "__sdc_s", "__sdc_t"
        to = exp.Anonymous(this="list_extract", expressions=[  # targets[i], DuckDB's lists counting from 1
            targets, exp.Add(this=column(_INDEX, s), expression=exp.Literal.number(1))])
        rest = spec.rest_stratum or ()
        select = [column(c, s).as_(ident(f"__sdc_o{j}")) for j, c in enumerate(strata)]
        for j, c in enumerate(strata):
            label = column(c, t) if not rest else exp.Case(
                ifs=[exp.If(this=exp.EQ(this=to.copy(), expression=literal(sm.REST_TARGET)), true=literal(rest[j]))],
                default=column(c, t))
            select.append(label.as_(ident(f"__sdc_g{j}")))
        numbered = _numbered(strata)
        body = (exp.select(*select)
                .from_(numbered.subquery(ident(s)))
                .join(numbered.subquery(ident(t)), join_type="LEFT",
                      on=exp.EQ(this=column(_INDEX, t), expression=to.copy())))
        return temporary(POOL_MAP, body, replace=True)

    def recoded() -> exp.Expression:
        keyed = keyed_step(spec, source_columns)
        if not (decided() and sm.pooled(decided()["target"])):
            return keyed.sql  # nothing pooled: the keyed source as it was
        k, m = "__sdc_k", "__sdc_p"
        star = exp.Star(replace=[column(f"__sdc_g{j}", m).as_(ident(c)) for j, c in enumerate(strata)])
        on = exp.and_(*(exp.NullSafeEQ(this=column(c, k), expression=column(f"__sdc_o{j}", m))
                        for j, c in enumerate(strata)))
        body = (exp.select(exp.Column(this=star, table=ident(k)))
                .from_(keyed.sql.expression.subquery(ident(k)))
                .join(exp.Table(this=ident(POOL_MAP), alias=exp.TableAlias(this=ident(m))), on=on))
        return temporary(SOURCE, body, "VIEW", replace=True)

    return [Step("pooling small strata", pool_map), Step("pooling small strata", recoded)]


def record(spec: Spec, facts) -> dict | None:
    """What the manifest says of the pooling (see the module); None without pooling."""
    got = facts.get(POOLING)
    if got is None:
        return None
    strata, values, sizes, target = got["strata"], got["values"], got["sizes"], got["target"]
    pooled = sm.pooled(target)
    out = {"small_strata": spec.small_strata, "strata": list(strata),
           "needs": {nd.name: nd.minimum for nd in got["needs"]},
           "strata_before": len(sizes), "strata_after": len(set(target)),
           "strata_pooled": len(pooled), "records_pooled": sum(sizes[i] for i, _ in pooled)}
    if spec.rest_stratum is not None:
        out["rest_stratum"] = dict(zip(strata, spec.rest_stratum))
    if all(spec.rules[c].action == "keep" for c in strata):
        out["pooled"] = [{"from": dict(zip(strata, values[i])), "records": sizes[i],
                          "into": _target(strata, values, t, spec.rest_stratum)} for i, t in pooled]
    return out


SHOWN = 10  # pooled strata a summary names one by one (the manifest lists every one)


def summary(spec: Spec, facts) -> str | None:
    """One sentence for the release's output saying what the pooling did to the released strata
    columns, or None when no stratum was pooled. Where every strata column is released it names each
    pooled stratum and the values its records are released with (the first SHOWN; the manifest has
    all); where some are dropped it gives the numbers and the released columns that carry pool values,
    and no value of a dropped column."""
    got = facts.get(POOLING)
    if got is None or not sm.pooled(got["target"]):
        return None
    strata, values, sizes, target = got["strata"], got["values"], got["sizes"], got["target"]
    pooled = sm.pooled(target)
    head = (f"small_strata = {spec.small_strata!r} pooled {len(pooled)} small strata "
            f"({sum(sizes[i] for i, _ in pooled)} records) into others")
    kept = [c for c in strata if spec.rules[c].action == "keep"]
    if len(kept) == len(strata):
        named = [f"{_stratum_text(strata, values[i])} ({sizes[i]} records) as "
                 f"{_stratum_text(strata, tuple(_target(strata, values, t, spec.rest_stratum).values()))}"
                 for i, t in pooled[:SHOWN]]
        more = f"; and {len(pooled) - SHOWN} more" if len(pooled) > SHOWN else ""
        return f"{head}; their records are released with the pool's values: {'; '.join(named)}{more} " \
               "(the manifest's parameters.small_strata lists every one)"
    if kept:
        return (f"{head}; their records are released with the pool's values of {', '.join(kept)} "
                "(the manifest's parameters.small_strata has the numbers)")
    return f"{head}; the strata columns are not released, so no released value changed"


__all__ = ["POOLING", "POOL_MAP", "SHOWN", "count_steps", "record", "recode_steps", "summary"]
