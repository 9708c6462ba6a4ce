-- Microaggregation by group means keeps every region's mean: fails for a region whose mean moved.
select p.region
from {{ ref('people') }} as p
join {{ ref('people_masked') }} as m using (person_id)
group by p.region
having abs(avg(p.income) - avg(m.income)) > 1e-6 or abs(avg(p.expenses) - avg(m.expenses)) > 1e-6
