"""Key frequencies and individual risk in SQL against DuckDB's own GROUP BY with a join back, same data,
same run (docs/benchmarks.md, "Risk of key combinations").

The table t has n rows and seven integer keys with the cardinalities of sdcMicro's testdata keys
(urbrur 2, roof 5, walls 3, water 8, electcon 4, relat 9, sex 2: at most 17,280 combinations) and a
sampling weight; `--nulls` sets that share of the key values to NULL (a locally suppressed release).
Each case is written into a table (CREATE TABLE AS), as a release would use it:

* baseline: SELECT t.*, c.fk, c.wsum FROM t JOIN (GROUP BY the keys: count(*), sum(w)) c ON keys
  IS NOT DISTINCT FROM: what counting the combinations costs DuckDB itself;
* population_frequencies_table(t, keys, w): f_k and F_k (NULLs matching any value);
* individual_risk_table(t, keys, w): f_k, F_k and the Benedetti-Franconi risk;
* global_risk_summary(t, keys, w): one row (its baseline is the GROUP BY alone, no join back).

    python benchmarks/bench_key_risk.py --rows 10000000 100000000 --nulls 0 0.01

Prints seconds, the ratio to the baseline measured in the same run, and the peak RSS of each call
above the process's resident set before it (best of --repeat runs for the time).
"""

from __future__ import annotations

import argparse

import duckdb_sdc
from common import best_of, peak_mb

CARDS = {"urbrur": 2, "roof": 5, "walls": 3, "water": 8, "electcon": 4, "relat": 9, "sex": 2}
KEYS = list(CARDS)


def make_table(con, n: int, nulls: float) -> None:
    cols = ", ".join(
        f"CASE WHEN random() < {nulls} THEN NULL ELSE (hash(i, {j}) % {c})::INTEGER END AS {k}" if nulls > 0
        else f"(hash(i, {j}) % {c})::INTEGER AS {k}"
        for j, (k, c) in enumerate(CARDS.items()))
    con.execute(f"CREATE OR REPLACE TABLE t AS SELECT i AS id, {cols}, 1.0 + (hash(i, 99) % 400)::DOUBLE AS w "
                f"FROM range({n}) r(i)")


def cases():
    keys = ", ".join(KEYS)
    same = " AND ".join(f"t.{k} IS NOT DISTINCT FROM c.{k}" for k in KEYS)
    group = f"SELECT {keys}, count(*) AS fk, sum(w) AS wsum FROM t GROUP BY ALL"
    yield "GROUP BY + join back", f"CREATE OR REPLACE TABLE m AS SELECT t.*, c.fk, c.wsum FROM t JOIN ({group}) c ON {same}"
    yield "population_frequencies_table", (f"CREATE OR REPLACE TABLE m AS SELECT * FROM "
                                           f"population_frequencies_table('t', {KEYS}, 'w')")
    yield "individual_risk_table", f"CREATE OR REPLACE TABLE m AS SELECT * FROM individual_risk_table('t', {KEYS}, 'w')"
    yield "GROUP BY", f"CREATE OR REPLACE TABLE m AS {group}"
    yield "global_risk_summary", f"CREATE OR REPLACE TABLE m AS SELECT * FROM global_risk_summary('t', {KEYS}, 'w')"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--nulls", type=float, nargs="+", default=[0.0, 0.01])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    con = duckdb_sdc.connect(**({"threads": args.threads} if args.threads else {}))
    print(f"{'rows':>11} {'nulls':>5}  {'case':<30} {'seconds':>8} {'ratio':>6} {'peak MB':>8}")
    for n in args.rows:
        for share in args.nulls:
            make_table(con, n, share)
            base = {}
            for name, sql in cases():
                secs = best_of(lambda: con.execute(sql), args.repeat)
                peak = peak_mb(lambda: con.execute(sql))
                ref = name.startswith("GROUP BY")
                if ref:
                    base = secs
                print(f"{n:>11} {share:>5}  {name:<30} {secs:>8.2f} {secs / base:>6.2f} "
                      f"{'' if peak is None else f'{peak:>8.0f}'}", flush=True)


if __name__ == "__main__":
    main()
