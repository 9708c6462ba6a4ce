-- age, income and expenses masked together by multivariate MDAV within each region: every record's
-- triple is replaced by the centroid of a cluster of at least k records, so the triple is k-anonymous
-- (the univariate people_masked is k-anonymous per column only). The table macro reads the CTE
-- `people`, so that it gets what ref() renders in every case: the seed's table, an empty relation
-- under `dbt build --empty`, the fixture rows of a unit test. A record with a NULL in any of the
-- three takes no part and is released with all three NULL.
{{ config(materialized='table') }}

with people as (
    select * from {{ ref('people') }}
)
select *
from mdav_multi_round_table('people', ['age', 'income', 'expenses'], {{ var('k') }}, strata := 'region')
