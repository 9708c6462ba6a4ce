-- Fails for every (stratum, value) shared by fewer than k records: a masked column is k-anonymous
-- when each of its non-NULL values occurs at least k times within each stratum.
{% test k_anonymous(model, column_name, k, strata=none) %}
select {% if strata %}{{ strata }}, {% endif %}{{ column_name }}, count(*) as records
from {{ model }}
where {{ column_name }} is not null
group by {% if strata %}{{ strata }}, {% endif %}{{ column_name }}
having count(*) < {{ k }}
{% endtest %}
