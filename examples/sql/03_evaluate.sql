-- 3. Evaluate: what the masking cost and what it protects, in plain SQL.
-- Utility per column: means kept, spread, SSE/SST (share of the variance moved) and correlation.
SELECT 'income' AS "column",
       round(avg(p.income), 1) AS mean_before, round(avg(m.income), 1) AS mean_after,
       round(100 * sum((p.income - m.income) ^ 2)
                 / sum((p.income - (SELECT avg(income) FROM people)) ^ 2), 3) AS "SSE/SST %",
       round(corr(p.income, m.income), 4) AS corr
FROM people AS p JOIN people_masked AS m USING (person_id)
UNION ALL
SELECT 'expenses',
       round(avg(p.expenses), 1), round(avg(m.expenses), 1),
       round(100 * sum((p.expenses - m.expenses) ^ 2)
                 / sum((p.expenses - (SELECT avg(expenses) FROM people)) ^ 2), 3),
       round(corr(p.expenses, m.expenses), 4)
FROM people AS p JOIN people_masked AS m USING (person_id);

-- Protection: the smallest number of records sharing a released value within a region (k-anonymity
-- of each masked column; it must be at least 5).
SELECT 'income' AS "column", min(n) AS smallest_group
FROM (SELECT count(*) AS n FROM people_masked WHERE income IS NOT NULL GROUP BY region, income)
UNION ALL
SELECT 'expenses', min(n)
FROM (SELECT count(*) AS n FROM people_masked WHERE expenses IS NOT NULL GROUP BY region, expenses)
ORDER BY 1;
