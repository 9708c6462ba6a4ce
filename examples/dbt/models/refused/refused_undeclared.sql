-- Refused: the query has a column (income_text, the income as text) that no rule declares; a release
-- never publishes a column it was not told about. Enabled with --vars '{show_refusals: true}'.
{{ config(materialized='sdc_release', enabled=var('show_refusals', false),
          release_spec={'source': {'key': 'person_id'},
                        'columns': {'person_id': 'drop', 'region': 'keep', 'age': 'drop',
                                    'income': {'method': 'mdav_round', 'k': 5}, 'expenses': 'drop'}}) }}

select *, income::varchar as income_text from {{ ref('people') }}
