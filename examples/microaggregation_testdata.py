"""Mask the numeric columns of the household survey test set (../shared/data/testdata.csv) with the
four univariate microaggregation methods, stratified by urban/rural, and compare the information
loss (100 SSE/SST per column) each method costs for k = 3, 5, 10.

    .venv/bin/python examples/microaggregation_testdata.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb_sdc

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "testdata.csv"
COLUMNS = ("income", "expend", "savings")


def main() -> int:
    if not DATA.exists():
        print(f"{DATA} not found: this example reads the reference data sets next to the repository")
        return 0
    con = duckdb_sdc.connect()
    con.execute(f"CREATE TABLE survey AS SELECT row_number() OVER () AS id, * FROM read_csv('{DATA}')")
    print(f"{'method':>8} {'k':>3} " + " ".join(f"{c:>10}" for c in COLUMNS) + "   (100 SSE/SST, lower is better)")
    for k in (3, 5, 10):
        for method in ("mdav", "vmdav", "oma", "ranking"):
            losses = []
            for col in COLUMNS:
                loss = con.execute(f"""
                    WITH m AS (SELECT * FROM {method}_round_table('survey', '{col}', {k}, strata := 'urbrur'))
                    SELECT 100 * sum((s.{col} - m.{col}) ^ 2) / sum((s.{col} - (SELECT avg({col}) FROM survey)) ^ 2)
                    FROM survey s JOIN m USING (id)""").fetchall()[0][0]
                losses.append(loss)
            print(f"{method:>8} {k:>3} " + " ".join(f"{v:>10.4f}" for v in losses))
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
