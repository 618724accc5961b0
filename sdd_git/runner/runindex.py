"""The runs index, `.sdd/local/runs.sqlite3`: what `sdd role runs`, `sdd usage` and her page's
Runs view read, instead of parsing every run log (1 s for 2,000 runs; a query here is a few ms).

The logs stay the truth; the index is a cache that can be thrown away at any time. It is filled
as a run ends (`note`, from the run log's `run_ended`), and every read first brings it up to date:
it stats the log folder, reads again each log whose size, mtime or inode differ from what it holds
(a run resumed by `sdd allow` in another process, a run killed mid-way, a log copied in by hand),
and drops the rows of logs that are gone. A damaged, unreadable or other-schema database is thrown
away and built again, silently. Writes are one transaction each, in WAL mode, so two processes
never see half of the other's.

What arrives by git is not hers (CONTRACT §13): a database file git tracks (or its `-wal`, which
SQLite would replay) is never opened, the index is then built in memory for the one read; and a
run log git tracks is left out, as a pending stop git tracks is. The index holds nothing the logs
do not (they are masked as they are written).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sdd_git import statefolders
from sdd_git.errors import RecordError, SddError, UsageError
from sdd_git.root import Root
from sdd_git.runner.history import (
    ENDED_UNEXPECTEDLY,
    STATUSES,
    RunSummary,
    Usage,
    open_status,
)
from sdd_git.runner.runfilters import Filters

if TYPE_CHECKING:
    from sdd_git.runner.runfacts import LogFacts

SCHEMA = 1  # PRAGMA user_version of the layout below; any other is built again
NAME = "runs.sqlite3"
# Whether to try FTS5 for --search; where the stdlib's SQLite lacks it, a LIKE over the same
# text answers (tests turn this off to read that path).
USE_FTS5 = True
_BUSY_SECONDS = 10.0  # another process's write: wait this long before the read gives up

_T = TypeVar("_T")

_TABLES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,      -- the log's name without .jsonl: the run id
    size INTEGER NOT NULL, mtime INTEGER NOT NULL, ino INTEGER NOT NULL,
    listed INTEGER NOT NULL,        -- 0: no run in it (no run_started, or a garbled line)
    started TEXT, roles TEXT, first_role TEXT, task TEXT, change TEXT,
    status TEXT, waiting TEXT, process TEXT,   -- status NULL: its log never ended
    calls INTEGER, input INTEGER, cached INTEGER, written INTEGER, output INTEGER
);
CREATE INDEX runs_change ON runs (change);
CREATE TABLE run_roles (id INTEGER NOT NULL, role TEXT NOT NULL);
CREATE INDEX run_roles_role ON run_roles (role, id);
CREATE TABLE usage (
    id INTEGER NOT NULL, role TEXT NOT NULL, day TEXT NOT NULL,
    calls INTEGER, input INTEGER, cached INTEGER, written INTEGER, output INTEGER
);
CREATE INDEX usage_id ON usage (id);
"""
_FTS = "CREATE VIRTUAL TABLE search USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')"
_PLAIN = "CREATE TABLE search (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"  # text casefolded


@dataclass(frozen=True)
class UsageTotal:
    """The tokens of one role, day or change: `key` None is a run with no change."""

    by: str
    key: str | None
    runs: int
    usage: Usage

    def as_json(self) -> dict[str, Any]:
        return {self.by: self.key, "runs": self.runs, **self.usage.as_json()}


USAGE_BY = ("role", "day", "change")


# --- reading ----------------------------------------------------------------------------------


def query(root: Root, filters: Filters | None = None) -> list[RunSummary]:
    """The runs that pass `filters`, newest first, as `sdd role runs` lists them."""
    return _read(root, lambda db: _select(db, root, filters or Filters()))


def runs(root: Root, role: str | None = None) -> list[RunSummary]:
    """Every run of the product (of `role`, when named), newest first."""
    return query(root, Filters(role=role))


def usage(root: Root, by: str, since: str | None = None) -> list[UsageTotal]:
    """The tokens the logs' replies report, summed by role, by UTC day or by change."""
    if by not in USAGE_BY:
        raise UsageError(f"--by takes role, day or change, not '{by}'", hint="sdd usage --by day")
    return _read(root, lambda db: _sum_usage(db, by, since))


def reindex(root: Root) -> int:
    """Build the index again from the logs alone, in one transaction (a reader meanwhile sees
    the old one whole); how many runs it holds."""

    def rebuild(db: sqlite3.Connection) -> int:
        disk = _on_disk(root, None)
        from sdd_git.runner.runfacts import read_facts  # only when a log is read

        read = {run: read_facts(_logs(root) / f"{run}.jsonl") for run in disk}
        with _writing(db):
            _create(db)
            for run, facts in read.items():
                _store(db, run, disk[run], facts)
            db.execute("INSERT INTO meta VALUES ('logs', ?)", (_signature(disk),))
        return sum(1 for facts in read.values() if facts is not None)

    return _read(root, rebuild, sync=False)


def note(log: Path) -> None:
    """Index the log of a run that just ended. Never fails the run: a read catches up anyway.
    Where no index is yet, none is made: the first read builds it from every log."""
    with contextlib.suppress(sqlite3.Error, OSError, ValueError, SddError):
        root = Root(log.parents[2])
        if not os.path.lexists(index_path(root)):
            return
        db = _connect(root)
        try:
            _sync(db, root, only=log.stem)
        finally:
            db.close()


def _read(root: Root, work: Callable[[sqlite3.Connection], _T], sync: bool = True) -> _T:
    """`work` on the index, brought up to date first; a database that fails is thrown away
    and built again, and if that fails too, the read is answered from one built in memory."""
    for attempt in range(3):
        db = None
        try:
            db = _connect(root) if attempt < 2 else _memory()
            if sync:
                _sync(db, root)
            return work(db)
        except sqlite3.DatabaseError:
            if attempt == 2:
                raise
            if attempt == 0:
                with contextlib.suppress(SddError):  # held too long: the next try says
                    _discard(root)
        finally:
            if db is not None:
                db.close()
    raise AssertionError("unreachable")


def _select(db: sqlite3.Connection, root: Root, filters: Filters) -> list[RunSummary]:
    where: list[str] = ["r.listed = 1"]
    args: list[str | int] = []
    if filters.role is not None:
        where.append("r.id IN (SELECT id FROM run_roles WHERE role = ?)")
        args.append(filters.role)
    if filters.since is not None:
        where.append("r.started >= ?")
        args.append(filters.since)
    if filters.change is not None:
        where.append("r.change = ?")
        args.append(filters.change)
    if filters.search is not None:
        clause, values = _search_clause(db, filters.search)
        where.append(clause)
        args.extend(values)
    wanted = _status_wanted(db, filters.status)
    if wanted is not None:
        where.append(_STATUS_CLAUSE.get(wanted, "r.status = ?"))
        args.extend([] if wanted in _STATUS_CLAUSE else [wanted])
    sql = (
        "SELECT r.name, r.roles, r.first_role, r.status, r.waiting, r.process, r.started, "
        "r.task, r.calls, r.input, r.cached, r.written, r.output FROM runs r "
        f"WHERE {' AND '.join(where)} ORDER BY r.name DESC"
    )
    if filters.limit is not None and wanted is None:
        sql += " LIMIT ?"
        args.append(filters.limit)
    rows = db.execute(sql, args).fetchall()
    waiting_ids: set[str] | None = None
    stops = root.local / "stops"
    found: list[RunSummary] = []
    for name, roles, first_role, status, waiting, process, started, task, *tokens in rows:
        if status is None:
            status = open_status(root, json.loads(process or "null"), first_role or "")
        elif waiting:
            # No stop file: answered. One there: pending() says (a reading she accepted, a
            # stop git tracks), as it always has.
            if waiting_ids is None and os.path.lexists(stops / f"{waiting}.json"):
                from sdd_git.runner.stops import pending

                waiting_ids = {stop.id for stop in pending(root)}
            if waiting not in (waiting_ids or ()):
                status, waiting = "answered", None  # e.g. a reading she has accepted
        if wanted is not None and status != wanted:
            continue
        found.append(
            RunSummary(
                name,
                tuple(json.loads(roles or "[]")),
                status,
                started,
                task,
                waiting or None,
                Usage(*tokens),
            )
        )
        if filters.limit is not None and len(found) >= filters.limit:
            break
    return found


# The rows a status read at the time of asking can come from; any other is the log's own.
_STATUS_CLAUSE = {
    "running": "r.status IS NULL",
    ENDED_UNEXPECTEDLY: "r.status IS NULL",
    "answered": "r.waiting IS NOT NULL",
}


def _status_wanted(db: sqlite3.Connection, given: str | None) -> str | None:
    if given is None:
        return None
    status = "-".join(given.strip().lower().split())  # "ended unexpectedly", as a table says it
    seen = {s for (s,) in db.execute("SELECT DISTINCT status FROM runs WHERE status IS NOT NULL")}
    if status in STATUSES or status in seen:
        return status
    known = ", ".join([*STATUSES, *sorted(seen - set(STATUSES))])
    raise UsageError(
        f"--status takes one of: {known}; '{given}' is none of them",
        hint="sdd role runs --status stopped",
    )


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


def _search_clause(db: sqlite3.Connection, text: str) -> tuple[str, list[str]]:
    """Every word of `text`, anywhere in a run's searchable text, whatever its case. With
    FTS5 a word matches the start of a word (`hotel` finds "Hotels"); the LIKE path matches it
    anywhere."""
    words = _words(text)
    if _search_key(db) == "rowid":  # FTS5
        if words:
            match = " ".join(f'"{w}"*' for w in words)
            return "r.id IN (SELECT rowid FROM search WHERE search MATCH ?)", [match]
        # Punctuation alone: the stored text, as it is (LIKE ignores the case of ASCII).
        pattern = "%" + re.sub(r"([\\%_])", r"\\\1", text.strip()) + "%"
        return "r.id IN (SELECT rowid FROM search WHERE text LIKE ? ESCAPE '\\')", [pattern]
    pieces = [w.casefold() for w in words] or [text.strip().casefold()]
    found = " AND ".join("instr(text, ?) > 0" for _ in pieces)  # the text is kept casefolded
    return f"r.id IN (SELECT id FROM search WHERE {found})", pieces


def _sum_usage(db: sqlite3.Connection, by: str, since: str | None) -> list[UsageTotal]:
    key = {"role": "u.role", "day": "u.day", "change": "r.change"}[by]
    where, args = "r.listed = 1", []
    if since is not None:
        where += " AND r.started >= ?"
        args.append(since)
    rows = db.execute(
        f"SELECT {key}, count(DISTINCT u.id), sum(u.calls), sum(u.input), sum(u.cached), "
        f"sum(u.written), sum(u.output) FROM usage u JOIN runs r ON r.id = u.id WHERE {where} "
        f"GROUP BY {key} ORDER BY {key} IS NULL, {key}",
        args,
    ).fetchall()
    return [UsageTotal(by, k, n, Usage(*(int(v or 0) for v in rest))) for k, n, *rest in rows]


# --- the database -----------------------------------------------------------------------------


def _logs(root: Root) -> Path:
    return root.sdd / "role-runs"  # runlog.runs_folder, without importing the writer


def index_path(root: Root) -> Path:
    return root.local / NAME


def _connect(root: Root) -> sqlite3.Connection:
    """The index of this product, open, of this schema; one in memory when git tracks it."""
    path = index_path(root)
    statefolders.make_folder(path.parent)  # hers alone, or refused in words
    if _tracked_index(root):
        return _memory()
    try:
        _clear_odd(path)
        if not os.path.lexists(path):
            # Hers alone like the logs it is read from (0600); SQLite gives its -wal and -shm
            # the same mode.
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, flags, 0o600))
    except OSError:
        return _memory()  # a folder she cannot write today: the logs are read all the same
    db = sqlite3.connect(str(path), timeout=_BUSY_SECONDS, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        # A cache: a commit lost to a power cut is read again from the logs, and WAL keeps
        # the file whole either way; one fsync less per write.
        db.execute("PRAGMA synchronous = NORMAL")
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
            with _writing(db):
                if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                    _create(db)
    except BaseException:
        db.close()
        raise
    return db


def _memory() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    with _writing(db):
        _create(db)
    return db


@contextlib.contextmanager
def _writing(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (IMMEDIATE: a second writer waits its turn)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _create(db: sqlite3.Connection) -> None:
    """This schema, empty, in place of whatever the file held (inside the caller's write)."""
    names = db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC"
    ).fetchall()
    for (name,) in names:
        with contextlib.suppress(sqlite3.OperationalError):  # an FTS table's own, gone with it
            db.execute(f'DROP TABLE IF EXISTS "{name}"')
    for statement in _TABLES.split(";"):
        if statement.strip():
            db.execute(statement)
    kind = "like"
    if USE_FTS5:
        with contextlib.suppress(sqlite3.OperationalError):  # no FTS5 in this SQLite
            db.execute(_FTS)
            kind = "fts5"
    if kind == "like":
        db.execute(_PLAIN)
    db.execute("INSERT INTO meta VALUES ('search', ?)", (kind,))
    db.execute(f"PRAGMA user_version = {SCHEMA}")


_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def _clear_odd(path: Path) -> None:
    """A link, a folder or another user's file where the index goes is removed: only sdd
    writes there, and it writes only regular files of hers."""
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        try:
            info = os.lstat(side)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            if stat.S_ISDIR(info.st_mode):
                raise RecordError(
                    f"{side} is a folder where sdd keeps its runs index",
                    hint=f"remove it: rm -r {side}",
                )
            side.unlink()


def _discard(root: Root) -> None:
    """Throw a database that fails away, under a lock, so two processes that both found it
    failing do not throw away the one the other just built."""
    from sdd_git import lockfile

    path = index_path(root)
    with lockfile.hold(root.local / "locks" / "runs-index.lock", wait_seconds=_BUSY_SECONDS):
        if _healthy(path):
            return
        for suffix in _SIDE_FILES:
            path.with_name(path.name + suffix).unlink(missing_ok=True)


def _healthy(path: Path) -> bool:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=_BUSY_SECONDS)
    except sqlite3.Error:
        return False
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
            return False
        db.execute("SELECT id, name, size, mtime, ino, listed FROM runs LIMIT 1").fetchall()
        return True
    except sqlite3.Error:
        return False
    finally:
        db.close()


def _tracked(root: Root) -> list[str]:
    """What git tracks of sdd's state (trust/state.py), noted for later processes while git's
    index is unchanged: a `git ls-files` on every query would cost more than the query. A
    note counts only when it names the index's own stamp (its mtime in ns, size and inode),
    which a note that came with the repository cannot know."""
    try:
        info = os.stat(root.path / ".git" / "index")
    except FileNotFoundError:
        if os.path.isdir(root.path / ".git"):
            return []  # a repository with no index yet tracks nothing
        return _ask_git(root)  # a worktree (its .git is a file), or a root below the top
    except OSError:
        return _ask_git(root)
    stamp = [info.st_mtime_ns, info.st_size, info.st_ino]
    note = root.local / "cache" / "tracked-state.json"
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(_read_note(note))
        files = data.get("files") if isinstance(data, dict) else None
        if data.get("index") == stamp and isinstance(files, list):
            return [str(f) for f in files]
    files = _ask_git(root)
    with contextlib.suppress(OSError, SddError):
        from sdd_git.atomicfile import write_bytes_atomic

        write_bytes_atomic(note, json.dumps({"index": stamp, "files": files}).encode())
    return files


def _ask_git(root: Root) -> list[str]:
    from sdd_git.trust.state import tracked_state  # imports subprocess: only when asked

    return tracked_state(root)


def _read_note(note: Path) -> bytes:
    """The note, read with no link followed, from `.sdd/local/cache` (the caller checked
    `.sdd/local`): beneath's readers cost this hot path more than the query."""
    if stat.S_ISLNK(os.lstat(note.parent).st_mode):
        raise OSError("the cache folder is a link")
    fd = os.open(note, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        return os.read(fd, 1 << 20)
    finally:
        os.close(fd)


def _tracked_index(root: Root) -> bool:
    """Whether git tracks the index or a file beside it (a `-wal` SQLite would replay)."""
    prefix = f"{statefolders.STATE_FOLDERS[0]}/{NAME}"
    return any(p.startswith(prefix) for p in _tracked(root))


# --- bringing it up to date -------------------------------------------------------------------

Stamp = tuple[int, int, int]  # size, mtime in ns, inode


def _on_disk(root: Root, only: str | None) -> dict[str, Stamp]:
    """Each run log's stamp, by run id: regular files only, and none that git tracks (a log
    that came with the repository is nobody's run here)."""
    folder = _logs(root)
    if not os.path.isdir(folder):
        return {}
    statefolders.check(folder)
    tracked = {
        p.rsplit("/", 1)[-1][: -len(".jsonl")]
        for p in _tracked(root)
        if p.startswith(f"{statefolders.STATE_FOLDERS[1]}/") and p.endswith(".jsonl")
    }
    found: dict[str, Stamp] = {}
    if only is not None:
        with contextlib.suppress(FileNotFoundError):
            info = os.lstat(folder / f"{only}.jsonl")
            if stat.S_ISREG(info.st_mode) and only not in tracked:
                found[only] = (info.st_size, info.st_mtime_ns, info.st_ino)
        return found
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith("run-") and name.endswith(".jsonl")):
                continue
            run = name[: -len(".jsonl")]
            if run in tracked or not entry.is_file(follow_symlinks=False):
                continue
            with contextlib.suppress(FileNotFoundError):
                info = entry.stat(follow_symlinks=False)
                found[run] = (info.st_size, info.st_mtime_ns, info.st_ino)
    return found


# A folder's time is kept in steps (a few ms on Linux, 2 s on FAT): a time this much older
# than now can no longer be the time of a change still to come in the same step.
_SETTLED_NS = 2_000_000_000


def _sync(db: sqlite3.Connection, root: Root, only: str | None = None) -> None:
    folder = _folder_stamp(root) if only is None else None
    if folder is not None and _meta(db, "folder") == folder:
        # Nothing was added, removed or appended to since the last full look: sdd's writer
        # touches the folder after each append, and adding or removing a file changes it.
        return
    disk = _on_disk(root, only)
    signature = _signature(disk) if only is None else None
    if signature is not None and _meta(db, "logs") == signature:
        _settled(db, folder)
        return  # no log added, removed or changed since the last read
    known = _known(db, only)
    changed = [run for run, stamp in disk.items() if known.get(run) != stamp]
    gone = [] if only is not None else [run for run in known if run not in disk]
    from sdd_git.runner.runfacts import read_facts  # only when a log is read again

    read = {run: read_facts(_logs(root) / f"{run}.jsonl") for run in changed}  # outside the lock
    with _writing(db):
        known = _known(db, only)  # another process may have done it meanwhile
        for run in gone:
            if run in known:
                _forget(db, run)
        for run, facts in read.items():
            if known.get(run) != disk[run]:
                _forget(db, run)
                _store(db, run, disk[run], facts)
        if signature is not None:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('logs', ?)", (signature,))
    _settled(db, folder)


def _folder_stamp(root: Root) -> str | None:
    """The log folder's time and inode, read before its logs are: kept only once settled."""
    try:
        info = os.lstat(_logs(root))
    except OSError:
        return None
    return f"{info.st_ino}:{info.st_mtime_ns}"


def _settled(db: sqlite3.Connection, folder: str | None) -> None:
    """Keep the folder's stamp for the next read's one-stat look, once it is settled: a stamp
    taken in the step a writer is still writing in could hide that writer's next append (a
    stamp not kept matches nothing later, as the folder's time only moves on)."""
    if folder is None or _meta(db, "folder") == folder:
        return
    import time

    if time.time_ns() - int(folder.split(":")[1]) >= _SETTLED_NS:
        with _writing(db):
            db.execute("INSERT OR REPLACE INTO meta VALUES ('folder', ?)", (folder,))


def _signature(disk: dict[str, Stamp]) -> str:
    """The stamps of every log, in a few bytes: equal, and no log needs reading again."""
    import zlib

    data = repr(sorted(disk.items())).encode()  # repr: one C call, where a join costs 2 ms
    return f"{len(disk)}:{len(data)}:{zlib.crc32(data)}:{zlib.adler32(data)}"


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _known(db: sqlite3.Connection, only: str | None) -> dict[str, Stamp]:
    sql = "SELECT name, size, mtime, ino FROM runs"
    rows = db.execute(sql + " WHERE name = ?", (only,)) if only else db.execute(sql)
    return {name: (size, mtime, ino) for name, size, mtime, ino in rows}


def _forget(db: sqlite3.Connection, run: str) -> None:
    row = db.execute("SELECT id FROM runs WHERE name = ?", (run,)).fetchone()
    if row is None:
        return
    for table in ("run_roles", "usage"):
        db.execute(f"DELETE FROM {table} WHERE id = ?", row)
    db.execute(f"DELETE FROM search WHERE {_search_key(db)} = ?", row)
    db.execute("DELETE FROM runs WHERE id = ?", row)


def _search_key(db: sqlite3.Connection) -> str:
    return "rowid" if _meta(db, "search") == "fts5" else "id"


def _store(db: sqlite3.Connection, run: str, stamp: Stamp, facts: LogFacts | None) -> None:
    if facts is None:
        db.execute(
            "INSERT INTO runs (name, size, mtime, ino, listed) VALUES (?, ?, ?, ?, 0)",
            (run, *stamp),
        )
        return
    spent = facts.usage
    cursor = db.execute(
        "INSERT INTO runs (name, size, mtime, ino, listed, started, roles, first_role, task, "
        "change, status, waiting, process, calls, input, cached, written, output) "
        "VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run,
            *stamp,
            facts.started,
            json.dumps(list(facts.roles)),
            facts.roles[0] if facts.roles else "",
            facts.task,
            facts.change,
            facts.status,
            facts.waiting,
            json.dumps(facts.process),
            spent.calls,
            spent.input_tokens,
            spent.cached_input_tokens,
            spent.cache_write_input_tokens,
            spent.output_tokens,
        ),
    )
    row = cursor.lastrowid
    db.executemany(
        "INSERT INTO run_roles VALUES (?, ?)", [(row, role) for role in dict.fromkeys(facts.roles)]
    )
    db.executemany(
        "INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (row, role, day, u.calls, u.input_tokens, u.cached_input_tokens,
             u.cache_write_input_tokens, u.output_tokens)
            for (role, day), u in facts.by_role_day.items()
        ],
    )  # fmt: skip
    if _search_key(db) == "rowid":
        db.execute("INSERT INTO search (rowid, text) VALUES (?, ?)", (row, facts.text))
    else:
        db.execute("INSERT INTO search (id, text) VALUES (?, ?)", (row, facts.text.casefold()))
