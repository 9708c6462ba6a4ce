"""First-call latency: how long the first call of a function takes in a fresh process, per family of
the SQL reference, with Numba's cache empty (cold: every kernel compiles) and after `duckdb-sdc
warmup` (warm: kernels load from the cache).

    .venv/bin/python benchmarks/bench_first_call.py [--families microaggregation,measures] [--no-cold]

Every measurement is a new Python process: it imports duckdb_sdc, connects (registering every
function), creates the small tables the reference's examples use (`warmup._tables`, untimed), then
runs the family's example query twice. Printed per family: the import, connect and first-call
seconds and their sum (the time to the first result), the second call (everything loaded), how many
kernel signatures the first call compiled, and the process's peak RSS; warm figures are the median
of --repeat processes (3). `connect` includes loading the package's methods and measures and
registering the functions; `register` also starts the one-time preparation (pandas, Numba's target)
in a thread, and a first call that comes before it is done waits for the rest. The baseline, measured the same way in the same run, is a fresh process with
plain DuckDB running its own sort of the same column (`list_sort(list(income))`): the first call of a
built-in function. Cold runs use a new empty NUMBA_CACHE_DIR per family; warm runs share one that a
`duckdb-sdc warmup` filled at the start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

FAMILIES = {  # family: the example query of its first function (run on warmup._tables)
    "microaggregation": "SELECT region, mdav_round(list(income), 5) FROM people GROUP BY region",
    "discretisation": "SELECT region, kmd_round(list(income), 5) FROM people GROUP BY region",
    "multivariate": "SELECT region, mdav_multi_round(list([income, expenses, savings]), 5) FROM people "
                    "GROUP BY region",
    "attribute disclosure": "SELECT cluster, dominance_sensitive(income, 2, 0.7) FROM clustered GROUP BY cluster",
    "differential privacy": "SELECT region, idp_cbls(list(income), 5, 1.0) FROM people GROUP BY region",
    "information loss": "SELECT rank_bounded_mae(income, income_m) FROM j",
    "disclosure risk": "SELECT record_linkage([a, b, c], [a_m, b_m, c_m]) FROM j",
    "evaluation": "SELECT * FROM evaluate_masking('people', 'people_masked', 'id', columns := ['income', 'age'])",
    "boxes": "SELECT box_release(list([income, savings]), 5, 'corr(1, 2)') FROM people",
}
BASELINE = "SELECT list_sort(list(income)) FROM people"

CHILD = r"""
import json, resource, sys, time
start = time.perf_counter()
baseline = sys.argv[2] == "baseline"
if baseline:
    import duckdb
    imported = time.perf_counter()
    con = duckdb.connect()
    connected = time.perf_counter()
else:
    import duckdb_sdc
    imported = time.perf_counter()
    con = duckdb_sdc.connect()
    connected = time.perf_counter()
from duckdb_sdc.warmup import _tables
_tables(con)
con.execute("SET enable_progress_bar = false")
t0 = time.perf_counter()
con.execute(sys.argv[1]).fetchall()
t1 = time.perf_counter()
con.execute(sys.argv[1]).fetchall()
t2 = time.perf_counter()
compiled = 0
if not baseline:
    from numba.core.dispatcher import Dispatcher
    for name, module in list(sys.modules.items()):
        if name.startswith("duckdb_sdc"):
            for value in vars(module).values():
                if isinstance(value, Dispatcher):
                    compiled += sum(value.stats.cache_misses.values())
con.close()
print(json.dumps({"import": imported - start, "connect": connected - imported, "first": t1 - t0,
                  "second": t2 - t1, "compiled": compiled,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(query: str, cache_dir: str, baseline: bool = False) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    done = subprocess.run([sys.executable, "-c", CHILD, query, "baseline" if baseline else "sdc"],
                          capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def warm_cache(cache_dir: str) -> float:
    start = time.perf_counter()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    subprocess.run([sys.executable, "-m", "duckdb_sdc", "warmup", "--quiet"], env=env, check=True, timeout=7200)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", help="comma-separated subset of: " + ", ".join(FAMILIES))
    parser.add_argument("--no-cold", action="store_true", help="skip the cold runs (they compile: minutes)")
    parser.add_argument("--repeat", type=int, default=3, help="warm processes per family (the median is shown)")
    args = parser.parse_args()
    families = args.families.split(",") if args.families else list(FAMILIES)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        parser.error(f"unknown families {unknown}")
    with tempfile.TemporaryDirectory() as warm_dir:
        print(f"warm-up (duckdb-sdc warmup into an empty cache): {warm_cache(warm_dir):.1f} s")
        base = run(BASELINE, warm_dir, baseline=True)
        print(f"baseline, plain DuckDB's list_sort in a fresh process: import {base['import']:.2f} s, "
              f"connect {base['connect']:.2f} s, first call {base['first']:.3f} s, peak RSS {base['rss_mb']:.0f} MB\n")
        head = (f"{'family':<22}{'cache':>6}{'import s':>10}{'connect s':>11}{'first s':>9}{'x base':>8}"
                f"{'total s':>9}{'second s':>10}{'compiled':>10}{'RSS MB':>8}")
        print(head)
        print("-" * len(head))
        worst = 0.0
        for family in families:
            runs = []
            if not args.no_cold:
                with tempfile.TemporaryDirectory() as cold_dir:
                    runs.append(("cold", run(FAMILIES[family], cold_dir)))
            warm = [run(FAMILIES[family], warm_dir) for _ in range(args.repeat)]
            runs.append(("warm", {key: statistics.median(r[key] for r in warm) for key in warm[0]}))
            for kind, r in runs:
                if kind == "warm":
                    worst = max(worst, r["first"])
                total = r["import"] + r["connect"] + r["first"]
                print(f"{family:<22}{kind:>6}{r['import']:>10.2f}{r['connect']:>11.2f}{r['first']:>9.3f}"
                      f"{r['first'] / base['first']:>8.0f}{total:>9.2f}{r['second']:>10.3f}{r['compiled']:>10.0f}"
                      f"{r['rss_mb']:>8.0f}")
        print(f"\nslowest warm first call (median of {args.repeat}): {worst:.3f} s (target: at most 1 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
