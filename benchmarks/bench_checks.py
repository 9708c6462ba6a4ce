"""What the argument and data checks cost: the same queries on the code before and after a change.

    .venv/bin/python benchmarks/bench_checks.py --before /path/to/the/old/checkout [--rows 10000000] [--repeat 3]
        [--only mae il1s ...]

For the checks added to the SQL surface (a table function naming a missing column with its parameter,
NaN refused on either side of the one-pass measures, the dominance rule's n capped for DuckDB's
max(x, n)), every case runs on t(id, g (1000 cells), x lognormal, y = x plus noise) of --rows rows, in a
fresh subprocess importing duckdb_sdc from --before and from this checkout in turn (alternating, so both
see the same load on a shared machine), each the best of --repeat runs; `SELECT avg(abs(x - y)) FROM t`
in the same subprocess is the baseline. One DuckDB thread, and the time is the process's CPU time (the
wall clock of a shared machine varies by +-30% between runs). Printed: CPU seconds before and after,
after / before, and each against its baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
AFTER = HERE.parent

CASES = [
    ("mdav_round_table k=5", "CREATE OR REPLACE TABLE m AS SELECT * FROM mdav_round_table('t', 'x', 5)"),
    ("sensitivity_report (1000 cells)",
     "CREATE OR REPLACE TABLE m AS SELECT * FROM sensitivity_report('t', ['x', 'y'], 'g', 2, 0.8, 0.1)"),
    ("dominance_sensitive GROUP BY g", "SELECT g, dominance_sensitive(x, 2, 0.8) FROM t GROUP BY g"),
    ("mae", "SELECT mae(x, y) FROM t"),
    ("il1", "SELECT il1(x, y) FROM t"),
    ("il1s", "SELECT il1s(x, y) FROM t"),
    ("sse_sst", "SELECT sse_sst(x, y) FROM t"),
]
BASELINE = "SELECT avg(abs(x - y)) FROM t"

CHILD = r"""
import json, sys, time
import duckdb_sdc
rows, repeat, sql, baseline = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
con = duckdb_sdc.connect(threads=1)
con.execute(f"CREATE TABLE t AS SELECT i AS id, i % 1000 AS g, "
            f"exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS x FROM range({rows}) r(i)")
con.execute("CREATE OR REPLACE TABLE t AS SELECT *, x * (1 + 0.1 * (random() - 0.5)) AS y FROM t")
con.execute("SELECT mdav_round([1.0, 2.0, 3.0, 4.0], 2)").fetchall()  # numba warm-up
def best(q):
    out = []
    for _ in range(repeat):
        start = time.process_time()  # CPU seconds of this process (one DuckDB thread): steadier than the
        con.execute(q).fetchall()    # wall clock on a shared machine
        out.append(time.process_time() - start)
    return min(out)
print(json.dumps({"seconds": best(sql), "baseline": best(baseline)}))
"""


def _run(code: Path, rows: int, repeat: int, sql: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(repeat), sql, BASELINE],
                          capture_output=True, text=True, env=env, cwd="/")
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the code before the change")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", default=None, help="the cases whose label starts with one of these")
    args = parser.parse_args()
    print(f"{args.rows:,} rows, best of {args.repeat}; ratio = after / before; x baseline = seconds / "
          f"'{BASELINE}' in the same process")
    print(f"{'case':34} {'before s':>9} {'after s':>9} {'ratio':>6} {'x base before':>14} {'x base after':>13}")
    for label, sql in CASES:
        if args.only and not any(label.startswith(o) for o in args.only):
            continue
        before = _run(args.before, args.rows, args.repeat, sql)
        after = _run(AFTER, args.rows, args.repeat, sql)
        print(f"{label:34} {before['seconds']:9.3f} {after['seconds']:9.3f} {after['seconds'] / before['seconds']:6.2f} "
              f"{before['seconds'] / before['baseline']:14.1f} {after['seconds'] / after['baseline']:13.1f}")


if __name__ == "__main__":
    main()
