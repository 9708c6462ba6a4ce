-- Refused: region and age are released as they are, so most records are alone in their class and
-- the policy's min_k = 5 cannot hold; the release is measured before anything is written, and the
-- model fails with the breach. Enabled with --vars '{show_refusals: true}'.
{{ config(materialized='sdc_release', enabled=var('show_refusals', false),
          release_spec={'source': {'key': 'person_id'},
                        'columns': {'person_id': 'drop', 'region': 'keep', 'age': 'keep',
                                    'income': {'method': 'mdav_round', 'k': 5}, 'expenses': 'drop'},
                        'policy': {'min_k': 5}}) }}

select * from {{ ref('people') }}
