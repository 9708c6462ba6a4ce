-- income and expenses masked together by multivariate MDAV within each region: every record's pair is
-- replaced by the centroid of a cluster of at least k records, so the pair is k-anonymous (the
-- univariate people_masked is k-anonymous per column only). The table macro takes the relation as
-- ref() renders it ('"db"."main"."people"'). A record with a NULL in either column takes no part and
-- is released with both NULL.
{{ config(materialized='table') }}

select *
from mdav_multi_round_table('{{ ref("people") }}', ['income', 'expenses'], {{ var('k') }}, strata := 'region')
