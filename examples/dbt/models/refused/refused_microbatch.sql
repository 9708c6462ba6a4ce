-- Refused: a microbatch model masks each batch of its input alone (here one batch a year of
-- people_joined), so k-anonymity would hold within a batch only and a batch with fewer than k
-- records in a stratum would fail. duckdb_sdc.sdc_table refuses a microbatch model when it compiles
-- (docs/dbt.md, Incremental models). Enabled with --vars '{show_refusals: true}'.
{{ config(materialized='incremental', incremental_strategy='microbatch', enabled=var('show_refusals', false),
          event_time='joined', begin='2024-01-01', batch_size='year') }}

select *
from mdav_round_table({{ duckdb_sdc.sdc_table(ref('people_joined')) }}, 'income', 5, strata := 'region')
