-- 2. Mask: income by MDAV, expenses by optimal microaggregation, groups of at least 5 records
-- within each region. One list of structs per region keeps ids and masked values aligned.
CREATE OR REPLACE TABLE people_masked AS
WITH by_region AS (
    SELECT region,
           list({'id': person_id, 'income': income, 'expenses': expenses} ORDER BY person_id) AS l
    FROM people
    GROUP BY region
),
masked AS (
    SELECT unnest(l).id AS person_id,
           unnest(mdav_round(list_transform(l, lambda s: s.income), 5)) AS income,
           unnest(oma_round(list_transform(l, lambda s: s.expenses), 5)) AS expenses
    FROM by_region
)
SELECT p.person_id, p.region, p.age, m.income, m.expenses
FROM people AS p
JOIN masked AS m USING (person_id)
ORDER BY p.person_id;

-- One column at a time, the table form returns the whole table with that column masked:
SELECT * FROM mdav_round_table('people', 'income', 5, strata := 'region') ORDER BY person_id LIMIT 5;
