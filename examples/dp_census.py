"""The seed paper's experiment on the Census set (bundled: sdc_dataset('census')): plain Laplace
DP, DP-UM, iDP-LS and iDP-CBLS releases of nine attributes, for total budgets epsilon in
{0.01, 0.1, 1} (split equally: epsilon / 9 per attribute) and cluster sizes k from 3 to 100, with the
domains [0, a * observed max] for a in {1, 2, 5}.

Error: SSE = sum over attributes and records of (original - released)^2 / sample variance of the
attribute, averaged over 10 runs. The runs are strata of one query (the table form with
strata := 'run'), each with its own noise; the seed makes this printout reproducible, and a seeded
release carries no privacy guarantee: a real release omits it.

    .venv/bin/python examples/dp_census.py [--per-attribute]

--per-attribute gives every attribute the budget epsilon (the release's total is then 9 epsilon).

Prints the table and, if the plotting extra is installed (pip install 'duckdb-sdc[plot]'), saves a
plot of SSE against k in the temporary directory.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

import duckdb_sdc

ATTRIBUTES = ("AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "STATETAX", "TAXINC", "POTHVAL", "INTVAL", "FICA")
EPSILONS = (0.01, 0.1, 1.0)
KS = (3, 5, 10, 25, 50, 100)
AS = (1, 2, 5)
RUNS = 10
MECHANISMS = ("dp_laplace", "dp_um", "idp_ls", "idp_cbls")
VARIANCES: dict[str, float] = {}
PER_ATTRIBUTE = "--per-attribute" in sys.argv[1:]  # epsilon per attribute (total 9 epsilon) instead


def mean_sse(con, mechanism: str, eps: float, a: float, maxima: list[float]) -> dict[int, float]:
    """Mean SSE over the runs for every k: one query, the list form grouped by (run, k), each group
    with its own seed."""
    total = eps * len(ATTRIBUTES) if PER_ATTRIBUTE else eps
    (eps_j,) = {e for _, e in con.execute(f"SELECT * FROM dp_budget({list(ATTRIBUTES)}, {total!r})").fetchall()}
    kk = "" if mechanism == "dp_laplace" else "k, "
    released = ", ".join(
        f"{mechanism}(o{j}, {kk}{eps_j!r}, 0, {a * m!r}, seed := hash(2025, run, k, {j}) >> 1) AS r{j}"
        for j, m in enumerate(maxima))
    originals = ", ".join(f"list({c} ORDER BY rid) AS o{j}" for j, c in enumerate(ATTRIBUTES))
    sse = " + ".join(f"list_sum(list_transform(list_zip(o{j}, r{j}), lambda p: (p[1] - p[2]) ^ 2)) / {v!r}"
                     for j, v in enumerate(VARIANCES[c] for c in ATTRIBUTES))
    rows = con.execute(f"""
        WITH lists AS (SELECT run, {originals} FROM runs GROUP BY run),
             released AS (SELECT run, k, lists.*, {released}
                          FROM lists, (SELECT unnest({list(KS)}) AS k))
        SELECT k, avg({sse}) FROM released GROUP BY k""").fetchall()
    return dict(rows)


def plot(results, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, len(EPSILONS), figsize=(4 * len(EPSILONS), 3.5), sharey=True)
    for ax, eps in zip(axes, EPSILONS):
        for mechanism in MECHANISMS:
            ax.plot(KS, [results[(mechanism, k, eps, AS[0])] for k in KS], marker="o", label=mechanism)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"epsilon = {eps} (a = {AS[0]})")
        ax.set_xlabel("k")
    axes[0].set_ylabel("mean SSE / variance")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path)
    return True


def main() -> int:
    con = duckdb_sdc.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"CREATE TABLE census AS SELECT row_number() OVER () AS rid, "
                f"{', '.join(f'{c}::DOUBLE AS {c}' for c in ATTRIBUTES)} FROM sdc_dataset('census')")
    con.execute(f"CREATE TABLE runs AS SELECT run, census.* FROM census, range({RUNS}) t(run)")
    n = con.execute("SELECT count(*) FROM census").fetchall()[0][0]
    maxima = list(con.execute(f"SELECT {', '.join(f'max({c})' for c in ATTRIBUTES)} FROM census").fetchall()[0])
    VARIANCES.update(zip(ATTRIBUTES, con.execute(
        f"SELECT {', '.join(f'var_samp({c})' for c in ATTRIBUTES)} FROM census").fetchall()[0]))
    budget = ("epsilon per attribute (the release's total is 9 epsilon)" if PER_ATTRIBUTE
              else "epsilon is the release's total, split equally over the attributes (dp_budget)")
    print(f"Census: {n} records, {len(ATTRIBUTES)} attributes; mean over {RUNS} runs of "
          f"SSE = sum (x - x')^2 / var(x); {budget}\n")

    results = {}
    for a in AS:
        for eps in EPSILONS:
            for mechanism in MECHANISMS:
                for k, value in mean_sse(con, mechanism, eps, a, maxima).items():
                    results[(mechanism, k, eps, a)] = value

    header = f"{'a':>3} {'epsilon':>7} {'k':>4} " + " ".join(f"{m:>11}" for m in MECHANISMS) + "  DP-UM / CBLS"
    print(header)
    print("-" * len(header))
    for a in AS:
        for eps in EPSILONS:
            for k in KS:
                row = [results[(m, k, eps, a)] for m in MECHANISMS]
                print(f"{a:>3} {eps:>7} {k:>4} " + " ".join(f"{v:>11.3e}" for v in row)
                      + f"  {row[1] / row[3]:>12.0f}")
    gains = [math.log10(results[("dp_um", k, e, a)] / results[("idp_cbls", k, e, a)])
             for a in AS for e in EPSILONS for k in KS]
    gains_plain = [math.log10(results[("dp_laplace", k, e, a)] / results[("idp_cbls", k, e, a)])
                   for a in AS for e in EPSILONS for k in KS]
    print(f"\niDP-CBLS is {min(gains):.1f} to {max(gains):.1f} orders of magnitude more accurate than DP-UM, "
          f"and {min(gains_plain):.1f} to {max(gains_plain):.1f} than plain Laplace DP.")
    path = Path(tempfile.gettempdir()) / "duckdb_sdc_dp_census.png"
    if plot(results, path):
        print(f"plot: {path}")
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
