"""The release's manifest: one row per released column (and per dropped column), what was done to it
and what that guarantees, in the words of duckdb_sdc.guarantees.

It never holds a seed, an absolute path, the linkage file's path, or any value of the data: the
parameters are the spec's (with the k or c that 'auto' resolved to, per stratum, and only when every
stratum column is released: otherwise the range over strata), the source is a file name relative to
the spec's folder. The rows are built when the manifest is written, after masking, from what the
safeguards measured (`safeguards.Facts`).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from sqlglot import exp

from .. import guarantees as g
from . import pooling
from .methods import SECRET_PARAMS
from .plan import BOX, RELEASE_DB, ReleasedColumn, Step, ident, layout, literal, table
from .safeguards import Facts
from .spec import MANIFEST_TABLE, Rule, Spec, weight_of

MANIFEST_COLUMNS = (
    ("release_table", "VARCHAR"), ("column_name", "VARCHAR"), ("source_column", "VARCHAR"),
    ("released_as", "VARCHAR"), ("position", "INTEGER"), ("rule", "VARCHAR"), ("method", "VARCHAR"),
    ("parameters", "VARCHAR"), ("strata", "VARCHAR[]"), ("masked_with", "VARCHAR[]"), ("epsilon", "DOUBLE"),
    ("privacy_model", "VARCHAR"), ("guarantee", "VARCHAR"), ("source_type", "VARCHAR"), ("released_type", "VARCHAR"),
    ("source", "VARCHAR"), ("quasi_identifier", "BOOLEAN"), ("epsilon_total", "DOUBLE"), ("release_id", "VARCHAR"),
    ("package_version", "VARCHAR"), ("duckdb_version", "VARCHAR"), ("created_at", "TIMESTAMP"), ("spec", "VARCHAR"),
    ("notes", "VARCHAR[]"),
)
# what each manifest column holds: the release writes these as the manifest's column comments
MANIFEST_DESCRIPTIONS = {
    "release_table": "the table the column is in (a centroids table for dp_um centroids)",
    "column_name": "the released column (the source column where it is dropped)",
    "source_column": "the source column it comes from; NULL for a box id",
    "released_as": "'value', 'lower' / 'upper' (a box's bounds), 'box' (box id), 'centroids' (unlinked cluster "
                   "means); NULL if dropped",
    "position": "position in the release table; NULL for a dropped column",
    "rule": "'key', 'keep', 'drop' or 'mask'",  # (RULE_WITH_RECODE when the release recodes a column)
    "method": "SQL function of a masked or recoded column",
    "parameters": "JSON object of every parameter used (seeds are never written), 'resolved' (what 'auto' chose), "
                  "'decimals', 'cells'",
    "strata": "columns within whose groups the column was masked",
    "masked_with": "the group of columns a multivariate method masked together",
    "epsilon": "privacy budget spent by a differentially private column",
    "privacy_model": "k-anonymity, epsilon-DP, ..., none (duckdb_sdc.guarantees)",
    "guarantee": "what holds for this column, in words a steward can quote",
    "source_type": "the column's type in the source; NULL for a box id",
    "released_type": "the column's type in the release",
    "source": "the source, with file names relative to the spec's folder",
    "quasi_identifier": "whether the policy gate and the report count the source column as a quasi-identifier "
                        "(false: exempted, see notes); NULL if not in the table",
    "epsilon_total": "the release's total privacy budget: the sum over its DP columns",
    "release_id": "random, per release: a linkage file names the release it belongs to",
    "package_version": "the duckdb-sdc version that wrote the release",
    "duckdb_version": "the DuckDB version that wrote the release",
    "created_at": "when the release was written, UTC (TIMESTAMPTZ would need pytz in Python clients)",
    "spec": "the spec as written (JSON), without seeds, linkage or absolute paths",
    "notes": "what the release says of itself as a whole (release_notes), on every row",
}
# the `rule` column's description in a release that recodes a column (a release without one keeps the words above)
RULE_WITH_RECODE = "'key', 'keep', 'drop', 'mask' or 'recode' (a global recoding: method and parameters)"
CENTROIDS = "centroids"
NOT_RELEASED = "not released"


def _resolved(spec: Spec, rule: Rule, facts: Facts) -> dict:
    """The values 'auto' resolved to: per stratum when every stratum column is released, else (the
    stratum values of a dropped column would be released here) only their range."""
    out = {}
    strata = spec.strata_of(rule)
    released = all(spec.rules[c].action == "keep" for c in strata)
    for param, pairs in facts.of(rule).resolved.items():
        if not strata:
            out[param] = pairs[0][1] if pairs else None
        elif released:
            out[param] = [{**dict(zip(strata, values)), param: v} for values, v in pairs]
        else:
            vs = [v for _, v in pairs]
            out[param] = {"min": min(vs), "max": max(vs)} if vs else None
    return out


def _k(rule: Rule, facts: Facts) -> int | None:
    """The k a deterministic rule's guarantee states: its parameter, the smallest that 'auto' resolved
    to, or (discretisation, and anything merged or suppressed) at least that, the measured smallest set."""
    f = facts.of(rule)
    k = rule.params.get("k")
    if "k" in f.resolved:
        k = min((v for _, v in f.resolved["k"]), default=None)
    if not isinstance(k, int) or isinstance(k, bool):
        k = None
    measured = f.smallest_set
    if k is None:
        return measured
    return max(k, measured) if measured is not None and rule.method.param("c") is None else k


def guarantee(spec: Spec, rule: Rule, facts: Facts, *, released_as: str | None = None,
              is_key: bool = False) -> tuple[str | None, str]:
    """(privacy_model, guarantee sentence) of one manifest row."""
    if rule.action == "drop":
        return None, NOT_RELEASED
    if is_key:
        return g.of(g.KEY).model, g.sentence(g.KEY)
    pooled = pooling.record(spec, facts)
    if rule.action == "keep":
        if pooled and pooled["strata_pooled"] and rule.column in pooled["strata"]:
            return g.of(g.POOLED_STRATA).model, g.sentence(g.POOLED_STRATA, pooled=pooled["strata_pooled"],
                                                           how=spec.small_strata)
        return g.of(g.KEEP).model, g.sentence(g.KEEP)
    if rule.action == "recode":  # the recoding's record states its guarantee
        recoding = rule.recoding
        return recoding.guarantee.model, recoding.guarantee.sentence.format(method=recoding.name, columns=rule.column)
    strata = list(spec.strata_of(rule))
    method = rule.method.name
    if rule.seeded:
        return g.of(g.REPRODUCIBLE).model, g.sentence(g.REPRODUCIBLE, method=method)
    params = rule.effective_params()
    if strata and pooled and pooled["strata_pooled"]:
        names = ", ".join(strata)
        after = f"after {pooled['strata_pooled']} small strata were pooled (small_strata = '{spec.small_strata}')"
        strata = f"each stratum of {names} {after}"  # the released strata, when the columns are kept
        within = f", within each stratum of {names} {after}"
    else:
        within = None
    facts_ = dict(columns=list(rule.columns), strata=strata, epsilon=rule.epsilon, lb=params.get("lb"),
                  ub=params.get("ub"), table=rule.centroids_table, k=_k(rule, facts), method=method)
    if within is not None:
        facts_["within"] = within
    if released_as == CENTROIDS:
        subject = g.CENTROIDS
    elif released_as == BOX:
        subject = g.BOX_ID
    else:
        subject = method  # a release method is a registered record, which states its guarantee
    if subject in (g.CENTROIDS, "dp_laplace", "dp_um") and (facts_["lb"] is None or facts_["ub"] is None):
        raise ValueError(f"{method} without a domain has no stated guarantee")  # the method refuses first
    words = g.sentence(subject, **facts_)
    if rule.cells is not None:
        f = facts.of(rule)
        words += "; " + rule.cells.describe(primary=f.primary_cells, secondary=f.secondary_cells,
                                            merged=f.merged_clusters, removed=f.removed_records)
    if spec.decimals_of(rule) is not None:
        words += f"; values rounded to {spec.decimals_of(rule)} decimals after masking"
    return g.of(subject).model, words


def release_notes(spec: Spec, facts: Facts | None) -> list[str]:
    """What a release says of itself beyond its columns, in the manifest's `notes` and on the command
    line: the released columns the gate does not count as quasi-identifiers and why, a released key
    the spec exempted, and (without a key) the records that repeat another in every column."""
    out = []
    exempted = spec.exempted()
    if spec.policy is not None and spec.policy.quasi_identifiers is not None:
        out.append(f"quasi-identifiers narrowed by [policy] quasi_identifiers to {', '.join(spec.policy.quasi_identifiers)}")
    if exempted:
        out.append("not counted as quasi-identifiers by the policy gate and the report: "
                   + "; ".join(f"{c} ({why})" for c, why in exempted.items()))
    if spec.key_released() and spec.source.key in exempted:
        out.append(f"the key {spec.source.key!r} is released: it links every released record to its source record "
                   "(the spec says it identifies no one outside this release)")
    duplicates = getattr(facts, "duplicates", None)
    if duplicates:
        out.append(f"{duplicates} records of the source repeat another record in every column (there is no "
                   "source.key): they are released as separate records with the same values")
    return out


def rows(spec: Spec, source_columns, facts: Facts, *, release_id: str, package_version: str,
         duckdb_version: str, created_at: datetime | None = None) -> list[dict]:
    """One row per released column, in the table's order, with a dropped column's row (and a column
    released in a centroids table) at its place in the source's order: a boxed source column has two
    rows (its bounds, both naming it as source_column) and its rule one more for the box id
    (source_column NULL)."""
    created_at = created_at or datetime.now(timezone.utc)
    columns = layout(spec, source_columns)
    position = {id(c): i for i, c in enumerate((c for _, _, cols in columns for c in cols), start=1)}
    public = json.dumps(spec.public_text(), default=str, ensure_ascii=False, sort_keys=True)
    notes = release_notes(spec, facts)
    qi = set(spec.quasi_identifiers())
    entries: list[tuple[str, str, str | None, ReleasedColumn | None, str | None]] = []
    for name, type_, cols in columns:
        rule = spec.rules[name]
        if not cols:
            centroids = rule.action == "mask" and rule.centroids_table is not None
            entries.append((name, name, type_, None, CENTROIDS if centroids else None))
        entries += [(c.name, c.source, type_ if c.source is not None else None, c, c.role) for c in cols]
    out = []
    for name, source_column, type_, col, released_as in entries:
        rule = spec.rules[source_column] if col is None else col.rule
        masked = rule.action == "mask"
        recoded = rule.action == "recode"
        params = rule.effective_params() if recoded else None
        if masked:
            params = {k: v for k, v in rule.effective_params().items() if k not in SECRET_PARAMS}
            resolved = _resolved(spec, rule, facts)
            if resolved:
                params["resolved"] = resolved
            if spec.decimals_of(rule) is not None:
                params["decimals"] = spec.decimals_of(rule)
            if weight_of(spec, rule) is not None:  # the sampling-weight column of its representatives
                params["weights"] = weight_of(spec, rule)
            if spec.strata_of(rule) and pooling.record(spec, facts) is not None:
                params["small_strata"] = pooling.record(spec, facts)
            if rule.cells is not None:
                f = facts.of(rule)
                params["cells"] = {"rule": rule.cells.rule, "action": rule.cells.action, **rule.cells.settings(),
                                   **({"merged_clusters": f.merged_clusters} if rule.cells.action == "merge" else
                                      {"cost": rule.cells.cost,
                                       **({"removed_records": f.removed_records} if rule.cells.action == "remove"
                                          else {}),
                                       "primary_cells": f.primary_cells, "secondary_cells": f.secondary_cells,
                                       "protection_levels": "met"})}
        is_key = source_column is not None and source_column == spec.source.key
        model, words = guarantee(spec, rule, facts, released_as=released_as, is_key=is_key)
        out.append({
            "release_table": rule.centroids_table if released_as == CENTROIDS else spec.output.table,
            "column_name": name,
            "source_column": source_column,
            "released_as": released_as,
            "position": None if col is None else position[id(col)],
            "rule": "key" if is_key else rule.action,
            "method": rule.method.name if masked else rule.recoding.name if recoded else None,
            "parameters": json.dumps(params, sort_keys=True, default=str) if masked or recoded else None,
            "strata": list(spec.strata_of(rule)) if masked else None,
            "masked_with": list(rule.columns) if masked and (rule.group or rule.boxed) else None,
            "epsilon": rule.epsilon,
            "privacy_model": model,
            "guarantee": words,
            "source_type": type_,
            "released_type": None if col is None else col.type,
            "source": spec.source.describe(spec.base),
            "quasi_identifier": None if col is None else (source_column in qi if source_column is not None
                                                          else any(c in qi for c in rule.columns)),
            "epsilon_total": spec.epsilon_spent(),
            "release_id": release_id,
            "package_version": package_version,
            "duckdb_version": duckdb_version,
            "created_at": created_at.astimezone(timezone.utc).replace(tzinfo=None).isoformat(sep=" "),
            "spec": public,
            "notes": notes,
        })
    return out


def steps(make_rows, target: exp.Table | None = None) -> list[Step]:
    """CREATE and INSERT of the manifest (the release file's, or the table `target`); `make_rows()`
    gives the rows when the INSERT runs."""
    target = target if target is not None else table(MANIFEST_TABLE, "main", RELEASE_DB)
    schema = exp.Schema(this=target, expressions=[
        exp.ColumnDef(this=ident(n), kind=exp.DataType.build(t, dialect="duckdb")) for n, t in MANIFEST_COLUMNS])
    create = exp.Create(this=schema, kind="TABLE")

    def insert():
        values = exp.values([tuple(literal(row[n]) for n, _ in MANIFEST_COLUMNS) for row in make_rows()])
        return exp.insert(values, target.copy())

    return [Step("writing the manifest", create), Step("writing the manifest", insert)]


def column_comment(row: dict) -> str:
    """A released column's comment: the manifest's guarantee, after the method and privacy model
    of a masked column."""
    if row["method"] is None:
        return row["guarantee"]
    return f"{row['method']} ({row['privacy_model']}): {row['guarantee']}"


def table_comment(spec: Spec, rows: list[dict]) -> str:
    """The release table's comment: where it comes from, who wrote it, what is masked, and where
    each column's guarantee is."""
    first = rows[0]
    masked = list(dict.fromkeys(r["source_column"] for r in rows if r["rule"] == "mask" and r["source_column"] is not None))
    recoded = [r["source_column"] for r in rows if r["rule"] == "recode"]
    budget = f"; total epsilon {first['epsilon_total']:g}" if first["epsilon_total"] is not None else ""
    budget = (f"; recoded: {', '.join(recoded)}" if recoded else "") + budget
    return (f"Masked release of {first['source']}, written by duckdb-sdc {first['package_version']} "
            f"(DuckDB {first['duckdb_version']}) at {first['created_at'][:19]} UTC"
            f"{', release ' + first['release_id'] if first['release_id'] else ''}; "
            f"masked: {', '.join(masked) or 'none'}{budget}. Rows are in a secret random order. Each column's "
            f"method, parameters and guarantee: table {MANIFEST_TABLE}.")


def comment_steps(spec: Spec, released: list[ReleasedColumn], make_rows) -> list[Step]:
    """COMMENT ON the release's relations in the manifest's words, inside the release transaction:
    the release table and each of its columns (`column_comment`), the view without the key and its
    columns, each centroids table, and the manifest and its columns (MANIFEST_DESCRIPTIONS). DuckDB
    1.x clients read them (duckdb_tables(), duckdb_columns(), information_schema's COLUMN_COMMENT);
    `released` is the release table's columns in order, `make_rows()` the manifest's rows."""
    def comment(kind: str, target: exp.Expression, words) -> exp.Comment:
        return exp.Comment(this=target, kind=kind, expression=literal(words))

    def on_column(relation: str, name: str) -> exp.Column:
        return exp.Column(this=ident(name), table=ident(relation), db=ident("main"), catalog=ident(RELEASE_DB))

    def row_of(name: str):
        return next(r for r in make_rows() if r["release_table"] == spec.output.table and r["column_name"] == name)

    out = [Step("writing comments", lambda: comment("TABLE", table(spec.output.table, "main", RELEASE_DB),
                                                    table_comment(spec, make_rows())))]
    out += [Step("writing comments", lambda c=c: comment("COLUMN", on_column(spec.output.table, c.name),
                                                         column_comment(row_of(c.name)))) for c in released]
    view = spec.output.view_without_key
    if view:
        words = (f"The release table {spec.output.table} without its key column {spec.source.key}; each column's "
                 f"guarantee: table {MANIFEST_TABLE}.")
        out.append(Step("writing comments", comment("VIEW", table(view, "main", RELEASE_DB), words)))
        out += [Step("writing comments", lambda c=c: comment("COLUMN", on_column(view, c.name),
                                                             column_comment(row_of(c.name))))
                for c in released if c.name != spec.source.key]
    for rule in spec.masked():
        if rule.centroids_table is not None:
            def words(rule=rule):
                row = next(r for r in make_rows() if r["release_table"] == rule.centroids_table)
                return f"Unlinked noisy cluster means of {rule.column}, {column_comment(row)}"

            out.append(Step("writing comments", lambda rule=rule, words=words: comment(
                "TABLE", table(rule.centroids_table, "main", RELEASE_DB), words())))
    out.append(Step("writing comments", comment("TABLE", table(MANIFEST_TABLE, "main", RELEASE_DB),
                                                "One row per column of the release (released or dropped): what "
                                                "was done to it and what that guarantees.")))
    recodes = any(r.action == "recode" for r in spec.rules.values())
    out += [Step("writing comments", comment("COLUMN", on_column(MANIFEST_TABLE, n),
                                             RULE_WITH_RECODE if n == "rule" and recodes else MANIFEST_DESCRIPTIONS[n]))
            for n, _ in MANIFEST_COLUMNS]
    return out


__all__ = ["CENTROIDS", "MANIFEST_COLUMNS", "MANIFEST_DESCRIPTIONS", "column_comment", "comment_steps", "guarantee",
           "rows", "steps", "table_comment"]
