"""Sensitive cells: the rules, suppression with protection levels, removal and MDAV under a rule,
against DuckDB's own GROUP BY of the same cells measured in the same run.

    .venv/bin/python benchmarks/bench_cells.py [--rows 100000 1000000] [--mdav-rows 5000 20000]

Data: n records of one heavy-tailed attribute (log-normal, sd 1.5 on the log scale) in random
clusters of 5 (as clusters formed on other attributes are for this one: many are dominated), the p%
rule at 0.2.
* "GROUP BY": CREATE TABLE c AS SELECT cluster, count(*), sum(x), max(x) FROM t GROUP BY cluster, the
  baseline (the cells' summaries a rule needs);
* "p_percent_sensitive": the pure-SQL rule over the same GROUP BY;
* "p_percent_suppress" / "p_percent_remove": the list functions end to end, one list of the records
  (ORDER BY id), secondary cells with protection levels (cost 'cells');
* "audit": the LP audit (HiGHS) of the suppression pattern, in numpy (up to --audit-max records);
* "mdav_p_percent_labels" against "mdav_multi_labels": MDAV under the rule against plain MDAV on n
  records of 3 such attributes, k = 5.
Single runs (the machine is shared); ratio = seconds / GROUP BY (or / mdav_multi_labels).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from common import peak_mb, timed

import duckdb_sdc
from duckdb_sdc.methods import protection
from duckdb_sdc.methods import sensitivity as sv

K = 5


def cells_table(con, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.round(np.exp(8 + 1.5 * rng.standard_normal(n)), 2)
    df = pd.DataFrame({"id": np.arange(n), "x": x, "cluster": rng.permutation(n) // K})
    con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM df")
    return df


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--audit-max", type=int, default=100_000)
    parser.add_argument("--mdav-rows", type=int, nargs="+", default=[5_000, 20_000])
    args = parser.parse_args()
    con = duckdb_sdc.connect()
    con.execute("SELECT p_percent_suppress([[1], [2], [3]], [0, 0, 0], 0.2), "
                "p_percent_remove([[1], [2], [3]], [0, 0, 0], 0.2)").fetchall()  # compile once
    rows = []
    for n in args.rows:
        df = cells_table(con, n)
        cases = {
            "GROUP BY": "CREATE OR REPLACE TABLE c AS SELECT cluster, count(*), sum(x), max(x) FROM t GROUP BY cluster",
            "p_percent_sensitive": "CREATE OR REPLACE TABLE c AS SELECT cluster, p_percent_sensitive(x, 0.2) "
                                   "FROM t GROUP BY cluster",
            "p_percent_suppress": "CREATE OR REPLACE TABLE c AS SELECT p_percent_suppress(list([x] ORDER BY id), "
                                  "list(cluster ORDER BY id), 0.2) AS s FROM t",
            "p_percent_remove": "CREATE OR REPLACE TABLE c AS SELECT p_percent_remove(list([x] ORDER BY id), "
                                "list(cluster ORDER BY id), 0.2) AS s FROM t",
        }
        base = None
        for name, sql in cases.items():
            secs, _ = timed(lambda: con.execute(sql))
            base = secs if base is None else base
            extra = ""
            if name == "p_percent_suppress":
                s = con.execute("SELECT s.primary_cells, s.secondary_cells, s.unprotected_cells FROM c").fetchone()
                extra = f"{s[0]} primary, {s[1]} secondary, {s[2]} unprotected"
            if name == "p_percent_remove":
                s = con.execute("SELECT s.removed_records, s.secondary_cells FROM c").fetchone()
                extra = f"{s[0]} removed, {s[1]} secondary"
            rows.append({"rows": n, "what": name, "seconds": secs, "ratio": secs / base,
                         "peak_mb": peak_mb(lambda: con.execute(sql)), "note": extra})
        if n <= args.audit_max:
            X, labels = df[["x"]].to_numpy(), df["cluster"].to_numpy()
            out = protection.suppress(X, labels, sv.p_percent_rule(0.2))
            secs, (low, high) = timed(lambda: protection.audit_suppression(X, labels, out.suppressed))
            scale = np.abs(X).sum()
            agree = np.allclose(low[out.suppressed], out.low[out.suppressed], atol=1e-7 * scale) and \
                np.allclose(high[out.suppressed], out.high[out.suppressed], atol=1e-7 * scale)
            rows.append({"rows": n, "what": "audit (numpy, LP)", "seconds": secs, "ratio": secs / base,
                         "peak_mb": None, "note": f"{out.suppressed.sum()} cells, equal to the closed form: {agree}"})
    for n in args.mdav_rows:
        rng = np.random.default_rng(1)
        df = pd.DataFrame(np.round(np.exp(8 + 1.5 * rng.standard_normal((n, 3))), 2), columns=["a", "b", "c"])
        con.execute("CREATE OR REPLACE TABLE r AS SELECT * FROM df")
        plain = "CREATE OR REPLACE TABLE m AS SELECT mdav_multi_labels(list([a, b, c]), 5) AS l FROM r"
        ruled = "CREATE OR REPLACE TABLE m AS SELECT mdav_p_percent_labels(list([a, b, c]), 5, 0.2) AS l FROM r"
        base, _ = timed(lambda: con.execute(plain))
        g_plain = con.execute("SELECT list_max(l) + 1 FROM m").fetchone()[0]
        rows.append({"rows": n, "what": "mdav_multi_labels", "seconds": base, "ratio": 1.0,
                     "peak_mb": peak_mb(lambda: con.execute(plain)), "note": f"{g_plain} groups"})
        secs, _ = timed(lambda: con.execute(ruled))
        g = con.execute("SELECT list_max(l) + 1 FROM m").fetchone()[0]
        rows.append({"rows": n, "what": "mdav_p_percent_labels", "seconds": secs, "ratio": secs / base,
                     "peak_mb": peak_mb(lambda: con.execute(ruled)), "note": f"{g} groups"})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
