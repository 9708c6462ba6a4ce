"""The order of records inside a stratum, as Spark column expressions.

Records of one masking rule are ordered by (stratum index, value, key); ties are in key order, except
that a stratum may give a threshold `tie_split` above which ties are in reverse key order (MDAV, see
`positional.MdavPlan`). A position in that order is found without sorting by comparing a record with
boundary records (`rank_expr`): a balanced tree of CASE expressions, depth log2 of the boundaries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pyspark.sql import Column
from pyspark.sql import functions as F

S, V, B = "__sdc_s", "__sdc_v", "__sdc_b"  # stratum index, value as DOUBLE, bucket id


def qcol(name: str) -> Column:
    """A column by name, quoted (names may hold dots or spaces)."""
    return F.col("`" + name.replace("`", "``") + "`")


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
        """Number of the (sorted) boundary records that come at or before a record of this stratum."""

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


__all__ = ["B", "Order", "S", "V", "per_stratum", "qcol"]
