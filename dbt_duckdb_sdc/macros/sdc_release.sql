{#-
  sdc_release: a materialization that releases a model's query as `duckdb-sdc release` releases a
  source, with the same spec words and the same protections. The model's query is the source; its
  config `release_spec` holds the spec's tables ([source] key and weight, [masking], [columns],
  [[groups]], [evaluation], [policy]; no [output]: the model is the release). The release job of the
  plugin duckdb_sdc.dbt_plugin (run as dbt-duckdb runs a Python model, on the model's connection)
  checks every column of the query against the rules, masks with the release pipeline, gates on
  [policy] and writes, in one transaction, the release table (rows in a secret random order, the key
  only where a rule keeps it) and its manifest table (`manifest_table`, default `<model>_manifest`).
  It replaces only a previous release of the model and its manifest. A refusal or a breached policy
  fails the model with the message; nothing is written, a previous release stays as it was; the
  release's notes (exempted quasi-identifiers, ...) are printed. Pre-hooks outside the transaction
  run before the release job, those inside it after the job and before the new tables are swapped in.
  docs/dbt.md describes it.
-#}
{% materialization sdc_release, adapter='duckdb' %}
  {%- if config.get('incremental_strategy') is not none or config.get('unique_key') is not none -%}
    {{ exceptions.raise_compiler_error("sdc_release: model " ~ model.name ~ " sets incremental_strategy or unique_key, "
       ~ "but a release is rebuilt whole on every run: masking each batch alone fails on a batch with fewer than k "
       ~ "records in a stratum and weakens the guarantees across batches (docs/dbt.md, Incremental models)") }}
  {%- endif -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set manifest_name = config.get('manifest_table', this.identifier ~ '_manifest') -%}
  {%- if manifest_name is not string or manifest_name | trim == '' or manifest_name | lower == this.identifier | lower -%}
    {{ exceptions.raise_compiler_error("sdc_release: manifest_table of model " ~ model.name
       ~ " must name a table other than the model's, got " ~ (manifest_name | string)) }}
  {%- endif -%}
  {%- set manifest_relation = api.Relation.create(database=this.database, schema=this.schema,
                                                  identifier=manifest_name, type='table') -%}
  {%- set existing_manifest = load_cached_relation(manifest_relation) -%}
  {%- set intermediate_relation = make_intermediate_relation(target_relation) -%}
  {%- set intermediate_manifest = make_intermediate_relation(manifest_relation) -%}
  {%- set backup_relation = make_backup_relation(target_relation, 'table' if existing_relation is none else existing_relation.type) -%}
  {%- set backup_manifest = make_backup_relation(manifest_relation, 'table') -%}
  {%- set payload = {
        'name': model.name,
        'alias': this.identifier,
        'spec': config.get('release_spec'),
        'sql': compiled_code,
        'release': [intermediate_relation.database, intermediate_relation.schema, intermediate_relation.identifier],
        'manifest': [intermediate_manifest.database, intermediate_manifest.schema, intermediate_manifest.identifier],
        'target': [target_relation.database, target_relation.schema, target_relation.identifier],
        'target_manifest': [manifest_relation.database, manifest_relation.schema, manifest_relation.identifier],
        'empty': true if flags.EMPTY else false,
        'depends_on': model.depends_on.nodes,
  } -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}

  {#- the release job, before any statement of dbt's: it runs in a transaction of its own -#}
  {% call statement('main', language='python') -%}
import json


class dbtObj:
    def __init__(self, load_df_function):
        pass


def model(dbt, con):
    from duckdb_sdc.dbt_plugin import release_model
    return release_model(con, json.loads({{ tojson(tojson(payload)) }}))


def materialize(df, con):
    pass
  {%- endcall %}

  {%- set outcome = run_query('select message, notes from __sdc_dbt_outcome') -%}
  {%- set message = outcome.columns[0].values()[0] -%}
  {%- set notes = outcome.columns[1].values()[0] -%}
  {%- do run_query('drop table temp.__sdc_dbt_outcome') -%}
  {%- if message is not none -%}
    {{ exceptions.raise_database_error(message) }}
  {%- endif -%}
  {%- if notes is not none -%}
    {%- for note in notes.split('\n') -%}
      {%- do log(model.name ~ ': ' ~ note, info=True) -%}
    {%- endfor -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {{ drop_relation_if_exists(load_cached_relation(backup_relation)) }}
  {{ drop_relation_if_exists(load_cached_relation(backup_manifest)) }}
  {% if existing_relation is not none %}
    {{ adapter.rename_relation(existing_relation, backup_relation) }}
  {% endif %}
  {% if existing_manifest is not none %}
    {{ adapter.rename_relation(existing_manifest, backup_manifest) }}
  {% endif %}
  {{ adapter.rename_relation(intermediate_relation, target_relation) }}
  {{ adapter.rename_relation(intermediate_manifest, manifest_relation) }}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) -%}
  {% do apply_grants(target_relation, config.get('grants'), should_revoke=should_revoke) %}
  {% do apply_grants(manifest_relation, config.get('grants'), should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}
  {{ adapter.commit() }}
  {{ drop_relation_if_exists(backup_relation) }}
  {{ drop_relation_if_exists(backup_manifest) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation, manifest_relation]}) }}
{% endmaterialization %}
