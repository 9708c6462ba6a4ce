"""Do the bounded rank measures rank maskings the way the classical information-loss measures do?
The shape of the bounded rank-measures paper's experiment, on the Tarragona firms (834 x 13) and the
Census set (1080 x 13): each set is masked by three methods at six increasing strengths,

* multivariate MDAV with k = 3, 5, 10, 20, 50, 100 (`mdav_multi_round`),
* uncorrelated noise with variance 1, 5, 10, 25, 50, 100 % of each column's (`add_noise`),
* rank swapping with p = 1, 2, 5, 10, 15, 20 % (`rank_swap`),

all in SQL; each of the 18 masked sets gets brMAE and brMSE (`rank_bounded_mae` / `_mse`) and MAE,
MSE, IL1 and IL1s, over all 13 columns. The 18 masked sets are ranked by each measure, and the
last table gives Spearman's correlation between the ranking by a bounded rank measure and the
ranking by each classical one (1: the same order). Within one method every measure grows with the
strength; across methods they can disagree, because MAE and MSE are dominated by the columns with
the largest values and IL1 by the values near zero, while the rank measures weigh every column
alike.

    .venv/bin/python examples/perturbation_rankings.py
"""

from __future__ import annotations


import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import duckdb_sdc
from duckdb_sdc.datasets import load as load_dataset
from duckdb_sdc.measures import il1, il1s, mae, mse, rank_bounded_mae, rank_bounded_mse

SETS = ("Tarragona", "Census")
STRENGTHS = {
    "mdav": ("k", [3, 5, 10, 20, 50, 100]),
    "noise": ("level", [0.01, 0.05, 0.10, 0.25, 0.50, 1.00]),
    "swap": ("p", [1, 2, 5, 10, 15, 20]),
}
BOUNDED = {"brMAE": rank_bounded_mae, "brMSE": rank_bounded_mse}
CLASSICAL = {"MAE": mae, "MSE": mse, "IL1": il1, "IL1s": il1s}


def masked_sets(con, df: pd.DataFrame):
    """(method, strength, masked n x p array in the records' order) for every method and strength."""
    cols = list(df.columns)
    con.register("src", df.assign(__id=np.arange(len(df))))
    quoted = [f'"{c}"' for c in cols]
    rows = "list([" + ", ".join(f"{q}::DOUBLE" for q in quoted) + "] ORDER BY __id)"
    for k in STRENGTHS["mdav"][1]:
        (records,) = con.execute(f"SELECT mdav_multi_round({rows}, {k}) FROM src").fetchall()[0]
        yield "mdav", k, np.array(records, dtype=float)
    for method, call in (("noise", "add_noise"), ("swap", "rank_swap")):
        for strength in STRENGTHS[method][1]:
            items = ", ".join(f"{call}(list({q} ORDER BY __id), {strength}, seed := {j})" for j, q in enumerate(quoted))
            lists = con.execute(f"SELECT {items} FROM src").fetchall()[0]
            yield method, strength, np.column_stack([np.array(v, dtype=float) for v in lists])


def main() -> int:
    frames = {name: load_dataset(name) for name in SETS}
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    table = []
    for name, df in frames.items():
        x = df.to_numpy(dtype=float)
        values = []
        for method, strength, xm in masked_sets(con, df):
            row = {"set": name, "method": method, "strength": strength}
            row |= {m: f(x, xm) for m, f in (BOUNDED | CLASSICAL).items()}
            values.append(row)
        values = pd.DataFrame(values)
        print(f"{name}: {x.shape[0]} records x {x.shape[1]} columns, 18 masked sets")
        print(values.drop(columns="set").to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print()
        for bounded in BOUNDED:
            rho = {c: spearmanr(values[bounded], values[c]).statistic for c in CLASSICAL}
            table.append({"set": name, "bounded measure": bounded} | rho)
    print("Spearman correlation between the rankings of the 18 masked sets")
    print(pd.DataFrame(table).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    con.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
