"""What the benchmark scripts share: timing, the lognormal test column, DuckDB's ORDER BY baseline
and the two end-to-end SQL forms of a list function (imported by the scripts of this folder)."""

from __future__ import annotations

import time

ORDER_BY = "CREATE OR REPLACE TABLE s AS SELECT x FROM t ORDER BY x"

# a list function end to end: one list of (id, x) structs, the function, both unnested side by side
LIST_FORM = ("CREATE OR REPLACE TABLE m AS SELECT unnest(l).id AS id, "
             "unnest({name}(list_transform(l, lambda s: s.x), {args})) AS x "
             "FROM (SELECT list(struct_pack(id := id, x := x)) AS l FROM t)")
# its table form: every column of t back, x masked
TABLE_FORM = "CREATE OR REPLACE TABLE m AS SELECT * FROM {name}_table('t', 'x', {args})"


def timed(fn):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def best_of(fn, repeat: int) -> float:
    """The fastest of `repeat` calls, in seconds."""
    return min(timed(fn)[0] for _ in range(repeat))


def lognormal_table(con, n: int) -> None:
    """Table t(id BIGINT, x DOUBLE) of n lognormal values (all distinct in practice)."""
    con.execute(f"CREATE OR REPLACE TABLE t AS SELECT i AS id, exp(9 + 1.2 * sqrt(-2 * ln(random())) "
                f"* cos(2 * pi() * random())) AS x FROM range({n}) r(i)")
