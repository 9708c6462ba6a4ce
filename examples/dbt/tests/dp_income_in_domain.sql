-- The differentially private incomes stay in the declared domain [0, income_max], and a NULL income
-- stays NULL: fails for every released income that breaks either rule (income_max_check, default
-- income_max, checks against another bound than the model was built with).
select p.person_id, p.income as original, d.income as released
from {{ ref('people') }} as p
join {{ ref('people_dp') }} as d using (person_id)
where (p.income is null) <> (d.income is null)
   or d.income < 0 or d.income > {{ var('income_max_check', var('income_max')) }}
