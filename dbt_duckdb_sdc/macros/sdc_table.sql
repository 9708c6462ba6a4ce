{#-
  sdc_table: the table argument of a duckdb_sdc table macro, from a relation: what `ref()` or `source()`
  renders, as a SQL string (its quotes doubled), which the table macros read as that relation.

      select * from mdav_multi_round_table({{ duckdb_sdc.sdc_table(ref('people')) }}, ['age', 'income'], 5,
                                           strata := 'region')

  In a build that is the relation's quoted name; under `dbt build --empty` the relation without a
  row; in a unit test the fixture rows' CTE; under `dbt build --sample` the relation filtered on its
  event time (the table macros read that filter and nothing else). A microbatch model is refused at
  compile time: it masks each batch of its input alone, so k-anonymity and every group would hold
  within one batch only, and a batch with fewer than k records in a stratum would fail the build
  (docs/dbt.md, Incremental models).
-#}
{% macro sdc_table(relation) %}
  {%- if execute and config.get('incremental_strategy') == 'microbatch' -%}
    {%- set message = "sdc_table: model " ~ model.name ~ " is a microbatch model, which masks each batch of its input "
        ~ "alone (this batch: " ~ relation ~ "): k-anonymity and every group would hold within one batch only, and a "
        ~ "batch with fewer than k records in a stratum would fail; mask the whole relation in a table model or an "
        ~ "sdc_release model (docs/dbt.md, Incremental models)" -%}
    {#- dbt shows a batch's compilation error in its log file only: the console gets the message too -#}
    {%- do log(message, info=True) -%}
    {{ exceptions.raise_compiler_error(message) }}
  {%- endif -%}
  {{- return("'" ~ (relation | string | replace("'", "''")) ~ "'") -}}
{% endmacro %}
