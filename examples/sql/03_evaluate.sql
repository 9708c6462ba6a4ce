-- 3. Evaluate: what the masking cost and what it protects, with duckdb_sdc's measure functions.
-- Run it in `duckdb-sdc sql` (record_linkage, interval_disclosure and evaluate_masking are
-- Python-backed). mae, il1s and sse_sst are pure SQL macros: in the plain DuckDB shell they work
-- after `.read sql/10_measures.sql`.

-- Information loss per column: mean absolute error, IL1s (in standard deviations of the original)
-- and SSE/SST (% of the variance moved); a pair with a NULL side is left out.
SELECT 'income' AS "column", round(mae(p.income, m.income), 1) AS mae,
       round(il1s(p.income, m.income), 5) AS il1s, round(sse_sst(p.income, m.income), 4) AS "SSE/SST %"
FROM people AS p JOIN people_masked AS m USING (person_id)
UNION ALL
SELECT 'expenses', round(mae(p.expenses, m.expenses), 1),
       round(il1s(p.expenses, m.expenses), 5), round(sse_sst(p.expenses, m.expenses), 4)
FROM people AS p JOIN people_masked AS m USING (person_id);

-- The measures are aggregates: per region with GROUP BY.
SELECT p.region, round(il1s(p.income, m.income), 5) AS il1s_income, count(*) AS people
FROM people AS p JOIN people_masked AS m USING (person_id)
GROUP BY p.region
ORDER BY p.region;

-- Disclosure risk over both columns (each record a row vector): the share of masked records whose
-- nearest original is their own (record linkage), and of records whose originals all lie within
-- 5% of a standard deviation of their masked values (interval disclosure).
SELECT round(record_linkage([p.income, p.expenses], [m.income, m.expenses]), 4) AS record_linkage,
       round(interval_disclosure([p.income, p.expenses], [m.income, m.expenses]), 4) AS interval_disclosure
FROM people AS p JOIN people_masked AS m USING (person_id);

-- Every measure at once, per column and for both columns together (column NULL), as a tidy table.
SELECT measure, "column", round(value, 6) AS value
FROM evaluate_masking('people', 'people_masked', 'person_id', columns := ['income', 'expenses']);

-- Protection: the smallest number of records sharing a released value within a region (k-anonymity
-- of each masked column; it must be at least 5).
SELECT 'income' AS "column", min(n) AS smallest_group
FROM (SELECT count(*) AS n FROM people_masked WHERE income IS NOT NULL GROUP BY region, income)
UNION ALL
SELECT 'expenses', min(n)
FROM (SELECT count(*) AS n FROM people_masked WHERE expenses IS NOT NULL GROUP BY region, expenses)
ORDER BY 1;
