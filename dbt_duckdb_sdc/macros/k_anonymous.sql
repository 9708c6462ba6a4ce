{#-
  k_anonymous: a generic test that fails for every group of fewer than k records sharing their values.

  As a column test it checks that column alone; as a model test, `columns` together (one group per
  combination of their values). With `strata` (a column or a list) the groups are counted within each
  stratum, which is what a masking method masked apart. Records with a NULL in a tested column are
  left out: NULLs are not masked, they stay NULL in place (duckdb_sdc.sdc_policy counts a NULL as a
  value instead; use it to judge what an intruder sees).

      columns:
        - name: income
          data_tests:
            - k_anonymous: {arguments: {k: 5, strata: region}}
      data_tests:           # on the model
        - k_anonymous: {arguments: {k: 5, columns: [income, expenses], strata: [region]}}

  Each failing row is one group: its stratum and values and `records`, how many records share them.
-#}
{% test k_anonymous(model, k, column_name=none, columns=none, strata=none) %}
{%- set tested = [column_name] if column_name is not none else duckdb_sdc.sdc_names(columns, "k_anonymous", "columns") -%}
{%- set by = duckdb_sdc.sdc_names(strata, "k_anonymous", "strata", required=false) + tested -%}
{%- set size = duckdb_sdc.sdc_whole_number(k, "k_anonymous", "k", 1) -%}
select {% for c in by %}{{ adapter.quote(c) }}, {% endfor %}count(*) as records
from {{ model }}
where {% for c in tested %}{{ adapter.quote(c) }} is not null{% if not loop.last %} and {% endif %}{% endfor %}
group by {% for c in by %}{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}
having count(*) < {{ size }}
{% endtest %}
