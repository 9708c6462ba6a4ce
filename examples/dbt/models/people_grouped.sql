-- age, income and expenses masked together by multivariate MDAV within each region: every record's
-- triple is replaced by the centroid of a cluster of at least k records, so the triple is k-anonymous
-- (the univariate people_masked is k-anonymous per column only). The table macro takes what ref()
-- renders, as text (duckdb_sdc.sdc_table quotes it): the seed's table in a build, the same relation
-- without a row under `dbt build --empty`, the fixture rows' CTE in a unit test. A record with a
-- NULL in any of the three takes no part and is released with all three NULL.
{{ config(materialized='table') }}

select *
from mdav_multi_round_table({{ duckdb_sdc.sdc_table(ref('people')) }}, ['age', 'income', 'expenses'], {{ var('k') }},
                            strata := 'region')
