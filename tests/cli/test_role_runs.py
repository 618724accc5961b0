"""`sdd role runs [NAME] [-n N] [--since AGE] [--status S] [--search TEXT] [--change CH]`: each
filter over runs the scripted provider really ran, newest first; bad values exit 2 in words."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, script, write_call


def listed(sdd: SddRunner, *args: str) -> list[dict[str, Any]]:
    shown = sdd("role", "runs", *args, "--json")
    assert shown.code == 0, shown.stderr
    return list(json.loads(shown.stdout))


def tasks(sdd: SddRunner, *args: str) -> list[str]:
    return [r["task"] for r in listed(sdd, *args)]


@pytest.fixture
def history(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Four real runs, a second apart, on two changes and two roles: done, stopped, done, and
    one copied in by hand from ten days ago. Returns the change ids."""
    first = accepted_change(root)
    add_role(root, "auditor", produces="review")
    runs = [
        ("builder", "Paint the fence", [{"say": "Painted."}], ()),
        ("builder", "Fix the gate", [{"tool_calls": [write_call("src/gate.py")]}], ()),
    ]
    for number, (role, task, calls, extra) in enumerate(runs):
        script(tmp_path, monkeypatch, calls, name=f"s{number}")
        sdd("role", "run", role, "--task", task, *extra)
        time.sleep(1.05)  # run ids and start times are to the second
    second = accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "Looked."}], name="s3")
    assert sdd("role", "run", "auditor", "--task", "Audit the fence", "--change", second).code == 0
    folder = root.sdd / "role-runs"
    model = next(p for p in folder.glob("run-*.jsonl") if "Paint the fence" in p.read_text())
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 10 * 86400))
    lines = [json.loads(line) for line in model.read_text().splitlines()]
    for line in lines:
        line["ts"], line["run"] = old, "run-20200101-000000-0a0a0a"
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "run-20200101-000000-0a0a0a.jsonl").write_text(
        text.replace("Paint the fence", "Mow the old lawn")
    )
    return {"first": first, "second": second}


def test_each_filter_narrows_the_list_newest_first(sdd: SddRunner, history: dict[str, str]) -> None:
    assert tasks(sdd) == ["Audit the fence", "Fix the gate", "Paint the fence", "Mow the old lawn"]
    assert tasks(sdd, "-n", "2") == ["Audit the fence", "Fix the gate"]
    assert tasks(sdd, "auditor") == ["Audit the fence"]
    assert tasks(sdd, "builder", "-n", "1") == ["Fix the gate"]
    assert tasks(sdd, "--since", "7d") == ["Audit the fence", "Fix the gate", "Paint the fence"]
    assert tasks(sdd, "--since", "2000-01-01") == tasks(sdd)
    assert tasks(sdd, "--since", "2099-01-01") == []
    assert tasks(sdd, "--status", "stopped") == ["Fix the gate"]
    assert tasks(sdd, "--status", "done", "-n", "2") == ["Audit the fence", "Paint the fence"]
    assert tasks(sdd, "--change", history["second"]) == ["Audit the fence"]
    assert tasks(sdd, "--change", history["first"].lower(), "builder") == [
        "Fix the gate", "Paint the fence", "Mow the old lawn",
    ]  # fmt: skip
    assert tasks(sdd, "--search", "fence") == ["Audit the fence", "Paint the fence"]
    assert tasks(sdd, "--search", "fence", "--status", "done", "--since", "1h", "builder") == [
        "Paint the fence"
    ]
    assert tasks(sdd, "--search", "src/gate.py") == ["Fix the gate"]  # the stop's file


def test_the_table_keeps_its_columns_and_says_when_nothing_matches(
    sdd: SddRunner, history: dict[str, str]
) -> None:
    table = sdd("role", "runs", "-n", "2").stdout.splitlines()
    assert table[0].split() == ["RUN", "ROLES", "STATUS", "STARTED", "TASK"]
    assert len(table) == 3 and "Audit the fence" in table[1]
    none = sdd("role", "runs", "--search", "zeppelin")
    assert none.code == 0 and none.stdout == "" and "no run matches" in none.stderr
    assert sdd("role", "runs", "--search", "zeppelin", "--json").stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("-n", "0"), "-n"),
        (("-n", "many"), "-n"),
        (("--since", "yesterday"), "--since takes an age such as 30m, 12h or 7d"),
        (("--since", "7 days"), "--since takes an age"),
        (("--status", "finished"), "--status takes one of: done, stopped, answered, running"),
        (("--change", "0001"), "--change takes a change id such as CH-0001"),
        (("--search", "  "), "--search needs words"),
    ],
)
def test_a_bad_value_exits_2_with_an_error_line_and_a_hint(
    sdd: SddRunner, args: tuple[str, ...], words: str
) -> None:
    refused = sdd("role", "runs", *args)
    assert refused.code == 2, refused
    first, *rest = refused.stderr.splitlines()
    assert first.startswith("error: ") and words in first
    assert rest and rest[-1].startswith("hint: ")
    assert "Traceback" not in refused.stderr and refused.stdout == ""
