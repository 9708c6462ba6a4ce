"""k-anonymity does not stop attribute disclosure in numeric data: in a cluster of k records one record
can dominate the cluster's total, and then the released centroid (k times which is the total) tells its
value. This example clusters the reference data sets bundled with the package (sdc_dataset) with multivariate MDAV and
Mondrian for k from 2 to 125 and counts the cells (cluster, attribute) that the tabular-data rules flag:

1. the share of (2, 0.7)-dominance-sensitive cells falls as k grows and rises with the number of
   attributes clustered together;
2. the share for every rule of the tabulation: (n, r) dominance with n in {1, 2}, r in {0.6, 0.7, 0.8},
   and the p% rule with p in {0.6, 0.66, 0.7};
3. the two mitigations on Tarragona (MDAV, k = 3): suppression (how many cells each step suppressed)
   and dynamic k (merging clusters until no cell is sensitive: cluster sizes and information loss).

Tarragona and EIA have negative values (losses, adjustments), so the rules are applied to absolute
values (absolute := true).

    .venv/bin/python examples/attribute_disclosure.py
"""

from __future__ import annotations

import sys

import numpy as np

import duckdb_sdc

EIA_COLUMNS = ["UTILITYID", "RESREVENUE", "RESSALES", "COMREVENUE", "COMSALES", "INDREVENUE", "INDSALES",
               "OTHREVENUE", "OTHRSALES", "TOTREVENUE", "TOTSALES"]
KS = (2, 3, 5, 10, 25, 50, 125)  # k >= 2: a cluster of one record releases it unchanged
DOMINANCE = [(n, r) for n in (1, 2) for r in (0.6, 0.7, 0.8)]
P_VALUES = (0.6, 0.66, 0.7)


def load(con) -> dict[str, list[str]]:
    """Create one table per data set; return its attribute columns."""
    sets = {}
    for name, columns in (("tarragona", None), ("census", None), ("eia", EIA_COLUMNS)):
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM sdc_dataset('{name}')")
        cols = columns or [r[0] for r in con.execute(f"DESCRIBE {name}").fetchall()]
        sets[name] = cols
    return sets


def sql_list(names) -> str:
    return "[" + ", ".join("'" + c.replace("'", "''") + "'" for c in names) + "]"


def clusters(name: str, method: str, cols, k: int) -> str:
    """The relation of `name` with a cluster label per record: k = 1 is every record alone (the
    seed's baseline, which the masking functions refuse), else the method's labels."""
    if k == 1:
        return f'(SELECT *, row_number() OVER () AS cluster FROM "{name}")'
    return f"{method}_labels_table('{name}', {sql_list(cols)}, {k})"


def share_table(con, sets) -> None:
    print("1. Share of (2, 0.7)-dominance-sensitive cells (cluster, attribute), by k and number of attributes")
    print(f"{'data set':>10} {'method':>9} {'attrs':>5} " + " ".join(f"{'k=' + str(k):>7}" for k in KS))
    for name, cols in sets.items():
        for method in ("mdav_multi", "mondrian"):
            for m in (2, 4, 8, len(cols)):
                row = []
                for k in KS:
                    con.execute(f"CREATE OR REPLACE TEMP TABLE clustered AS SELECT * FROM "
                                f"{clusters(name, method, cols[:m], k)}")
                    share = con.execute(f"SELECT dominance_share FROM sensitivity_report('clustered', "
                                        f"{sql_list(cols[:m])}, 'cluster', 2, 0.7, 0.66, absolute := true) "
                                        "WHERE attribute = '(all)'").fetchall()[0][0]
                    row.append(share)
                print(f"{name:>10} {method:>9} {m:>5} " + " ".join(f"{v:>7.3f}" for v in row))


def rules_table(con, sets) -> None:
    print("\n2. Share of sensitive cells under each rule (MDAV, all attributes)")
    heads = [f"({n},{r})" for n, r in DOMINANCE] + [f"p={p}" for p in P_VALUES]
    print(f"{'data set':>10} {'k':>4} " + " ".join(f"{h:>8}" for h in heads))
    flags = ([f"dominance_sensitive(v, {n}, {r}, absolute := true)" for n, r in DOMINANCE]
             + [f"p_percent_sensitive(v, {p}, absolute := true)" for p in P_VALUES])
    for name, cols in sets.items():
        quoted = ['"' + c + '"' for c in cols]
        for k in KS:
            con.execute(f"CREATE OR REPLACE TEMP TABLE clustered AS SELECT * FROM {clusters(name, 'mdav_multi', cols, k)}")
            shares = con.execute(f"""
                WITH cells AS (
                    SELECT {", ".join(f"{f} AS c{i}" for i, f in enumerate(flags))}
                    FROM (UNPIVOT (SELECT cluster, {", ".join(f"{q}::DOUBLE AS {q}" for q in quoted)} FROM clustered)
                          ON {", ".join(quoted)} INTO NAME attribute VALUE v)
                    GROUP BY cluster, attribute)
                SELECT {", ".join(f"avg(c{i}::INTEGER)" for i in range(len(flags)))} FROM cells""").fetchall()[0]
            print(f"{name:>10} {k:>4} " + " ".join(f"{v:>8.3f}" for v in shares))


def il(X: np.ndarray, labels: np.ndarray) -> float:
    """100 SSE / SST on the standardised attributes (the literature's information loss)."""
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    sse = sum(((Z[labels == g] - Z[labels == g].mean(axis=0)) ** 2).sum() for g in np.unique(labels))
    return 100 * sse / ((Z - Z.mean(axis=0)) ** 2).sum()


def mitigation(con, cols) -> None:
    print("\n3. Mitigations on Tarragona, MDAV with k = 3, all 13 attributes")
    record = "[" + ", ".join('"' + c + '"' for c in cols) + "]"
    con.execute(f"CREATE TEMP TABLE rec AS SELECT list({record} ORDER BY rowid) AS r FROM tarragona")
    X = np.array(con.execute("SELECT r FROM rec").fetchall()[0][0], dtype=float)
    labels = np.array(con.execute("SELECT mdav_multi_labels(r, 3) FROM rec").fetchall()[0][0])
    print(f"{'rule':>14} {'primary':>8} {'secondary':>9} {'released':>9} | "
          f"{'clusters':>8} {'sizes':>9} {'IL before':>9} {'IL after':>9}")
    for label, call in (("(1, 0.6)", "dominance_{}(r, l, 1, 0.6, absolute := true)"),
                        ("(2, 0.7)", "dominance_{}(r, l, 2, 0.7, absolute := true)"),
                        ("p% 0.66", "p_percent_{}(r, l, 0.66, absolute := true)")):
        base = "FROM (SELECT r, mdav_multi_labels(r, 3) AS l FROM rec)"
        s = con.execute(f"SELECT {call.format('suppress')} {base}").fetchall()[0][0]
        merged = np.array(con.execute(f"SELECT {call.format('merge')} {base}").fetchall()[0][0])
        sizes = np.bincount(merged)
        cells = labels.max() + 1
        print(f"{label:>14} {s['primary_cells']:>8} {s['secondary_cells']:>9} "
              f"{1 - (s['primary_cells'] + s['secondary_cells']) / (cells * len(cols)):>9.1%} | "
              f"{sizes.size:>8} {f'{sizes.min()}..{sizes.max()}':>9} {il(X, labels):>9.3f} {il(X, merged):>9.3f}")
    print("(primary: sensitive cells made NULL; secondary: further cells made NULL so that every primary one keeps "
          "its protection level; released: "
          "share of cells still published.\n dynamic k: clusters after merging every cluster with a sensitive cell "
          "into its nearest one, their sizes, and 100 SSE/SST before and after)")


def main() -> int:
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    sets = load(con)
    share_table(con, sets)
    rules_table(con, sets)
    mitigation(con, sets["tarragona"])
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
