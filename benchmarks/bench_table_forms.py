"""What listing each stratum's rows in the order of their content costs the table forms.

    .venv/bin/python benchmarks/bench_table_forms.py [--rows 2000000] [--threads 2] [--repeat 2]

A table form lists each stratum's whole rows in the order of their content (`list(row ORDER BY row)`),
so that the values reach the method in the same order whatever DuckDB's threads and scan order (two
runs of a seeded stochastic ewd_round_table used to differ in hundreds of thousands of records). This
script runs, on the same table t(id, region (4 strata), x lognormal, y), the SQL each table form builds
("ordered", what `<method>_round_table(...)` runs) and the same text without the ORDER BY ("unordered",
the old listing), with DuckDB's own `ORDER BY x` of the table as the baseline. Every variant runs in a
fresh subprocess, which reports its time (best of --repeat) and its peak RSS. Ratio = time / baseline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

# (label, the arguments of __sdc_mask_column_sql(method, 't', 'x', args, strata, seeded, seed))
CASES = [
    ("ewd_round_table c=10 stochastic seeded", ("ewd_round", ["10", "mean", "true"], "NULL", "true", "1")),
    ("  ... 4 strata", ("ewd_round", ["10", "mean", "true"], "'region'", "true", "1")),
    ("mdav_round_table k=5", ("mdav_round", ["5", "mean"], "NULL", "false", "NULL")),
    ("  ... 4 strata", ("mdav_round", ["5", "mean"], "'region'", "false", "NULL")),
]

CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from common import best_of
import duckdb_sdc
rows, threads, repeat = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
variant, case = sys.argv[5], json.loads(sys.argv[6])
con = duckdb_sdc.connect(threads=threads)
con.execute(f"CREATE TABLE t AS SELECT i AS id, ['north', 'south', 'east', 'west'][1 + i % 4] AS region, "
            f"exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS x, random() AS y "
            f"FROM range({rows}) r(i)")
con.execute("SELECT mdav_round([1.0, 2.0, 3.0, 4.0], 2), ewd_round([1.0, 2.0], 2)").fetchall()  # numba warm-up
if variant == "baseline":
    sql = "CREATE OR REPLACE TABLE m AS SELECT * FROM t ORDER BY x"
else:
    method, args, strata, seeded, seed = case
    text = con.execute(f"SELECT __sdc_mask_column_sql(?, 't', 'x', ?, {strata}, seeded := {seeded}, seed := {seed})",
                       [method, args]).fetchone()[0]
    assert " ORDER BY __sdc_src" in text
    if variant == "unordered":
        text = text.replace(" ORDER BY __sdc_src", "")
    sql = "CREATE OR REPLACE TABLE m AS " + text
seconds = best_of(lambda: con.execute(sql), repeat)
print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _run(args, variant: str, case=None) -> dict:
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run([sys.executable, "-c", CHILD, here, str(args.rows), str(args.threads), str(args.repeat),
                           variant, json.dumps(case)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    base = _run(args, "baseline")
    print(f"{args.rows} rows, {args.threads} threads; baseline ORDER BY x into a table: {base['seconds']:.2f} s, "
          f"peak RSS {base['rss_mb']:.0f} MB")
    print(f"{'':40} {'ordered':>18} {'unordered (old)':>18}")
    print(f"{'table form':40} {'s':>6} {'ratio':>5} {'MB':>5} {'s':>6} {'ratio':>5} {'MB':>5} {'ordered / old':>14}")
    for label, case in CASES:
        new, old = _run(args, "ordered", case), _run(args, "unordered", case)
        print(f"{label:40} {new['seconds']:6.2f} {new['seconds'] / base['seconds']:5.2f} {new['rss_mb']:5.0f} "
              f"{old['seconds']:6.2f} {old['seconds'] / base['seconds']:5.2f} {old['rss_mb']:5.0f} "
              f"{new['seconds'] / old['seconds']:13.2f}x")


if __name__ == "__main__":
    main()
