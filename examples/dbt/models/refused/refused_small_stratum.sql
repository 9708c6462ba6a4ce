-- Refused: groups of 100 records within each region, but no region has 100 people; the release names
-- the stratum and its size (set [masking] small_strata to pool small strata instead). Enabled with
-- --vars '{show_refusals: true}'.
{{ config(materialized='sdc_release', enabled=var('show_refusals', false),
          release_spec={'source': {'key': 'person_id'}, 'masking': {'strata': ['region']},
                        'columns': {'person_id': 'drop', 'region': 'keep', 'age': 'drop',
                                    'income': {'method': 'mdav_round', 'k': 100}, 'expenses': 'drop'}}) }}

select * from {{ ref('people') }}
