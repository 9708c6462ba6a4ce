"""The seed paper's experiment on synthetic data, in SQL: rounding by discretisation (EWD, EFD, KMD,
RBD with c intervals) beside rounding by univariate microaggregation (MDAV, V-MDAV, optimal with
k = ceil(500 / c)), information loss (IL1s) against interval disclosure risk (IDR, k = 0.05).

Data: for each law (exponential with rate 0.08, uniform(0, 1), normal(0, 1)) two independent
columns of 500 values, seeded. Each column is rounded on its own; both measures are taken over the
two columns together (IL1s averaged over the columns, IDR on the record as a whole).

    .venv/bin/python examples/rounding_tradeoff_synthetic.py
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import duckdb_sdc

N = 500
CS = (3, 5, 10, 15, 20, 25)
DISCRETISATION = ("ewd", "efd", "kmd", "rbd")
MICROAGGREGATION = ("mdav", "vmdav", "oma")
LAWS = {
    "exponential(0.08)": lambda rng: rng.exponential(1 / 0.08, N),
    "uniform(0,1)": lambda rng: rng.uniform(0, 1, N),
    "normal(0,1)": lambda rng: rng.normal(0, 1, N),
}

MASK = """
SELECT unnest(l).id AS id,
       unnest({f}(list_transform(l, lambda s: s.a), {p})) AS am,
       unnest({f}(list_transform(l, lambda s: s.b), {p})) AS bm
FROM (SELECT list(struct_pack(id := id, a := a, b := b) ORDER BY id) AS l FROM data)
"""
MEASURE = """
SELECT (il1s(a, am) + il1s(b, bm)) / 2, interval_disclosure([a, b], [am, bm], half_width := 0.05)
FROM data JOIN ({masked}) USING (id)
"""


def run(con) -> pd.DataFrame:
    rows = []
    for seed, (law, draw) in enumerate(LAWS.items()):
        rng = np.random.default_rng(1000 + seed)
        con.register("law_df", pd.DataFrame({"id": np.arange(N), "a": draw(rng), "b": draw(rng)}))
        con.execute("CREATE OR REPLACE TABLE data AS SELECT * FROM law_df")
        for c in CS:
            k = math.ceil(N / c)
            for method in DISCRETISATION + MICROAGGREGATION:
                param = f"{k}" if method in MICROAGGREGATION else f"{c}"
                if method == "rbd":
                    param += ", seed := 7"
                masked = MASK.format(f=f"{method}_round", p=param)
                il, risk = con.execute(MEASURE.format(masked=masked)).fetchall()[0]
                rows.append({"law": law, "c": c, "k": k, "method": method, "IL1s": il, "IDR": risk})
    return pd.DataFrame(rows)


def main() -> None:
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    table = run(con)
    con.close()
    pd.set_option("display.width", 140)
    for law, part in table.groupby("law", sort=False):
        print(f"\n{law}: IL1s (x100) / IDR (%) by number of intervals c (microaggregation with k = ceil(500/c))")
        il = part.pivot(index="method", columns="c", values="IL1s") * 100
        risk = part.pivot(index="method", columns="c", values="IDR") * 100
        order = list(DISCRETISATION + MICROAGGREGATION)
        both = il.loc[order].round(2).astype(str) + " / " + risk.loc[order].round(1).astype(str)
        print(both.to_string())
        best = part.loc[part.groupby("c")["IL1s"].idxmin(), ["c", "method"]]
        print("lowest IL1s per c: " + ", ".join(f"c={c}: {m}" for c, m in best.itertuples(index=False)))
    mean = table.groupby("method")[["IL1s", "IDR"]].mean().loc[list(DISCRETISATION + MICROAGGREGATION)]
    print("\nmean over laws and c (IL1s x100, IDR %):")
    print((mean * 100).round(2).to_string())


if __name__ == "__main__":
    main()
