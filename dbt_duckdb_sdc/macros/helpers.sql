{#- Argument checks shared by the package's tests: a clear compile error that names the test, the
    argument and the value, never SQL that fails later. -#}

{#- A column name or a list of them, as a list (names are quoted where they are used). -#}
{% macro sdc_names(value, test, argument, required=true) %}
  {%- if value is none or value == "" or value == [] -%}
    {%- if required -%}
      {{ exceptions.raise_compiler_error(test ~ ": " ~ argument ~ " must name at least one column, got " ~ (value | string)) }}
    {%- endif -%}
    {{ return([]) }}
  {%- elif value is string -%}
    {{ return([value]) }}
  {%- elif value is iterable and value is not mapping -%}
    {%- for v in value -%}
      {%- if v is not string or v == "" -%}
        {{ exceptions.raise_compiler_error(test ~ ": " ~ argument ~ " must be column names, got " ~ (value | string)) }}
      {%- endif -%}
    {%- endfor -%}
    {{ return(value | list) }}
  {%- else -%}
    {{ exceptions.raise_compiler_error(test ~ ": " ~ argument ~ " must be a column name or a list of them, got " ~ (value | string)) }}
  {%- endif -%}
{% endmacro %}

{#- A whole number >= minimum (a var renders as text: "5" is accepted). -#}
{% macro sdc_whole_number(value, test, argument, minimum) %}
  {%- set text = value | string | trim -%}
  {%- if not text.isdigit() or (text | int) < minimum -%}
    {{ exceptions.raise_compiler_error(test ~ ": " ~ argument ~ " must be a whole number >= " ~ minimum ~ ", got " ~ (value | string)) }}
  {%- endif -%}
  {{ return(text | int) }}
{% endmacro %}

{#- A number in [0, 1]. -#}
{% macro sdc_fraction(value, test, argument) %}
  {%- set text = value | string | trim -%}
  {%- set number = text | float(-1) -%}
  {%- if text == "" or not (number >= 0 and number <= 1) -%}
    {{ exceptions.raise_compiler_error(test ~ ": " ~ argument ~ " must be a number between 0 and 1, got " ~ (value | string)) }}
  {%- endif -%}
  {{ return(number) }}
{% endmacro %}
