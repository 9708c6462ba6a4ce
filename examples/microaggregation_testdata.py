"""Mask the numeric columns of the household survey test set bundled with the package
(sdc_dataset('testdata'), from sdcMicro) with the four univariate microaggregation methods,
stratified by urban/rural, and compare the information loss (100 SSE/SST per column) each method
costs for k = 3, 5, 10.

    .venv/bin/python examples/microaggregation_testdata.py
"""

from __future__ import annotations

import sys

import duckdb_sdc

COLUMNS = ("income", "expend", "savings")


def main() -> int:
    con = duckdb_sdc.connect()
    con.execute("CREATE TABLE survey AS SELECT row_number() OVER () AS id, * FROM sdc_dataset('testdata')")
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
