-- Refused: a release is rebuilt whole on every run (docs/dbt.md, Incremental models). Enabled with
-- --vars '{show_refusals: true}'.
{{ config(materialized='sdc_release', enabled=var('show_refusals', false), unique_key='person_id',
          release_spec={'source': {'key': 'person_id'},
                        'columns': {'person_id': 'drop', 'region': 'keep', 'age': 'drop',
                                    'income': {'method': 'mdav_round', 'k': 5}, 'expenses': 'drop'}}) }}

select * from {{ ref('people') }}
