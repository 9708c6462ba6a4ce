-- people with the day each joined (DATE, the event time of refused_microbatch) and the time each was
-- last seen (TIMESTAMP), made up for the models that show dates: people_joined_shifted, whose dates
-- are shifted, fails policy_people_joined_shifted, measured on dates as a release measures them (epoch
-- seconds), and refused_microbatch is refused. Enabled with --vars '{show_refusals: true}'.
{{ config(materialized='table', enabled=var('show_refusals', false), event_time='joined') }}

select person_id, region, income,
       date '2024-01-01' + (person_id * 7 % 365)::integer as joined,
       timestamp '2024-01-01' + to_seconds(person_id * 7919 % 86400) as seen
from {{ ref('people') }}
