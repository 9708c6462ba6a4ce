"""The release ledger: a private record of every release written from a source, so that a new release
is checked against the earlier ones (docs/releases/ledger.md).

Where: `[ledger] path` in the spec, else `--ledger PATH`, else `$XDG_DATA_HOME/duckdb-sdc/ledger`
(`~/.local/share/duckdb-sdc/ledger` when XDG_DATA_HOME is unset). The folder is made with mode 0700
and refused unless it is a folder owned by the user that no one else can read. It holds:

* `entries/<release id>.json`: one entry per release: the release id, the source's fingerprint, the
  time, the output path, and each source column with its rule, method, parameters, privacy model,
  guarantee and epsilon (the manifest's rows), the released columns and the quasi-identifiers;
* `values/<release id>.parquet`: the released values of the release's quasi-identifiers by source key
  (the spec's key, or the surrogate key of a spec without one), as secret as the linkage file: what a
  later release is joined with to measure the intersection attack;
* `lock`: every release takes an exclusive flock on it from before it reads the ledger until its
  files are in place, so two releases serialise.

An entry and its values are written as hidden temporary files in the ledger folder, registered in the
release's private workspace, and renamed into the ledger by the same `Workspace.commit` as the release
file and its linkage: a release is in the ledger if and only if it was renamed into place (a release
killed after the commit was recorded is rolled forward by its watchdog, entry included; one killed
before leaves neither).

Trade-off sweeps (`duckdb-sdc tradeoff`), dry runs (`release --dry-run`) and `evaluate` publish nothing
and never enter the ledger. A Spark release (`--engine spark`) uses it through spark/ledger.py: the same
fingerprint, checks and entries.

The fingerprint of a source (`fingerprint`) is computed from its content, not its path: each record is
written in a canonical text form (columns in the order of their names; integers and integral numbers
below 2^53 as integers, other numbers as the shortest text of their double, dates and timestamps in
ISO form, timestamps with a time zone in UTC, booleans as true/false, anything else as DuckDB's text;
each field length-prefixed, NULL a marker of its own), hashed with MD5 to 128 bits, and the record
hashes are summed modulo 2^64 in each of their two 64-bit halves (an order-independent multiset
hash); the fingerprint is the first 128 bits of SHA-256 over that sum, the record count and the column
names. The same records under another file name, as Parquet instead of CSV, or as a DuckDB table have
the same fingerprint; any changed value, added or removed record, or renamed column gives another.
Cost: one scan of the source with one MD5 per record (1.6 s of CPU per million records of six columns,
one DuckDB thread, DuckDB 2.0.1; the scan runs on every thread the release has). Two different sources collide with probability about 2^-128 each (the record hashes
taken as random, the sums of the multiset hash are uniform): negligible for the sources of one
steward. It is not a defence against someone who crafts sources to collide (the steward's machine
and data are trusted).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import re
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from sqlglot import exp

from .._validate import SdcError
from .ledger_settings import LedgerSettings, parse_settings
from .policy import PolicyBreach

ENTRIES, VALUES, LOCK = "entries", "values", "lock"
FINGERPRINT_VERSION = 1
SETTLE_SECONDS = 10.0  # how long a release waits for a killed release's watchdog to finish its commit


class LedgerError(SdcError):
    """The ledger cannot be used (a folder that is not private, a damaged entry, an unknown release id):
    a user error, exit 2."""


class LedgerRefusal(PolicyBreach):
    """The release composes with earlier releases of its source beyond what the spec allows: nothing is
    written (exit 3, as a policy breach)."""

    def __init__(self, message: str):
        self.outcomes = []
        Exception.__init__(self, message)


def default_path() -> Path:
    """$XDG_DATA_HOME/duckdb-sdc/ledger, or ~/.local/share/duckdb-sdc/ledger."""
    data = os.environ.get("XDG_DATA_HOME")
    root = Path(data) if data and Path(data).is_absolute() else Path.home() / ".local" / "share"
    return root / "duckdb-sdc" / "ledger"


# ---------------------------------------------------------------------------------------------
# the fingerprint

_INTEGER = re.compile(r"U?(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT)")
_REAL = re.compile(r"FLOAT|DOUBLE|REAL|DECIMAL\(\d+,\s*\d+\)")
_ZONED = re.compile(r"TIMESTAMP WITH TIME ZONE|TIMESTAMPTZ")
_NULL_FIELD = "\x00"


def _canonical(name: str, type_: str) -> exp.Expression:
    """The canonical text of one column's value (NULL stays NULL)."""
    col = exp.column(exp.to_identifier(name, quoted=True))
    if _INTEGER.fullmatch(type_):
        return exp.cast(col, "VARCHAR")
    if _REAL.fullmatch(type_):
        x = exp.cast(col, "DOUBLE")
        integral = exp.and_(
            exp.Anonymous(this="isfinite", expressions=[x.copy()]),
            exp.EQ(this=x.copy(), expression=exp.Anonymous(this="trunc", expressions=[x.copy()])),
            exp.LT(this=exp.Abs(this=x.copy()), expression=exp.Literal.number(2 ** 53)))
        return exp.If(this=integral, true=exp.cast(exp.cast(x.copy(), "BIGINT"), "VARCHAR"),
                      false=exp.cast(x.copy(), "VARCHAR"))
    if _ZONED.fullmatch(type_):
        return exp.cast(exp.Anonymous(this="timezone", expressions=[exp.Literal.string("UTC"), col]), "VARCHAR")
    return exp.cast(col, "VARCHAR")


def fingerprint_query(relation: exp.Expression, columns: list[tuple[str, str]]) -> exp.Select:
    """(records, sum of the low halves, sum of the high halves) of the records' MD5s (see the module)."""
    fields = []
    for name, type_ in sorted(columns, key=lambda c: c[0]):
        text = _canonical(name, type_)
        framed = exp.DPipe(this=exp.DPipe(this=exp.cast(exp.Length(this=text.copy()), "VARCHAR"),
                                          expression=exp.Literal.string(":")), expression=text.copy())
        fields.append(exp.Coalesce(this=framed, expressions=[exp.Literal.string(_NULL_FIELD)]))
    record = exp.Anonymous(this="concat_ws", expressions=[exp.Literal.string("|"), *fields]) if fields \
        else exp.Literal.string("")
    lo = exp.Anonymous(this="md5_number_lower", expressions=[record.copy()])
    hi = exp.Anonymous(this="md5_number_upper", expressions=[record.copy()])
    return exp.select(exp.Count(this=exp.Star()), exp.Sum(this=exp.cast(lo, "HUGEINT")),
                      exp.Sum(this=exp.cast(hi, "HUGEINT"))).from_(relation)


def fingerprint(con, relation: exp.Expression, columns: list[tuple[str, str]]) -> str:
    """The source's fingerprint: 32 hex digits (see the module docstring)."""
    rows, lo, hi = con.execute(fingerprint_query(relation, columns).sql(dialect="duckdb")).fetchall()[0]
    summary = {"version": FINGERPRINT_VERSION, "rows": int(rows), "columns": sorted(n for n, _ in columns),
               "sum": [int(lo or 0) % 2 ** 64, int(hi or 0) % 2 ** 64]}
    return hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# the ledger on disk


@dataclass
class Entry:
    data: dict

    @property
    def id(self) -> str:
        return self.data["release_id"]

    @property
    def forgotten(self) -> bool:
        return self.data.get("forgotten_at") is not None

    def epsilon_of(self, column: str) -> float:
        return math.fsum(c["epsilon"] for c in self.data["columns"]
                         if c["source_column"] == column and c.get("epsilon") is not None)

    def dp_columns(self) -> list[str]:
        return list(dict.fromkeys(c["source_column"] for c in self.data["columns"] if c.get("epsilon") is not None))

    def describe(self) -> str:
        return f"{self.id} ({self.data['created_at']}, {self.data['output']} table {self.data['table']!r})"


class Ledger:
    """A ledger folder (see the module docstring)."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path).expanduser().absolute() if path is not None else default_path()
        self.entries_dir = self.path / ENTRIES
        self.values_dir = self.path / VALUES
        self._lock: int | None = None

    def ensure(self) -> Ledger:
        """Make the folder (mode 0700) if missing; refuse one that is not private."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.mkdir(mode=0o700, exist_ok=True)
        except OSError as e:
            raise LedgerError(f"ledger: cannot create {str(self.path)!r} ({e.strerror})") from None
        self._check()
        for sub in (self.entries_dir, self.values_dir):
            sub.mkdir(mode=0o700, exist_ok=True)
        return self

    def _check(self) -> None:
        """Refuse a ledger folder that is not private (it could be read, or entries planted in it)."""
        info = os.lstat(self.path)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise LedgerError(f"ledger: {str(self.path)!r} must be a folder owned by you with mode 0700 (it holds "
                              f"the released values of every release by source key); it has mode "
                              f"{stat.S_IMODE(info.st_mode):04o} and owner uid {info.st_uid}")

    @contextmanager
    def locked(self):
        """Hold the ledger's exclusive lock (blocking): releases serialise on it."""
        self.ensure()
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._lock = fd
            self._settle()
            yield self
        finally:
            self._lock = None
            os.close(fd)

    def _pending(self) -> list[Path]:
        return [p for d in (self.entries_dir, self.values_dir) for p in d.glob(".*.tmp")]

    def _settle(self) -> None:
        """Under the lock, a hidden temporary file is a release killed while it committed, whose watchdog
        is finishing it (renaming it into place or deleting it): wait for it, so that this release reads
        the ledger as it will be."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while self._pending():
            if time.monotonic() > deadline:
                names = ", ".join(sorted(p.name for p in self._pending())[:3])
                raise LedgerError(f"ledger: {str(self.path)!r} holds files of a release that ended while it was "
                                  f"committing ({names}) and no process finished it in {SETTLE_SECONDS:g} s; if "
                                  "no release is running, release again from the same temporary folder (it "
                                  "recovers the workspace) or remove those files")
            time.sleep(0.05)

    def entry_path(self, release_id: str) -> Path:
        return self.entries_dir / f"{release_id}.json"

    def values_path(self, release_id: str) -> Path:
        return self.values_dir / f"{release_id}.parquet"

    def entries(self, source: str | None = None, *, forgotten: bool = False) -> list[Entry]:
        """The entries (of one source fingerprint, or a prefix of one), oldest first."""
        out = []
        if not self.entries_dir.is_dir():
            return out
        self._check()
        for path in self.entries_dir.glob("*.json"):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise LedgerError(f"ledger: cannot read the entry {str(path)!r} ({e})") from None
            entry = Entry(data)
            if source is not None and not data.get("fingerprint", "").startswith(source):
                continue
            if entry.forgotten and not forgotten:
                continue
            out.append(entry)
        return sorted(out, key=lambda e: (e.data["created_at"], e.id))

    def forget(self, release_id: str) -> Entry:
        """Record a release as forgotten (never published): its entry stays, marked with the time, and
        no longer counts for later releases; its private values are deleted."""
        with self.locked():
            path = self.entry_path(release_id)
            if not re.fullmatch(r"[0-9a-f-]{36}", release_id) or not path.is_file():
                raise LedgerError(f"ledger forget: no release {release_id!r} in {str(self.path)!r}")
            entry = Entry(json.loads(path.read_text(encoding="utf-8")))
            if entry.forgotten:
                raise LedgerError(f"ledger forget: release {release_id} was forgotten already "
                                  f"({entry.data['forgotten_at']})")
            entry.data["forgotten_at"] = _now()
            write_json(path, entry.data)
            try:
                os.unlink(self.values_path(release_id))
            except FileNotFoundError:
                pass
            return entry


def _now() -> str:
    return datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ", timespec="seconds")


def write_json(path: Path, data: dict) -> None:
    """Write `path` atomically and durably (a hidden sibling renamed over it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.new")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_entry(tmp: Path, data: dict) -> None:
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())


# ---------------------------------------------------------------------------------------------
# composition


def check_dp(spec, entries: list[Entry], fp: str) -> list[str]:
    """Sequential composition of epsilon-DP over the earlier releases of the source: refuse (raise
    LedgerRefusal) a release whose total with the earlier ones exceeds [policy] epsilon_budget, or,
    without a budget, a second DP release of a column unless [ledger] repeat_dp = true. Returns the
    notes to print (the budget spent)."""
    here = {c: r.epsilon for r in spec.masked() if r.epsilon is not None for c in r.columns}
    if not here:
        return []
    spent = math.fsum(e.data.get("epsilon_total") or 0.0 for e in entries)
    total = spent + math.fsum(here.values())
    dp_earlier = [e for e in entries if e.dp_columns()]
    budget = spec.policy.epsilon_budget if spec.policy is not None else None
    names = "; ".join(e.describe() for e in dp_earlier)
    if budget is not None:
        if total > budget * (1 + 1e-12):
            raise LedgerRefusal(
                f"{spec.name}: the release would spend epsilon {math.fsum(here.values()):g} of source {fp}, "
                f"which earlier releases spent {spent:g} of: {total:g} in all exceeds [policy] epsilon_budget = "
                f"{budget:g} (sequential composition); nothing was written. Earlier releases: {names or 'none'}")
        return [f"epsilon spent on source {fp}: {total:g} of the budget {budget:g} (this release "
                f"{math.fsum(here.values()):g}, earlier {spent:g})"]
    repeated = {c: [e for e in dp_earlier if e.epsilon_of(c) > 0] for c in here}
    repeated = {c: es for c, es in repeated.items() if es}
    if repeated and not spec.ledger.repeat_dp:
        column, es = next(iter(repeated.items()))
        raise LedgerRefusal(
            f"{spec.name}: {', '.join(repeated)} of source {fp} {'was' if len(repeated) == 1 else 'were'} released "
            f"with differential privacy before ({column}: {'; '.join(e.describe() for e in es)}); a second release "
            f"spends its epsilon again (sequential composition: epsilon {total:g} in all), so it is refused "
            "without a budget; nothing was written. Set [policy] epsilon_budget to account the total, or "
            "[ledger] repeat_dp = true to release anyway")
    if spent:
        per = ", ".join(f"{c} {math.fsum(e.epsilon_of(c) for e in entries) + eps:g}" for c, eps in here.items())
        return [f"epsilon spent on source {fp} by this and earlier releases: {total:g} in all ({per}); "
                "[ledger] repeat_dp = true and no [policy] epsilon_budget"]
    return []


def released_qi_columns(spec, source_columns) -> list[str]:
    """The release table's columns that carry the spec's quasi-identifiers (a boxed column's bounds and
    its rule's box id)."""
    from .plan import released_columns

    qi = set(spec.quasi_identifiers())
    return [c.name for c in released_columns(spec, source_columns)
            if (c.source in qi) or (c.source is None and any(s in qi for s in c.rule.columns))]


def signature(spec, column: str) -> str | None:
    """What a released column's values are a function of, so that two releases of one source release
    the same values of it for every record exactly when their signatures are equal: "keep", or the
    method with its parameters, strata, decimals and weight. None for a column whose values are drawn
    afresh by each release (a method that takes a seed, without one): they never match exactly."""
    from .methods import SECRET_PARAMS
    from .spec import weight_of

    rule = spec.rules[column]
    if rule.action == "keep":
        return "keep"
    if rule.action == "recode":  # a deterministic function of the source value
        return json.dumps({"recode": rule.recoding.name, "parameters": rule.effective_params()}, sort_keys=True,
                          default=str)
    if rule.action != "mask" or not rule.in_table or redrawn(rule):
        return None
    params = {k: v for k, v in rule.effective_params().items() if k not in SECRET_PARAMS}
    return json.dumps({"method": rule.method.name, "parameters": params, "strata": list(spec.strata_of(rule)),
                       "decimals": spec.decimals_of(rule), "weight": weight_of(spec, rule),
                       "seeded": rule.seeded}, sort_keys=True, default=str)


def redrawn(rule) -> bool:
    """Whether a masked rule's values are drawn afresh each time it runs (a method that takes a seed, run
    without one)."""
    from .methods import SECRET_PARAMS

    return any(p.name in SECRET_PARAMS for p in rule.method.params) and not rule.seeded


def link_reason(spec, released: list[str], entry: Entry) -> str | None:
    """Why an earlier release of the same source can be joined record by record with this one (both
    release the key, or a column released by both with the same values: kept in both, or masked by
    the same deterministic method with the same parameters), or None: unlinkable (no key in both, no
    column with the same released values, and each release's row order is secret)."""
    if spec.key_released() and entry.data.get("key_released"):
        return f"both release the key {spec.source.key!r}"
    theirs = entry.data.get("signatures", {})
    common = [c for c in released if (sig := signature(spec, c)) is not None and theirs.get(c) == sig]
    if common:
        return f"both release the same values of {', '.join(common)}"
    return None


def union_classes(con, spec, linked: list[tuple[Entry, Path]], mine: list[str], relation: str,
                  key: str) -> tuple[float | None, float | None]:
    """(k-anonymity, unique share) over the union of the quasi-identifiers of this release (`mine`, in
    `relation`) and of the linked earlier releases (their stored values), joined by the source key."""
    from .policy import classes, classes_query

    def q(name: str) -> exp.Identifier:
        return exp.to_identifier(name, quoted=True)

    select = [exp.column(q(c), "__sdc_new").as_(q(f"new.{c}")) for c in mine]
    query = exp.select(*select) if select else exp.select(exp.Literal.number(1).as_(q("__sdc_one")))
    query = query.from_(exp.Table(this=q(relation), alias=exp.TableAlias(this=q("__sdc_new"))))
    names = [f"new.{c}" for c in mine]
    for i, (entry, path) in enumerate(linked):
        alias = f"__sdc_e{i}"
        columns = entry.data.get("quasi_identifier_columns", [])
        query = query.select(*(exp.column(q(c), alias).as_(q(f"{entry.id}.{c}")) for c in columns))
        names += [f"{entry.id}.{c}" for c in columns]
        reader = exp.Table(this=exp.ReadParquet(expressions=[exp.Literal.string(str(path))]),
                           alias=exp.TableAlias(this=q(alias)))
        on = exp.EQ(this=exp.column(q(key), "__sdc_new"), expression=exp.column(q("__sdc_key"), alias))
        query = query.join(reader, on=on, join_type="INNER")
    if not names:
        return None, None
    out = classes(con.execute(classes_query(query.subquery(q("__sdc_union")), names).sql(dialect="duckdb"))
                  .fetchall()[0])
    return out["k_anonymity"], out["unique_share"]


class Composer:
    """One release's use of the ledger (release/run.py): `source` fingerprints the source and checks the
    DP composition before anything is masked; `step` is the plan's step that checks the linked earlier
    releases on the would-be release; `write` writes the entry and the values as temporary files of
    the workspace and returns their renames, which the release's commit does first."""

    def __init__(self, book: Ledger, spec):
        self.book, self.spec = book, spec
        self.fingerprint: str | None = None
        self.source_columns = None
        self.earlier: list[Entry] = []
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.linked: list[dict] = []

    def source(self, con, source_columns) -> None:
        from .plan import RAW, table

        self.known(fingerprint(con, table(RAW), source_columns), source_columns)

    def known(self, fp: str, source_columns) -> None:
        """The source's fingerprint `fp` (computed by the caller: the Spark engine's, spark/ledger.py): the
        earlier releases of the source, and the DP composition checked against them."""
        self.source_columns = source_columns
        self.fingerprint = fp
        self.earlier = [e for e in self.book.entries() if e.data.get("fingerprint") == fp]
        self.notes += check_dp(self.spec, self.earlier, fp)

    def step(self):
        from .plan import Step

        return Step("checking earlier releases", None, action=self._check_linked,
                    comment="ledger: k-anonymity and unique share over the union of this release's quasi-identifiers "
                            "and those of the earlier releases of the source it can be linked with (in Python, "
                            "nothing is written on a refusal)")

    def _check_linked(self, con) -> None:
        from .plan import RELEASED, ROW_KEY

        spec = self.spec
        released = list(spec.released())
        mine = released_qi_columns(spec, self.source_columns)
        linked = []
        for entry in self.earlier:
            why = link_reason(spec, released, entry)
            if why is None:
                self.notes.append(f"not linkable with the earlier release {entry.id} of the same source: no key "
                                  "released by both, no column whose released values are the same in both, and "
                                  "the row order of each is secret")
                continue
            path = self.book.values_path(entry.id)
            if not path.is_file():
                raise LedgerError(f"ledger: the values of release {entry.id} are missing ({str(path)!r}): the "
                                  "ledger was changed by hand; forget that release or restore the file")
            linked.append((entry, path, why))
        if not linked:
            return
        k, share = union_classes(con, spec, [(e, p) for e, p, _ in linked], mine, RELEASED, ROW_KEY)
        names = "; ".join(f"{e.describe()}, {why}" for e, _, why in linked)
        measured = (f"k-anonymity {'not measurable' if k is None else f'{k:g}'}, unique share "
                    f"{'not measurable' if share is None else f'{share:.4g}'} over the quasi-identifiers of this "
                    f"release and of the earlier release{'s' if len(linked) > 1 else ''} it can be linked with, "
                    f"joined record by record: {names}")
        self.linked = [{"release_id": e.id, "why": why} for e, _, why in linked]
        policy = spec.policy
        failed = []
        if policy is not None and policy.min_k is not None and (k is None or k < policy.min_k):
            failed.append(f"min_k = {policy.min_k}")
        if policy is not None and policy.max_unique_share is not None and (share is None or share > policy.max_unique_share):
            failed.append(f"max_unique_share = {policy.max_unique_share:g}")
        if not failed:
            self.notes.append(measured)
            return
        if spec.ledger.allow_linked:
            self.warnings.append(f"{measured}: breaches {' and '.join(failed)} ([ledger] allow_linked = true "
                                 "released it anyway)")
            return
        raise LedgerRefusal(f"{spec.name}: the release can be linked with earlier releases of its source and "
                            f"together they breach {' and '.join(failed)} (the intersection attack): {measured}; "
                            "nothing was written. Release the same masking as before, drop the key or the shared "
                            "columns, `duckdb-sdc ledger forget` a release that was never published, or set "
                            "[ledger] allow_linked = true to release with a warning")

    def write(self, con, workspace, release_id: str, created_at: datetime, facts, rows: int) -> list[tuple[Path, Path]]:
        """The entry and the values of this release (RELEASED on `con`: ROW_KEY and the released columns) as
        temporary files of `workspace`; their renames. `facts`: what the release measured (safeguards.Facts)."""
        import duckdb

        from .._version import __version__
        from . import manifest
        from .plan import RELEASED, ROW_KEY

        spec = self.spec
        mine = released_qi_columns(spec, self.source_columns)
        values = self.book.values_path(release_id)
        values_tmp = workspace.temporary(values, suffixes=("",))
        q = lambda n: exp.to_identifier(n, quoted=True)  # noqa: E731
        body = exp.select(exp.column(q(ROW_KEY)).as_(q("__sdc_key")), *(exp.column(q(c)) for c in mine)).from_(
            exp.Table(this=q(RELEASED)))
        con.execute(f"COPY ({body.sql(dialect='duckdb')}) TO {exp.Literal.string(str(values_tmp)).sql()} "
                    "(FORMAT parquet)")
        made = manifest.rows(spec, self.source_columns, facts, release_id=release_id,
                             package_version=__version__, duckdb_version=duckdb.__version__, created_at=created_at)
        columns = [{"column": r["column_name"], "source_column": r["source_column"], "released_as": r["released_as"],
                    "rule": r["rule"], "method": r["method"],
                    "parameters": None if r["parameters"] is None else json.loads(r["parameters"]),
                    "privacy_model": r["privacy_model"], "guarantee": r["guarantee"], "epsilon": r["epsilon"]}
                   for r in made]
        data = {
            "release_id": release_id, "fingerprint": self.fingerprint, "rows": rows,
            "source_columns": [n for n, _ in self.source_columns],
            "created_at": made[0]["created_at"] if made else _now(),
            "output": str(Path(spec.output.database).absolute()), "table": spec.output.table,
            "linkage": None if spec.output.linkage is None else str(Path(spec.output.linkage).absolute()),
            "spec": None if spec.path is None else str(spec.path), "source": spec.source.describe(spec.base),
            "key": spec.source.key, "key_released": spec.key_released(), "released": list(spec.released()),
            "signatures": {c: signature(spec, c) for c in spec.released()},
            "quasi_identifiers": list(spec.quasi_identifiers()), "quasi_identifier_columns": mine,
            "columns": columns, "epsilon_total": spec.epsilon_spent(), "linked": self.linked,
            "notes": self.notes, "warnings": self.warnings, "package_version": __version__, "forgotten_at": None,
        }
        entry = self.book.entry_path(release_id)
        entry_tmp = workspace.temporary(entry, suffixes=("",))
        write_entry(entry_tmp, data)
        return [(values_tmp, values), (entry_tmp, entry)]


__all__ = ["Composer", "Entry", "Ledger", "LedgerError", "LedgerRefusal", "LedgerSettings", "check_dp",
           "default_path", "fingerprint", "link_reason", "parse_settings", "union_classes"]
