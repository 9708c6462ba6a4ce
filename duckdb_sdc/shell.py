"""`duckdb-sdc sql`: SQL with every duckdb_sdc function registered, with the dot commands and output
modes of DuckDB's own shell.

Why not DuckDB's shell itself: the DuckDB shell is a C program (the `duckdb` binary, or the
`duckdb-cli` package, which ships that binary); it cannot run the Python functions duckdb_sdc
registers (its masking UDFs), and the Python package does not include it. So this module gives the
same surface in Python: statements end with ';', a line that starts with '.' where a statement
would start is a dot command, in a script (`-c`, `-f`, standard input) as at the prompt.

Dot commands (`DOT_COMMANDS`): .tables [PATTERN], .schema [PATTERN], .databases, .mode [MODE],
.headers on|off, .read FILE, .help, .quit / .exit. Output modes (`MODES`), as DuckDB's shell prints
them: duckbox (the default: DuckDB's own table rendering, long results elided), box, table,
markdown, csv, tabs, list, line, json, jsonlines, html. Values are DuckDB's text for them (a CAST
to VARCHAR; JSON as DuckDB's to_json writes it), NULL prints as NULL.

A table function given a table that does not exist is reported as the function's error about the
parameter that names it (`duckdb_sdc.sql.missing_table`), not as DuckDB's bare catalog error.

In a script, the first failing statement or dot command stops it (`ShellError`, exit code 2 in the
command); at the prompt it prints `Error: ...` and the prompt goes on.
"""

from __future__ import annotations

import fnmatch
import html
import re
import sqlite3
import sys
from pathlib import Path

MODES = ("duckbox", "box", "table", "markdown", "csv", "tabs", "list", "line", "json", "jsonlines", "html")
_PRINTED = {"SELECT", "EXPLAIN", "PRAGMA", "CALL", "RELATION", "LOGICAL_PLAN"}
_TAIL = re.compile(r";(\s*(--[^\n]*(\n|$)|/\*.*?\*/))*\s*$", re.S)
NULL = "NULL"
DOT_COMMANDS = {
    ".tables": ("?PATTERN?", "list the tables and views (names matching the LIKE pattern)"),
    ".schema": ("?PATTERN?", "show the CREATE statements of the tables and views (matching the LIKE pattern)"),
    ".databases": ("", "list the attached databases and their files"),
    ".mode": ("?MODE?", f"set the output mode ({', '.join(MODES)}); without MODE, print it"),
    ".headers": ("on|off", "column names in csv, tabs, list and html output (default on)"),
    ".read": ("FILE", "run the statements and dot commands of FILE"),
    ".help": ("", "this text"),
    ".quit": ("", "leave (also .exit)"),
}


class ShellError(Exception):
    """A failing statement or dot command: its message, one line."""


def help_text() -> str:
    width = max(len(f"{name} {args}".strip()) for name, (args, _) in DOT_COMMANDS.items())
    lines = ["Statements end with ';'. Every duckdb_sdc function is registered (see the function reference).",
             "Dot commands, at the start of a line:"]
    lines += [f"  {f'{name} {args}'.strip().ljust(width)}  {what}" for name, (args, what) in DOT_COMMANDS.items()]
    return "\n".join(lines)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Shell:
    """One session: a connection, its output mode and header setting, where it prints."""

    def __init__(self, con, mode: str = "duckbox", headers: bool = True, out=None, err=None):
        self.con = con
        self.mode = self._check_mode(mode)
        self.headers = headers
        self._out = out
        self._err = err

    @property
    def out(self):
        return self._out or sys.stdout

    @property
    def err(self):
        return self._err or sys.stderr

    # -- scripts ---------------------------------------------------------------------------------

    def run(self, text: str) -> bool:
        """Run a script: statements and dot commands, line by line. Raises ShellError at the first
        failure; returns False when it ends with .quit or .exit."""
        buffer: list[str] = []
        for line in text.splitlines():
            if not buffer and line.lstrip().startswith("."):
                if not self.dot(line.strip()):
                    return False
                continue
            buffer.append(line)
            statement = "\n".join(buffer)
            if not statement.strip():
                buffer = []
            elif sqlite3.complete_statement(statement):
                buffer = []
                self.sql(statement)
        rest = "\n".join(buffer)
        if rest.strip():  # the last statement may end without ';'
            self.sql(rest)
        return True

    def sql(self, text: str) -> None:
        """Run every statement of `text`, printing the result of each query in the current mode."""
        import duckdb

        from ._validate import error_message
        from .sql.missing_table import reword

        try:
            statements = self.con.extract_statements(text)
        except duckdb.Error as e:
            raise ShellError(error_message(e)) from None
        for statement in statements:
            try:
                if statement.type.name in _PRINTED:
                    # printing wraps the query, so it must end without ';' and trailing comments
                    relation = self.con.sql(_TAIL.sub("", statement.query))
                    if relation is not None:
                        self.show(relation)
                else:
                    self.con.execute(statement.query).fetchall()
            except duckdb.Error as e:
                # a table function's missing table: the function and the parameter that names it
                raise ShellError(reword(str(e), statement.query) or error_message(e)) from None

    # -- output ----------------------------------------------------------------------------------

    def show(self, relation) -> None:
        """Print a query's result in the current mode."""
        if self.mode == "duckbox":
            print(relation, file=self.out)
            return
        names = list(relation.columns)
        if self.mode in ("json", "jsonlines"):
            rows = [r[0] for r in relation.set_alias("__sdc_row").project("to_json(__sdc_row)").fetchall()]
            if self.mode == "jsonlines":
                text = "".join(f"{r}\n" for r in rows)
            else:
                text = "[" + ",\n".join(rows) + "]\n" if rows else "[]\n"
            self.out.write(text)
            return
        as_text = ", ".join(f"CAST({_quote(n)} AS VARCHAR)" for n in names)
        rows = [[NULL if v is None else v for v in r] for r in relation.project(as_text).fetchall()] if names else []
        numeric = [_is_number(t) for t in relation.types]
        self.out.write(RENDER[self.mode](names, rows, numeric, self.headers))

    # -- dot commands ----------------------------------------------------------------------------

    def dot(self, line: str) -> bool:
        """Run one dot command; False means quit. Raises ShellError for a bad one."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in (".quit", ".exit", ".q"):
            return False
        if name == ".help":
            print(help_text(), file=self.out)
        elif name == ".tables":
            self._tables(arg or None)
        elif name == ".schema":
            self._schema(arg or None)
        elif name == ".databases":
            self.sql("SELECT database_name AS name, path FROM duckdb_databases() WHERE NOT internal "
                     "ORDER BY database_name")
        elif name == ".mode":
            if arg:
                self.mode = self._check_mode(arg.split()[0])
            else:
                print(f"current output mode: {self.mode}", file=self.out)
        elif name == ".headers":
            if arg not in ("on", "off"):
                raise ShellError(f".headers takes on or off, got {arg!r}")
            self.headers = arg == "on"
        elif name == ".read":
            if not arg:
                raise ShellError(".read needs a file name")
            return self.run(read_file(arg))
        else:
            raise ShellError(f"unknown command {line!r}; .help lists the commands")
        return True

    @staticmethod
    def _check_mode(mode: str) -> str:
        if mode not in MODES:
            raise ShellError(f"unknown mode {mode!r}; the modes: {', '.join(MODES)}")
        return mode

    def _relations(self, pattern: str | None) -> list[tuple[str, str, str, str | None]]:
        """(shown name, kind, name, CREATE statement) of every table and view a user made, in the
        databases attached (the default database's main schema without qualification)."""
        default = self.con.execute("SELECT current_database()").fetchall()[0][0]
        rows = self.con.execute(
            "SELECT database_name, schema_name, table_name, 'table', sql FROM duckdb_tables() WHERE NOT internal "
            "UNION ALL SELECT database_name, schema_name, view_name, 'view', sql FROM duckdb_views() WHERE NOT internal"
        ).fetchall()
        out = []
        for database, schema, name, kind, sql in rows:
            shown = name
            if schema != "main" or database not in (default, "temp"):
                shown = f"{schema}.{shown}"
            if database not in (default, "temp"):
                shown = f"{database}.{shown}"
            if pattern is None or _like(name, pattern) or _like(shown, pattern):
                out.append((shown, kind, name, sql))
        return sorted(out, key=lambda r: (r[0].count("."), r[0]))

    def _tables(self, pattern: str | None) -> None:
        names = [r[0] for r in self._relations(pattern)]
        if names:
            self.out.write(_columns(names))

    def _schema(self, pattern: str | None) -> None:
        for _, _, _, sql in self._relations(pattern):
            if sql:
                sql = sql.rstrip()
                print(sql if sql.endswith(";") else sql + ";", file=self.out)

    # -- the prompt ------------------------------------------------------------------------------

    def prompt(self, signals, history: Path, banner: str) -> None:
        """The interactive prompt: a line that starts with '.' is a dot command, statements run when
        they end with ';'. Ctrl-C cancels the statement being typed or running (`signals`, the
        command's handler: SIGTERM still ends it); the history is kept in `history`."""
        import signal

        try:
            import readline
        except ImportError:  # not on every platform
            readline = None
        if readline is not None:
            try:
                readline.read_history_file(history)
            except OSError:
                pass
        print(banner)
        buffer: list[str] = []
        try:
            while True:
                try:
                    line = input(MORE if buffer else PROMPT)
                except EOFError:
                    print()
                    break
                except KeyboardInterrupt:  # Ctrl-C cancels the statement being typed; SIGTERM ends the prompt
                    if signals.received == signal.SIGTERM:
                        raise
                    signals.take()
                    print()
                    buffer = []
                    continue
                if not buffer and line.strip().startswith("."):
                    try:
                        if not self.dot(line.strip()):
                            break
                    except ShellError as e:
                        print(f"Error: {e}", file=self.err)
                    continue
                buffer.append(line)
                text = "\n".join(buffer)
                if not text.strip():
                    buffer = []
                    continue
                if not sqlite3.complete_statement(text):
                    continue
                buffer = []
                try:
                    self.sql(text)
                except BaseException as e:  # Ctrl-C interrupts the statement, whatever DuckDB raises then
                    if signals.received == signal.SIGTERM:
                        raise
                    if signals.take() is not None:
                        print("interrupted", file=self.err)
                    elif isinstance(e, ShellError):
                        print(f"Error: {e}", file=self.err)
                    else:
                        raise
        finally:
            if readline is not None:
                try:
                    readline.set_history_length(2000)
                    readline.write_history_file(history)
                except OSError:
                    pass


PROMPT, MORE = "sdc> ", "...> "


def read_file(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ShellError(f"cannot read {path!r}: {e.strerror}") from None
    return decode(data, repr(path))


def decode(data: bytes, what: str) -> str:
    """UTF-8 text (a byte order mark is dropped); a ShellError that names `what` otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ShellError(f"cannot read {what}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); "
                         "save it as UTF-8") from None


def _like(name: str, pattern: str) -> bool:
    """SQL LIKE ('%' any text, '_' one character), case-insensitive as DuckDB's shell matches."""
    glob = "".join("*" if c == "%" else "?" if c == "_" else "[" + c + "]" if c in "*?[" else c for c in pattern)
    return fnmatch.fnmatchcase(name.lower(), glob.lower())


def _is_number(dtype) -> bool:
    return re.fullmatch(r"(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\))",
                        str(dtype).upper()) is not None


def _columns(names: list[str], width: int = 80) -> str:
    """Names in columns, filled column by column, as DuckDB's and SQLite's shells list tables."""
    cell = max(len(n) for n in names) + 2
    per_line = max(1, width // cell)
    lines = -(-len(names) // per_line)
    out = []
    for i in range(lines):
        row = [names[j] for j in range(i, len(names), lines)]
        out.append("".join(n.ljust(cell) for n in row).rstrip())
    return "\n".join(out) + "\n"


def _grid(names, rows, numeric, headers, *, top, head_sep, bottom, bar):
    """box and table: header names centred, values left-aligned, as DuckDB's shell draws them."""
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]

    def rule(parts):
        left, fill, mid, right = parts
        return left + mid.join(fill * (w + 2) for w in widths) + right

    def line(cells, centre):
        return bar + bar.join(f" {c.center(w) if centre else c.ljust(w)} " for c, w in zip(cells, widths)) + bar

    out = [rule(top), line(names, True), rule(head_sep)] + [line(r, False) for r in rows] + [rule(bottom)]
    return "\n".join(out) + "\n"


def _box(names, rows, numeric, headers):
    return _grid(names, rows, numeric, headers, top="┌─┬┐", head_sep="├─┼┤", bottom="└─┴┘", bar="│")


def _table(names, rows, numeric, headers):
    return _grid(names, rows, numeric, headers, top="+-++", head_sep="+-++", bottom="+-++", bar="|")


def _markdown(names, rows, numeric, headers):
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    head = "|" + "|".join(f" {n.center(w)} " for n, w in zip(names, widths)) + "|"
    sep = "|" + "|".join(("-" * (w + 1) + ":") if num else "-" * (w + 2) for w, num in zip(widths, numeric)) + "|"
    body = ["|" + "|".join(f" {c.ljust(w)} " for c, w in zip(r, widths)) + "|" for r in rows]
    return "\n".join([head, sep] + body) + "\n"


def _csv_field(value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\r\n') else value


def _csv(names, rows, numeric, headers):
    lines = ([names] if headers else []) + rows
    return "".join(",".join(_csv_field(v) for v in r) + "\r\n" for r in lines)


def _separated(separator):
    def render(names, rows, numeric, headers):
        lines = ([names] if headers else []) + rows
        return "".join(separator.join(r) + "\n" for r in lines)

    return render


def _line(names, rows, numeric, headers):
    width = max([5] + [len(n) for n in names])  # as DuckDB's (and SQLite's) shell: at least 5
    return "\n".join("".join(f"{n.rjust(width)} = {v}\n" for n, v in zip(names, r)) for r in rows)


def _html(names, rows, numeric, headers):
    def row(cells, tag):
        inner = "\n".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells)
        return f"<tr>{inner}\n</tr>\n"

    return (row(names, "th") if headers else "") + "".join(row(r, "td") for r in rows)


RENDER = {"box": _box, "table": _table, "markdown": _markdown, "csv": _csv, "tabs": _separated("\t"),
          "list": _separated("|"), "line": _line, "html": _html}

__all__ = ["DOT_COMMANDS", "MODES", "Shell", "ShellError", "decode", "help_text", "read_file"]
