-- income and expenses masked with mdav_round (groups of at least k records) within each region.
-- One list of structs per region keeps ids and masked values aligned; materialised as a table,
-- so any DuckDB client can read it without duckdb_sdc.
{{ config(materialized='table') }}

with by_region as (
    select region,
           list({'id': person_id, 'income': income, 'expenses': expenses} order by person_id) as l
    from {{ ref('people') }}
    group by region
),
masked as (
    select unnest(l).id as person_id,
           unnest(mdav_round(list_transform(l, lambda s: s.income), {{ var('k') }})) as income,
           unnest(mdav_round(list_transform(l, lambda s: s.expenses), {{ var('k') }})) as expenses
    from by_region
)
select p.person_id, p.region, p.age, m.income, m.expenses
from {{ ref('people') }} as p
join masked as m using (person_id)
