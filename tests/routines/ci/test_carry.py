"""sdd_git.routines.ci.carry: a stopped run packed by one CI job and unpacked by the job that
answers it, the folder read as a stranger's. Real runs (the scripted provider) raise the stops."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sdd_git.errors import RecordError, UsageError
from sdd_git.root import Root, init_root
from sdd_git.routines.ci.carry import check_stop_id, pack, unpack
from sdd_git.runner import stops
from sdd_git.runner.run import RunRequest, start
from tests.runner.scripted import accepted_change, add_role, script, write_call


@pytest.fixture
def packed(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    accepted_change(root)
    add_role(root, "builder")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.py")]}])
    outcome = start(root, RunRequest("builder", "write a.py", origin="routine"))
    assert outcome.stop is not None
    folder = tmp_path / "kept"
    assert pack(root, folder) == [outcome.stop.id]
    return folder, outcome.stop.id, outcome.run_id


def _fresh(tmp_path: Path) -> Root:
    return init_root(tmp_path / "fresh", product="Expenses").root


def test_pack_keeps_each_pending_stop_and_its_run_s_log_only(
    packed: tuple[Path, str, str],
) -> None:
    folder, stop, run = packed
    kept = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert kept == [f"role-runs/{run}.jsonl", f"stops/{stop}.json"]


def test_pack_with_nothing_waiting_is_an_error(root: Root, tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="no stop is waiting"):
        pack(root, tmp_path / "kept")


def test_unpack_puts_back_the_named_stop_and_its_log(
    packed: tuple[Path, str, str], tmp_path: Path
) -> None:
    folder, stop, run = packed
    fresh = _fresh(tmp_path)
    assert unpack(fresh, folder, stop) == run
    assert stops.load(fresh, stop).run == run
    assert (fresh.sdd / "role-runs" / f"{run}.jsonl").read_bytes() == (
        folder / "role-runs" / f"{run}.jsonl"
    ).read_bytes()
    with pytest.raises(RecordError, match="already here; nothing was replaced"):
        unpack(fresh, folder, stop)


@pytest.mark.parametrize("bad", ["stop-", "stop-XYZ123", "../stop-abcd", "stop-abcd\n", "run-1"])
def test_a_stop_id_not_of_sdd_s_shape_is_refused(bad: str) -> None:
    with pytest.raises(UsageError, match="is not a stop id"):
        check_stop_id(bad)


def test_a_symlink_in_the_folder_is_refused(packed: tuple[Path, str, str], tmp_path: Path) -> None:
    folder, stop, run = packed
    log = folder / "role-runs" / f"{run}.jsonl"
    elsewhere = tmp_path / "elsewhere.jsonl"
    shutil.move(log, elsewhere)
    log.symlink_to(elsewhere)
    fresh = _fresh(tmp_path)
    with pytest.raises(RecordError, match=f"does not hold the log of run {run}"):
        unpack(fresh, folder, stop)
    assert not stops.stops_folder(fresh).exists() or not list(stops.stops_folder(fresh).iterdir())


def test_a_log_that_already_decided_the_stop_is_refused(
    packed: tuple[Path, str, str], tmp_path: Path
) -> None:
    folder, stop, run = packed
    log = folder / "role-runs" / f"{run}.jsonl"
    decided = {
        "ts": "x",
        "run": run,
        "seq": 99,
        "event": "decision",
        "stop": stop,
        "choice": "deny",
    }
    log.write_text(log.read_text() + json.dumps(decided) + "\n")
    with pytest.raises(RecordError, match="already answered"):
        unpack(_fresh(tmp_path), folder, stop)


def test_a_stop_file_naming_another_run_s_log_is_refused(
    packed: tuple[Path, str, str], tmp_path: Path
) -> None:
    folder, stop, run = packed
    # The stop file now names another run, whose "log" is this run's under another name.
    other = "run-20260101-000000-abcdef"
    data = json.loads((folder / "stops" / f"{stop}.json").read_text())
    (folder / "stops" / f"{stop}.json").write_text(json.dumps({**data, "run": other}))
    shutil.copyfile(folder / "role-runs" / f"{run}.jsonl", folder / "role-runs" / f"{other}.jsonl")
    with pytest.raises(RecordError, match=f"the log of run {other} in .* never raised {stop}"):
        unpack(_fresh(tmp_path), folder, stop)


def test_a_stop_file_whose_run_is_a_path_is_refused(
    packed: tuple[Path, str, str], tmp_path: Path
) -> None:
    folder, stop, _run = packed
    data = json.loads((folder / "stops" / f"{stop}.json").read_text())
    (folder / "stops" / f"{stop}.json").write_text(json.dumps({**data, "run": "../../x"}))
    with pytest.raises(RecordError, match="names no run of its own"):
        unpack(_fresh(tmp_path), folder, stop)
