"""Issue 21, "bidirectional text": a stop's command and a drafted reading showed U+202E raw in
`sdd stops` and `sdd change show`. Whatever sdd prints reaches her terminal as text: control,
bidirectional and zero-width characters are written out as escapes, and `--json` output stays
JSON that reads back as the same text. Each command runs as a real process, as in her terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner, run_cli
from tests.runner.scripted import accepted_change, script

RAW = ("\u202e", "\u200b", "\x1b")
COMMAND = "echo harmless \u202e#gpj.exe"
READING = "Search by month\u202e and merchant\u200b, from the list."


def assert_shown_as_text(output: str, *escapes: str) -> None:
    for char in RAW:
        assert char not in output, f"{char!r} reached the terminal raw:\n{output}"
    for escape in escapes:
        assert escape in output, output


def stopped_on_command(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, object]:
    accepted_change(root)
    call = {"tool": "run_command", "args": {"command": COMMAND, "purpose": "try\u202e it"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "ok"}])
    ran = run_cli("role", "run", "builder", "--task", "Try it", cwd=root.path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert_shown_as_text(ran.stdout + ran.stderr, "\\u202e")  # the stop as `sdd role run` says it
    listed = json.loads(sdd("stops", "--json").stdout)
    assert len(listed) == 1
    stop: dict[str, object] = listed[0]
    return stop


def test_a_stop_whose_command_holds_a_bidi_override_is_shown_escaped_by_sdd_stops(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = stopped_on_command(sdd, root, tmp_path, monkeypatch)
    shown = run_cli("stops", cwd=root.path)
    assert shown.returncode == 0 and str(stop["id"]) in shown.stdout
    assert_shown_as_text(shown.stdout + shown.stderr, "\\u202e#gpj.exe")
    whole = run_cli("stops", "show", str(stop["id"]), cwd=root.path)
    assert_shown_as_text(whole.stdout, "echo harmless \\u202e#gpj.exe", "try\\u202e it")


def test_sdd_stops_json_escapes_a_bidi_override_and_reads_back_the_same_command(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped_on_command(sdd, root, tmp_path, monkeypatch)
    for args in (("stops", "--json"),):
        printed = run_cli(*args, cwd=root.path).stdout
        assert_shown_as_text(printed, "\\u202e")
        assert json.loads(printed)[0]["args"]["command"] == COMMAND


def test_a_drafted_reading_holding_bidi_and_zero_width_is_shown_escaped_by_change_show(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert sdd("change", "new", "I can never find last month's hotel charge.").code == 0
    draft = {
        "tool": "draft_reading",
        "args": {"change": "CH-0001", "text": READING, "checks": ["It is\u200b found."]},
    }
    calls = [
        {"role": "spec-steward", "tool_calls": [draft]},
        {"role": "spec-steward", "say": "Done"},
    ]
    script(tmp_path, monkeypatch, calls)
    ran = run_cli("role", "run", "spec-steward", "--task", "Draft the reading", cwd=root.path)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert_shown_as_text(ran.stdout + ran.stderr)
    shown = run_cli("change", "show", "CH-0001", cwd=root.path)
    assert shown.returncode == 0, shown.stderr
    assert_shown_as_text(shown.stdout, "month\\u202e and merchant\\u200b,", "It is\\u200b found.")
    as_json = run_cli("change", "show", "CH-0001", "--json", cwd=root.path).stdout
    assert_shown_as_text(as_json, "\\u202e", "\\u200b")
    assert READING in json.dumps(json.loads(as_json), ensure_ascii=False)


def test_a_title_with_terminal_escapes_is_listed_as_text(root: Root) -> None:
    made = run_cli("change", "new", "Totals\x1b]0;owned\x07 per\u2066 month", cwd=root.path)
    assert made.returncode == 0, made.stderr
    listed = run_cli("change", "list", cwd=root.path)
    assert_shown_as_text(listed.stdout, "Totals\\x1b]0;owned\\x07 per\\u2066 month")
    assert "\x07" not in listed.stdout
