"""The order of records inside a stratum, as Spark column expressions.

Records of one masking rule are ordered by (stratum index, value, key); ties are in key order, except
that a stratum may give a threshold `tie_split` above which ties are in reverse key order (MDAV, see
`positional.MdavPlan`). A position in that order is found without sorting by comparing a record with
boundary records (`rank_expr`): a balanced tree of CASE expressions, depth log2 of the boundaries.

The trees are written as SQL text and parsed once (`F.expr`) wherever every boundary renders as an exact
literal (`sql_literal`): PySpark 4 makes several calls into the JVM for every Column operation (it
records the Python call site of each), about 20 ms a boundary on this machine, so the 160 boundaries
of a counting pass over 50M rows in 4 strata took 3 s of the driver's time and 1000 strata buckets
would take a minute; the text takes milliseconds. A key of another type (a date, a decimal) is
compared through Column objects, as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pyspark.sql import Column
from pyspark.sql import functions as F

S, V, B = "__sdc_s", "__sdc_v", "__sdc_b"  # stratum index, value as DOUBLE, bucket id


def qcol(name: str) -> Column:
    """A column by name, quoted (names may hold dots or spaces)."""
    return F.col(qsql(name))


def qsql(name: str) -> str:
    """A column name quoted for Spark SQL text."""
    return "`" + name.replace("`", "``") + "`"


def sql_literal(value) -> str | None:
    """`value` as Spark SQL text that reads back exactly, or None for a type not rendered here: a
    finite float as a DOUBLE literal (Python's repr is the shortest decimal that reads back as the same
    double, and Spark reads it with Java's correctly rounded parser), an int as a BIGINT cast from its
    digits, a str as the cast of its UTF-8 bytes written in hex (no quote or escape rules involved)."""
    if isinstance(value, float):
        return f"({float.__repr__(value)}D)" if math.isfinite(value) else None  # (numpy's repr names its type)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"CAST('{value}' AS BIGINT)" if -2**63 <= value < 2**63 else None
    if isinstance(value, str):
        return f"CAST(X'{value.encode('utf-8').hex()}' AS STRING)"
    return None


def sql_tree(tests: list[str], leaf) -> str:
    """A balanced CASE tree over sorted boundaries in SQL text: tests[j] is true when a record comes
    before boundary j; the leaf of i is `leaf(i)` (i = the number of boundaries at or before it)."""

    def tree(lo: int, hi: int) -> str:
        if lo == hi:
            return leaf(lo)
        mid = (lo + hi) // 2
        return f"CASE WHEN {tests[mid]} THEN {tree(lo, mid)} ELSE {tree(mid + 1, hi)} END"

    return tree(0, len(tests))


@dataclass(frozen=True)
class Order:
    """(value, key) order inside the strata of one rule. tie_split: per stratum index, the value above
    which ties are sorted by key descending (missing: never)."""
    key: str
    tie_split: dict[int, float] = field(default_factory=dict)

    def split_of(self, stratum: int) -> float:
        return self.tie_split.get(stratum, math.inf)

    def less(self, stratum: int, value: float, key) -> Column:
        """Whether a record of this stratum comes before the record (value, key)."""
        key_col = qcol(self.key)
        before_key = key_col > F.lit(key) if value > self.split_of(stratum) else key_col < F.lit(key)
        return (F.col(V) < F.lit(value)) | ((F.col(V) == F.lit(value)) & before_key)

    def sort_key(self, stratum: int):
        """A Python sort key of (value, key) records of one stratum, the same order."""
        split = self.split_of(stratum)

        def key(rec):
            value, k = rec
            return (value, 0, _Desc(k)) if value > split else (value, 0, k)

        return key

    def rank_expr(self, stratum: int, bounds: list[tuple[float, object]]) -> Column:
        """Number of the (sorted) boundary records that come at or before a record of this stratum: SQL
        text where every boundary renders (`sql_literal`), else Column objects (the same comparisons)."""
        texts = [(sql_literal(float(value)), sql_literal(key)) for value, key in bounds]
        if all(v is not None and k is not None for v, k in texts):
            return F.expr(sql_tree([self._less_sql(stratum, value, v, k) for (value, _), (v, k) in zip(bounds, texts)],
                                   str))
        return self.rank_columns(stratum, bounds)

    def _less_sql(self, stratum: int, value: float, v: str, k: str) -> str:
        """`less` as SQL text, the boundary's value and key already rendered."""
        vcol, kcol = qsql(V), qsql(self.key)
        before_key = f"{kcol} > {k}" if value > self.split_of(stratum) else f"{kcol} < {k}"
        return f"({vcol} < {v} OR ({vcol} = {v} AND {before_key}))"

    def rank_columns(self, stratum: int, bounds: list[tuple[float, object]]) -> Column:
        """`rank_expr` built from Column objects (any key type; about 20 ms a boundary)."""

        def tree(lo: int, hi: int) -> Column:
            if lo == hi:
                return F.lit(lo)
            mid = (lo + hi) // 2
            value, key = bounds[mid]
            return F.when(self.less(stratum, value, key), tree(lo, mid)).otherwise(tree(mid + 1, hi))

        return tree(0, len(bounds))


class _Desc:
    """Reverses the order of a key in a Python sort."""

    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __lt__(self, other):
        return other.k < self.k

    def __eq__(self, other):
        return self.k == other.k


def per_stratum(default: Column, cases: dict[int, Column]) -> Column:
    """CASE on the stratum index column."""
    out = default
    for s, expr in cases.items():
        out = F.when(F.col(S) == s, expr).otherwise(out)
    return out


__all__ = ["B", "Order", "S", "V", "per_stratum", "qcol", "qsql", "sql_literal", "sql_tree"]
