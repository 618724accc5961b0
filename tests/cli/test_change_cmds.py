from __future__ import annotations

import json

import pytest
import yaml

from sdd_git.root import Root
from tests.conftest import SddRunner

WORDS = "I can never find last month's hotel charge."


def test_change_new_prints_the_id_and_makes_a_spec_with_an_empty_reading(
    sdd: SddRunner, root: Root
) -> None:
    result = sdd("change", "new", WORDS)
    assert result.code == 0, result.stderr
    assert result.stdout == "CH-0001\n"
    change = yaml.safe_load((root.path / "changes/CH-0001/change.yaml").read_text())
    assert change == {
        "id": "CH-0001",
        "title": WORDS,
        "words": WORDS,
        "kind": "feature",
        "stage": "reading",
        "spec": "SPEC-0001",
    }
    spec = (root.path / "memory/specs/SPEC-0001.md").read_text()
    front = yaml.safe_load(spec.split("---\n")[1])
    assert front["words"] == WORDS and front["change"] == "CH-0001" and front["kind"] == "feature"
    assert spec.endswith("---\n## S1 Reading\n")
    assert sdd("change", "new", "Second thing").stdout == "CH-0002\n"


def test_a_bug_keeps_what_happened_and_what_was_expected_after_a_reading_is_drafted(
    sdd: SddRunner, root: Root
) -> None:
    made = sdd(
        "change", "new", "Totals are wrong", "--bug",
        "--happened", "The March total shows 0.", "--expected", "It shows 412.50.",
    )  # fmt: skip
    assert made.code == 0, made.stderr
    assert sdd("correct", "reading", "CH-0001", "Fix the month total.").code == 0
    spec = (root.path / "memory/specs/SPEC-0001.md").read_text()
    assert "The March total shows 0." in spec and "It shows 412.50." in spec
    shown = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    assert shown["kind"] == "bug"
    assert shown["happened"] == "The March total shows 0."
    assert shown["expected"] == "It shows 412.50."
    assert shown["sections"][0]["text"] == "Fix the month total."
    text = sdd("change", "show", "CH-0001").stdout
    assert "happened: The March total shows 0." in text and "expected: It shows 412.50." in text


def test_a_bug_without_happened_or_expected_is_refused_and_writes_nothing(
    sdd: SddRunner, root: Root
) -> None:
    result = sdd("change", "new", "Totals are wrong", "--bug", "--happened", "zero")
    assert result.code == 2
    assert "error: a bug keeps what happened and what was expected" in result.stderr
    assert not any(p.name.startswith("CH-") for p in root.changes.iterdir())
    assert not list(root.specs.glob("SPEC-*.md"))


def test_empty_words_are_refused(sdd: SddRunner) -> None:
    result = sdd("change", "new", "   ")
    assert result.code == 2 and "error:" in result.stderr


def test_change_list_json_and_text(sdd: SddRunner) -> None:
    sdd("change", "new", WORDS)
    sdd("change", "new", "Show totals per month", "--title", "Monthly totals")
    listed = json.loads(sdd("change", "list", "--json").stdout)
    assert [(c["id"], c["title"], c["stage"]) for c in listed] == [
        ("CH-0001", WORDS, "reading"),
        ("CH-0002", "Monthly totals", "reading"),
    ]
    text = sdd("change", "list").stdout.splitlines()
    assert text[0].split() == ["ID", "STAGE", "KIND", "TITLE"]
    assert text[2].startswith("CH-0002  reading  feature  Monthly totals")


def test_change_list_json_is_an_empty_list_with_no_packs(sdd: SddRunner) -> None:
    result = sdd("change", "list", "--json")
    assert json.loads(result.stdout) == []


def test_unknown_change_is_an_error(sdd: SddRunner) -> None:
    result = sdd("change", "show", "CH-0042")
    assert result.code == 1
    assert "error: no change CH-0042" in result.stderr
    assert "hint:" in result.stderr


def test_a_malformed_change_pack_names_the_file_and_line(sdd: SddRunner, root: Root) -> None:
    sdd("change", "new", WORDS)
    path = root.path / "changes/CH-0001/change.yaml"
    path.write_text(path.read_text().replace("stage: reading", "stage: [reading"))
    result = sdd("change", "list")
    assert result.code == 1
    assert "changes/CH-0001/change.yaml:" in result.stderr
    assert "Traceback" not in result.stderr


def test_scenario_add_prints_the_reference(sdd: SddRunner, root: Root) -> None:
    sdd("change", "new", WORDS)
    result = sdd(
        "scenario", "add", "CH-0001", "--title", "Find it", "--steps", "search hotel",
        "--expected", "it is listed",
    )  # fmt: skip
    assert result.stdout == "CH-0001/SC-1\n"
    stored = yaml.safe_load((root.path / "changes/CH-0001/scenarios.yaml").read_text())
    assert stored == [
        {"id": "SC-1", "title": "Find it", "steps": "search hotel", "expected": "it is listed",
         "required": True}
    ]  # fmt: skip


def test_the_listing_cache_never_shows_a_stale_or_broken_entry(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from sdd_git.parsecache import ParseCache

    monkeypatch.setattr("sdd_git.parsecache.RACY_NS", 0)  # cache even files written just now
    sdd("change", "new", WORDS)
    assert json.loads(sdd("change", "list", "--json").stdout)[0]["stage"] == "reading"
    cache = ParseCache(root.local / "cache" / "changes")
    assert "CH-0001" in cache.entries()
    path = root.path / "changes/CH-0001/change.yaml"
    before = os.stat(path)
    path.write_text(path.read_text().replace("stage: reading", "stage: verify "))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert json.loads(sdd("change", "list", "--json").stdout)[0]["stage"] == "verify"
    shard = next((root.local / "cache" / "changes").glob("*.json"))
    document = json.loads(shard.read_text())
    for entry in document["entries"].values():
        entry["value"] = {"bogus": True}
    shard.write_text(json.dumps(document))
    assert json.loads(sdd("change", "list", "--json").stdout)[0]["stage"] == "verify"
