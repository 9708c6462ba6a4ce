"""The release spec: a TOML file that declares what to release, checked before any SQL is built.

    [source]                      # a table of a DuckDB file ...
    database = "survey.duckdb"    # paths are relative to the spec file's folder
    table = "people"              # schema = "main" by default
    key = "person_id"             # optional row key: unique and non-NULL (checked when released);
                                  # without one, a surrogate key (rank in the order of every column's
                                  # values) matches records for masking and evaluation, never released
    # files = ["data/*.parquet"]  # ... or Parquet / CSV files (format inferred, or format = "csv")
    # frame = "people"            # ... or a pandas / polars / Arrow frame given to
                                  # duckdb_sdc.release_frame (duckdb_sdc.frames); the name is recorded

    [output]
    database = "release/people.duckdb"   # a separate file, replaced atomically
    table = "people"
    view_without_key = "people_public"   # optional: a view of the table without the key column
    storage_version = "v1.5.0"           # optional; default "v1.0.0", which DuckDB 1.x clients read
    linkage = "private/people_link.duckdb"  # optional, SECRET: release row -> source key, written
                                  # only when asked; evaluate needs it when the table has no key

    [masking]
    strata = ["region"]           # optional: every masked column is masked within each stratum
    total_epsilon = 1.0           # optional: budget split equally over DP columns without epsilon
    decimals = 2                  # optional: round released values to 2 decimals (after masking)
    reproducible_noise = false    # a seed is refused unless this (or the rule's) is true; such a
                                  # column is marked "none: reproducible noise" in the manifest
    small_strata = "refuse"       # a stratum too small for a method: "refuse" (default), "nearest"
                                  # or "rest" (pooled, see duckdb_sdc.strata); pooled records carry the
    rest_stratum = "other"        # pool's strata values; "rest" needs rest_stratum (text strata only)

    [columns]                     # every source column needs a rule (privacy by default)
    person_id = "keep"            # the key too: "keep" or "drop"
    region = "keep"
    household_size = "drop"
    income = { method = "mdav_round", k = 5 }
    savings = { method = "vmdav_round", k = 5, gamma = 0.2, strata = [] }   # strata per column
    # a rule may also set decimals, reproducible_noise, and
    #   cells = { rule = "dominance", n = 2, r = 0.7, action = "suppress" }  (or rule = "p_percent",
    #   p = 0.2; action = "merge"): no released cell is sensitive (see `CellProtection`);
    #   centroids_table = "income_means" (dp_um only): the noisy cluster means in a table of their
    #   own, unlinked from records (epsilon-DP); the column is left out of the release table

    [[groups]]                    # a method over a group of columns (one vector per record); the
    columns = ["age", "weight"]   # group declares its columns (they have no [columns] rule)
    method = "mdav_multi_round"   # a method whose list takes rows DOUBLE[][]
    k = 5

    [[groups]]                    # a box method: every column becomes <col>_lower and <col>_upper,
    columns = ["height", "waist"] # plus one box id column for the group
    method = "box_release"
    k = 5
    characteristic = "corr(height, waist)"   # the rule's columns are its `names`
    box_column = "body_box"       # optional; default "<columns joined by _>_box"

    [evaluation]                  # optional: what the risk/utility report (report.py) treats as
    quasi_identifiers = ["region", "age", "income"]   # quasi-identifiers (released columns)
    dominance_n = 2               # the (n, r) dominance rule of its attribute-disclosure section
    dominance_r = 0.7
    p_percent = 0.2               # the p% rule's p as a fraction (default (1 - r) / r)

    [policy]                      # optional: limits the would-be release must meet, or nothing is
    min_k = 5                     # written (see duckdb_sdc.release.policy)
    max_unique_share = 0.0
    max_record_linkage = 0.2
    max_interval_disclosure = 0.5
    epsilon_budget = 3.0          # every release of the source together (release/ledger.py)

    [ledger]                      # optional (release/ledger.py): default $XDG_DATA_HOME/duckdb-sdc/ledger
    path = "ledger"               # the ledger folder, relative to the spec's folder
    repeat_dp = false             # true: a DP column released before may be released again (no budget)
    allow_linked = false          # true: a linked release breaching min_k / max_unique_share, warned

Everything is validated here against the method table (`methods.METHODS`); what needs the source
(its columns and types) is checked when the release is planned (`plan.py`).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .._frames import check_frame, describe_frame
from .._validate import SdcError, show
from ..sql.registry import REGISTRY
from . import policy as policy_module
from .methods import BOXES, COLUMN, EPSILON, METHODS, NAMES, ROWS, SECRET_PARAMS, ReleaseMethod, check_value
from .policy import Policy
from .ledger_settings import LedgerSettings, parse_settings as ledger_settings
from .. import guarantees
from .. import strata as small_strata_module
from ..params import REST_STRATUM as REST_KIND
from ..recodings import DATES, NUMBERS, RECODINGS, TEXT, Recoding

RESERVED_PREFIX = "__sdc_"
BOX_COLUMN = "box_column"  # a box rule's setting: the name of its box id column
MANIFEST_TABLE = "release_manifest"
# Storage 64, the oldest format DuckDB 2.0 writes that holds a release (DuckDB 0.10 to 2.0 read it;
# "v0.9.0" names the same number but compresses doubles with ALP, which 0.9 cannot read); the 2.0
# default (69) is unreadable by every 1.x client. docs/clients.md says what 1.x clients read.
DEFAULT_STORAGE_VERSION = "v1.0.0"
FILE_FORMATS = ("parquet", "csv")
# settings of a masking rule that are the release's, not the method's
DECIMALS, REPRODUCIBLE, CELLS, CENTROIDS = "decimals", "reproducible_noise", "cells", "centroids_table"
WEIGHT, WEIGHTED = "weight", "weighted"  # [source] weight (the sampling-weight column); a rule's weighted
SMALL_STRATA, REST_STRATUM = "small_strata", "rest_stratum"  # [masking]: duckdb_sdc.strata
MAX_DECIMALS = 15
_NUMERIC = re.compile(r"(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|"
                      r"UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\))")


_TEMPORAL = re.compile(r"DATE|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|TIMESTAMPTZ")


def is_numeric(type_name: str) -> bool:
    """Whether a DuckDB column type (as DESCRIBE prints it) is a number."""
    return bool(_NUMERIC.fullmatch(type_name))


def is_temporal(type_name: str) -> bool:
    """Whether a DuckDB column type is a date or a timestamp (a point on a time line)."""
    return bool(_TEMPORAL.fullmatch(type_name))


def type_class(type_name: str) -> str | None:
    """What a recoding sees in a column of this type (duckdb_sdc.recodings): NUMBERS, TEXT (VARCHAR),
    DATES (dates and timestamps), or None (booleans, lists, ...)."""
    if is_numeric(type_name):
        return NUMBERS
    if is_temporal(type_name):
        return DATES
    return TEXT if type_name == "VARCHAR" else None


def is_linkable(type_name: str) -> bool:
    """Whether distance-based record linkage can use a column of this type: numbers, and dates and
    timestamps as seconds since 1970 (the report and the gate measure them so)."""
    return is_numeric(type_name) or is_temporal(type_name)


class SpecError(SdcError):
    """A mistake in a release spec (a user error: the command exits with code 2)."""


def public_path(path: Path | str, base: Path) -> str:
    """A path as the manifest may keep it: relative to the spec's folder when it lies inside it, else
    the file name alone (never an absolute path: it tells where the data live and who holds them)."""
    path = Path(path)
    try:
        return path.resolve().relative_to(Path(base).resolve()).as_posix()
    except ValueError:
        return path.name


@dataclass(frozen=True)
class Source:
    key: str | None  # None: no key column; a surrogate key is made (see plan.py)
    database: Path | None = None
    schema: str = "main"
    table: str | None = None
    files: tuple[str, ...] = ()
    format: str | None = None
    weight: str | None = None  # the sampling-weight column (see `check_weights`), or None
    relation: str | None = None  # a relation the caller reads as the source (parse_spec's `relation`)
    frame: str | None = None  # [source] frame: the name of a data frame the caller passes (duckdb_sdc.frames)
    data: object = field(default=None, compare=False, repr=False)  # that frame, once bound (frames.frame_spec)

    def describe(self, base: Path) -> str:
        """The source as the manifest records it: file names relative to the spec's folder."""
        if self.relation is not None:
            return self.relation
        if self.frame is not None:
            return describe_frame(self)
        if self.database is not None:
            return f"{public_path(self.database, base)} table {self.schema}.{self.table}"
        return f"{self.format} files {', '.join(public_path(f, base) for f in self.files)}"


@dataclass(frozen=True)
class Output:
    database: Path | None  # None for a spec over a relation (its caller writes the table)
    table: str
    view_without_key: str | None = None
    storage_version: str | None = None
    linkage: Path | None = None  # the private linkage file (release row -> source key), when asked


@dataclass(frozen=True)
class Resources:
    """[resources]: what a release may use of the machine. None: DuckDB's default (80% of the RAM, every
    core) and the system temporary folder. Changes no released value."""
    memory_limit: str | None = None  # DuckDB's memory_limit, e.g. "4GB"
    threads: int | None = None
    temp_directory: Path | None = None  # where the private workspace is made (duckdb_sdc.workspace)

    def config(self) -> dict:
        """DuckDB connection settings for these resources (the spill folder is the workspace's)."""
        out = {}
        if self.memory_limit is not None:
            out["memory_limit"] = self.memory_limit
        if self.threads is not None:
            out["threads"] = self.threads
        return out


@dataclass(frozen=True)
class CellProtection:
    """A rule's `cells` setting: no released cell is sensitive. A cell is the set of records of a
    stratum that share the rule's released value (or combination of values); its contributions are
    their original values of one attribute, taken absolute. `rule` 'dominance' (n, r), 'p_percent'
    (p), 'pq' (p, q) or 'threshold' (n, safety) (methods.sensitivity). `action`:
    * 'suppress': every sensitive cell is released as NULL (primary) and further cells of its
      attribute (secondary) so that, from the published cells and the stratum's total, no sensitive
      cell can be estimated more precisely than its protection level (`methods.protection.suppress`,
      at the least `cost`: 'cells' or 'value'). A stratum where no pattern can protect a sensitive
      cell (one cluster, or a dominated stratum) is refused.
    * 'merge': a cluster with a sensitive cell is merged with its nearest cluster until no cell is
      sensitive (`methods.sensitivity.merge_sensitive`); a merged cluster is released as the mean of
      its records' original values (its centroid), the others keep the method's values.
    * 'remove': the records that make a cell sensitive are removed from their clusters and released
      without their values; small clusters are merged (`methods.dominance.remove_sensitive`); a
      changed cluster is released as its centroid, the others keep the method's values; the removed
      records' cell is protected as 'suppress' protects one (`cost`), or the stratum refused.
    The words the manifest states are duckdb_sdc.guarantees.CELLS."""
    rule: str
    action: str
    n: int = 2
    r: float = 0.7
    p: float = 0.2
    q: float | None = None
    safety: float | None = None
    cost: str = "cells"

    PARAMS = {"dominance": ("n", "r"), "p_percent": ("p",), "pq": ("p", "q"), "threshold": ("n", "safety")}

    def arguments(self) -> list:
        return [getattr(self, k) for k in self.PARAMS[self.rule]]

    def settings(self) -> dict:
        """The rule's parameters by name."""
        return dict(zip(self.PARAMS[self.rule], self.arguments()))

    def method_rule(self):
        """The rule as duckdb_sdc.methods.sensitivity builds it (contributions taken absolute)."""
        from ..methods import sensitivity as sv

        make = {"dominance": sv.dominance_rule, "p_percent": sv.p_percent_rule, "pq": sv.pq_rule,
                "threshold": sv.threshold_rule}[self.rule]
        return make(*self.arguments(), absolute=True)

    def describe(self, **facts) -> str:
        return guarantees.cells_sentence(self.action, rule=self.method_rule().describe(), kind=self.rule, **facts)


@dataclass(frozen=True)
class Rule:
    column: str  # the column; for a group, its first column
    action: str  # 'keep', 'drop', 'mask' or 'recode'
    method: ReleaseMethod | None = None
    params: dict = field(default_factory=dict)  # as written, plus the epsilon assigned by the split
    strata: tuple[str, ...] | None = None  # None: the spec's default strata
    group: tuple[str, ...] = ()  # the columns masked together by a multivariate method
    where: str = ""  # where the rule is written, for messages: 'columns.income', 'groups[0]'
    box_column: str | None = None  # a box method's box id column
    decimals: int | None = None  # round the released values (None: [masking] decimals, or not at all)
    reproducible: bool | None = None  # the rule's reproducible_noise (None: [masking]'s)
    cells: CellProtection | None = None
    centroids_table: str | None = None  # dp_um: the unlinked noisy cluster means go to this table
    weighted: bool | None = None  # the rule's `weighted` (None: weighted when the source has a weight)
    identifying: bool = True  # False: the spec says its released columns identify no one (`identifying = false`)
    recoding: Recoding | None = None  # action 'recode': the global recoding (duckdb_sdc.recodings)

    @property
    def columns(self) -> tuple[str, ...]:
        return self.group or (self.column,)

    @property
    def boxed(self) -> bool:
        """Whether the rule releases its columns as boxes (bounds and a box id), not as values."""
        return self.method is not None and self.method.kind == BOXES

    @property
    def epsilon(self) -> float | None:
        return self.params.get(EPSILON) if self.method is not None and self.method.is_dp else None

    @property
    def seeded(self) -> bool:
        """Whether the rule gives its method a seed (reproducible noise)."""
        return any(self.params.get(p) is not None for p in SECRET_PARAMS)

    @property
    def in_table(self) -> bool:
        """Whether the rule's columns appear in the release table (a centroids rule writes them to a
        table of their own)."""
        return self.action in ("keep", "recode") or (self.action == "mask" and self.centroids_table is None)

    def effective_params(self) -> dict:
        """Every parameter of the method with the value used (registry defaults read from their SQL
        literals)."""
        if self.recoding is not None:
            return self.recoding.effective_params(self.params)
        out = {}
        for p in self.method.params:
            if p.name == NAMES:
                out[p.name] = list(self.columns)
            else:
                out[p.name] = self.params[p.name] if p.name in self.params else _default(p.default)
        return out


def check_bound(spec) -> None:
    """A frame source has its frame (bound by frames.frame_spec or release_frame)."""
    if spec.source.data is None:
        raise SpecError(f"{spec.name}: source.frame: the source is a data frame ({spec.source.frame!r}), which a spec "
                        "file cannot hold; release it from Python: duckdb_sdc.release_frame(frame, spec) (or bind "
                        "it for report() and sweep() with duckdb_sdc.frames.frame_spec)")
    check_frame(spec.source.data, spec.name)


def bound_columns(column: str) -> tuple[str, str]:
    """The released columns of a boxed source column: its box's lower and upper bound."""
    return f"{column}_lower", f"{column}_upper"


@dataclass(frozen=True)
class SensitivityRules:
    """The cell rules of the report's attribute-disclosure section ([evaluation] dominance_n,
    dominance_r, p_percent). By default the (2, 0.7) dominance rule and the p% rule with the p that
    makes the two comparable, p = (1 - r) / r."""
    dominance_n: int = 2
    dominance_r: float = 0.7
    p_percent: float | None = None  # None: (1 - r) / r

    @property
    def p(self) -> float:
        return (1 - self.dominance_r) / self.dominance_r if self.p_percent is None else self.p_percent


@dataclass(frozen=True)
class Spec:
    source: Source
    output: Output
    rules: dict[str, Rule]  # in the order written
    strata: tuple[str, ...] = ()
    total_epsilon: float | None = None
    declared_quasi_identifiers: tuple[str, ...] | None = None  # [evaluation] quasi_identifiers
    sensitivity: SensitivityRules = field(default_factory=lambda: SensitivityRules())  # [evaluation]
    ml_utility: bool = False  # [evaluation] ml_utility: the report's model-based utility section
    name: str = "spec"  # prefix of error messages (the file name)
    text: dict = field(default_factory=dict)  # the parsed TOML
    base: Path = Path(".")  # the folder relative paths of `text` are relative to
    decimals: int | None = None  # [masking] decimals
    reproducible_noise: bool = False  # [masking] reproducible_noise
    policy: Policy | None = None  # [policy]
    small_strata: str = "refuse"  # [masking] small_strata (duckdb_sdc.strata)
    rest_stratum: tuple[str, ...] | None = None  # [masking] rest_stratum, one label per strata column
    resources: Resources = field(default_factory=lambda: Resources())  # [resources]
    path: Path | None = None  # the spec file, when read from one (a release never replaces it)
    ledger: LedgerSettings = field(default_factory=lambda: LedgerSettings())  # [ledger] (release/ledger_settings.py)

    def strata_of(self, rule: Rule) -> tuple[str, ...]:
        return self.strata if rule.strata is None else rule.strata

    def decimals_of(self, rule: Rule) -> int | None:
        return self.decimals if rule.decimals is None else rule.decimals

    def reproducible(self, rule: Rule) -> bool:
        """Whether the rule may use a seed (its reproducible_noise, else [masking]'s)."""
        return self.reproducible_noise if rule.reproducible is None else rule.reproducible

    @property
    def key(self) -> str | None:
        return self.source.key

    def key_released(self) -> bool:
        """Whether the release table carries the key column (declared and kept)."""
        return self.source.key is not None and self.rules[self.source.key].action == "keep"

    def masked(self) -> list[Rule]:
        """The masking rules, each once (a group's rule serves all its columns)."""
        return _unique(r for r in self.rules.values() if r.action == "mask")

    def epsilon_spent(self) -> float | None:
        eps = [r.epsilon for r in self.masked() if r.epsilon is not None]
        return math.fsum(eps) if eps else None

    def pooled_strata(self) -> tuple[str, ...]:
        """The strata columns small strata are pooled over ([masking] small_strata 'nearest' or
        'rest'): the one strata every stratified masking rule shares (checked when parsed); () when
        no pooling is asked for or no rule is stratified."""
        if self.small_strata == "refuse":
            return ()
        return next((self.strata_of(r) for r in self.masked() if self.strata_of(r)), ())

    def strata_columns(self) -> tuple[str, ...]:
        """Every column some masked column is stratified by, in the order of [columns]."""
        used = {s for r in self.masked() for s in self.strata_of(r)}
        return tuple(c for c in self.rules if c in used)

    def released(self) -> tuple[str, ...]:
        """The source columns whose values (or boxes) are in the release table, in the order of
        [columns] and [[groups]]."""
        return tuple(c for c, r in self.rules.items() if r.in_table)

    def quasi_identifiers(self, types: dict[str, str] | None = None) -> tuple[str, ...]:
        """The columns the gate and the report count as quasi-identifiers, the values an intruder is
        assumed to know and match on: `[policy] quasi_identifiers` when the spec narrows the set
        there, else every column in the release table, whatever its type (numeric, text, date,
        boolean; masked or kept; the strata; the key and the sampling weight), except those whose rule
        says `identifying = false`. A boxed column counts as its two bounds (and its rule's box id);
        a column released in a table of its own (centroids_table) is not in the release table and is
        never one. In the order of [columns]. `types` is accepted for the callers that pass the
        source's types; the set does not depend on them."""
        if self.policy is not None and self.policy.quasi_identifiers is not None:
            return self.policy.quasi_identifiers
        return tuple(c for c in self.released() if self.rules[c].identifying)

    def masked_values(self) -> tuple[str, ...]:
        """The masked columns released as values (not as boxes, not in a centroids table), in the
        order of the masking rules: what the information-loss measures compare."""
        return tuple(c for r in self.masked() if not r.boxed and r.in_table for c in r.columns)

    def risk_columns(self, types: dict[str, str]) -> tuple[str, ...]:
        """The columns distance-based disclosure risk (record linkage, interval disclosure) is measured
        on, by the gate and the report alike: the masked quasi-identifiers released as values, then the
        other quasi-identifiers released as values whose type is numeric, a date or a timestamp
        (`is_linkable`; `types`: the source's column types; a recoded column: see `_linkable`). Text
        and boolean quasi-identifiers count in k-anonymity (exact matching), not in distances."""
        qi = self.quasi_identifiers()
        masked = self.masked_values()
        return (tuple(c for c in masked if c in qi)
                + tuple(c for c in qi if c not in masked and not self.rules[c].boxed and self._linkable(c, types)))

    def _linkable(self, column: str, types: dict[str, str]) -> bool:
        """A released value column in distances: of a linkable type, and a recoded one only when its
        released values are on the source's scale (truncate_date, top_code: not bands, nor ages of dates)."""
        source = types.get(column, "")
        released = self.released_type(column, source)
        return is_linkable(released) and (self.rules[column].recoding is None or type_class(released) == type_class(source))

    def released_type(self, column: str, source_type: str) -> str:
        """The type a released value column has: its recoding's released type, else the source's."""
        rule = self.rules[column]
        if rule.recoding is not None:
            return rule.recoding.released_type(source_type, rule.params)
        return source_type

    def exempted(self) -> dict[str, str]:
        """{released column: why the gate does not count it}: `identifying = false`, or left out of
        `[policy] quasi_identifiers`. The manifest records it and the command line prints it."""
        qi = set(self.quasi_identifiers())
        out = {}
        for c in self.released():
            if c in qi:
                continue
            out[c] = (f"{self.rules[c].where or 'columns.' + c}: identifying = false" if not self.rules[c].identifying
                      else "not in [policy] quasi_identifiers")
        return out

    def public_text(self) -> dict:
        """The spec as written, without what the manifest may not keep: secret parameters (seeds),
        the private linkage file's path, and absolute paths (shown as `public_path` shows them)."""
        text = copy.deepcopy(self.text)
        for value in [*text.get("columns", {}).values(), *text.get("groups", [])]:
            if isinstance(value, dict):
                for secret in SECRET_PARAMS:
                    value.pop(secret, None)
        output = text.get("output")
        if isinstance(output, dict):
            output.pop("linkage", None)
            if isinstance(output.get("database"), str):
                output["database"] = public_path(self.output.database, self.base)
        source = text.get("source")
        if isinstance(source, dict):
            if isinstance(source.get("database"), str) and self.source.database is not None:
                source["database"] = public_path(self.source.database, self.base)
            if self.source.files and "files" in source:
                source["files"] = [public_path(f, self.base) for f in self.source.files]
        return text


def _unique(rules) -> list[Rule]:
    seen, out = set(), []
    for r in rules:
        if id(r) not in seen:
            seen.add(id(r))
            out.append(r)
    return out


def _default(literal: str | None):
    """A registry default (a SQL literal) as a Python value for the manifest."""
    if literal is None or literal.upper() == "NULL":
        return None
    if literal.startswith("'") and literal.endswith("'"):
        return literal[1:-1].replace("''", "'")
    try:
        return int(literal)
    except ValueError:
        try:
            return float(literal)
        except ValueError:
            return literal


class Checker:
    """The checks of one spec's values, whose errors (SpecError) name the spec (or the command line's
    options) and where the value is."""

    def __init__(self, name: str):
        self.name = name

    def error(self, where: str, message: str) -> SpecError:
        return SpecError(f"{self.name}: {where}: {message}" if where else f"{self.name}: {message}")

    def table(self, doc: dict, key: str, required: bool = True) -> dict:
        value = doc.get(key)
        if value is None:
            if required:
                raise self.error("", f"the [{key}] section is missing")
            return {}
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table ([{key}]), got {show(value)}")
        return value

    def keys(self, where: str, section: dict, allowed: tuple[str, ...]) -> None:
        unknown = [k for k in section if k not in allowed]
        if unknown:
            raise self.error(where, f"unknown key{'s' if len(unknown) > 1 else ''} "
                                    f"{', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}")

    def name_value(self, where: str, value, *, required: bool = True) -> str | None:
        """A table, column or view name: a non-empty string, not reserved."""
        if value is None and not required:
            return None
        if value is None:
            raise self.error(where, "is missing: give a name")
        if not isinstance(value, str) or not value:
            raise self.error(where, f"must be a non-empty name, got {show(value)}")
        if value.lower().startswith(RESERVED_PREFIX):
            raise self.error(where, f"names starting with {RESERVED_PREFIX!r} are reserved, got {value!r}")
        if "\x00" in value:
            raise self.error(where, f"a name cannot contain a NUL character, got {value!r}")
        return value

    def names(self, where: str, value) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.error(where, f"must be a column name or a list of column names, got {show(value)}")
        out = tuple(self.name_value(f"{where}[{i}]", v) for i, v in enumerate(value))
        if len(set(out)) != len(out):
            raise self.error(where, f"lists a column twice: {list(out)}")
        return out

    def decimals(self, where: str, value) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not -MAX_DECIMALS <= value <= MAX_DECIMALS:
            raise self.error(where, f"must be an integer in [-{MAX_DECIMALS}, {MAX_DECIMALS}] (decimals kept; "
                                    f"-2 rounds to hundreds), got {show(value)}")
        return value

    def flag(self, where: str, value) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, f"must be true or false, got {show(value)}")
        return value

    def path(self, where: str, value, base: Path) -> Path:
        if value is None:
            raise self.error(where, "is missing: give a file path (relative to the spec's folder)")
        if not isinstance(value, str) or not value:
            raise self.error(where, f"must be a file path, got {show(value)}")
        path = Path(value).expanduser()
        return path if path.is_absolute() else base / path


def parse_spec(doc: dict, base: Path | str = ".", name: str = "spec", *, relation: str | None = None) -> Spec:
    """Check a parsed TOML document and return the Spec. Paths are relative to `base`.

    With `relation` (the dbt materialization, duckdb_sdc.dbt_plugin), the source is a relation the
    caller has set up as the plan's RAW, and `relation` says what it is in the manifest: [source]
    may then give only key and weight, and [output] only table (the caller writes the table)."""
    c = Checker(name)
    base = Path(base)
    c.keys("", doc, ("source", "output", "masking", "columns", "groups", "evaluation", "policy", "resources", "ledger"))
    if relation is None:
        source = _source(c, c.table(doc, "source"), base)
        output = _output(c, c.table(doc, "output"), base)
    else:
        source, output = _over_relation(c, doc, relation)
    if WEIGHT in doc.get("source", {}):
        source = dataclasses.replace(source, weight=c.name_value(f"source.{WEIGHT}", doc["source"][WEIGHT]))
    if source.database is not None and output.linkage is not None \
            and output.linkage.resolve() == source.database.resolve():
        raise c.error("output.linkage", "must be a separate file from the source")
    masking = c.table(doc, "masking", required=False)
    c.keys("masking", masking, ("strata", "total_epsilon", DECIMALS, REPRODUCIBLE, SMALL_STRATA, REST_STRATUM))
    strata = c.names("masking.strata", masking["strata"]) if "strata" in masking else ()
    total = masking.get("total_epsilon")
    if total is not None and (isinstance(total, bool) or not isinstance(total, (int, float))
                              or not math.isfinite(total) or total <= 0):
        raise c.error("masking.total_epsilon", f"must be a finite number > 0, got {show(total)}")
    decimals = c.decimals(f"masking.{DECIMALS}", masking[DECIMALS]) if DECIMALS in masking else None
    reproducible = c.flag(f"masking.{REPRODUCIBLE}", masking.get(REPRODUCIBLE, False))
    columns = c.table(doc, "columns", required="groups" not in doc)
    rules = {col: _rule(c, col, value) for col, value in columns.items()}
    groups = doc.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise c.error("groups", "must be an array of tables ([[groups]])")
    for i, settings in enumerate(groups):
        rule = _group(c, i, settings)
        for col in rule.group:
            if col in rules:
                other = rules[col].where or f"columns.{col}"
                raise c.error(rule.where, f"column {col!r} already has a rule ({other})")
            rules[col] = rule
    if not rules:
        raise c.error("columns", "declares no column")
    key_rule = rules.get(source.key) if source.key is not None else None
    if key_rule is not None and key_rule.action in ("mask", "recode"):
        raise c.error(f"columns.{source.key}", f"the row key can only be kept or dropped, not "
                                               f"{'masked' if key_rule.action == 'mask' else 'recoded'}")
    if key_rule is not None and key_rule.action == "keep" and key_rule.identifying:
        raise c.error(f"columns.{source.key}", f"the key {source.key!r} links every released record to its source "
                                               "record, and a view without it is no access control in a file handed "
                                               "to analysts: drop it (and set [output] linkage to evaluate the "
                                               f"release), or, if it identifies no one outside this release, say so: "
                                               f"{source.key} = {{ rule = \"keep\", identifying = false }}")
    if key_rule is not None and key_rule.action == "drop" and output.view_without_key:
        raise c.error("output.view_without_key", f"the key {source.key!r} is dropped from the table already")
    if source.key is None and output.view_without_key:
        raise c.error("output.view_without_key", "the spec has no source.key: the table has no key column to leave out")
    _check_release_settings(c, rules, strata)
    check_weights(c, source, rules)
    for rule in _unique(rules.values()):
        for s in (strata if rule.strata is None else rule.strata):
            if s in rules and rules[s].action in ("mask", "recode"):
                raise c.error(rule.where, f"stratum column {s!r} is {'masked' if rules[s].action == 'mask' else 'recoded'} itself; "
                                          "strata must be kept or dropped")
    if output.table == output.view_without_key:
        raise c.error("output.view_without_key", "must differ from output.table")
    rules = split_epsilon(c, rules, total)
    small, rest = _small_strata(c, masking, rules, strata)
    evaluation = c.table(doc, "evaluation", required=False)
    qi = _evaluation(c, evaluation, rules)
    policy_table = dict(c.table(doc, "policy", required=False))
    gate_qi = _policy_quasi_identifiers(c, policy_table.pop("quasi_identifiers"), rules) \
        if "quasi_identifiers" in policy_table else None
    policy = policy_module.parse(policy_table, c.error)
    if gate_qi is not None:
        policy = dataclasses.replace(policy or policy_module.Policy(), quasi_identifiers=gate_qi)
    if policy is not None:
        policy = dataclasses.replace(policy, origin=f"the [policy] of {name}")
    return Spec(source=source, output=output, rules=rules, strata=strata,
                total_epsilon=None if total is None else float(total), declared_quasi_identifiers=qi,
                sensitivity=_sensitivity(c, evaluation), ml_utility=_ml_utility(c, evaluation), name=name, text=doc, base=base, decimals=decimals,
                reproducible_noise=reproducible, policy=policy, small_strata=small, rest_stratum=rest,
                resources=resources(c, c.table(doc, "resources", required=False), base),
                ledger=ledger_settings(c.table(doc, "ledger", required=False), c.error, base))


def _policy_quasi_identifiers(c: Checker, value, rules: dict[str, Rule]) -> tuple[str, ...]:
    """[policy] quasi_identifiers: the columns the gate counts, narrower than every released column
    (each named must be released; the others are exempted, and the manifest and the command line
    say so)."""
    where = "policy.quasi_identifiers"
    names = c.names(where, value)
    if not names:
        raise c.error(where, "lists no column; a gate needs at least one quasi-identifier (leave the key out to "
                             "count every released column)")
    for n in names:
        if n not in rules:
            raise c.error(where, f"{show(n)} has no rule in [columns] or [[groups]]")
        if not rules[n].in_table:
            raise c.error(where, f"{show(n)} is not in the release table (it is dropped, or released in a "
                                 "centroids table)")
    return names


MEMORY = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.I)


def resources(c: Checker, r: dict, base: Path) -> Resources:
    """[resources] memory_limit ("4GB"), threads (an integer >= 1), temp_directory (a folder for the
    private workspace; relative to the spec's folder)."""
    c.keys("resources", r, ("memory_limit", "threads", "temp_directory"))
    memory = r.get("memory_limit")
    if memory is not None and (not isinstance(memory, str) or not MEMORY.fullmatch(memory.strip())):
        raise c.error("resources.memory_limit", f"must be an amount such as \"4GB\" or \"500MB\", got {show(memory)}")
    threads = r.get("threads")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 4096):
        raise c.error("resources.threads", f"must be an integer in [1, 4096], got {show(threads)}")
    temp = c.path("resources.temp_directory", r["temp_directory"], base) if "temp_directory" in r else None
    return Resources(memory.strip() if memory is not None else None, threads, temp)


def _small_strata(c: Checker, masking: dict, rules: dict[str, Rule],
                  strata: tuple[str, ...]) -> tuple[str, tuple[str, ...] | None]:
    """[masking] small_strata and rest_stratum (duckdb_sdc.strata). Pooling recodes the released
    strata columns once per release, so every stratified masking rule must share one strata."""
    how = masking.get(SMALL_STRATA, "refuse")
    if not isinstance(how, str) or how not in small_strata_module.CHOICES:
        raise c.error(f"masking.{SMALL_STRATA}", f"must be one of "
                                                 f"{', '.join(map(repr, small_strata_module.CHOICES))}, got {show(how)}")
    rest = masking.get(REST_STRATUM)
    if (how == "rest") != (rest is not None):
        raise c.error(f"masking.{REST_STRATUM}", "is missing: small_strata = \"rest\" pools the small strata "
                                                 "into the rest stratum it names" if how == "rest" else
                      f"is only used with small_strata = \"rest\" (small_strata is {how!r})")
    if how == "refuse":
        return how, None
    shared = {(strata if r.strata is None else r.strata) for r in _unique(rules.values()) if r.action == "mask"}
    shared.discard(())
    if len(shared) > 1:
        raise c.error(f"masking.{SMALL_STRATA}", "pools the strata of every masked column once, but the rules are "
                                                 f"stratified differently: {sorted(map(list, shared))}; give them the "
                                                 "same strata")
    if rest is not None:
        try:
            rest = tuple(REST_KIND.check(rest, c.name, f"masking.{REST_STRATUM}",
                                         n=len(next(iter(shared))) if shared else None))
        except SdcError as e:
            raise c.error(f"masking.{REST_STRATUM}", e.detail.split(" ", 1)[1]) from None
    return how, rest


def _check_release_settings(c: Checker, rules: dict[str, Rule], strata: tuple[str, ...]) -> None:
    """What the release settings of a rule may be combined with."""
    for rule in _unique(rules.values()):
        if rule.action != "mask":
            continue
        if rule.cells is not None and (rule.method.is_dp or rule.boxed):
            what = "adds noise, which protects without cells" if rule.method.is_dp else "releases boxes"
            raise c.error(f"{rule.where}.{CELLS}", f"{rule.method.name} {what}; cell protection applies to "
                                                   "the values of a deterministic masking method")
        if rule.decimals is not None and rule.boxed:
            raise c.error(f"{rule.where}.{DECIMALS}", f"{rule.method.name} releases box bounds, which are not "
                                                      "rounded (a rounded bound could leave its records outside)")
        if rule.centroids_table is not None:
            if rule.method.name != "dp_um":
                raise c.error(f"{rule.where}.{CENTROIDS}", "only dp_um releases its cluster means unlinked from "
                                                           f"records, got {rule.method.name}")
            for s in (strata if rule.strata is None else rule.strata):
                if s in rules and rules[s].action != "keep":
                    raise c.error(f"{rule.where}.{CENTROIDS}", f"the centroids table lists its stratum values, "
                                                               f"and stratum column {s!r} is not released")


def _sensitivity(c: Checker, e: dict) -> SensitivityRules:
    n = e.get("dominance_n", 2)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise c.error("evaluation.dominance_n", f"must be an integer >= 1, got {show(n)}")
    r = e.get("dominance_r", 0.7)
    if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r <= 1:
        raise c.error("evaluation.dominance_r", f"must be a number in (0, 1], got {show(r)}")
    p = e.get("p_percent")
    if p is not None and (isinstance(p, bool) or not isinstance(p, (int, float))
                          or not math.isfinite(p) or p <= 0):
        raise c.error("evaluation.p_percent", f"must be a finite number > 0 (a fraction), got {show(p)}")
    return SensitivityRules(n, float(r), None if p is None else float(p))


def _ml_utility(c: Checker, e: dict) -> bool:
    on = e.get("ml_utility", False)
    if not isinstance(on, bool):
        raise c.error("evaluation.ml_utility", f"must be true or false, got {show(on)}")
    return on


def _evaluation(c: Checker, e: dict, rules: dict[str, Rule]) -> tuple[str, ...] | None:
    c.keys("evaluation", e, ("quasi_identifiers", "dominance_n", "dominance_r", "p_percent", "ml_utility"))
    if "quasi_identifiers" not in e:
        return None
    where = "evaluation.quasi_identifiers"
    names = c.names(where, e["quasi_identifiers"])
    if not names:
        raise c.error(where, "lists no column; leave it out (the report then shows the gate's quasi-identifiers only)")
    for name in names:
        if name not in rules:
            raise c.error(where, f"{name!r} has no rule in [columns] or [[groups]]")
        if rules[name].action == "drop":
            raise c.error(where, f"{name!r} is dropped: only released columns can be quasi-identifiers")
    return names


def load_spec(path: str | Path) -> Spec:
    """Read and check a TOML release spec. Relative paths in it are relative to its folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{path}: cannot read the spec ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise SpecError(f"{path}: cannot read the spec: not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset "
                        f"{e.start}); save it as UTF-8") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path.name}: not valid TOML: {e}") from None
    spec = parse_spec(doc, base=path.resolve().parent, name=path.name)
    return dataclasses.replace(spec, path=path.resolve())


def _source(c: Checker, s: dict, base: Path) -> Source:
    c.keys("source", s, ("database", "schema", "table", "files", "format", "key", WEIGHT, "frame"))
    key = c.name_value("source.key", s["key"]) if "key" in s else None
    if "frame" in s:  # a data frame given to duckdb_sdc.release_frame (duckdb_sdc.frames)
        other = [k for k in ("database", "schema", "table", "files", "format") if k in s]
        if other:
            raise c.error("source", f"a frame source reads the frame it is given; {', '.join(other)} apply to "
                                    "tables and files")
        return Source(key=key, frame=c.name_value("source.frame", s["frame"]))
    if ("table" in s) == ("files" in s):
        raise c.error("source", "give either database and table, or files")
    if "table" in s:
        if "format" in s:
            raise c.error("source.format", "applies to files only")
        database = c.path("source.database", s.get("database"), base)
        schema = c.name_value("source.schema", s.get("schema", "main"))
        return Source(key=key, database=database, schema=schema, table=c.name_value("source.table", s["table"]))
    if "database" in s or "schema" in s:
        raise c.error("source", "database/schema apply to a table source, not to files")
    files = s["files"]
    files = [files] if isinstance(files, str) else files
    if not isinstance(files, list) or not files:
        raise c.error("source.files", f"must be a path or a list of paths, got {show(s['files'])}")
    paths = tuple(str(c.path(f"source.files[{i}]", f, base)) for i, f in enumerate(files))
    fmt = s.get("format")
    if fmt is None:
        kinds = {_format_of(p) for p in paths}
        if len(kinds) != 1 or None in kinds:
            raise c.error("source.format", "cannot tell the file format from the names "
                                           f"{list(paths)}; set format = \"parquet\" or \"csv\"")
        fmt = kinds.pop()
    if fmt not in FILE_FORMATS:
        raise c.error("source.format", f"must be one of {', '.join(map(repr, FILE_FORMATS))}, got {show(fmt)}")
    return Source(key=key, files=paths, format=fmt)


def _over_relation(c: Checker, doc: dict, relation: str) -> tuple[Source, Output]:
    """[source] and [output] of a spec over a relation (see `parse_spec`)."""
    s = c.table(doc, "source", required=False)
    c.keys("source", s, ("key", WEIGHT))
    o = c.table(doc, "output")
    c.keys("output", o, ("table",))
    table = c.name_value("output.table", o.get("table"))
    if table.lower() == MANIFEST_TABLE:
        raise c.error("output.table", f"{MANIFEST_TABLE!r} is the manifest's name")
    key = c.name_value("source.key", s["key"]) if "key" in s else None
    return Source(key=key, relation=relation), Output(database=None, table=table)


def _format_of(path: str) -> str | None:
    name = path.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if re.search(r"\.(csv|tsv)(\.gz|\.zst)?$", name):
        return "csv"
    return None


def _output(c: Checker, o: dict, base: Path) -> Output:
    c.keys("output", o, ("database", "table", "view_without_key", "storage_version", "linkage"))
    database = c.path("output.database", o.get("database"), base)
    linkage = c.path("output.linkage", o["linkage"], base) if "linkage" in o else None
    if linkage is not None and linkage.resolve() == database.resolve():
        raise c.error("output.linkage", "must be a separate file from output.database (the linkage is secret)")
    table = c.name_value("output.table", o.get("table"))
    view = c.name_value("output.view_without_key", o.get("view_without_key"), required=False)
    for where, value in (("output.table", table), ("output.view_without_key", view)):
        if value is not None and value.lower() == MANIFEST_TABLE:
            raise c.error(where, f"{MANIFEST_TABLE!r} is the manifest's name")
    version = o.get("storage_version", DEFAULT_STORAGE_VERSION)
    if version is not None and (not isinstance(version, str) or not re.fullmatch(r"v\d+\.\d+\.\d+", version)):
        raise c.error("output.storage_version", f"must look like \"v1.5.0\", got {show(version)}")
    return Output(database=database, table=table, view_without_key=view, storage_version=version, linkage=linkage)


IDENTIFYING = "identifying"  # a rule's setting: false exempts its columns from the quasi-identifiers


def _rule(c: Checker, column: str, value) -> Rule:
    where = f"columns.{column}"
    c.name_value(where, column)
    if isinstance(value, str):
        if value in ("keep", "drop"):
            return Rule(column, value, where=where)
        value = {"method": value}
    if not isinstance(value, dict):
        raise c.error(where, f"must be \"keep\", \"drop\", {{ rule = \"keep\", identifying = false }} or "
                             f"{{ method = ..., ... }}, got {show(value)}")
    if "rule" in value:
        if "method" in value:
            raise c.error(where, "give either rule = \"keep\" / \"drop\" or method = \"...\", not both")
        action = value["rule"]
        if action not in ("keep", "drop"):
            raise c.error(f"{where}.rule", f"must be \"keep\" or \"drop\" (a masking rule names its method = "
                                           f"\"...\"), got {show(action)}")
        c.keys(where, value, ("rule", IDENTIFYING) if action == "keep" else ("rule",))
        identifying = c.flag(f"{where}.{IDENTIFYING}", value.get(IDENTIFYING, True))
        return Rule(column, action, where=where, identifying=identifying)
    if value.get("method") in RECODINGS:
        return _recode(c, where, column, dict(value))
    return _masking(c, where, dict(value), (COLUMN, BOXES), (column,))


def _recode(c: Checker, where: str, column: str, settings: dict) -> Rule:
    """A global recoding of one column ({ method = "truncate_date", unit = "year" }): its parameters
    checked against their kinds (names, TOML types, values) before any SQL; the column's type is
    checked against the source's (`plan.resolve`)."""
    recoding = RECODINGS[settings.pop("method")]
    name = recoding.name
    identifying = c.flag(f"{where}.{IDENTIFYING}", settings.pop(IDENTIFYING)) if IDENTIFYING in settings else True
    allowed = tuple(p.name for p in recoding.params)
    unknown = [k for k in settings if k not in allowed]
    if unknown:
        raise c.error(where, f"{name} has no parameter {', '.join(map(repr, unknown))}; "
                             f"its parameters: {', '.join(allowed)}")
    missing = [p for p in recoding.required if p not in settings]
    if missing:
        raise c.error(where, f"{name} needs {', '.join(missing)}")
    for key, v in settings.items():
        param = recoding.param(key)
        if not param.kind.accepts(v):
            raise c.error(f"{where}.{key}", f"{name} expects {param.type}, got {show(v)}")
        try:
            param.check(v, name)
        except SdcError as e:
            raise c.error(f"{where}.{key}", f"{e} (got {show(v)})") from None
    if recoding.check is not None:
        try:
            recoding.check(settings, name)
        except SdcError as e:
            raise c.error(where, str(e)) from None
    return Rule(column, "recode", params=settings, where=where, identifying=identifying, recoding=recoding)


def _group(c: Checker, i: int, value: dict) -> Rule:
    where = f"groups[{i}]"
    settings = dict(value)
    if "columns" not in settings:
        raise c.error(where, "a group needs columns = [...]")
    columns = c.names(f"{where}.columns", settings.pop("columns"))
    if len(columns) < 2:
        raise c.error(f"{where}.columns", f"a group needs at least two columns, got {list(columns)}")
    return _masking(c, where, settings, (ROWS, BOXES), columns)


def _masking(c: Checker, where: str, settings: dict, kinds: tuple[str, ...], columns: tuple[str, ...]) -> Rule:
    """A masking rule of [columns] (kinds COLUMN and BOXES: a box method may box one column) or of
    [[groups]] (kinds ROWS and BOXES)."""
    name = settings.pop("method", None)
    if name is None:
        raise c.error(where, "a masking rule needs method = \"...\"")
    method = METHODS.get(name) if isinstance(name, str) else None
    known = sorted(m.name for m in METHODS.values() if m.kind in kinds)
    if method is None and name in RECODINGS:
        raise c.error(where, f"{name} recodes one column: declare it in [columns]")
    if method is None:
        recode = f"; recodings (one column): {', '.join(RECODINGS)}" if COLUMN in kinds else ""
        raise c.error(where, f"unknown method {show(name)}; known: {', '.join(known) or 'none yet'}{recode}")
    if method.kind not in kinds:
        if method.kind != ROWS and method.guarantee.model in guarantees.DP_MODELS:
            raise c.error(where, f"{name} masks one column, not a group: {guarantees.MULTIVARIATE_DP}")
        raise c.error(where, f"{name} masks {'a group of columns: declare it in [[groups]]' if method.kind == ROWS else 'one column: declare it in [columns]'}")
    strata = c.names(f"{where}.strata", settings.pop("strata")) if "strata" in settings else None
    box_column = None
    if method.kind == BOXES:
        box_column = c.name_value(f"{where}.{BOX_COLUMN}", settings.pop(BOX_COLUMN, "_".join(columns) + "_box"))
    elif BOX_COLUMN in settings:
        raise c.error(f"{where}.{BOX_COLUMN}", f"{name} releases values, not boxes: it has no box id column")
    decimals = c.decimals(f"{where}.{DECIMALS}", settings.pop(DECIMALS)) if DECIMALS in settings else None
    reproducible = c.flag(f"{where}.{REPRODUCIBLE}", settings.pop(REPRODUCIBLE)) if REPRODUCIBLE in settings else None
    cells = _cells(c, f"{where}.{CELLS}", settings.pop(CELLS)) if CELLS in settings else None
    centroids = c.name_value(f"{where}.{CENTROIDS}", settings.pop(CENTROIDS)) if CENTROIDS in settings else None
    weighted = c.flag(f"{where}.{WEIGHTED}", settings.pop(WEIGHTED)) if WEIGHTED in settings else None
    identifying = c.flag(f"{where}.{IDENTIFYING}", settings.pop(IDENTIFYING)) if IDENTIFYING in settings else True
    if NAMES in settings and method.param(NAMES) is not None:
        raise c.error(f"{where}.{NAMES}", f"{name}'s names are the rule's columns {list(columns)}, "
                                          "passed by the release; leave names out")
    allowed = tuple(p.name for p in method.settable)
    unknown = [k for k in settings if k not in allowed]
    if unknown:
        raise c.error(where, f"{name} has no parameter {', '.join(map(repr, unknown))}; "
                             f"its parameters: {', '.join(allowed) or 'none'}")
    for key, v in settings.items():
        expected = check_value(method.param(key), v)
        if expected is not None:
            raise c.error(f"{where}.{key}", f"{name} expects {expected}, got {show(v)}")
    missing = [p for p in method.required if p not in settings and p != EPSILON]
    if missing:
        raise c.error(where, f"{name} needs {', '.join(missing)}")
    group = columns if len(columns) > 1 else ()
    return Rule(columns[0], "mask", method, settings, strata, group=group, where=where, box_column=box_column,
                decimals=decimals, reproducible=reproducible, cells=cells, centroids_table=centroids,
                weighted=weighted, identifying=identifying)


def _cells(c: Checker, where: str, value) -> CellProtection:
    if not isinstance(value, dict):
        raise c.error(where, f"must be a table such as {{ rule = \"dominance\", n = 2, r = 0.7, action = "
                             f"\"suppress\" }}, got {show(value)}")
    rule = value.get("rule")
    if rule not in CellProtection.PARAMS:
        raise c.error(f"{where}.rule", f"must be \"dominance\", \"p_percent\", \"pq\" or \"threshold\", got {show(rule)}")
    action = value.get("action")
    if action not in ("suppress", "merge", "remove"):
        raise c.error(f"{where}.action", f"must be \"suppress\", \"merge\" or \"remove\", got {show(action)}")
    params = CellProtection.PARAMS[rule]
    c.keys(where, value, ("rule", "action", *params) + (("cost",) if action != "merge" else ()))
    required = {"pq": ("q",), "threshold": ("n", "safety")}.get(rule, ())
    missing = [k for k in required if k not in value]
    if missing:
        raise c.error(where, f"rule = \"{rule}\" needs {' and '.join(missing)}")
    for k in params:
        v = value.get(k)
        if k in value and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise c.error(f"{where}.{k}", f"must be a number, got {show(v)}")
    cost = value.get("cost", "cells")
    if cost not in ("cells", "value"):
        raise c.error(f"{where}.cost", f"must be \"cells\" or \"value\", got {show(cost)}")
    settings = {k: value[k] for k in params if k in value}
    if "n" in settings and not (isinstance(settings["n"], int) and settings["n"] >= 1):
        raise c.error(f"{where}.n", f"must be an integer >= 1, got {show(settings['n'])}")
    cells = CellProtection(rule, action, **{k: (v if k == "n" else float(v)) for k, v in settings.items()}, cost=cost)
    try:
        cells.method_rule()
    except SdcError as e:
        raise c.error(f"{where}.{e.param}" if e.param else where, e.detail) from None
    return cells


def split_epsilon(c: Checker, rules: dict[str, Rule], total) -> dict[str, Rule]:
    """Give every differentially private column its epsilon.

    Columns stating `epsilon` keep it; the others share what is left of masking.total_epsilon
    equally. Sequential composition: the release spends the sum over its DP columns (strata are
    disjoint, so masking each stratum separately spends a column's epsilon once). The sum may not
    exceed the total."""
    dp = [r for r in _unique(rules.values()) if r.method is not None and r.method.is_dp]
    if not dp:
        if total is not None:
            raise c.error("masking.total_epsilon", "no column uses a differentially private method")
        return rules
    stated = [r for r in dp if EPSILON in r.params]
    open_ = [r for r in dp if EPSILON not in r.params]
    used = math.fsum(float(r.params[EPSILON]) for r in stated)
    if total is None:
        if open_:
            raise c.error(open_[0].where, f"{open_[0].method.name} needs epsilon "
                                                        "(or set masking.total_epsilon to split a budget)")
        return rules
    if used > total * (1 + 1e-12):
        raise c.error("masking.total_epsilon", f"the columns' epsilons add up to {used:g}, more than "
                                               f"the total {total:g}")
    if open_:
        share = (total - used) / len(open_)
        if share <= 0:
            raise c.error("masking.total_epsilon", f"nothing is left for {', '.join(r.where for r in open_)} "
                                                   f"after the stated epsilons ({used:g} of {total:g})")
        out = dict(rules)
        for r in open_:
            shared = dataclasses.replace(r, params={**r.params, EPSILON: share})
            for col in r.columns:
                out[col] = shared
        return out
    return rules


# ---------------------------------------------------------------------------------------------
# sampling weights: [source] weight = "column", a rule's weighted = false


def weighted_function(rule: Rule) -> str | None:
    """The SQL list function that masks the rule's column with weights (`<method>_weighted`), or None
    when the method takes none."""
    name = f"{rule.method.name}_weighted"
    return name if name in _WEIGHTED_FUNCTIONS else None


_WEIGHTED_FUNCTIONS = frozenset(r.name for r in REGISTRY if r.name.endswith("_weighted"))


def weight_of(spec: Spec, rule: Rule) -> str | None:
    """The weight column a masking rule's representatives are weighted by: the source's weight,
    unless the rule says weighted = false."""
    return spec.source.weight if rule.action == "mask" and rule.weighted is not False else None


def check_weights(c: Checker, source: Source, rules: dict[str, Rule]) -> None:
    """With [source] weight, every masking rule is weighted (its method's `<method>_weighted`: the same
    partition, weighted representatives), or says weighted = false; a method that takes no weights is
    refused naming the column and the method. Without it, weighted = true is refused."""
    for rule in _unique(rules.values()):
        if rule.action != "mask":
            continue
        if source.weight is None:
            if rule.weighted:
                raise c.error(f"{rule.where}.{WEIGHTED}", "the source has no sampling weights: set [source] "
                                                           "weight = \"<column>\"")
            continue
        if rule.weighted is not False and rule.cells is not None and rule.cells.action in ("merge", "remove"):
            raise c.error(f"{rule.where}.{CELLS}", f"action = \"{rule.cells.action}\" releases a "
                                                   f"{'merged' if rule.cells.action == 'merge' else 'changed'} cluster as the unweighted "
                                                   "mean of its records; with sampling weights use action = "
                                                   "\"suppress\", or set weighted = false in this rule")
        if rule.weighted is not False and weighted_function(rule) is None:
            takes = sorted(n.removesuffix("_weighted") for n in _WEIGHTED_FUNCTIONS)
            raise c.error(rule.where, f"{rule.method.name} does not take sampling weights (source.weight = "
                                      f"{source.weight!r}), so {', '.join(map(repr, rule.columns))} cannot be masked "
                                      f"with them; set weighted = false in this rule to mask it without weights, "
                                      f"or use a method that takes them: {', '.join(takes)}")
