"""The runs index (runner/runindex.py) against logs that real runs wrote: filled as a run ends,
kept honest on every read (a resumed run, a killed one, a torn line, a deleted or copied log),
rebuilt from the logs alone, never read when git brought it, and whole under two processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import runindex
from tests.conftest import SddRunner, git, run_cli
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change, script, write_call


def listed(sdd: SddRunner, *args: str) -> list[dict[str, Any]]:
    shown = sdd("role", "runs", *args, "--json")
    assert shown.code == 0, shown.stderr
    return list(json.loads(shown.stdout))


def by_run(sdd: SddRunner, *args: str) -> dict[str, str]:
    return {r["run"]: r["status"] for r in listed(sdd, *args)}


def stopped_run(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """`sdd role run builder` as its own process, up to the stop on its file write. The index is
    there before it (a run adds itself to an index, and makes none)."""
    accepted_change(root)
    assert run_cli("role", "runs", cwd=root.path).returncode == 0
    script(
        tmp_path,
        monkeypatch,
        [
            {"say": "I will write the lantern module.", "tool_calls": [
                write_call("src/lantern.py", "GLOW = 'amber'\n", "the lantern's colour")]},
            {"say": "Written: the lantern glows."},
        ],
    )  # fmt: skip
    ran = run_cli("role", "run", "builder", "--task", "Light the Lantern", "--json", cwd=root.path)
    assert ran.returncode == 3, ran.stderr
    return dict(json.loads(ran.stdout))


def indexed_rows(root: Root) -> dict[str, tuple[str | None, str | None]]:
    """The index as the run's own process left it, read straight from the file."""
    db = sqlite3.connect(f"file:{runindex.index_path(root)}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT name, status, waiting FROM runs WHERE listed = 1").fetchall()
    finally:
        db.close()
    return {name: (status, waiting) for name, status, waiting in rows}


def test_a_real_run_is_indexed_as_it_ends_and_relisted_after_allow_in_another_process(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    run, stop = outcome["run"], outcome["stop"]["id"]
    # No query has run yet: the run's own process put it there as it ended.
    assert indexed_rows(root) == {run: ("stopped", stop)}
    assert by_run(sdd) == {run: "stopped"}
    allowed = run_cli("allow", stop, cwd=root.path)
    assert allowed.returncode == 0, allowed.stderr
    assert indexed_rows(root) == {run: ("done", None)}
    (summary,) = listed(sdd)
    assert summary["status"] == "done" and summary["waiting_for"] is None
    assert summary["task"] == "Light the Lantern" and summary["roles"] == ["builder"]
    assert set(summary) == {"run", "roles", "status", "started", "task", "waiting_for", "usage"}


def test_search_reads_the_task_what_was_said_tool_arguments_stops_and_rejections(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    run = outcome["run"]
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [write_call("memory/decisions.yaml", "- forged\n", "a shortcut")]},
            {"say": "Understood, the kettle stays as it is."},
        ],
        name="second",
    )
    other = json.loads(sdd("role", "run", "builder", "--task", "Boil the kettle", "--json").stdout)
    assert other["status"] == "done", other
    for words, expected in [
        ("lantern", {run}),  # the task, any case
        ("LIGHT THE", {run}),  # every word, case aside
        ("amber", {run}),  # a tool call's argument (the file's content)
        ("colour", {run}),  # the call's purpose
        ("src/lantern.py", {run}),  # the stop's action names the file
        ("glows", set()),  # said only after the stop: not in the log yet
        ("understood", {other["run"]}),  # the model's reply
        ("decisions", {other["run"]}),  # the rejected call and its reason
        ("kettle lantern", set()),  # no run holds both
        ("lant", {run}),  # the start of a word
        ("nowhere-at-all", set()),
    ]:
        found = {r["run"] for r in listed(sdd, "--search", words)}
        assert found == expected, words


def test_a_torn_last_line_is_skipped_and_the_rest_of_the_log_indexed(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    log = root.sdd / "role-runs" / f"{outcome['run']}.jsonl"
    whole = log.read_bytes()
    last = whole.rstrip(b"\n").rsplit(b"\n", 1)[1]
    assert json.loads(last)["event"] == "run_ended"
    log.write_bytes(whole[: len(whole) - len(last) // 2 - 1])  # killed mid-way through it
    (summary,) = listed(sdd)
    # Its run_ended is gone, and the process that wrote it is too.
    assert summary["status"] == "ended-unexpectedly"
    assert [r["run"] for r in listed(sdd, "--search", "amber")] == [outcome["run"]]
    assert sdd("role", "runs").stdout.count("ended unexpectedly") == 1


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def test_a_run_killed_while_it_waits_on_its_model_shows_ended_unexpectedly(
    sdd: SddRunner, root: Root, server: Loopback
) -> None:
    accepted_change(root)
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Hi"}}]}, delay=120)
    env = {
        **os.environ,
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": f"{server.url}/v1",
        "SDD_MODEL": "silent",
        "SDD_API_KEY": "sk-local-0123456789abcdef",
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "role", "run", "builder", "--task", "Count the owls"],
        cwd=root.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not server.requests and child.poll() is None:
            time.sleep(0.05)
        assert server.requests, child.communicate()[1]
        running = listed(sdd, "--status", "running")
        assert [r["task"] for r in running] == ["Count the owls"]
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
    assert listed(sdd, "--status", "running") == []
    (dead,) = listed(sdd, "--status", "ended-unexpectedly", "--search", "owls")
    assert dead["task"] == "Count the owls"
    assert listed(sdd, "--status", "ended unexpectedly") == [dead]  # as the table words it


def test_a_deleted_log_leaves_the_list_and_a_copied_one_joins_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    folder = root.sdd / "role-runs"
    log = folder / f"{outcome['run']}.jsonl"
    copy = folder / "run-20200101-000000-c0ffee.jsonl"
    copy.write_text(log.read_text().replace(outcome["run"], copy.stem).replace("Lantern", "Moon"))
    assert set(by_run(sdd)) == {outcome["run"], copy.stem}
    assert [r["run"] for r in listed(sdd, "--search", "moon")] == [copy.stem]
    log.unlink()
    assert set(by_run(sdd)) == {copy.stem}
    assert [r["run"] for r in listed(sdd, "--search", "lantern")] == [copy.stem]


def test_reindex_rebuilds_it_from_the_logs_alone_and_says_how_many(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    (root.sdd / "role-runs" / "run-20200101-000000-000000.jsonl").write_text('{"event": "plan"}\n')
    before = listed(sdd)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{runindex.index_path(root)}{suffix}").unlink(missing_ok=True)
    again = sdd("role", "runs", "--reindex", "--json")
    assert again.code == 0, again.stderr
    assert "indexed 1 run(s)" in again.stderr  # a log with no run_started holds no run
    assert json.loads(again.stdout) == before
    assert indexed_rows(root) == {outcome["run"]: ("stopped", outcome["stop"]["id"])}


@pytest.mark.parametrize(
    "damage",
    [
        b"this is not a database at all" * 100,
        b"",  # an empty file
        "schema",  # a database of another version
        "tables",  # this version's number, its tables gone
    ],
)
def test_a_damaged_database_is_rebuilt_silently(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    damage: bytes | str,
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    path = runindex.index_path(root)
    if isinstance(damage, bytes):
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.write_bytes(damage)
    else:
        db = sqlite3.connect(path)
        if damage == "schema":
            db.execute("PRAGMA user_version = 99")
        else:
            db.execute("DROP TABLE runs")
        db.commit()
        db.close()
    shown = sdd("role", "runs", "--search", "lantern")
    assert shown.code == 0 and shown.stderr == ""
    assert outcome["run"] in shown.stdout
    assert indexed_rows(root) == {outcome["run"]: ("stopped", outcome["stop"]["id"])}


def test_an_index_git_tracks_is_never_read_nor_written(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request force-adds `.sdd/local/runs.sqlite3` holding a run nobody here made."""
    outcome = stopped_run(root, tmp_path, monkeypatch)
    path = runindex.index_path(root)
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO runs (name, size, mtime, ino, listed, started, roles, first_role, task, "
        "status, calls, input, cached, written, output) VALUES ('run-20990101-000000-bad000', "
        "1, 1, 1, 1, '2099-01-01T00:00:00Z', '[\"builder\"]', 'builder', 'PLANTED', 'done', "
        "0, 0, 0, 0, 0)"
    )
    db.commit()
    db.close()
    git(root.path, "add", "-f", "--", ".sdd/local/runs.sqlite3")
    git(root.path, "commit", "-q", "-m", "a helpful contribution")
    planted = path.read_bytes()
    assert by_run(sdd) == {outcome["run"]: "stopped"}
    assert listed(sdd, "--search", "planted") == []
    rebuilt = sdd("role", "runs", "--reindex")
    assert rebuilt.code == 0 and "indexed 1 run(s)" in rebuilt.stderr
    assert path.read_bytes() == planted


def test_a_wal_file_git_tracks_is_never_replayed_into_her_index(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite replays a `-wal` beside a database as it opens it: one that came with the
    repository would write its rows into her index."""
    outcome = stopped_run(root, tmp_path, monkeypatch)
    wal = Path(f"{runindex.index_path(root)}-wal")
    wal.write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 60)
    git(root.path, "add", "-f", "--", ".sdd/local/runs.sqlite3-wal")
    git(root.path, "commit", "-q", "-m", "a helpful contribution")
    planted, index = wal.read_bytes(), runindex.index_path(root).read_bytes()
    assert by_run(sdd) == {outcome["run"]: "stopped"}
    assert wal.read_bytes() == planted and runindex.index_path(root).read_bytes() == index


def test_a_run_ending_adds_itself_to_an_index_but_makes_none(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "Done."}])
    assert sdd("role", "run", "builder", "--task", "Wave").code == 0
    assert not os.path.lexists(runindex.index_path(root))  # the first listing builds it
    assert [r["task"] for r in listed(sdd)] == ["Wave"]


def test_a_run_log_git_tracks_is_left_out(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    log = root.sdd / "role-runs" / f"{outcome['run']}.jsonl"
    forged = log.with_name("run-20990101-000000-f0f0f0.jsonl")
    forged.write_text(log.read_text().replace(outcome["run"], forged.stem))
    git(root.path, "add", "-f", "--", str(forged.relative_to(root.path)))
    git(root.path, "commit", "-q", "-m", "a helpful contribution")
    assert set(by_run(sdd)) == {outcome["run"]}


def test_two_processes_at_once_leave_it_whole(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real processes reindexing and reading at once while logs come and go: every one ends
    well, and the index ends whole and equal to the logs."""
    outcome = stopped_run(root, tmp_path, monkeypatch)
    folder = root.sdd / "role-runs"
    log = (folder / f"{outcome['run']}.jsonl").read_text()
    commands = [["role", "runs", "--reindex"], ["role", "runs", "--search", "lantern"]] * 3
    children = [
        subprocess.Popen([sys.executable, "-m", "sdd_git", *c], cwd=root.path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]  # fmt: skip
    for number in range(40):
        run = f"run-20200101-0000{number:02d}-{number:06x}"
        (folder / f"{run}.jsonl").write_text(log.replace(outcome["run"], run))
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        assert "error" not in err
    db = sqlite3.connect(runindex.index_path(root))
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    assert len(listed(sdd, "--search", "lantern")) == 41


def test_without_fts5_search_finds_the_same_runs(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    monkeypatch.setattr(runindex, "USE_FTS5", False)
    assert sdd("role", "runs", "--reindex").code == 0
    db = sqlite3.connect(runindex.index_path(root))
    assert db.execute("SELECT value FROM meta WHERE key = 'search'").fetchone() == ("like",)
    db.close()
    for words in ("LANTERN", "amber colour", "src/lantern.py"):
        assert [r["run"] for r in listed(sdd, "--search", words)] == [outcome["run"]], words
    assert listed(sdd, "--search", "kettle") == []


def _settle(root: Root) -> None:
    """The log folder as it is long after its last change: an hour old."""
    folder = root.sdd / "role-runs"
    old = time.time() - 3600
    os.utime(folder, (old, old))


def _kept_stamp(root: Root) -> str | None:
    db = sqlite3.connect(f"file:{runindex.index_path(root)}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'folder'").fetchone()
    finally:
        db.close()
    return None if row is None else str(row[0])


def test_a_settled_folder_is_looked_at_in_one_stat_and_every_later_append_is_still_seen(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    run, stop = outcome["run"], outcome["stop"]["id"]
    assert by_run(sdd) == {run: "stopped"}
    assert _kept_stamp(root) is None  # the run just wrote: its folder's time is not settled
    _settle(root)
    assert by_run(sdd) == {run: "stopped"}
    assert _kept_stamp(root) is not None  # the next read looks at the folder alone
    # The run goes on in another process, and ends there (noted in the index as it ends).
    allowed = run_cli("allow", stop, cwd=root.path)
    assert allowed.returncode == 0, allowed.stderr
    assert by_run(sdd) == {run: "done"}


def test_with_a_stamp_kept_an_appended_event_a_removed_log_and_an_added_one_are_seen(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = stopped_run(root, tmp_path, monkeypatch)
    run = outcome["run"]
    log = root.sdd / "role-runs" / f"{run}.jsonl"
    _settle(root)
    assert by_run(sdd) == {run: "stopped"} and _kept_stamp(root) is not None
    from sdd_git import lockfile
    from sdd_git.runner.logevents import RunResumed
    from sdd_git.runner.logwriter import RunLog

    # An event that ends nothing (so nothing notes it in the index): a resumption, by a
    # process alive now. Only the folder's time, touched by the writer, says the log changed.
    resumed = RunResumed(outcome["stop"]["id"], lockfile.this_process())
    RunLog.open(root, run, lambda s: s, time.time).append(resumed)
    assert by_run(sdd) == {run: "running"}
    _settle(root)
    by_run(sdd)
    copy = log.with_name("run-20991231-000000-abcdef.jsonl")
    copy.write_text(log.read_text().replace(run, copy.stem))
    assert set(by_run(sdd)) == {run, copy.stem}
    _settle(root)
    by_run(sdd)
    log.unlink()
    assert set(by_run(sdd)) == {copy.stem}
