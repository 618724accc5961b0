from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sdd_git.root import Root
from tests.conftest import SddRunner, commit_all, git, run_cli

WORDS = 'I can never find last month\'s hotel charge — «vraiment»: "really".'
READING = "Search expenses by month.\n\n- C1: Searching hotel lists the charge."


def decisions(root: Root) -> list[dict[str, object]]:
    loaded = yaml.safe_load(root.decisions.read_text())
    return loaded or []


def with_reading(sdd: SddRunner) -> None:
    assert sdd("change", "new", WORDS).code == 0
    assert sdd("correct", "reading", "CH-0001", READING).code == 0


def through_build(sdd: SddRunner) -> None:
    with_reading(sdd)
    assert sdd("accept", "reading", "CH-0001").code == 0
    assert sdd("next").code == 0


def accepted_scenario(sdd: SddRunner, *extra: str) -> None:
    sdd(
        "scenario",
        "add",
        "CH-0001",
        "--title",
        "Find it",
        "--steps",
        "search",
        "--expected",
        "listed",
    )
    assert sdd("accept", "scenario", "CH-0001/SC-1", *extra).code == 0


# --- readings ---------------------------------------------------------------------------------


def test_accepting_the_reading_is_the_decision_and_keeps_her_words_verbatim(
    sdd: SddRunner, root: Root
) -> None:
    with_reading(sdd)
    result = sdd("accept", "reading", "CH-0001")
    assert result.code == 0, result.stderr
    assert result.stdout == "D-0001\n"
    (entry,) = decisions(root)
    assert entry["kind"] == "accept-section"
    assert entry["words"] == WORDS
    assert entry["section"] == "SPEC-0001#S1"
    assert entry["change"] == "CH-0001"
    assert len(str(entry["hash"])) == 64
    assert str(entry["at"]).endswith("Z")


def test_accepting_again_adds_nothing(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    sdd("accept", "reading", "CH-0001")
    again = sdd("accept", "reading", "CH-0001")
    assert again.stdout == "D-0001\n"
    assert "already accepted" in again.stderr
    assert len(decisions(root)) == 1


def test_an_empty_reading_cannot_be_accepted(sdd: SddRunner, root: Root) -> None:
    sdd("change", "new", WORDS)
    result = sdd("accept", "reading", "CH-0001")
    assert result.code == 1
    assert "memory/specs/SPEC-0001.md:9: section SPEC-0001#S1 is empty" in result.stderr
    assert decisions(root) == []


def test_a_correction_replaces_the_draft_and_is_not_accepted(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    sdd("accept", "reading", "CH-0001")
    result = sdd("correct", "reading", "CH-0001", "Only hotel charges, by merchant.")
    assert result.code == 0
    shown = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    section = shown["sections"][0]
    assert section["text"] == "Only hotel charges, by merchant."
    assert section["state"] == "changed since accepted"
    assert section["accepted_by"] is None
    assert sdd("next").code == 1  # no accepted section any more


def test_an_edited_accepted_section_is_no_longer_accepted(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    sdd("accept", "reading", "CH-0001")
    spec = root.spec_file("SPEC-0001")
    spec.write_text(spec.read_text().replace("by month", "by year"))
    shown = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    assert shown["sections"][0]["state"] == "changed since accepted"
    result = sdd("next", "CH-0001")
    assert result.code == 1
    assert "no accepted section" in result.stderr


def test_accept_section_of_a_hand_written_spec_with_words(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    spec = root.spec_file("SPEC-0001")
    spec.write_text(spec.read_text() + "\n## S2 Export\nCSV export.\n- C1: one row per charge\n")
    result = sdd("accept", "section", "SPEC-0001#S2", "--words", "Yes, CSV is what I need.")
    assert result.code == 0
    (entry,) = decisions(root)
    assert entry["section"] == "SPEC-0001#S2"
    assert entry["words"] == "Yes, CSV is what I need."
    default = sdd("accept", "section", "SPEC-0001#S1")
    assert default.code == 0
    assert decisions(root)[1]["words"] == WORDS


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("SPEC-0001", "is not a section reference"),
        ("SPEC-0009#S1", "no spec SPEC-0009"),
        ("SPEC-0001#S4", "no section S4 in SPEC-0001"),
    ],
)
def test_accept_section_bad_references(sdd: SddRunner, root: Root, ref: str, message: str) -> None:
    with_reading(sdd)
    result = sdd("accept", "section", ref)
    assert result.code in (1, 2)
    assert message in result.stderr
    assert decisions(root) == []


# --- stages -----------------------------------------------------------------------------------


def test_next_needs_an_accepted_section_to_enter_build(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    refused = sdd("next")
    assert refused.code == 1
    assert "cannot move CH-0001 to build" in refused.stderr
    assert yaml.safe_load((root.path / "changes/CH-0001/change.yaml").read_text())["stage"] == (
        "reading"
    )
    sdd("accept", "reading", "CH-0001")
    moved = sdd("next")
    assert moved.stdout == "CH-0001: reading -> build\n"


def test_next_keeps_the_persons_comments_in_change_yaml(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    sdd("accept", "reading", "CH-0001")
    path = root.path / "changes/CH-0001/change.yaml"
    path.write_text("# my note about this change\n" + path.read_text())
    sdd("next")
    text = path.read_text()
    assert text.startswith("# my note about this change\n")
    assert "stage: build" in text


def test_next_with_two_open_changes_asks_which(sdd: SddRunner) -> None:
    sdd("change", "new", "one")
    sdd("change", "new", "two")
    result = sdd("next")
    assert result.code == 2
    assert "more than one change is open (CH-0001, CH-0002)" in result.stderr


def test_complete_moves_to_done_only_when_every_gate_holds(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    refused = sdd("complete")
    assert refused.code == 1
    assert "SC-1 has no QA result yet" in refused.stderr
    assert "stage: build" in (root.path / "changes/CH-0001/change.yaml").read_text()
    sdd("qa", "record", "CH-0001/SC-1", "pass", "It was there.")
    done = sdd("complete")
    assert done.stdout == "CH-0001: build -> done\n"
    assert sdd("next", "CH-0001").code == 1


def test_no_agent_completes_a_pack_with_no_model_or_provider(tmp_path: Path) -> None:
    env = {"SDD_PROVIDER": "", "OPENAI_API_KEY": ""}
    folder = tmp_path / "p"
    folder.mkdir()
    steps = [
        ("--no-agent", "init"),
        ("--no-agent", "change", "new", "Find the hotel charge"),
        ("--no-agent", "correct", "reading", "CH-0001", "Search by month."),
        ("--no-agent", "accept", "reading", "CH-0001"),
        ("--no-agent", "complete", "CH-0001"),
    ]
    for step in steps:
        result = run_cli(*step, cwd=folder, env=env)
        assert result.returncode == 0, (step, result.stderr)
    assert result.stdout == "CH-0001: reading -> done\n"


# --- scenarios, QA and failures -----------------------------------------------------------------


def test_scenario_acceptance_is_required_unless_optional(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    accepted_scenario(sdd, "--optional")
    entry = decisions(root)[-1]
    assert entry["kind"] == "accept-scenario" and entry["required"] is False
    assert entry["scenario"] == "SC-1" and entry["change"] == "CH-0001"
    assert sdd("accept", "scenario", "CH-0001/SC-1").code == 0
    assert decisions(root)[-1]["required"] is True


def test_a_role_flipping_required_in_scenarios_yaml_changes_nothing(
    sdd: SddRunner, root: Root
) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    sdd("qa", "record", "CH-0001/SC-1", "fail", "Nothing listed.")
    path = root.path / "changes/CH-0001/scenarios.yaml"
    path.write_text(path.read_text().replace("required: true", "required: false"))
    result = sdd("release", "generate", "CH-0001")
    assert result.code == 1
    assert "SC-1 failed" in result.stderr


def test_qa_record_writes_the_result_in_her_words(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    assert sdd("qa", "record", "CH-0001/SC-1", "fail", "Only February showed.").code == 0
    (entry,) = yaml.safe_load((root.path / "changes/CH-0001/qa.yaml").read_text())
    assert entry["scenario"] == "SC-1"
    assert entry["result"] == "fail"
    assert entry["words"] == "Only February showed."


def test_qa_record_of_an_unknown_scenario_is_an_error(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    result = sdd("qa", "record", "CH-0001/SC-9", "pass", "ok")
    assert result.code == 1 and "no scenario SC-9" in result.stderr
    assert not (root.path / "changes/CH-0001/qa.yaml").exists()


def test_a_failed_required_scenario_blocks_the_release_until_the_failure_is_accepted(
    sdd: SddRunner, root: Root
) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    sdd("qa", "record", "CH-0001/SC-1", "fail", "Only February showed.")
    spec_before = root.spec_file("SPEC-0001").read_text()
    decisions_before = root.decisions.read_text()

    blocked = sdd("release", "generate", "CH-0001")
    assert blocked.code == 1
    assert "required scenario SC-1 failed and its failure is not accepted" in blocked.stderr
    assert "nothing was written" in blocked.stderr
    assert not list(root.releases.glob("R-*.md"))
    assert root.decisions.read_text() == decisions_before

    accepted = sdd("accept", "failure", "CH-0001/SC-1", "February is enough for now.")
    assert accepted.code == 0
    assert root.spec_file("SPEC-0001").read_text() == spec_before  # the reading is unchanged
    shown = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    assert shown["sections"][0]["state"] == "accepted"

    released = sdd("release", "generate", "CH-0001")
    assert released.code == 0, released.stderr
    notes = (root.releases / "R-0001.md").read_text()
    assert "February is enough for now." in notes


def test_accept_failure_needs_a_failed_result(sdd: SddRunner) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    result = sdd("accept", "failure", "CH-0001/SC-1", "fine")
    assert result.code == 1 and "no failure to accept" in result.stderr


def test_an_optional_failed_scenario_does_not_block(sdd: SddRunner) -> None:
    through_build(sdd)
    accepted_scenario(sdd, "--optional")
    sdd("qa", "record", "CH-0001/SC-1", "fail", "nope")
    assert sdd("release", "generate", "CH-0001").code == 0


# --- releases ---------------------------------------------------------------------------------


def test_a_release_of_a_change_with_no_accepted_section_exits_4_and_writes_nothing(
    sdd: SddRunner, root: Root
) -> None:
    through_build(sdd)
    sdd("change", "new", "Nobody accepted this yet.")
    decisions_before = root.decisions.read_text()
    result = sdd("release", "generate", "CH-0001", "CH-0002", "--tag", "v9")
    assert result.code == 4
    assert "CH-0002" in result.stderr and "no accepted section" in result.stderr
    assert root.decisions.read_text() == decisions_before
    assert not list(root.releases.glob("R-*.md"))
    assert git(root.path, "tag", "--list").strip() == ""


def test_release_notes_quote_each_change_verbatim_and_nothing_is_pushed(
    sdd: SddRunner, root: Root
) -> None:
    through_build(sdd)
    sdd("change", "new", "Line one of her words.\nLine two.")
    assert sdd("correct", "reading", "CH-0002", "Two lines.\n- C1: both kept").code == 0
    assert sdd("accept", "reading", "CH-0002").code == 0
    result = sdd("release", "generate", "CH-0001", "CH-0002")
    assert result.code == 0, result.stderr
    assert result.stdout == "R-0001\n"
    assert "nothing was pushed or deployed" in result.stderr
    text = (root.releases / "R-0001.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["changes"] == ["CH-0001", "CH-0002"]
    assert front["tag"] is None
    assert f"> {WORDS}" in text
    assert "> Line one of her words.\n> Line two." in text
    release_decision = decisions(root)[-1]
    assert release_decision["kind"] == "release"
    assert release_decision["changes"] == ["CH-0001", "CH-0002"]


def test_release_writes_the_tag_when_it_can(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    commit_all(root.path)
    head = git(root.path, "rev-parse", "HEAD")
    result = sdd("release", "generate", "CH-0001", "--tag", "v1.0")
    assert result.code == 0
    assert "wrote git tag v1.0" in result.stderr
    assert git(root.path, "tag", "--list").split() == ["v1.0"]
    front = yaml.safe_load((root.releases / "R-0001.md").read_text().split("---\n")[1])
    assert front["tag"] == "v1.0" and front["tag_written"] is True
    assert git(root.path, "rev-parse", "HEAD") == head  # sdd committed nothing
    assert git(root.path, "rev-parse", "v1.0^{commit}") == head
    assert "memory/releases/" in git(root.path, "status", "--porcelain", "--untracked-files=all")


@pytest.mark.parametrize(
    ("setup", "tag", "reason"),
    [
        ("no-commit", "v1.0", "no commit yet"),
        ("exists", "v1.0", "already exists"),
        ("commit", "bad..name", "not a valid tag name"),
    ],
)
def test_a_tag_that_cannot_be_written_still_makes_the_release_and_says_so(
    sdd: SddRunner, root: Root, setup: str, tag: str, reason: str
) -> None:
    through_build(sdd)
    if setup in ("exists", "commit"):
        commit_all(root.path)
    if setup == "exists":
        git(root.path, "tag", tag)
    result = sdd("release", "generate", "CH-0001", "--tag", tag)
    assert result.code == 0
    assert f"the git tag {tag} was not written" in result.stderr and reason in result.stderr
    text = (root.releases / "R-0001.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["tag_written"] is False
    assert reason in front["tag_note"]
    assert f"The git tag {tag} was not written" in text


def test_release_of_an_unknown_change_writes_nothing(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    result = sdd("release", "generate", "CH-0001", "CH-0007")
    assert result.code == 1 and "no change CH-0007" in result.stderr
    assert not list(root.releases.glob("R-*.md"))


# --- decisions --------------------------------------------------------------------------------


def test_decision_replace_appends_and_marks_the_old_one(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    result = sdd("decision", "replace", "D-0001", "Hotel and taxi charges.")
    assert result.stdout == "D-0002\n"
    listed = json.loads(sdd("decision", "list", "--json").stdout)
    assert listed[0]["id"] == "D-0001" and listed[0]["replaced_by"] == "D-0002"
    assert listed[1]["kind"] == "replace" and listed[1]["replaces"] == "D-0001"
    assert listed[1]["words"] == "Hotel and taxi charges."
    unknown = sdd("decision", "replace", "D-0099", "x")
    assert unknown.code == 1 and "no decision D-0099" in unknown.stderr


# --- the wall's sink: person commands refuse inside a role run ---------------------------------


PERSON_COMMANDS = [
    ("init",),
    ("change", "new", "x"),
    ("accept", "reading", "CH-0001"),
    ("accept", "section", "SPEC-0001#S1"),
    ("accept", "scenario", "CH-0001/SC-1"),
    ("accept", "plan", "CH-0001"),
    ("accept", "failure", "CH-0001/SC-1", "ok"),
    ("correct", "reading", "CH-0001", "x"),
    ("qa", "record", "CH-0001/SC-1", "pass", "ok"),
    ("decision", "replace", "D-0001", "x"),
    ("release", "generate", "CH-0001"),
    ("next",),
    ("complete",),
    ("scenario", "add", "CH-0001", "--title", "t", "--steps", "s", "--expected", "e"),
    ("agents", "install", "claude"),
]


@pytest.mark.parametrize("command", PERSON_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_person_commands_refuse_inside_a_role_run(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    sdd("qa", "record", "CH-0001/SC-1", "fail", "no")
    (root.path / "changes/CH-0001/plan.yaml").write_text("nodes: []\n")
    before = {
        p: p.read_bytes() for p in root.path.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    monkeypatch.setenv("SDD_RUN_ID", "run-1234")
    result = sdd(*command)
    assert result.code == 1
    assert "error: person commands cannot run inside a role run" in result.stderr
    after = {
        p: p.read_bytes() for p in root.path.rglob("*") if p.is_file() and ".git" not in p.parts
    }
    assert after == before


def test_a_child_process_of_a_run_cannot_reach_a_person_command(root: Root, tmp_path: Path) -> None:
    result = run_cli("next", cwd=root.path, env={"SDD_RUN_ID": "run-1"})
    assert result.returncode == 1
    assert result.stderr.startswith("error: person commands cannot run inside a role run")


# --- plans ------------------------------------------------------------------------------------


def test_accept_plan_needs_a_plan_and_records_its_hash(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    missing = sdd("accept", "plan", "CH-0001")
    assert missing.code == 1 and "has no plan to accept" in missing.stderr
    (root.path / "changes/CH-0001/plan.yaml").write_text("nodes: [{scope: product}]\n")
    invalid = sdd("accept", "plan", "CH-0001")  # no id, task or returns: never accepted
    assert invalid.code == 1 and not (root.path / "memory/decisions.yaml").read_text().count("D-")
    (root.path / "changes/CH-0001/plan.yaml").write_text(
        "nodes: [{id: N1, scope: expenses, owner: builder, task: t, returns: commit}]\n"
    )
    assert sdd("accept", "plan", "CH-0001").stdout == "D-0001\n"
    entry = decisions(root)[0]
    assert entry["kind"] == "accept-plan" and entry["change"] == "CH-0001"
    (root.path / "changes/CH-0001/plan.yaml").write_text("nodes: [oops\n")
    broken = sdd("accept", "plan", "CH-0001")
    assert broken.code == 1 and "changes/CH-0001/plan.yaml:" in broken.stderr


# --- nothing half written ---------------------------------------------------------------------


def test_a_release_whose_decision_cannot_be_written_leaves_no_file_and_no_tag(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    through_build(sdd)
    commit_all(root.path)

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("sdd_git.records.decisions.append", full_disk)
    result = sdd("release", "generate", "CH-0001", "--tag", "v2")
    assert result.code == 1
    assert "error: No space left on device" in result.stderr
    assert not list(root.releases.glob("R-*.md"))
    assert git(root.path, "tag", "--list") == ""


def test_a_second_writer_fails_naming_the_holder_and_changes_nothing(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_reading(sdd)
    monkeypatch.setattr("sdd_git.lockfile.DEFAULT_WAIT_SECONDS", 0.2)
    root.record_lock.write_text(
        '{"pid": 1, "host": "elsewhere", "command": "sdd accept reading CH-0001", "since": "now"}'
    )
    result = sdd("accept", "reading", "CH-0001")
    assert result.code == 1
    assert "error: the record is locked by pid 1 on elsewhere (sdd accept reading CH-0001)" in (
        result.stderr
    )
    assert "nothing was changed" in result.stderr
    assert decisions(root) == []


def test_an_accepted_failure_does_not_cover_a_later_regression(sdd: SddRunner, root: Root) -> None:
    through_build(sdd)
    accepted_scenario(sdd)
    sdd("qa", "record", "CH-0001/SC-1", "fail", "Slow.")
    sdd("accept", "failure", "CH-0001/SC-1", "Slow is acceptable for now.")
    sdd("qa", "record", "CH-0001/SC-1", "pass", "Fast now.")
    sdd("qa", "record", "CH-0001/SC-1", "fail", "Regression: the charge is gone.")
    blocked = sdd("release", "generate", "CH-0001")
    assert blocked.code == 1 and "SC-1 failed and its failure is not accepted" in blocked.stderr
    assert decisions(root)[-1]["result"] == 1


@pytest.mark.parametrize("words", ["Line one\x85line two", "tab\tand\u2028separator", "yes", "~"])
def test_words_are_kept_verbatim_whatever_their_characters(
    sdd: SddRunner, root: Root, words: str
) -> None:
    with_reading(sdd)
    assert sdd("accept", "reading", "CH-0001", "--words", words).code == 0
    assert decisions(root)[0]["words"] == words


def test_words_that_are_not_unicode_are_refused_and_nothing_is_written(
    sdd: SddRunner, root: Root
) -> None:
    with_reading(sdd)
    before = root.decisions.read_text()
    result = sdd("accept", "reading", "CH-0001", "--words", "caf\udce9 ok")
    assert result.code == 2 and "not valid UTF-8" in result.stderr
    assert root.decisions.read_text() == before
    assert sdd("decision", "list").code == 0


def test_a_correction_with_a_section_heading_is_refused_and_the_spec_kept(
    sdd: SddRunner, root: Root
) -> None:
    with_reading(sdd)
    before = root.spec_file("SPEC-0001").read_text()
    result = sdd("correct", "reading", "CH-0001", "Fine.\n## S1 Again\nmore")
    assert result.code == 2 and "section heading" in result.stderr
    assert root.spec_file("SPEC-0001").read_text() == before


def test_a_key_written_twice_is_reported_not_crashed_on(sdd: SddRunner, root: Root) -> None:
    with_reading(sdd)
    sdd("accept", "reading", "CH-0001")
    path = root.path / "changes/CH-0001/change.yaml"
    text = path.read_text() + "stage: reading\n"
    path.write_text(text)
    result = sdd("next")
    assert result.code == 1 and "error: changes/CH-0001/change.yaml:" in result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_text() == text


def test_releasing_the_same_change_twice_is_refused_unless_asked_for_again(
    sdd: SddRunner, root: Root
) -> None:
    through_build(sdd)
    assert sdd("release", "generate", "CH-0001").code == 0
    decisions_before = root.decisions.read_text()
    second = sdd("release", "generate", "CH-0001")
    assert second.code == 2 and "CH-0001 already released in R-0001" in second.stderr
    assert "--again" in second.stderr
    assert root.decisions.read_text() == decisions_before
    assert not (root.releases / "R-0002.md").exists()
    assert sdd("release", "generate", "CH-0001", "--again").code == 0
    assert (root.releases / "R-0002.md").exists()


def test_the_tag_says_which_commit_it_points_at_and_that_it_lacks_the_release_file(
    sdd: SddRunner, root: Root
) -> None:
    through_build(sdd)
    commit_all(root.path)
    head = git(root.path, "rev-parse", "HEAD").strip()
    result = sdd("release", "generate", "CH-0001", "--tag", "v1.0")
    assert result.code == 0
    assert f"wrote git tag v1.0 at {head[:12]} (HEAD), which does not hold R-0001.md" in (
        result.stderr
    )
    assert f"tag_commit: {head}" in (root.releases / "R-0001.md").read_text()
    assert git(root.path, "rev-parse", "v1.0^{commit}").strip() == head
