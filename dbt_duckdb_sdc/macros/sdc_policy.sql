{#-
  sdc_policy: a generic model test that gates a masked model on disclosure-risk limits, measured against
  the original relation it was masked from (joined on `key`). It fails with one row per limit breached:
  the limit, the measured value and the allowed one. A measure that cannot be computed (no record, no
  linkage column) fails its limit: a rule that cannot decide never answers "safe".

  The quasi-identifiers, the columns an intruder is assumed to know, are every column of the model but
  the key and the columns listed in `exempt` (the steward's statement that a column identifies no
  one), whatever their types, as a release's policy gate counts them. `quasi_identifiers` narrows the
  set, but never past a column released unchanged: a column of the model left out of it (and not
  exempt) whose values equal the original's on every record, or that the original does not have (its
  values cannot be compared), fails the test as the limit `quasi_identifiers`.

  The limits and their measures are those of a release spec's [policy] table:
    min_k                    k-anonymity: the smallest number of records sharing one combination of the
                             quasi-identifiers (NULL counts as a value: a rare NULL identifies too)
    max_unique_share         the share of records alone in their combination
    max_record_linkage       record_linkage (distance-based, rank 1) between the original and the
                             masked linkage_columns, over the records complete in all of them
    max_interval_disclosure  interval_disclosure (half_width = 0.05) on the same columns and records
  The two linkage measures need the duckdb_sdc functions, so the profile must load the plugin
  duckdb_sdc.dbt_plugin; min_k and max_unique_share are plain SQL. Under `dbt build --empty` every
  relation is empty and nothing can be measured: the test's query is built and bound (a missing
  column still fails it), and it passes but for the limit `key`.

  The key joins the model with the original, so the model has it: it publishes an identifier of every
  record, and the test fails as the limit `key` (a release refuses a kept key the same way), unless
  `key_identifying: false` states that the key identifies no one outside this model (a number made
  for it), or that readers never see this model with it (they read a model of every column but the
  key). The linkage columns are measured as numbers: a date or timestamp as its seconds since 1970
  (epoch), as a release measures it; a column of another type is a compile error.

      data_tests:
        - sdc_policy:
            arguments:
              original: "{{ ref('people') }}"
              key: person_id
              linkage_columns: [income, expenses]
              min_k: 5
              max_unique_share: 0
              max_record_linkage: 0.1
              max_interval_disclosure: 0.5
-#}
{% test sdc_policy(model, original, key, quasi_identifiers=none, exempt=none, linkage_columns=none, min_k=none,
                   max_unique_share=none, max_record_linkage=none, max_interval_disclosure=none,
                   key_identifying=true) %}
{%- set listed = duckdb_sdc.sdc_names(quasi_identifiers, "sdc_policy", "quasi_identifiers", required=false) -%}
{%- set exempted = duckdb_sdc.sdc_names(exempt, "sdc_policy", "exempt", required=false) -%}
{%- set keys = duckdb_sdc.sdc_names(key, "sdc_policy", "key") -%}
{%- if keys | length != 1 -%}
  {{ exceptions.raise_compiler_error("sdc_policy: key must name one column, got " ~ (key | string)) }}
{%- endif -%}
{%- set linked = duckdb_sdc.sdc_names(linkage_columns, "sdc_policy", "linkage_columns", required=false) -%}
{#- a var renders as text: "true" and "false" are accepted -#}
{%- set key_identifying = {'true': true, 'false': false}.get(key_identifying | string | trim | lower, key_identifying) -%}
{%- if key_identifying is not sameas true and key_identifying is not sameas false -%}
  {{ exceptions.raise_compiler_error("sdc_policy: key_identifying must be true or false, got " ~ (key_identifying | string)) }}
{%- endif -%}
{%- if quasi_identifiers is not none and not listed -%}
  {{ exceptions.raise_compiler_error("sdc_policy: quasi_identifiers must name at least one column, got " ~ (quasi_identifiers | string)) }}
{%- endif -%}
{%- set limits = [] -%}
{%- if min_k is not none -%}{%- do limits.append(("min_k", "k_anonymity", ">=", duckdb_sdc.sdc_whole_number(min_k, "sdc_policy", "min_k", 1))) -%}{%- endif -%}
{%- if max_unique_share is not none -%}{%- do limits.append(("max_unique_share", "unique_share", "<=", duckdb_sdc.sdc_fraction(max_unique_share, "sdc_policy", "max_unique_share"))) -%}{%- endif -%}
{%- if max_record_linkage is not none -%}{%- do limits.append(("max_record_linkage", "record_linkage", "<=", duckdb_sdc.sdc_fraction(max_record_linkage, "sdc_policy", "max_record_linkage"))) -%}{%- endif -%}
{%- if max_interval_disclosure is not none -%}{%- do limits.append(("max_interval_disclosure", "interval_disclosure", "<=", duckdb_sdc.sdc_fraction(max_interval_disclosure, "sdc_policy", "max_interval_disclosure"))) -%}{%- endif -%}
{%- if not limits -%}
  {{ exceptions.raise_compiler_error("sdc_policy: give at least one limit (min_k, max_unique_share, max_record_linkage, max_interval_disclosure)") }}
{%- endif -%}
{%- set needs_linkage = max_record_linkage is not none or max_interval_disclosure is not none -%}
{#- the columns of both relations, read when the test runs (dbt parse renders without a connection) -#}
{%- set columns = {'model': [], 'original': []} -%}
{%- if execute -%}
  {%- for side, relation in (('model', model), ('original', original)) -%}
    {%- for row in run_query('describe select * from ' ~ relation) -%}
      {%- do columns[side].append((row[0], row[1])) -%}
    {%- endfor -%}
  {%- endfor -%}
{%- endif -%}
{%- set in_model = columns['model'] | map('first') | map('lower') | list -%}
{%- set in_original = {} -%}
{%- for name, type in columns['original'] -%}{%- do in_original.update({name | lower: type}) -%}{%- endfor -%}
{%- set key = keys[0] -%}
{%- if execute -%}
  {%- for what, names, where in (("key", [key], in_model), ("key", [key], in_original), ("exempt", exempted, in_model),
                                   ("quasi_identifiers", listed, in_model), ("linkage_columns", linked, in_model),
                                   ("linkage_columns", linked, in_original)) -%}
    {%- for name in names if name | lower not in where -%}
      {{ exceptions.raise_compiler_error("sdc_policy: " ~ what ~ ": the " ~ ("original" if where is sameas in_original else "model")
         ~ " has no column " ~ name ~ "; its columns: " ~ ((columns['original'] if where is sameas in_original else columns['model']) | map('first') | join(', '))) }}
    {%- endfor -%}
  {%- endfor -%}
{%- endif -%}
{#- a linkage column is measured as a number: a date or timestamp as its seconds since 1970 (epoch),
    as a release's report and gate measure it; any other type cannot be measured -#}
{%- set linkage = {'model': [], 'original': []} -%}
{%- for side, described in (('model', columns['model']), ('original', columns['original'])) -%}
  {%- set typed = {} -%}
  {%- for name, type in described -%}{%- do typed.update({name | lower: type | upper}) -%}{%- endfor -%}
  {%- for c in linked -%}
    {%- set type = typed.get(c | lower, '') -%}
    {%- if type in ('DATE', 'TIMESTAMP', 'TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP_NS', 'TIMESTAMP WITH TIME ZONE') -%}
      {%- do linkage[side].append('epoch(' ~ side[0] ~ '.' ~ adapter.quote(c) ~ ')::double') -%}
    {%- elif type in ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER',
                      'UBIGINT', 'UHUGEINT', 'FLOAT', 'DOUBLE') or type.startswith('DECIMAL') or not execute -%}
      {%- do linkage[side].append(side[0] ~ '.' ~ adapter.quote(c) ~ '::double') -%}
    {%- else -%}
      {{ exceptions.raise_compiler_error("sdc_policy: linkage_columns: column " ~ c ~ " of the " ~ side ~ " is " ~ type
         ~ ", not a number, a date or a timestamp: the linkage measures are distances between numbers") }}
    {%- endif -%}
  {%- endfor -%}
{%- endfor -%}
{%- set others = [key | lower] + (exempted | map('lower') | list) -%}
{%- set q = listed if listed else columns['model'] | map('first') | reject('in', others) | list -%}
{%- set left_out = columns['model'] | map('first') | reject('in', others + (q | map('lower') | list)) | list -%}
{%- set types = {} -%}
{%- for name, type in columns['model'] -%}{%- do types.update({name | lower: type}) -%}{%- endfor -%}
with __sdc_model as (
    select * from {{ model }}
),
__sdc_original as (
    select * from {{ original }}
),
__sdc_classes as (
    select count(*) as __sdc_n from __sdc_model
    {%- if q %}
    group by {% for c in q %}{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}
    {%- endif %}
),
__sdc_measured as (
    select {% if q %}min(__sdc_n)::double{% else %}null::double{% endif %} as k_anonymity,
           {% if q %}sum(case when __sdc_n = 1 then 1 else 0 end)::double / sum(__sdc_n){% else %}null::double{% endif %} as unique_share
    {%- if needs_linkage and linked %},
           (select record_linkage([{{ linkage['original'] | join(', ') }}], [{{ linkage['model'] | join(', ') }}])
            from __sdc_original as o join __sdc_model as m using ({{ adapter.quote(key) }})) as record_linkage,
           (select interval_disclosure([{{ linkage['original'] | join(', ') }}], [{{ linkage['model'] | join(', ') }}])
            from __sdc_original as o join __sdc_model as m using ({{ adapter.quote(key) }})) as interval_disclosure
    {%- else %},
           null::double as record_linkage, null::double as interval_disclosure
    {%- endif %}
    from __sdc_classes
),
{#- a column left out of the quasi-identifiers is released unchanged when it equals the original's on
    every record (compared as text where the types differ), or when the original has no such column;
    bool_and over no record is NULL: undecided, so unchanged -#}
__sdc_unchanged as (
    select
    {%- for c in left_out %}
        {% if c | lower in in_original -%}
        coalesce(bool_and(o.{{ adapter.quote(c) }}{{ '::varchar' if in_original[c | lower] != types[c | lower] }}
                          is not distinct from m.{{ adapter.quote(c) }}{{ '::varchar' if in_original[c | lower] != types[c | lower] }}), true)
        {%- else -%}
        true
        {%- endif %} as {{ adapter.quote('__sdc_' ~ loop.index) }},
    {%- endfor %}
        0 as __sdc_none
    from __sdc_original as o join __sdc_model as m using ({{ adapter.quote(key) }})
),
__sdc_limits as (
    {%- for name, measure, sign, allowed in limits %}
    select '{{ name }}' as policy_limit, {{ measure }} as measured, {{ allowed }}::double as allowed,
           {{ measure }} is not null and {{ measure }} {{ sign }} {{ allowed }} as holds,
           case when {{ measure }} is null then
               {% if measure in ("record_linkage", "interval_disclosure") and not linked -%}
               'not measured: give linkage_columns'
               {%- elif measure in ("k_anonymity", "unique_share") and not q -%}
               'not measured: no quasi-identifier'
               {%- else -%}
               'not measured: no record'
               {%- endif %}
           end as note
    from __sdc_measured
    union all
    {%- endfor %}
    select 'quasi_identifiers' as policy_limit, len(__sdc_raw)::double as measured, 0::double as allowed,
           len(__sdc_raw) = 0 as holds,
           case when len(__sdc_raw) > 0 then
               'released unchanged and not a quasi-identifier: ' || array_to_string(__sdc_raw, ', ')
               || ' (list it in quasi_identifiers, or exempt it)'
           end as note
    from (select list_filter([{% for c in left_out %}case when {{ adapter.quote('__sdc_' ~ loop.index) }} then {{ "'" ~ (c | replace("'", "''")) ~ "'" }} end{% if not loop.last %}, {% endif %}{% endfor %}]::varchar[],
                             lambda __sdc_c: __sdc_c is not null) as __sdc_raw
          from __sdc_unchanged)
)
select policy_limit, measured, allowed, note from __sdc_limits
where not holds and not {{ 'true' if flags.EMPTY else 'false' }}
{% if key_identifying %}
{#- the model has the key (it joins the two relations): it publishes the identifier of every record,
    whether there are records or not -#}
union all
select 'key' as policy_limit, 1::double as measured, 0::double as allowed,
       {{ "'" ~ (("the model publishes the key " ~ key ~ ", which links every record to its source record: readers must not "
          ~ "see it (an sdc_release model drops it); set key_identifying: false if it identifies no one outside this "
          ~ "model, or if readers never see this model with it (docs/dbt.md, sdc_policy)") | replace("'", "''")) ~ "'" }} as note
{%- endif %}
{% endtest %}
