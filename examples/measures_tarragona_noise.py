"""Do the information-loss measures track the amount of masking? On the Tarragona firms
(bundled with the package: datasets.load('tarragona'), 834 x 13), add Gaussian noise at levels 1..300 percent of each
column's standard deviation (seeded), compute brMAE, brMSE, MAE, MSE, IL1 and IL1s in SQL for every
level (GROUP BY level and column, then the mean over the 13 columns, which is the 1 / (n p) form),
and print the Spearman correlation of each measure with the noise level. The bounded rank measures'
paper (Chaibub Neto) finds all of them strongly increasing with the noise.

    .venv/bin/python examples/measures_tarragona_noise.py
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

import duckdb_sdc
from duckdb_sdc import datasets

LEVELS = np.arange(1, 301)  # percent of each column's sd
MEASURES = ("rank_bounded_mae", "rank_bounded_mse", "mae", "mse", "il1", "il1s")


def main() -> int:
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    firms = datasets.load("tarragona")
    x = firms.to_numpy(dtype=float)
    sd = x.std(axis=0, ddof=1)
    rng = np.random.default_rng(20240601)
    n, p = x.shape
    parts = []
    for level in LEVELS:
        xm = x + rng.normal(size=x.shape) * (level / 100 * sd)
        parts.append(pd.DataFrame({"level": level, "col": np.tile(np.arange(p), n),
                                   "x": x.ravel(), "xm": xm.ravel()}))
    con.register("noisy_df", pd.concat(parts, ignore_index=True))
    con.execute("CREATE TABLE noisy AS FROM noisy_df")  # level, col, x, xm: 300 x 834 x 13 rows
    per_level = con.execute(f"""
        SELECT level, {', '.join(f'avg({name}) AS {name}' for name in MEASURES)}
        FROM (SELECT level, col, {', '.join(f'{name}(x, xm) AS {name}' for name in MEASURES)}
              FROM noisy GROUP BY level, col)
        GROUP BY level ORDER BY level""").df()
    print(f"Tarragona, {n} firms x {p} columns, Gaussian noise at 1..300% of each column's sd\n")
    print(f"{'measure':>18} {'at 1%':>12} {'at 100%':>12} {'at 300%':>12} {'Spearman rho':>13}")
    for name in MEASURES:
        values = per_level[name].to_numpy()
        rho = spearmanr(per_level["level"], values).statistic
        print(f"{name:>18} {values[0]:>12.4g} {values[99]:>12.4g} {values[299]:>12.4g} {rho:>13.4f}")
    con.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
