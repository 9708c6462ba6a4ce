"""What a release checks and adds after masking, before anything is written, as sqlglot steps:

* `auto_step`: the k or c that 'auto' resolves to, per stratum (the SQL aggregates fd_group_size and
  fd_intervals, which equal the numpy rule the list functions apply), for the manifest;
* `protect_steps`: a rule's `cells` setting (spec.CellProtection): suppression with secondary cells
  that meet the protection levels, or merging, of the cells the rule (dominance, p%, pq, threshold)
  flags;
* `smallest_set_step`: for every deterministic rule, the smallest number of records of a stratum
  that share a released value (a set of attraction; for a group, a combination; for boxes, a box).
  A set of one record releases that record's masked value as its own: refused, naming the column,
  the stratum and the size. Microaggregation cannot fail it (k >= 2); rounding by discretisation
  can (an interval that holds one value). The size is the measured k of the manifest's guarantee.
  Not for DP rules (the noise protects) nor for the perturbative methods whose stated guarantee is
  none (noise addition, rank swapping: every value is its own, by design, and the manifest says so);
* `centroids_steps`: a dp_um rule's unlinked table of noisy cluster means.

Each records what it found in `Facts`, which the manifest reads when it is written (after them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from .. import guarantees
from .._validate import is_auto
from .methods import BOXES, COLUMN
from .plan import (BOX_ID, RELEASE_DB, ROW_KEY, SOURCE, Step, column, ident, literal, mask_table, table,
                   temporary)
from .spec import Rule, Spec, SpecError

MIN_SET = 2  # the smallest set of records a deterministic rule may release a value to


@dataclass
class RuleFacts:
    resolved: dict[str, list[tuple[tuple, int]]] = field(default_factory=dict)  # param -> [(stratum, value)]
    smallest_set: int | None = None  # the smallest set of records sharing a released value
    primary_cells: int = 0
    secondary_cells: int = 0
    merged_clusters: int = 0  # clusters merged away by cells = { action = "merge" }
    removed_records: int = 0  # records removed from their cells by cells = { action = "remove" }


class Facts(dict):
    """RuleFacts per rule (keyed by the rule object's id)."""

    def of(self, rule: Rule) -> RuleFacts:
        return self.setdefault(id(rule), RuleFacts())


def _stratum_text(strata: tuple[str, ...], values) -> str:
    if not strata:
        return "the whole table"
    return "stratum " + ", ".join(f"{c} = {v!r}" for c, v in zip(strata, values))


def _joined(spec: Spec, rule: Rule, i: int, value: exp.Expression | None = None) -> exp.Select:
    """The masked values of rule i beside their records' strata (s.<stratum>) and row key, for the
    records with a released value."""
    strata = spec.strata_of(rule)
    select = [column(c, "__sdc_s").as_(ident(c)) for c in strata]
    select += [column("__sdc_key", "__sdc_m").as_(ident("__sdc_k")),
               (value if value is not None else column("__sdc_value", "__sdc_m")).as_(ident("__sdc_v"))]
    return (exp.select(*select)
            .from_(exp.Table(this=ident(mask_table(i)), alias=exp.TableAlias(this=ident("__sdc_m"))))
            .join(exp.Table(this=ident(SOURCE), alias=exp.TableAlias(this=ident("__sdc_s"))),
                  on=exp.EQ(this=column(ROW_KEY, "__sdc_s"), expression=column("__sdc_key", "__sdc_m")))
            .where(exp.Not(this=exp.Is(this=column("__sdc_value", "__sdc_m"), expression=exp.Null()))))


# ---------------------------------------------------------------------------------------------
# 'auto'


def auto_step(spec: Spec, rule: Rule, facts: Facts) -> Step | None:
    """The value 'auto' resolves to, per stratum, for a one-column rule with k or c = 'auto'."""
    auto = [p for p in ("k", "c") if is_auto(rule.params.get(p))]
    if not auto or rule.method.kind != COLUMN:
        return None
    param = auto[0]
    strata = spec.strata_of(rule)
    rule_fn = "fd_group_size" if param == "k" else "fd_intervals"
    query = (exp.select(*(column(c) for c in strata), exp.Anonymous(this=rule_fn, expressions=[column(rule.column)]))
             .from_(table(SOURCE))
             .where(exp.Not(this=exp.Is(this=column(rule.column), expression=exp.Null()))))
    if strata:
        query = query.group_by(*(column(c) for c in strata)).order_by(*(column(c) for c in strata))

    def check(rows):
        facts.of(rule).resolved[param] = [(tuple(r[:-1]), int(r[-1])) for r in rows]

    return Step(f"resolving {param} = 'auto' of {rule.column}", query, where=rule.where, check=check)


# ---------------------------------------------------------------------------------------------
# cells


def _cells_name(i: int) -> str:
    return f"__sdc_cells_{i}"


def _field(var: str, name: str) -> exp.Expression:
    return exp.Dot(this=exp.Column(this=ident(var)), expression=ident(name))


def _each(lst: str, name: str) -> exp.Expression:
    """list_transform(lst, x -> x.name)."""
    return exp.Transform(this=exp.Column(this=ident(lst)),
                         expression=exp.Lambda(this=_field("__sdc_x", name), expressions=[ident("__sdc_x")]))


def protect_steps(spec: Spec, rule: Rule, i: int, facts: Facts) -> list[Step]:
    """The rule's cell protection on temporary table i (see spec.CellProtection): the cells of each
    stratum are the sets of records sharing a released value (dense_rank of the value); the
    contributions are the records' original values; the function (dominance_suppress, p_percent_merge,
    ...) is the SQL binding of methods.sensitivity; the table is then replaced by the protected values."""
    cells = rule.cells
    if cells is None:
        return []
    strata = spec.strata_of(rule)
    originals = exp.Array(expressions=[exp.Cast(this=column(c, "__sdc_s"), to=exp.DataType.build("DOUBLE"))
                                       for c in rule.columns])
    joined = _joined(spec, rule, i).select(originals.as_(ident("__sdc_o")))
    rank = exp.Window(this=exp.Anonymous(this="dense_rank"),
                      partition_by=[column(c) for c in strata],
                      order=exp.Order(expressions=[exp.Ordered(this=column("__sdc_v"), nulls_first=False)]))
    labelled = exp.select(exp.Star(), rank.as_(ident("__sdc_c"))).from_(joined.subquery(ident("__sdc_j")))
    record = exp.Struct(expressions=[exp.PropertyEQ(this=ident(n), expression=column(f"__sdc_{n}"))
                                     for n in ("k", "v", "o", "c")])
    listed = exp.ArrayAgg(this=exp.Order(this=record, expressions=[exp.Ordered(this=column("__sdc_k"))]))
    lists = exp.select(*(column(c) for c in strata), listed.as_(ident("__sdc_l"))).from_(
        labelled.subquery(ident("__sdc_r")))
    if strata:
        lists = lists.group_by(*(column(c) for c in strata))
    name = f"{cells.rule}_{cells.action}"
    args = [_each("__sdc_l", "o"), _each("__sdc_l", "c"), *(literal(a) for a in cells.arguments()),
            exp.PropertyEQ(this=exp.to_identifier("absolute"), expression=literal(True))]
    if cells.action != "merge":
        args.append(exp.PropertyEQ(this=exp.to_identifier("cost"), expression=literal(cells.cost)))
    clusters = exp.Anonymous(this="list_max", expressions=[_each("__sdc_l", "c")])
    body = exp.select(exp.Star(), exp.Anonymous(this=name, expressions=args).as_(ident("__sdc_p")),
                      clusters.as_(ident("__sdc_g"))).from_(lists.subquery(ident("__sdc_ls")))
    label = f"protecting the cells of {', '.join(rule.columns)} ({name})"
    steps = [Step(label, temporary(_cells_name(i), body), where=rule.where)]
    if cells.action == "suppress":
        steps.append(_suppression_check(spec, rule, i, facts))
        steps.append(Step(label, temporary(mask_table(i), _suppressed(rule, i), replace=True), where=rule.where))
    elif cells.action == "remove":
        steps.append(_suppression_check(spec, rule, i, facts, removal=True))
        steps.append(Step(label, temporary(mask_table(i), _removed(spec, rule, i), replace=True), where=rule.where))
    else:
        steps.append(_merge_count(spec, rule, i, facts))
        steps.append(Step(label, temporary(mask_table(i), _merged(spec, rule, i), replace=True), where=rule.where))
    return steps


def _suppression_check(spec: Spec, rule: Rule, i: int, facts: Facts, *, removal: bool = False) -> Step:
    """Per stratum: primary, secondary and unprotected cells and the clusters (and the removed
    records). A stratum with a sensitive cell that no pattern can protect is refused (one cluster:
    no other cell can hide it; or a stratum dominated as a whole: even every cell suppressed, its
    total bounds the cell too tightly)."""
    strata = spec.strata_of(rule)
    result = column("__sdc_p")
    names = ("removed_records",) * removal + ("primary_cells", "secondary_cells", "unprotected_cells")
    counts = [exp.StructExtract(this=result.copy(), expression=exp.Literal.string(name)) for name in names]
    query = exp.select(*(column(c) for c in strata), *counts, column("__sdc_g")).from_(table(_cells_name(i)))

    def check(rows):
        f = facts.of(rule)
        for row in rows:
            values, clusters = row[: len(strata)], row[-1]
            found = dict(zip(names, row[len(strata):-1]))
            where = f"{spec.name}: {rule.where}: cells: {_stratum_text(strata, values)}"
            if found["unprotected_cells"] and removal:
                raise SpecError(f"{where}: the records removed from its cells of {', '.join(rule.columns)} cannot be "
                                "protected: their total follows from the stratum's, and no suppression of the other "
                                "cells bounds it loosely enough; use action = \"merge\", or coarser strata")
            if found["unprotected_cells"] and clusters == 1:
                raise SpecError(f"{where} has a single cluster with a sensitive cell: suppressing it cannot hide it "
                                "from the stratum's total; use action = \"merge\", a smaller k, or other strata")
            if found["unprotected_cells"]:
                raise SpecError(f"{where} has {found['unprotected_cells']} sensitive cell(s) of {', '.join(rule.columns)} "
                                "that no suppression can protect: even with every other cell of the attribute "
                                "suppressed, the stratum's total bounds them more tightly than their protection "
                                "levels (the stratum is itself dominated); use action = \"merge\", or coarser strata")
            f.primary_cells += int(found["primary_cells"])
            f.secondary_cells += int(found["secondary_cells"])
            f.removed_records += int(found.get("removed_records", 0))

    return Step(f"checking the suppression of {', '.join(rule.columns)}", query, where=rule.where, check=check)


def _replace_values(i: int, new: exp.Select) -> exp.Select:
    """Table i with the values of `new` (__sdc_k, __sdc_new) where it has one."""
    value = exp.Case(ifs=[exp.If(this=exp.Is(this=column("__sdc_k", "__sdc_p"), expression=exp.Null()),
                                 true=column("__sdc_value", "__sdc_m"))],
                     default=column("__sdc_new", "__sdc_p"))
    return (exp.select(column("__sdc_key", "__sdc_m").as_(ident("__sdc_key")), value.as_(ident("__sdc_value")))
            .from_(exp.Table(this=ident(mask_table(i)), alias=exp.TableAlias(this=ident("__sdc_m"))))
            .join(new.subquery(ident("__sdc_p")), on=exp.EQ(this=column("__sdc_key", "__sdc_m"),
                                                             expression=column("__sdc_k", "__sdc_p")), join_type="LEFT"))


def _suppressed(rule: Rule, i: int) -> exp.Select:
    """Each record's value with the components of its suppressed cells NULL."""
    release = exp.StructExtract(this=column("__sdc_p"), expression=exp.Literal.string("release"))
    pairs = exp.select(exp.Explode(this=exp.Column(this=ident("__sdc_l"))).as_(ident("__sdc_e")),
                       exp.Explode(this=release).as_(ident("__sdc_r"))).from_(table(_cells_name(i)))
    old = _field("__sdc_e", "v")

    def kept(component: exp.Expression, j: exp.Expression) -> exp.Expression:
        cell = exp.Bracket(this=column("__sdc_r"), expressions=[j], offset=1)
        return exp.Case(ifs=[exp.If(this=exp.Is(this=cell, expression=exp.Null()), true=exp.Null())], default=component)

    if rule.method.kind == COLUMN:
        new = kept(old, exp.Literal.number(1))
    else:
        x, j = ident("__sdc_y"), ident("__sdc_i")
        new = exp.Transform(this=old, expression=exp.Lambda(this=kept(exp.Column(this=x.copy()), exp.Column(this=j.copy())),
                                                            expressions=[x, j]))
    body = exp.select(_field("__sdc_e", "k").as_(ident("__sdc_k")), new.as_(ident("__sdc_new"))).from_(
        pairs.subquery(ident("__sdc_u")))
    return _replace_values(i, body)


def _removed(spec: Spec, rule: Rule, i: int) -> exp.Select:
    """Each record's value after removal: NULL for a removed record; the new cluster's centroid (NULL
    where its cell is suppressed) where its cluster changed (lost records or was merged); else the
    method's value, NULL where its cell is suppressed."""
    strata = spec.strata_of(rule)
    result = column("__sdc_p")
    field = lambda name: exp.StructExtract(this=result.copy(), expression=exp.Literal.string(name))  # noqa: E731
    pairs = exp.select(*(column(c) for c in strata),
                       exp.Explode(this=exp.Column(this=ident("__sdc_l"))).as_(ident("__sdc_e")),
                       exp.Explode(this=field("release")).as_(ident("__sdc_r")),
                       exp.Explode(this=field("clusters")).as_(ident("__sdc_n"))).from_(table(_cells_name(i)))

    def over(fn: exp.Expression, *by: exp.Expression) -> exp.Window:
        return exp.Window(this=fn, partition_by=[column(c) for c in strata] + list(by))

    cluster = _field("__sdc_e", "c")
    same = exp.and_(
        exp.EQ(this=over(exp.Min(this=cluster.copy()), column("__sdc_n")),
               expression=over(exp.Max(this=cluster.copy()), column("__sdc_n"))),
        exp.EQ(this=over(exp.Count(this=exp.Star()), column("__sdc_n")),
               expression=over(exp.Count(this=exp.Star()), cluster.copy())))
    centroid = column("__sdc_r")
    old = _field("__sdc_e", "v")

    def kept(component: exp.Expression, j: exp.Expression) -> exp.Expression:
        cell = exp.Bracket(this=column("__sdc_r"), expressions=[j], offset=1)
        return exp.Case(ifs=[exp.If(this=exp.Is(this=cell, expression=exp.Null()), true=exp.Null())], default=component)

    if rule.method.kind == COLUMN:
        centroid = exp.Bracket(this=centroid, expressions=[exp.Literal.number(1)], offset=1)
        unchanged = kept(old, exp.Literal.number(1))
    else:
        x, j = ident("__sdc_y"), ident("__sdc_i")
        unchanged = exp.Transform(this=old, expression=exp.Lambda(
            this=kept(exp.Column(this=x.copy()), exp.Column(this=j.copy())), expressions=[x, j]))
    new = exp.Case(ifs=[exp.If(this=exp.Is(this=column("__sdc_n"), expression=exp.Null()), true=exp.Null()),
                        exp.If(this=same, true=unchanged)], default=centroid)
    body = exp.select(_field("__sdc_e", "k").as_(ident("__sdc_k")), new.as_(ident("__sdc_new"))).from_(
        pairs.subquery(ident("__sdc_u")))
    return _replace_values(i, body)


def _merge_count(spec: Spec, rule: Rule, i: int, facts: Facts) -> Step:
    """How many clusters merging removed (clusters before minus after), for the manifest."""
    distinct = exp.Anonymous(this="len", expressions=[exp.Anonymous(this="list_distinct", expressions=[column("__sdc_p")])])
    query = exp.select(exp.func("coalesce", exp.Sum(this=exp.Sub(this=column("__sdc_g"), expression=distinct)),
                                literal(0))).from_(table(_cells_name(i)))

    def check(rows):
        facts.of(rule).merged_clusters = int(rows[0][0])

    return Step(f"counting the merged clusters of {', '.join(rule.columns)}", query, where=rule.where, check=check)


def _merged(spec: Spec, rule: Rule, i: int) -> exp.Select:
    """Each record's value, or the mean of its merged cluster's original values where merging put
    records of more than one cluster together."""
    strata = spec.strata_of(rule)
    pairs = exp.select(*(column(c) for c in strata),
                       exp.Explode(this=exp.Column(this=ident("__sdc_l"))).as_(ident("__sdc_e")),
                       exp.Explode(this=column("__sdc_p")).as_(ident("__sdc_n"))).from_(table(_cells_name(i)))
    partition = [column(c) for c in strata] + [column("__sdc_n")]

    def over(fn: exp.Expression) -> exp.Window:
        return exp.Window(this=fn, partition_by=[p.copy() for p in partition])

    cluster = _field("__sdc_e", "c")
    means = [over(exp.Avg(this=exp.Bracket(this=_field("__sdc_e", "o"), expressions=[exp.Literal.number(j)],
                                           offset=1)))
             for j in range(1, len(rule.columns) + 1)]
    mean = means[0] if rule.method.kind == COLUMN else exp.Array(expressions=means)
    merged = exp.NEQ(this=over(exp.Min(this=cluster.copy())), expression=over(exp.Max(this=cluster.copy())))
    new = exp.Case(ifs=[exp.If(this=merged, true=mean)], default=_field("__sdc_e", "v"))
    body = exp.select(_field("__sdc_e", "k").as_(ident("__sdc_k")), new.as_(ident("__sdc_new"))).from_(
        pairs.subquery(ident("__sdc_u")))
    return _replace_values(i, body)


# ---------------------------------------------------------------------------------------------
# sets of attraction


def smallest_set_step(spec: Spec, rule: Rule, i: int, facts: Facts) -> Step | None:
    """The smallest set of records of a stratum sharing a released value of a deterministic rule;
    below MIN_SET the release is refused. None for DP rules (noise, not the group, protects) and for
    methods whose stated guarantee is none (noise addition, rank swapping: no group to measure)."""
    if rule.method.is_dp or rule.method.guarantee.model == guarantees.NONE:
        return None
    strata = spec.strata_of(rule)
    value = column(BOX_ID, "__sdc_m") if rule.method.kind == BOXES else None
    size = exp.Count(this=exp.Star())
    query = (exp.select(*(column(c) for c in strata), size.as_(ident("__sdc_n")))
             .from_(_joined(spec, rule, i, value).subquery(ident("__sdc_j")))
             .group_by(*(column(c) for c in strata), column("__sdc_v"))
             .order_by(column("__sdc_n"), *(column(c) for c in strata)).limit(1))

    def check(rows):
        if not rows:
            return
        *values, n = rows[0]
        if n < MIN_SET:
            what = "box" if rule.method.kind == BOXES else "released value"
            raise SpecError(f"{spec.name}: {rule.where}: {rule.method.name}: {_stratum_text(strata, values)} has a "
                            f"{what} of {', '.join(rule.columns)} shared by {n} record: a set of attraction below "
                            f"{MIN_SET} releases that record alone; use fewer intervals (c), a larger k, or "
                            "a microaggregation method")
        facts.of(rule).smallest_set = int(n)

    return Step(f"checking the sets of attraction of {', '.join(rule.columns)}", query, where=rule.where, check=check)


# ---------------------------------------------------------------------------------------------
# unlinked DP-UM centroids


CLUSTER, SIZE = "cluster", "records"


def _clusters(spec: Spec, rule: Rule, i: int) -> exp.Select:
    """Records of rule i with their DP-UM cluster (1.. in rank order within the stratum, the last one
    taking the remainder, as methods.dp clusters them: by clamped value, ties in row-key order)."""
    strata = spec.strata_of(rule)
    k, lb, ub = rule.params["k"], rule.params["lb"], rule.params["ub"]
    clamped = exp.Greatest(this=literal(float(lb)), expressions=[
        exp.Least(this=literal(float(ub)), expressions=[exp.Cast(this=column(rule.column, "__sdc_s"),
                                                                 to=exp.DataType.build("DOUBLE"))])])
    part = [column(c, "__sdc_s") for c in strata]
    rank = exp.Window(this=exp.RowNumber(), partition_by=[p.copy() for p in part],
                      order=exp.Order(expressions=[exp.Ordered(this=clamped), exp.Ordered(this=column(ROW_KEY, "__sdc_s"))]))
    count = exp.Window(this=exp.Count(this=exp.Star()), partition_by=[p.copy() for p in part])
    k_lit = literal(int(k))
    t = exp.Add(this=exp.Least(this=exp.IntDiv(this=exp.Paren(this=exp.Sub(this=rank, expression=literal(1))),
                                               expression=k_lit),
                               expressions=[exp.Sub(this=exp.IntDiv(this=count, expression=k_lit.copy()),
                                                    expression=literal(1))]),
                expression=literal(1))
    return _joined(spec, rule, i).select(t.as_(ident("__sdc_t")))


def centroids_steps(spec: Spec, rule: Rule, i: int) -> list[Step]:
    """The table centroids_table: (strata..., cluster, records, <column>) with one row per DP-UM
    cluster, its size and its noisy mean, in the order (strata, cluster); written inside the release
    transaction. First checked: every cluster's records got one value (as methods.dp_um_centroids
    computes the same clusters)."""
    strata = spec.strata_of(rule)
    clash = {CLUSTER, SIZE, rule.column.lower()} & {c.lower() for c in strata}
    if clash:
        raise SpecError(f"{spec.name}: {rule.where}.centroids_table: a stratum column is named {clash.pop()!r}, "
                        "a column of the centroids table")
    groups = [column(c) for c in strata] + [column("__sdc_t")]
    clusters = _clusters(spec, rule, i).subquery(ident("__sdc_c"))
    check_query = exp.select(exp.Count(this=exp.Star())).from_(
        exp.select(literal(1)).from_(clusters.copy()).group_by(*(g.copy() for g in groups))
        .having(exp.NEQ(this=exp.Min(this=column("__sdc_v")), expression=exp.Max(this=column("__sdc_v"))))
        .subquery(ident("__sdc_bad")))

    def check(rows):
        if rows[0][0]:
            raise SpecError(f"{spec.name}: {rule.where}.centroids_table: {rows[0][0]} cluster(s) of dp_um got more "
                            "than one value; the clusters cannot be told apart, nothing is released")

    body = (exp.select(*(column(c) for c in strata), column("__sdc_t").as_(ident(CLUSTER)),
                       exp.Count(this=exp.Star()).as_(ident(SIZE)), exp.Min(this=column("__sdc_v")).as_(ident(rule.column)))
            .from_(clusters).group_by(*(g.copy() for g in groups)).order_by(*(g.copy() for g in groups)))
    create = exp.Create(this=table(rule.centroids_table, "main", RELEASE_DB), kind="TABLE", expression=body)
    return [Step(f"checking the clusters of {rule.column}", check_query, where=rule.where, check=check),
            Step(f"writing table {rule.centroids_table}", create, where=rule.where)]
