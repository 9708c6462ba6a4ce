"""A release from spec to analyst, step by step (notebook style: each `# %%` is a cell).

Run it whole with `python examples/release_walkthrough.py`, or cell by cell in an editor that
knows `# %%` cells. It writes into a temporary folder and removes it at the end.
"""

# %% 1. A source database: the package's generated demo microdata
import tempfile
from pathlib import Path

import duckdb

from duckdb_sdc.demo import write_source
from duckdb_sdc.release import SpecError, dry_run, format_report, load_spec, parse_values, release, report, sweep
from duckdb_sdc.release.plan import parse_back

folder = Path(tempfile.mkdtemp(prefix="duckdb_sdc_walkthrough_"))
write_source(folder / "survey.duckdb", n=2000)
print(f"source: {folder / 'survey.duckdb'} (table people, 2000 rows)")

# %% 2. The spec: every column gets a rule; masked columns name a method of the package
spec_text = """
[source]
database = "survey.duckdb"
table = "people"
key = "person_id"

[output]
database = "release/people.duckdb"
table = "people"
linkage = "private/people_link.duckdb"

[masking]
strata = ["region"]

[columns]
person_id = "drop"
region = "keep"
age = "keep"
household_size = "drop"
income = { method = "mdav_round", k = 5 }
expenses = { method = "oma_round", k = 5 }
savings = { method = "vmdav_round", k = 5, gamma = 0.2, strata = [] }
"""
(folder / "people.toml").write_text(spec_text)
spec = load_spec(folder / "people.toml")

# %% 3. What will run: the SQL, built with sqlglot (a dry run reads only the source's columns)
script = dry_run(spec)
first_mask = script.index('CREATE TEMPORARY TABLE "__sdc_mask_1"')
print(f"{len(parse_back(script))} statements; the one that masks income:")
print(script[first_mask: script.index(";", first_mask) + 1])

# %% 4. Release: a separate DuckDB file, written atomically
result = release(spec)
print(f"released {result.rows} rows to {result.path} in {result.seconds:.1f} s")

# %% 5. An analyst opens it with any DuckDB client: nothing to install, nothing to register
analyst = duckdb.connect(str(result.path), read_only=True)
print(analyst.sql("SELECT region, count(*) AS people, round(avg(income)) AS mean_income, "
                  "round(avg(savings)) AS mean_savings FROM people GROUP BY region ORDER BY region"))
print(analyst.sql("SELECT column_name, rule, method, parameters, strata FROM release_manifest"))
analyst.close()

# %% 6. Before and after, side by side (the steward can, the analyst cannot: the source and the private
# linkage file, which maps every release row's position to its person_id, stay home)
steward = duckdb.connect()
steward.execute("ATTACH ? AS src (READ_ONLY)", [str(folder / "survey.duckdb")])
steward.execute("ATTACH ? AS rel (READ_ONLY)", [str(result.path)])
steward.execute("ATTACH ? AS link (READ_ONLY)", [str(result.linkage)])
print(steward.sql("""
    SELECT round(corr(s.income, r.income), 4) AS corr_income,
           round(corr(s.savings, r.savings), 4) AS corr_savings,
           count(*) FILTER (s.income = r.income) AS incomes_unchanged
    FROM src.people s
    JOIN link.release_linkage l ON l.key = s.person_id
    JOIN (SELECT rowid + 1 AS position, * FROM rel.people) r USING (position)"""))
steward.close()

# %% 7. The risk/utility report of the release (as `duckdb-sdc evaluate people.toml` prints it):
# a tidy DataFrame of every measure per column and overall, and k-anonymity of the quasi-identifiers
# (every released column, masked or kept: the kept age makes most records unique, and each section's
# verdict against the documented defaults says so). savings was
# masked over all regions (strata = []),
# so within a region fewer than 5 records can share a masked savings value: its k-anonymity shows it.
report_df = report(spec)
print(report_df[report_df["measure"].isin(["il1s", "record_linkage", "k_anonymity"])].to_string(index=False))
print(format_report(report_df[report_df["section"] == "k-anonymity"]))

# %% 8. Choosing k: the same spec masked in memory for k = 3, 6, ..., 30 (nothing written)
data = sweep(spec, "k", parse_values("k", "3..30:3"))
overall = data[data["column"].isna() & data["measure"].isin(["il1s", "record_linkage"])]
print(overall.pivot(index="parameter_value", columns="measure", values="value").round(4))

# %% 9. Privacy by default: a column without a rule stops the release
(folder / "people.toml").write_text(spec_text.replace('household_size = "drop"\n', ""))
try:
    release(load_spec(folder / "people.toml"))
except SpecError as e:
    print(f"refused, as it should be: {e}")

# %% clean up
import shutil

shutil.rmtree(folder)
