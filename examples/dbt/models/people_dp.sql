-- income released with iDP-CBLS (individual differential privacy on microaggregated data), within
-- each region: clusters of k records of consecutive incomes share one noised mean, the noise scaled
-- to the cluster's local sensitivity over epsilon. Fresh noise on every build (no seed: a seed would
-- void the guarantee); outputs are clamped to the declared domain [0, income_max].
{{ config(materialized='table') }}

with by_region as (
    select region,
           list({'id': person_id, 'income': income} order by person_id) as l
    from {{ ref('people') }}
    group by region
),
released as (
    select unnest(l).id as person_id,
           unnest(idp_cbls(list_transform(l, lambda s: s.income), {{ var('k') }}, {{ var('epsilon') }},
                           lb := 0, ub := {{ var('income_max') }})) as income
    from by_region
)
select p.person_id, p.region, p.age, r.income
from {{ ref('people') }} as p
join released as r using (person_id)
