"""A whole release (spec -> release file) against copying the same table into a new file.

    .venv/bin/python benchmarks/bench_release.py [--rows 1000000 10000000] [--repeat 2]

Source: a DuckDB file with people(id, region (4 strata), age, a, b, c), a/b/c lognormal DOUBLEs.
Baseline, in the same run: `ATTACH` a new file and `CREATE TABLE ... AS SELECT * FROM source ORDER BY
id` (a release that masks nothing). "one query" masks a, b and c with mdav_round(k = 5) per region in
a single statement into the new file (one list of structs per region carrying every column, as in
README's list form). "release" is `duckdb_sdc.release.release(spec)` with the same three rules: one
statement per masked column, joined on the key, plus the key check, manifest and view, written to a
temporary file and renamed. Best of --repeat; ratio = time / baseline.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb

from common import best_of

import duckdb_sdc
from duckdb_sdc.release import parse_spec, release

ONE_QUERY = """
CREATE TABLE out.people AS
WITH m AS (
    SELECT unnest(l).id AS id, unnest(l).region AS region, unnest(l).age AS age,
           unnest(mdav_round(list_transform(l, lambda s: s.a), 5)) AS a,
           unnest(mdav_round(list_transform(l, lambda s: s.b), 5)) AS b,
           unnest(mdav_round(list_transform(l, lambda s: s.c), 5)) AS c
    FROM (SELECT list(struct_pack(id := id, region := region, age := age, a := a, b := b, c := c) ORDER BY id) AS l
          FROM src.people GROUP BY region))
SELECT * FROM m ORDER BY id
"""


def make_source(path: Path, n: int) -> None:
    con = duckdb.connect(str(path))
    con.execute("SET enable_progress_bar = false")
    con.execute(f"""CREATE TABLE people AS
        SELECT i AS id, ['north', 'south', 'east', 'west'][1 + (hash(i) % 4)::INT] AS region,
               18 + (hash(i * 7) % 70)::INT AS age,
               exp(10 + 0.6 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS a,
               exp(9 + 0.5 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS b,
               exp(8 + 0.8 * sqrt(-2 * ln(random())) * cos(2 * pi() * random())) AS c
        FROM range({n}) r(i)""")
    con.close()



def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print("| rows | what | seconds | ratio |\n|---:|---|---:|---:|")
    for n in args.rows:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            make_source(folder / "src.duckdb", n)

            def copy_or_mask(sql: str):
                def run():
                    (folder / "copy.duckdb").unlink(missing_ok=True)
                    con = duckdb_sdc.connect()
                    con.execute("SET enable_progress_bar = false")
                    con.execute("ATTACH ? AS src (READ_ONLY)", [str(folder / "src.duckdb")])
                    con.execute("ATTACH ? AS out", [str(folder / "copy.duckdb")])
                    con.execute(sql)
                    con.close()
                return run

            spec = parse_spec({
                "source": {"database": "src.duckdb", "table": "people", "key": "id"},
                "output": {"database": "release.duckdb", "table": "people", "view_without_key": "people_public"},
                "masking": {"strata": ["region"]},
                "columns": {"id": "keep", "region": "keep", "age": "keep",
                            **{c: {"method": "mdav_round", "k": 5} for c in "abc"}},
            }, base=folder)
            base = best_of(copy_or_mask("CREATE TABLE out.people AS SELECT * FROM src.people ORDER BY id"), args.repeat)
            one = best_of(copy_or_mask(ONE_QUERY), args.repeat)
            rel = best_of(lambda: release(spec), args.repeat)
            for what, t in (("copy ordered by key (baseline)", base), ("one query, 3 columns masked", one),
                            ("release(spec), 3 columns masked", rel)):
                print(f"| {n / 1e6:g}M | {what} | {t:.2f} | {t / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
