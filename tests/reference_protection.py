"""Slow, obviously correct references for protection levels and suppression patterns: exact rational
arithmetic, the feasible intervals by enumerating the vertices of the published table's polytope, and
the cheapest pattern by trying every set of secondary cells."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

INF = float("inf")


def exact(v):
    """A double as an exact rational (an int when it is one: far faster than Fraction)."""
    v = float(v)
    return int(v) if v.is_integer() else Fraction(v)


def _dec(x) -> Fraction:
    """A rule parameter as the decimal it is taken to (9 decimals)."""
    return Fraction(round(float(x) * 10**9), 10**9)


def sensitive_reference(values, rule: dict) -> bool:
    """rule: {'kind': 'p%', 'p': ...} | {'kind': 'pq', 'p', 'q'} | {'kind': 'dominance', 'n', 'r'} |
    {'kind': 'threshold', 'n', 'safety'}; values are the contributions the rule sees (>= 0)."""
    c = sorted((exact(v) for v in values), reverse=True)
    t = len(c)
    c += [Fraction(0)] * 3
    if rule["kind"] == "threshold":
        return 0 < t < rule["n"]
    if rule["kind"] == "dominance":
        return t <= rule["n"] or sum(c[: rule["n"]]) > _dec(rule["r"]) * sum(c)
    q = _dec(rule.get("q", 1))
    return q * (sum(c) - c[0] - c[1]) < _dec(rule["p"]) * c[0]


def level_reference(values, rule: dict) -> Fraction:
    """The tau-ARGUS protection level of a cell (>= 0), from its contributions (>= 0)."""
    c = sorted((exact(v) for v in values), reverse=True) + [Fraction(0)] * 3
    X = sum(c)
    if rule["kind"] == "threshold":
        level = _dec(rule["safety"]) * X
    elif rule["kind"] == "dominance":
        level = sum(c[: rule["n"]]) / _dec(rule["r"]) - X
    else:
        level = _dec(rule["p"]) / _dec(rule.get("q", 1)) * c[0] - (X - c[0] - c[1])
    return max(level, Fraction(0))


def a_priori(values) -> tuple:
    """What the signs of a cell's contributions tell of its total."""
    lo = Fraction(0) if all(v >= 0 for v in values) else -INF
    hi = Fraction(0) if all(v <= 0 for v in values) else INF
    return lo, hi


def interval_reference(cells: list[list], suppressed: list[int], a: int) -> tuple:
    """The feasible interval of suppressed cell a (cells: every cluster's signed contributions): the
    least and the largest value of y_a over the vertices of {sum over suppressed y = R, each y within
    its a-priori interval}, with the infinite bounds replaced by +-M (M far beyond every total); a
    value beyond M / 2 is unbounded. Every vertex has all variables but one at a bound."""
    totals = {c: sum(exact(v) for v in cells[c]) for c in suppressed}
    R = sum(totals.values())
    M = 10**6 * (sum(abs(exact(v)) for cell in cells for v in cell) + 1)
    bounds = {}
    for c in suppressed:
        lo, hi = a_priori(cells[c])
        bounds[c] = (-M if lo == -INF else lo, M if hi == INF else hi)
    values = []
    for free in suppressed:
        others = [c for c in suppressed if c != free]
        for mask in range(2 ** len(others)):
            rest = sum(bounds[c][(mask >> i) & 1] for i, c in enumerate(others))
            y_free = R - rest
            if bounds[free][0] <= y_free <= bounds[free][1]:
                point = {c: bounds[c][(mask >> i) & 1] for i, c in enumerate(others)}
                point[free] = y_free
                values.append(point[a])
    lo, hi = min(values), max(values)
    return (-INF if lo < -M / 2 else lo), (INF if hi > M / 2 else hi)


def protected_reference(cells, suppressed, primary, levels) -> dict:
    """{primary cell: whether its feasible interval covers [y - LPL, y + UPL]}, LPL the level capped
    at the a-priori bound."""
    out = {}
    for a in primary:
        y = sum(exact(v) for v in cells[a])
        lo_ap, hi_ap = a_priori(cells[a])
        lo, hi = interval_reference(cells, suppressed, a)
        upl = min(levels[a], hi_ap - y)
        lpl = min(levels[a], y - lo_ap)
        out[a] = hi >= y + upl and lo <= y - lpl
    return out


def cheapest_reference(cells, primary, levels, absolute: bool = True):
    """The least number of secondary cells and the least total |value| of secondary cells (two
    separate optima) over every set of non-primary cells that protects every primary cell; None
    when no set does."""
    candidates = [c for c in range(len(cells)) if c not in primary]
    best_count = best_value = None
    for size in range(len(candidates) + 1):
        for chosen in combinations(candidates, size):
            if all(protected_reference(cells, list(primary) + list(chosen), primary, levels).values()):
                value = sum(abs(exact(v)) for c in chosen for v in cells[c])
                if best_count is None:
                    best_count = size
                if best_value is None or value < best_value:
                    best_value = value
    return best_count, best_value
