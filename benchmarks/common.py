"""What the benchmark scripts share: timing, peak memory, the lognormal test column, DuckDB's ORDER BY
baseline and the two end-to-end SQL forms of a list function (imported by the scripts of this folder)."""

from __future__ import annotations

import time
from pathlib import Path

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


_STATUS = Path("/proc/self/status")


def _kb(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def peak_mb(run) -> float | None:
    """Peak resident memory of one call of run() above the resident set before it, in MB: the
    process's peak (VmHWM) is reset first (Linux: 5 written to /proc/self/clear_refs); None where it
    cannot be reset (not Linux)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    before = _kb("VmRSS")
    run()
    return (_kb("VmHWM") - before) / 1024


def against_order_by(con, cases, rows, repeat: int, forms=(("list", LIST_FORM), ("table", TABLE_FORM))):
    """For each size n in `rows`: the lognormal table t of n rows, DuckDB's ORDER BY of its column
    (best of `repeat`, then its peak memory), and every (function, arguments) of `cases` in every SQL
    form. Yields dicts: rows, name, args, form ('ORDER BY' for the baseline), seconds, ratio to the
    ORDER BY of the same run, peak_mb (None off Linux)."""
    for n in rows:
        lognormal_table(con, n)
        base = best_of(lambda: con.execute(ORDER_BY), repeat)
        yield {"rows": n, "name": "ORDER BY", "args": "", "form": "", "seconds": base, "ratio": 1.0,
               "peak_mb": peak_mb(lambda: con.execute(ORDER_BY))}
        for name, args in cases:
            for form, template in forms:
                sql = template.format(name=name, args=args)
                secs = best_of(lambda: con.execute(sql), repeat)
                yield {"rows": n, "name": name, "args": args, "form": form, "seconds": secs, "ratio": secs / base,
                       "peak_mb": peak_mb(lambda: con.execute(sql))}
