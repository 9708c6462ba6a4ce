"""One column larger than memory in a file-backed DuckDB database: duckdb_sdc.outofcore against
DuckDB's ORDER BY of the same column.

    .venv/bin/python benchmarks/bench_outofcore.py [--rows 250000000] [--memory-limit 6GB] [--folder DIR]

A file-backed database with t(id BIGINT, x DOUBLE), x lognormal rounded to cents (ties). Each step
runs in its own process, so that its peak RSS is its own:

* baseline: `CREATE TABLE s AS SELECT x FROM t ORDER BY x` (DuckDB's out-of-core sort);
* `outofcore.mask_column(con, "t", key="id", column="x", ...)` for mdav_round (k = 5), ranking_round
  (k = 5) and efd_round (c = 10), which writes the table (id, x) of masked values.

DuckDB's memory_limit is set (default 6GB, far below the 24 GB of the machine) so that the sorts go
out of core as they would on a larger table; its temporary directory is next to the database. Ratio
= time / baseline. The machine is shared: run it when it is quiet.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEP = """
import json, resource, sys, time
import duckdb
sys.path.insert(0, {root!r})
con = duckdb.connect({db!r})
con.execute("SET memory_limit = '{limit}'")
con.execute("SET enable_progress_bar = false")
t = time.perf_counter()
{body}
print(json.dumps([time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024]))
"""

BASELINE = 'con.execute("CREATE OR REPLACE TABLE s AS SELECT x FROM t ORDER BY x")'
MASK = ("from duckdb_sdc import outofcore\n"
        "outofcore.mask_column(con, 't', key='id', column='x', method={method!r}, params={params!r}, target='m')")


def run(db: str, limit: str, body: str) -> tuple[float, int]:
    code = STEP.format(root=str(Path(__file__).resolve().parents[1]), db=db, limit=limit, body=body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    seconds, rss = json.loads(out.stdout.strip().splitlines()[-1])
    return seconds, rss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=250_000_000)
    parser.add_argument("--memory-limit", default="6GB")
    parser.add_argument("--folder", default=None, help="where the database goes (default: a temporary folder)")
    parser.add_argument("--methods", nargs="+", default=["mdav_round", "ranking_round", "efd_round"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        db = str(Path(tmp) / "big.duckdb")
        start = time.perf_counter()
        run(db, args.memory_limit, f"""con.execute('''CREATE TABLE t AS SELECT i AS id,
            round(exp(9 + 1.2 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())), 2) AS x
            FROM range({args.rows}) r(i)''')
con.execute("CHECKPOINT")""")
        print(f"{args.rows / 1e6:g}M rows written in {time.perf_counter() - start:.0f} s; memory_limit "
              f"{args.memory_limit}", flush=True)
        print("| rows | what | seconds | ratio | peak RSS GB |\n|---:|---|---:|---:|---:|", flush=True)
        base, rss = run(db, args.memory_limit, BASELINE)
        print(f"| {args.rows / 1e6:g}M | ORDER BY x into a table (baseline) | {base:.1f} | 1.00 | {rss / 1e9:.2f} |",
              flush=True)
        params = {"mdav_round": {"k": 5}, "ranking_round": {"k": 5}, "efd_round": {"c": 10}, "ewd_round": {"c": 10}}
        for method in args.methods:
            seconds, rss = run(db, args.memory_limit, MASK.format(method=method, params=params[method]))
            print(f"| {args.rows / 1e6:g}M | outofcore {method} {params[method]} | {seconds:.1f} | "
                  f"{seconds / base:.2f} | {rss / 1e9:.2f} |", flush=True)


if __name__ == "__main__":
    main()
