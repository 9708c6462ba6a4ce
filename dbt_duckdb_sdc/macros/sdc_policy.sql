{#-
  sdc_policy: a generic model test that gates a masked model on disclosure-risk limits, measured against
  the original relation it was masked from (joined on `key`). It fails with one row per limit breached:
  the limit, the measured value and the allowed one. A measure that cannot be computed (no record, no
  linkage column) fails its limit: a rule that cannot decide never answers "safe".

  The limits and their measures are those of a release spec's [policy] table:
    min_k                    k-anonymity: the smallest number of records sharing one combination of the
                             quasi_identifiers (NULL counts as a value: a rare NULL identifies too)
    max_unique_share         the share of records alone in their combination
    max_record_linkage       record_linkage (distance-based, rank 1) between the original and the
                             masked linkage_columns, over the records complete in all of them
    max_interval_disclosure  interval_disclosure (half_width = 0.05) on the same columns and records
  The two linkage measures need the duckdb_sdc functions, so the profile must load the plugin
  duckdb_sdc.dbt_plugin; min_k and max_unique_share are plain SQL.

      data_tests:
        - sdc_policy:
            arguments:
              original: "{{ ref('people') }}"
              key: person_id
              quasi_identifiers: [region, income, expenses]
              linkage_columns: [income, expenses]
              min_k: 5
              max_unique_share: 0
              max_record_linkage: 0.1
              max_interval_disclosure: 0.5
-#}
{% test sdc_policy(model, original, key, quasi_identifiers, linkage_columns=none, min_k=none, max_unique_share=none,
                   max_record_linkage=none, max_interval_disclosure=none) %}
{%- set q = duckdb_sdc.sdc_names(quasi_identifiers, "sdc_policy", "quasi_identifiers") -%}
{%- set linked = duckdb_sdc.sdc_names(linkage_columns, "sdc_policy", "linkage_columns", required=false) -%}
{%- set limits = [] -%}
{%- if min_k is not none -%}{%- do limits.append(("min_k", "k_anonymity", ">=", duckdb_sdc.sdc_whole_number(min_k, "sdc_policy", "min_k", 1))) -%}{%- endif -%}
{%- if max_unique_share is not none -%}{%- do limits.append(("max_unique_share", "unique_share", "<=", duckdb_sdc.sdc_fraction(max_unique_share, "sdc_policy", "max_unique_share"))) -%}{%- endif -%}
{%- if max_record_linkage is not none -%}{%- do limits.append(("max_record_linkage", "record_linkage", "<=", duckdb_sdc.sdc_fraction(max_record_linkage, "sdc_policy", "max_record_linkage"))) -%}{%- endif -%}
{%- if max_interval_disclosure is not none -%}{%- do limits.append(("max_interval_disclosure", "interval_disclosure", "<=", duckdb_sdc.sdc_fraction(max_interval_disclosure, "sdc_policy", "max_interval_disclosure"))) -%}{%- endif -%}
{%- if not limits -%}
  {{ exceptions.raise_compiler_error("sdc_policy: give at least one limit (min_k, max_unique_share, max_record_linkage, max_interval_disclosure)") }}
{%- endif -%}
{%- set needs_linkage = max_record_linkage is not none or max_interval_disclosure is not none -%}
with __sdc_model as (
    select * from {{ model }}
),
__sdc_original as (
    select * from {{ original }}
),
__sdc_classes as (
    select count(*) as n from __sdc_model
    group by {% for c in q %}{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}
),
__sdc_measured as (
    select min(n)::double as k_anonymity,
           sum(case when n = 1 then 1 else 0 end)::double / sum(n) as unique_share
    {%- if needs_linkage and linked %},
           (select record_linkage([{% for c in linked %}o.{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}],
                                  [{% for c in linked %}m.{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}])
            from __sdc_original as o join __sdc_model as m using ({{ adapter.quote(key) }})) as record_linkage,
           (select interval_disclosure([{% for c in linked %}o.{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}],
                                       [{% for c in linked %}m.{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}])
            from __sdc_original as o join __sdc_model as m using ({{ adapter.quote(key) }})) as interval_disclosure
    {%- else %},
           null::double as record_linkage, null::double as interval_disclosure
    {%- endif %}
    from __sdc_classes
),
__sdc_limits as (
    {%- for name, measure, sign, allowed in limits %}
    select '{{ name }}' as policy_limit, {{ measure }} as measured, {{ allowed }}::double as allowed,
           {{ measure }} is not null and {{ measure }} {{ sign }} {{ allowed }} as holds,
           case when {{ measure }} is null then
               {% if measure in ("record_linkage", "interval_disclosure") and not linked -%}
               'not measured: give linkage_columns'
               {%- else -%}
               'not measured: no record'
               {%- endif %}
           end as note
    from __sdc_measured
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
)
select policy_limit, measured, allowed, note from __sdc_limits where not holds
{% endtest %}
