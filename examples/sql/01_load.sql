-- 1. Load: the example people (240 generated records, also the dbt example's seed).
-- Run the three scripts in order from the repository root, in `duckdb-sdc sql` (a DuckDB prompt
-- with every duckdb_sdc function registered):
--     duckdb-sdc sql example.duckdb -f examples/sql/01_load.sql
--     duckdb-sdc sql example.duckdb -f examples/sql/02_mask.sql
--     duckdb-sdc sql example.duckdb -f examples/sql/03_evaluate.sql
-- This script and 03 use plain SQL only and also run in the DuckDB shell.
CREATE OR REPLACE TABLE people AS
SELECT * FROM read_csv('examples/dbt/seeds/people.csv');

SELECT region, count(*) AS people, count(income) AS with_income, round(avg(income)) AS mean_income
FROM people
GROUP BY region
ORDER BY region;
