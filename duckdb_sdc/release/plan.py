"""From a checked spec and the source's columns to the release script, as sqlglot expressions.

Every name from the spec or the source reaches SQL only as a quoted sqlglot identifier and every
value only as a sqlglot literal; nothing is formatted into SQL text. The script:

1. attaches the source read-only and reads it through a temporary view `__sdc_source_raw` (CSV files
   are read once into a temporary table instead), and keys it: the view `__sdc_source` is the source
   with a row key ROW_KEY, the spec's key or, for a spec without one, a surrogate (see `keyed_step`);
2. counts rows, non-NULL and distinct keys (a declared key must be unique and non-NULL);
3. masks each masked column in its own statement (a progress step) into a temporary table of
   (row key, masked value): one list of {key, value} structs per stratum, ordered by the row key
   (ties are then broken alike in every run), the method's list function on the values, and both
   unnested side by side, so keys and masked values stay aligned; a box method's table holds each
   record's box (bounds) and a box id unique in the release (see `mask_step`); then the safeguards of
   `safeguards.py` (cell protection, the smallest set of records sharing a released value, the
   parameters 'auto' resolved);
4. joins the would-be release into a temporary table with the row key and each row's position, a
   secret random permutation (`released_step`); the policy gate (`policy.py`) measures it there;
5. attaches a new file and, in one transaction, writes the release table (the source's columns in
   their order, masked values joined on the row key, rows in the order of the secret permutation,
   never the source's or the key's; a boxed column as its two bounds, and a box rule's id after its
   last column), the unlinked DP-UM centroid tables, the manifest (one row per released column, and
   one per dropped column) and the view without the key; then detaches it (the caller renames the
   file into place), and writes the private linkage file when the spec asks for one.

The source's column names and types come from `DESCRIBE`; `resolve` checks them against the rules.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
import sqlglot
from sqlglot import exp

from .._frames import FRAME_VIEW, describe_frame
from .._validate import error_message
from .methods import BOXES, COLUMN, NAMES, SECRET_PARAMS
from .spec import (MANIFEST_TABLE, Rule, Spec, SpecError, bound_columns, check_bound, is_numeric, type_class,
                   weight_of, weighted_function)

SOURCE_DB = "__sdc_source_db"
RAW = "__sdc_source_raw"  # the source as read
SOURCE = "__sdc_source"  # the source with its row key ROW_KEY
ROW_KEY = "__sdc_rid"
RELEASED = "__sdc_released"  # the would-be release: ROW_KEY, POSITION and the released columns
POSITION = "__sdc_pos"
RELEASE_DB = "__sdc_release"
LINKAGE_DB = "__sdc_linkage"
LINKAGE_TABLE = "release_linkage"
MEMORY_DB = "memory"
DIALECT = "duckdb"
SALT_PLACEHOLDER = "<a secret salt drawn for each release>"  # what a dry run prints


def ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def column(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def table(name: str, db: str | None = None, catalog: str | None = None) -> exp.Table:
    return exp.Table(this=ident(name), db=ident(db) if db else None, catalog=ident(catalog) if catalog else None)


def literal(value) -> exp.Expression:
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE"))
    if isinstance(value, dict):  # a MAP of texts (a recoding's mapping)
        return exp.VarMap(keys=exp.Array(expressions=[literal(k) for k in value]),
                          values=exp.Array(expressions=[literal(v) for v in value.values()]))
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        return exp.Literal.number(repr(value) if isinstance(value, float) else str(value))
    if isinstance(value, (list, tuple)):
        return exp.Array(expressions=[literal(v) for v in value])
    return exp.Literal.string(str(value))


def temporary(name: str, query: exp.Expression, kind: str = "TABLE", replace: bool = False) -> exp.Create:
    return exp.Create(this=table(name), kind=kind, expression=query, replace=replace,
                      properties=exp.Properties(expressions=[exp.TemporaryProperty()]))


@dataclass
class Step:
    label: str  # what a progress bar shows
    sql: exp.Expression | Callable[[], exp.Expression] | None  # a callable: built when the step runs
    where: str | None = None  # the spec's rule a failure comes from ('columns.income', 'groups[0]')
    check: Callable[[list[tuple]], None] | None = None  # inspects the statement's rows
    strata: tuple[str, ...] | None = None  # a masking step: the columns whose groups it masks apart
    action: Callable | None = None  # instead of SQL: action(con), run in Python (the policy gate)
    comment: str | None = None  # what a dry run prints for an action

    def expression(self) -> exp.Expression:
        return self.sql() if callable(self.sql) else self.sql


@dataclass
class Plan:
    spec: Spec
    source_columns: list[tuple[str, str]]  # (name, type) in the source's order
    attach_path: Path  # the file the script writes (renamed to the output path afterwards)
    setup: list[Step] = field(default_factory=list)  # run while planning (reads only)
    steps: list[Step] = field(default_factory=list)
    linkage_path: Path | None = None  # the linkage file the script writes (renamed afterwards)
    facts: object = None  # safeguards.Facts: what the steps measured, once they have run

    def statements(self) -> list[exp.Expression]:
        return [s.expression() for s in self.setup + self.steps if s.action is None]

    def sql(self) -> str:
        head = (f"-- duckdb-sdc release of {self.spec.name}: the file is written as {self.attach_path}\n"
                f"-- and renamed to {self.spec.output.database} when every statement has succeeded\n")
        out = []
        for step in self.setup + self.steps:
            if step.action is not None:
                out.append(f"-- {step.comment}\n")
            else:
                out.append(step.expression().sql(dialect=DIALECT, pretty=True) + ";\n")
        return head + "\n".join(out)


def source_step(spec: Spec, raw: str) -> Step:
    """The plan's step that reads the frame: copied once into the temporary table `raw`."""
    copy = temporary(raw, exp.select(exp.Star()).from_(table(FRAME_VIEW)))

    def action(con):
        check_bound(spec)
        try:
            con.register(FRAME_VIEW, spec.source.data)
            try:
                con.execute(copy.sql(dialect=DIALECT)).fetchall()
            finally:
                con.unregister(FRAME_VIEW)
        except duckdb.Error as e:
            raise SpecError(f"{spec.name}: source.frame: cannot read the {describe_frame(spec.source)}: "
                            f"{error_message(e)}") from None

    return Step("reading the data frame", None, action=action,
                comment=f"the {describe_frame(spec.source)} is copied once into the temporary table {raw} "
                        f"({copy.sql(dialect=DIALECT)}, with the frame registered as {FRAME_VIEW})")


def source_steps(spec: Spec, files: tuple[str, ...] | None = None) -> list[Step]:
    """Read the source as the temporary relation RAW. `files`: the source's files as its patterns
    matched when the release started (`source.Snapshot`), read instead of the patterns, so that a file
    added to the folder meanwhile is not read."""
    src = spec.source
    if src.frame is not None:  # copied once into a temporary table (duckdb_sdc.frames)
        return [source_step(spec, RAW)]
    body = exp.select(exp.Star()).from_(source_relation(spec, files))
    if src.database is not None:
        return [Step("attaching the source", source_attach(spec)), Step("reading the source", temporary(RAW, body, "VIEW"))]
    # CSV is parsed once into a temporary table; Parquet is read column by column where needed
    return [Step("reading the source", temporary(RAW, body, "VIEW" if src.format == "parquet" else "TABLE"))]


def source_attach(spec: Spec) -> exp.Attach:
    """ATTACH of a DuckDB source's file, read-only, as SOURCE_DB."""
    return exp.Attach(this=exp.Alias(this=literal(str(spec.source.database)), alias=ident(SOURCE_DB)),
                      expressions=[exp.AttachOption(this=exp.Var(this="READ_ONLY"))])


def source_relation(spec: Spec, files: tuple[str, ...] | None = None) -> exp.Table:
    """What RAW reads (`source_steps`): the reader of the source's files (`files`, else its patterns), or
    its table in SOURCE_DB (`source_attach`)."""
    src = spec.source
    if src.database is not None:
        return table(src.table, src.schema, SOURCE_DB)
    files = literal(list(src.files if files is None else files))
    return exp.Table(this=exp.ReadParquet(expressions=[files]) if src.format == "parquet" else exp.ReadCSV(this=files))


def keyed_step(spec: Spec, source_columns: list[tuple[str, str]]) -> Step:
    """The view SOURCE: every source column and the row key ROW_KEY. With source.key, the key itself.
    Without, a surrogate: the record's rank when the records are sorted by all their columns, in the
    source's order (NULLs last). It is deterministic: the same source gives the same surrogates
    whatever the physical order, records that tie in every column are interchangeable (they get the
    same released values), and it is never released (a linkage file, when asked for, holds it)."""
    if spec.source.key is not None:
        key = column(spec.source.key)
    else:
        order = exp.Order(expressions=[exp.Ordered(this=column(n), nulls_first=False) for n, _ in source_columns])
        key = exp.Window(this=exp.RowNumber(), order=order)
    body = exp.select(exp.Star(), key.as_(ident(ROW_KEY))).from_(table(RAW))
    return Step("keying the source", temporary(SOURCE, body, "VIEW", replace=True))


def resolve(spec: Spec, source_columns: list[tuple[str, str]]) -> None:
    """Check the rules against the source: every column declared (privacy by default), every rule
    for an existing column, key and strata present, masked columns numeric, released column names
    distinct (a box's bound and id columns are new names)."""
    names = [n for n, _ in source_columns]
    types = dict(source_columns)
    undeclared = [n for n in names if n not in spec.rules]
    unknown = [n for n in spec.rules if n not in types]
    problems = []
    if undeclared:
        problems.append(f"source column{'s' if len(undeclared) > 1 else ''} without a rule in [columns] "
                        f"(declare each as \"keep\", \"drop\" or a masking method): {', '.join(map(repr, undeclared))}")
    if unknown:
        hints = []
        for n in unknown:
            near = [m for m in names if m.lower() == n.lower()]
            hints.append(f"{n!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        problems.append(f"[columns] names column{'s' if len(unknown) > 1 else ''} the source does not have: "
                        f"{', '.join(hints)}")
    if problems:
        raise SpecError(f"{spec.name}: " + "; ".join(problems))
    if spec.source.key is not None and spec.source.key not in types:
        raise SpecError(f"{spec.name}: source.key: the source has no column {spec.source.key!r}")
    weight = spec.source.weight
    if weight is not None and (weight not in types or not is_numeric(types[weight])):
        raise SpecError(f"{spec.name}: source.weight: " + (f"the source has no column {weight!r}" if weight not in types
                        else f"the sampling weights must be numbers, column {weight!r} is {types[weight]}"))
    for rule in spec.masked():
        for s in spec.strata_of(rule):
            if s not in types:
                raise SpecError(f"{spec.name}: {rule.where}: stratum column {s!r} is not in the source")
        for col in rule.columns:
            if not is_numeric(types[col]):
                raise SpecError(f"{spec.name}: {rule.where}: {rule.method.name} masks numbers, "
                                f"column {col!r} is {types[col]}")
    for col, rule in spec.rules.items():
        if rule.recoding is not None and type_class(types[col]) not in rule.recoding.accepts:
            accepted = " or ".join(t for t in ("numbers", "text", "dates") if t in rule.recoding.accepts)
            raise SpecError(f"{spec.name}: {rule.where}: {rule.recoding.name} recodes {accepted}, "
                            f"column {col!r} is {types[col]}")
    seen: dict[str, ReleasedColumn] = {}
    for col in released_columns(spec, source_columns):
        other = seen.setdefault(col.name.lower(), col)  # DuckDB's names ignore case
        if other is not col:
            box = next((c for c in (col, other) if c.role == BOX), None)
            raise SpecError(f"{spec.name}: {col.describe()}: the release table would have two columns named "
                            f"{col.name!r} (the other from {other.describe()}); drop or rename a source column"
                            + (f", or set {box.rule.where}.box_column" if box is not None else ""))
    centroids = [r.centroids_table for r in spec.masked() if r.centroids_table is not None]
    taken = {spec.output.table.lower(), MANIFEST_TABLE, (spec.output.view_without_key or "").lower()}
    for name in centroids:
        if name.lower() in taken:
            raise SpecError(f"{spec.name}: centroids_table {name!r} is taken by another relation of the release")
        taken.add(name.lower())


def key_step(spec: Spec, facts=None) -> Step:
    """The check of a declared key (unique and non-NULL); without one (a surrogate key), the count of
    records that repeat another record in every column, recorded in `facts.duplicates` (they are
    released as separate, indistinguishable records; the release says how many)."""
    if spec.source.key is None:
        def record(rows):
            if facts is not None:
                facts.duplicates = int(rows[0][0])

        return Step("counting the records", _duplicates_query(), check=record)
    key = column(spec.source.key)
    query = exp.select(
        exp.Count(this=exp.Star()).as_("rows"),
        exp.Count(this=key.copy()).as_("keys"),
        exp.Count(this=exp.Distinct(expressions=[key.copy()])).as_("distinct_keys"),
    ).from_(table(SOURCE))

    def check(rows):
        n, non_null, distinct = rows[0]
        if non_null != n or distinct != non_null:
            raise SpecError(f"{spec.name}: source.key: {spec.source.key!r} must be unique and non-NULL; "
                            f"it has {n - non_null} NULL and {non_null - distinct} repeated values")

    return Step("checking the key", query, check=check)


def _duplicates_query() -> exp.Expression:
    """The number of records of RAW equal in every column to another record (NULLs equal)."""
    n = ident("__sdc_n")
    groups = (exp.select(exp.Star(), exp.Count(this=exp.Star()).as_(n)).from_(table(RAW))
              .group_by(exp.Var(this="ALL")))
    repeated = exp.Filter(this=exp.Sum(this=exp.Column(this=n.copy())),
                          expression=exp.Where(this=exp.GT(this=exp.Column(this=n.copy()), expression=literal(1))))
    return exp.select(exp.func("coalesce", repeated, literal(0))).from_(groups.subquery(ident("__sdc_d")))


STRATUM_INDEX = "__sdc_i"


def _seed(rule: Rule, seed) -> exp.Expression:
    """The seed a list call gets in stratum __sdc_i: __sdc_stratum_seed, i.e. duckdb_sdc.params.
    stratum_seed(seed, column, stratum) computed in Python (see duckdb_sdc.masking), the one the table
    forms use, so that columns given the same seed, and the strata of one column, draw independent
    streams that repeat exactly, and a table form with the same seed gives the same noise. The
    column of a group of columns is its first column. The UDF checks the seed (an error names the
    method)."""
    return exp.Anonymous(this="__sdc_stratum_seed", expressions=[
        literal(rule.method.name), exp.Cast(this=literal(seed), to=exp.DataType.build("VARCHAR")),
        literal(rule.column), exp.Column(this=ident(STRATUM_INDEX))])


def _call(rule: Rule, values: exp.Expression, weights: exp.Expression | None = None) -> exp.Expression:
    """The list function with the rule's parameters: required ones by position, the others by name
    (macros take defaults only by name). With `weights` (the stratum's sampling weights, aligned with
    the values), the method's weighted function `<method>_weighted(values, weights, ...)`."""
    args = [values] if weights is None else [values, weights]
    for p in rule.method.params:
        if p.name == NAMES:  # the rule's columns, so that other parameters can name them
            value = literal(list(rule.columns))
        elif p.name not in rule.params:
            continue
        else:
            given = rule.params[p.name]
            value = _seed(rule, given) if p.name in SECRET_PARAMS and given is not None else literal(given)
        args.append(value if p.default is None else exp.PropertyEQ(this=exp.to_identifier(p.name), expression=value))
    return exp.Anonymous(this=rule.method.name if weights is None else weighted_function(rule), expressions=args)


def _field(lst: exp.Identifier, s: exp.Identifier, name: str) -> exp.Expression:
    """transform(lst, s -> s.name): one field of the stratum's list of structs."""
    return exp.Transform(this=exp.Column(this=lst.copy()),
                         expression=exp.Lambda(this=exp.Dot(this=s.copy(), expression=ident(name)),
                                               expressions=[s.copy()]))


def mask_table(i: int) -> str:
    return f"__sdc_mask_{i}"


BOX_ID = "__sdc_box"


def _stratum(j: int) -> exp.Identifier:
    return ident(f"__sdc_s{j}")


def mask_step(spec: Spec, rule: Rule, i: int) -> Step:
    """One masking rule into temporary table i: (__sdc_key, __sdc_value), where the value is the
    masked number, or for a group the masked vector of its columns in the group's order.

    A box rule's value is the record's box, {box, lower[], upper[]}, and the table has a third
    column BOX_ID: the box ids of the method are numbered within each stratum, so they are renumbered
    1..G over the release, dense_rank() in the order (strata values, box id within the stratum).
    Records without a box (a NULL attribute) are left out of the table (the release's LEFT JOIN gives
    them NULL bounds and id), so the numbering has no gaps."""
    lst, s = ident("__sdc_l"), ident("__sdc_s")
    if rule.method.kind != COLUMN:
        value = exp.Array(expressions=[exp.Cast(this=column(c), to=exp.DataType.build("DOUBLE"))
                                       for c in rule.columns])
    else:
        value = column(rule.column)
    pairs = exp.Struct(expressions=[
        exp.PropertyEQ(this=ident("k"), expression=column(ROW_KEY)),
        exp.PropertyEQ(this=ident("v"), expression=value),
    ])
    weight = weight_of(spec, rule)
    if weight is not None:  # the record's sampling weight beside its value (the UDF checks it)
        pairs.append("expressions", exp.PropertyEQ(
            this=ident("w"), expression=exp.Cast(this=column(weight), to=exp.DataType.build("DOUBLE"))))
    # ordered by the key, so that ties are broken the same way in every run: a release is reproducible
    ordered = exp.Order(this=pairs, expressions=[exp.Ordered(this=column(ROW_KEY), nulls_first=False)])
    grouped = exp.select(exp.ArrayAgg(this=ordered).as_(lst)).from_(table(SOURCE))
    strata = spec.strata_of(rule)
    boxes = rule.method.kind == BOXES
    if strata:
        # the stratum's number: its position from 0 in the ascending order of the strata values
        order = exp.Order(expressions=[exp.Ordered(this=column(c), nulls_first=False) for c in strata])
        number = exp.Sub(this=exp.Window(this=exp.Anonymous(this="row_number"), order=order),
                         expression=exp.Literal.number(1))
        grouped = grouped.select(number.as_(ident(STRATUM_INDEX)))
        if boxes:  # the stratum's values, which order the box ids
            grouped = grouped.select(*(column(c).as_(_stratum(j)) for j, c in enumerate(strata, start=1)))
        grouped = grouped.group_by(*(column(c) for c in strata))
    else:
        grouped = grouped.select(exp.Literal.number(0).as_(ident(STRATUM_INDEX)))
    values = exp.Transform(this=exp.Column(this=lst.copy()),
                           expression=exp.Lambda(this=exp.Dot(this=s.copy(), expression=ident("v")),
                                                 expressions=[s.copy()]))
    query = exp.select(
        exp.Dot(this=exp.Explode(this=exp.Column(this=lst.copy())), expression=ident("k")).as_(ident("__sdc_key")),
        exp.Explode(this=_call(rule, values, None if weight is None else _field(lst, s, "w"))).as_(ident("__sdc_value")),
    ).from_(grouped.subquery(ident("__sdc_g")))
    if boxes:
        query = _box_ids(query, len(strata))
    create = exp.Create(this=table(mask_table(i)), kind="TABLE", expression=query,
                        properties=exp.Properties(expressions=[exp.TemporaryProperty()]))
    return Step(f"masking {', '.join(rule.columns)} ({rule.method.name})", create, where=rule.where,
                strata=strata)


def _box_ids(query: exp.Select, n_strata: int) -> exp.Select:
    """(__sdc_key, __sdc_value, BOX_ID) of the records with a box (see `mask_step`), from the
    unnested boxes `query` of the per-stratum lists, which carry the stratum values __sdc_s1.. ."""
    query = query.select(*(exp.Column(this=_stratum(j)) for j in range(1, n_strata + 1)))
    box = exp.StructExtract(this=column("__sdc_value"), expression=exp.Literal.string("box"))
    order = exp.Order(expressions=[exp.Ordered(this=exp.Column(this=_stratum(j)), nulls_first=False)
                                   for j in range(1, n_strata + 1)] + [exp.Ordered(this=box, nulls_first=False)])
    rank = exp.Window(this=exp.Anonymous(this="dense_rank"), order=order)
    return (exp.select(column("__sdc_key"), column("__sdc_value"), rank.as_(ident(BOX_ID)))
            .from_(query.subquery(ident("__sdc_u")))
            .where(exp.Not(this=exp.Is(this=column("__sdc_value"), expression=exp.Null()))))


def mask_steps(spec: Spec) -> list[Step]:
    """One step per masking rule, into the temporary tables `mask_table(1..)`."""
    return [mask_step(spec, rule, i) for i, rule in enumerate(spec.masked(), start=1)]



VALUE, LOWER, UPPER, BOX = "value", "lower", "upper", "box"  # what a released column holds


@dataclass(frozen=True)
class ReleasedColumn:
    """A column of the release table."""
    name: str
    type: str
    source: str | None  # the source column it comes from; None for a box id
    role: str  # VALUE (kept or masked values), LOWER / UPPER (a boxed column's bounds), BOX (box id)
    rule: Rule

    def describe(self) -> str:
        """Where it is declared, for messages."""
        return self.rule.where or f"columns.{self.source}"


def layout(spec: Spec, source_columns: list[tuple[str, str]]) -> list[tuple[str, str, list[ReleasedColumn]]]:
    """(source column, its type, the released columns it gives), in the source's order: none for a
    dropped column or one released in a centroids table, its bounds for a boxed one, and a box rule's
    id column after the bounds of the rule's last column in the source's order."""
    last = {id(spec.rules[n]): n for n, _ in source_columns if spec.rules[n].boxed}
    out = []
    for name, type_ in source_columns:
        rule = spec.rules[name]
        cols = []
        if rule.action in ("keep", "recode"):
            cols.append(ReleasedColumn(name, spec.released_type(name, type_), name, VALUE, rule))
        elif rule.action == "mask" and rule.boxed:
            lower, upper = bound_columns(name)
            cols += [ReleasedColumn(lower, "DOUBLE", name, LOWER, rule), ReleasedColumn(upper, "DOUBLE", name, UPPER, rule)]
            if last[id(rule)] == name:
                cols.append(ReleasedColumn(rule.box_column, "BIGINT", None, BOX, rule))
        elif rule.action == "mask" and rule.in_table:
            cols.append(ReleasedColumn(name, "DOUBLE", name, VALUE, rule))
        out.append((name, type_, cols))
    return out


def released_columns(spec: Spec, source_columns: list[tuple[str, str]]) -> list[ReleasedColumn]:
    """The release table's columns, in order (see `layout`)."""
    return [c for _, _, cols in layout(spec, source_columns) for c in cols]


def released_query(spec: Spec, source_columns) -> exp.Select:
    """The release table's rows with their row key: ROW_KEY, then the source's released columns,
    masked values (or a box's bounds and id) joined on the row key from the temporary tables of
    `mask_step`, rounded to the rule's decimals where it has some. In no particular order."""
    src = "__sdc_src"
    rules = spec.masked()
    table_of = {id(rule): f"__sdc_m{i}" for i, rule in enumerate(rules, start=1)}
    select = [column(ROW_KEY, src).as_(ident(ROW_KEY))]
    for col in released_columns(spec, source_columns):
        if col.role == VALUE and col.rule.action == "recode":
            select.append(recoded(col.rule, column(col.source, src), col.type).as_(ident(col.name)))
            continue
        if col.role == VALUE and col.rule.action != "mask":
            select.append(column(col.name, src).as_(ident(col.name)))
            continue
        alias = table_of[id(col.rule)]
        if col.role == BOX:
            select.append(column(BOX_ID, alias).as_(ident(col.name)))
            continue
        value = column("__sdc_value", alias)
        if col.role != VALUE:
            value = exp.StructExtract(this=value, expression=exp.Literal.string(col.role))
        if col.role != VALUE or col.rule.group:
            # sqlglot counts from 0 and writes DuckDB's 1-based index: this is value[j]
            j = col.rule.columns.index(col.source)
            value = exp.Bracket(this=value, expressions=[exp.Literal.number(j)])
        decimals = spec.decimals_of(col.rule)
        if decimals is not None and col.role == VALUE:
            value = exp.Round(this=value, decimals=literal(decimals))
        select.append(value.as_(ident(col.name)))
    query = exp.select(*select).from_(exp.Table(this=ident(SOURCE), alias=exp.TableAlias(this=ident(src))))
    for i in range(1, len(rules) + 1):
        alias = f"__sdc_m{i}"
        on = exp.EQ(this=column(ROW_KEY, src), expression=column("__sdc_key", alias))
        query = query.join(exp.Table(this=ident(mask_table(i)), alias=exp.TableAlias(this=ident(alias))),
                           on=on, join_type="LEFT")
    return query


def recoded(rule: Rule, value: exp.Expression, released_type: str) -> exp.Expression:
    """The SQL of a recoded column: its recoding's SQL function on the source column, the required
    parameters by position and the given optional ones by name, every value a literal, cast to the
    released type (NULL stays NULL: every recoding returns NULL for NULL)."""
    recoding = rule.recoding
    args = [value]
    for p in recoding.params:
        if p.default is None:
            args.append(literal(rule.params[p.name]))
        elif p.name in rule.params:
            args.append(exp.Kwarg(this=exp.var(p.name), expression=literal(rule.params[p.name])))
    call = exp.Anonymous(this=recoding.name, expressions=args)
    return exp.Cast(this=call, to=exp.DataType.build(released_type, dialect=DIALECT))


def released_step(spec: Spec, source_columns, salt: str | None) -> Step:
    """The would-be release as the temporary table RELEASED: `released_query` and each row's POSITION
    in the file, 1..n in the order of md5(salt || row key): a permutation that a secret salt (128
    random bits, drawn for each release and never written) makes unrelated to the source's order and
    to the key. (DuckDB's hash() is not used: it mixes its arguments by xor and multiplication, which
    a few known (record, position) pairs could undo.)"""
    salted = exp.DPipe(this=literal(SALT_PLACEHOLDER if salt is None else salt),
                       expression=exp.Cast(this=column(ROW_KEY), to=exp.DataType.build("VARCHAR")))
    order = exp.Order(expressions=[exp.Ordered(this=exp.Anonymous(this="md5_number", expressions=[salted]))])
    body = exp.select(exp.Star(), exp.Window(this=exp.RowNumber(), order=order).as_(ident(POSITION))).from_(
        released_query(spec, source_columns).subquery(ident("__sdc_q")))
    return Step("joining the release", temporary(RELEASED, body))


def release_table_step(spec: Spec, source_columns) -> Step:
    """The release table in the file: the released columns of RELEASED in the order of POSITION."""
    names = [c.name for c in released_columns(spec, source_columns)]
    body = exp.select(*(column(n) for n in names)).from_(table(RELEASED)).order_by(column(POSITION))
    create = exp.Create(this=table(spec.output.table, "main", RELEASE_DB), kind="TABLE", expression=body)
    return Step(f"writing table {spec.output.table}", create)


def view_steps(spec: Spec, source_columns) -> list[Step]:
    if not spec.output.view_without_key:
        return []
    names = [c.name for c in released_columns(spec, source_columns) if c.name != spec.source.key]
    body = exp.select(*(column(n) for n in names)).from_(table(spec.output.table))
    view = exp.Create(this=table(spec.output.view_without_key), kind="VIEW", expression=body)
    # created while the release database is the default one, so the stored view names its table
    # without a database: it works whatever name a reader attaches the file under
    return [Step("writing views", exp.Use(this=table(RELEASE_DB))),
            Step(f"writing view {spec.output.view_without_key}", view),
            Step("writing views", exp.Use(this=table(MEMORY_DB)))]


def linkage_steps(spec: Spec, linkage_path: Path, release_id: str) -> list[Step]:
    """The private linkage file: table release_linkage(release_id, release_table, position, key)
    with the position (1-based) of every released record in the release table and its row key (the
    spec's key, or the surrogate of a spec without one; key_column says which). As secret as the key
    itself: it undoes the release's random row order."""
    body = exp.select(
        literal(release_id).as_(ident("release_id")),
        literal(spec.output.table).as_(ident("release_table")),
        exp.cast(literal(spec.source.key), "VARCHAR").as_(ident("key_column")),  # VARCHAR also when NULL (no key)
        column(POSITION).as_(ident("position")),
        column(ROW_KEY).as_(ident("key")),
    ).from_(table(RELEASED)).order_by(column(POSITION))
    attach = exp.Attach(this=exp.Alias(this=literal(str(linkage_path)), alias=ident(LINKAGE_DB)))
    create = exp.Create(this=table(LINKAGE_TABLE, "main", LINKAGE_DB), kind="TABLE", expression=body)
    return [Step("writing the linkage file", attach), Step("writing the linkage file", create),
            Step("writing the linkage file", exp.Detach(this=ident(LINKAGE_DB)))]


def parse_back(script: str) -> list[exp.Expression]:
    """Parse a generated script with sqlglot (a test and a sanity check of the dry run)."""
    return [e for e in sqlglot.parse(script, read=DIALECT) if e is not None]
