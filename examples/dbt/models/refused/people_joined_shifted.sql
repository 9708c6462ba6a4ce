-- people_joined with its dates shifted by a few days and its times by a few minutes (not a duckdb_sdc
-- method: just dates that differ from the original). Its policy, policy_people_joined_shifted, measures
-- the record linkage of the dates: it fails. Enabled with --vars '{show_refusals: true}'.
{{ config(materialized='table', enabled=var('show_refusals', false)) }}

select person_id, region, income,
       joined + (person_id % 5 - 2)::integer as joined,
       seen + to_seconds((person_id % 7 - 3) * 600) as seen
from {{ ref('people_joined') }}
