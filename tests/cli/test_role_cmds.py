from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from sdd_git.root import Root
from tests.conftest import SddRunner

COMMENTED = """---
# Standing: reviewed by the team on Mondays
role: builder                  # the name
label: Builder
job: Implement accepted spec sections for the expenses service
level: 0                       # privilege level
toolPolicy.delegation: deny    # allow | deny
produces: code
skills: [small-commits]
pinned: false
hidden: false
boundary:
  always_allow: []
  ask_first:
    - {tool: git_push}         # never without asking
---
Keep commits small.

Run the tests before you say it works.
"""


def role_file(root: Root, name: str) -> Path:
    return root.sdd / "roles" / name / "ROLE.md"


def front(root: Root, name: str) -> dict[str, object]:
    loaded = yaml.safe_load(role_file(root, name).read_text().split("---\n")[1])
    assert isinstance(loaded, dict)
    return loaded


def listed(sdd: SddRunner, *flags: str) -> list[dict[str, object]]:
    result = sdd("role", "list", "--json", *flags)
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    return rows


def with_builder(root: Root) -> Path:
    """Her builder, written in her editor: she confirms what it grants, as she would."""
    from tests.trusthelp import confirm

    path = role_file(root, "builder")
    path.parent.mkdir(parents=True)
    path.write_text(COMMENTED)
    confirm(root, ".sdd/roles/builder/ROLE.md")
    return path


# --- create -----------------------------------------------------------------------------------


def test_create_writes_a_canonical_role(sdd: SddRunner, root: Root) -> None:
    result = sdd(
        "role", "create", "steward", "--job", "Draft readings", "--label", "Spec steward",
        "--description", "Keep it short.", "--level", "20", "--produces", "reading",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == ".sdd/roles/steward/ROLE.md"
    data = front(root, "steward")
    assert data["role"] == "steward" and data["job"] == "Draft readings"
    assert data["level"] == 20 and data["toolPolicy.delegation"] == "deny"
    assert data["produces"] == "reading"
    assert role_file(root, "steward").read_text().endswith("---\nKeep it short.\n")


def test_a_blank_job_writes_nothing_and_exits_2(sdd: SddRunner, root: Root) -> None:
    result = sdd("role", "create", "idle", "--job", "   ")
    assert result.code == 2
    assert "error: the job is empty" in result.stderr
    assert not (root.sdd / "roles" / "idle").exists()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("executor", "is a built-in role"),
        ("Bad_Name", "is not a role name"),
        ("x" * 41, "is not a role name"),
    ],
)
def test_create_refuses_bad_names(sdd: SddRunner, root: Root, name: str, message: str) -> None:
    result = sdd("role", "create", name, "--job", "j")
    assert result.code == 2 and message in result.stderr
    assert list((root.sdd / "roles").iterdir()) == []


def test_create_refuses_an_existing_role(sdd: SddRunner, root: Root) -> None:
    with_builder(root)
    result = sdd("role", "create", "builder", "--job", "Other", "--produces", "code")
    assert result.code == 1 and "already exists" in result.stderr
    assert role_file(root, "builder").read_text() == COMMENTED


def test_create_from_a_shipped_template(sdd: SddRunner, root: Root) -> None:
    result = sdd("role", "create", "api-builder", "--template", "builder", "--job", "Build the API")
    assert result.code == 0, result.stderr
    data = front(root, "api-builder")
    assert data["role"] == "api-builder" and data["job"] == "Build the API"
    assert data["produces"] == "code" and data["level"] == 10
    assert "You are the builder." in role_file(root, "api-builder").read_text()


def test_create_from_a_repo_template_brings_routines_and_skills(sdd: SddRunner, root: Root) -> None:
    template = root.path / "templates" / "nightly"
    (template / "routines").mkdir(parents=True)
    (template / "skills" / "triage").mkdir(parents=True)
    (template / "ROLE.md").write_text(COMMENTED.replace("role: builder", "role: nightly"))
    (template / "routines" / "failed-build.yaml").write_text("on: failed-build\n")
    (template / "skills" / "triage" / "SKILL.md").write_text("# Triage\n")
    assert (
        sdd("role", "create", "night", "--template", "nightly", "--job", "Watch builds").code == 0
    )
    # A routine that comes with a template arrives paused: she resumes it once she has read it.
    routine = (root.sdd / "roles/night/routines/failed-build.yaml").read_text()
    assert routine == "on: failed-build\npaused: true\n"
    assert (root.sdd / "skills/triage/SKILL.md").is_file()
    assert "# Standing: reviewed by the team on Mondays" in role_file(root, "night").read_text()


def test_create_with_an_unknown_template_is_an_error(sdd: SddRunner, root: Root) -> None:
    result = sdd("role", "create", "x", "--template", "nope", "--job", "j")
    assert result.code == 1 and "no template 'nope'" in result.stderr


# --- edit, pin, hide --------------------------------------------------------------------------


def test_pin_and_edit_job_keep_every_comment(sdd: SddRunner, root: Root) -> None:
    path = with_builder(root)
    assert sdd("role", "pin", "builder").code == 0
    assert sdd("role", "edit", "builder", "--job", "Build the billing service").code == 0
    expected = COMMENTED.replace("pinned: false", "pinned: true").replace(
        "job: Implement accepted spec sections for the expenses service",
        "job: Build the billing service",
    )
    assert path.read_text() == expected


def test_edit_description_replaces_only_the_body(sdd: SddRunner, root: Root) -> None:
    path = with_builder(root)
    assert sdd("role", "edit", "builder", "--description", "New rules.").code == 0
    assert path.read_text() == COMMENTED.split("---\nKeep")[0] + "---\nNew rules.\n"


def test_edit_refuses_a_blank_job_and_built_ins(sdd: SddRunner, root: Root) -> None:
    path = with_builder(root)
    assert sdd("role", "edit", "builder", "--job", " ").code == 2
    assert path.read_text() == COMMENTED
    assert sdd("role", "edit", "executor", "--job", "x").code == 2


def editor(tmp_path: Path, new_text: str) -> str:
    script = tmp_path / "editor.py"
    source = tmp_path / "new.md"
    source.write_text(new_text)
    script.write_text(f"import shutil, sys\nshutil.copyfile({str(source)!r}, sys.argv[1])\n")
    return f'"{sys.executable}" "{script}"'


def test_edit_in_the_editor_saves_a_valid_file(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = with_builder(root)
    changed = COMMENTED.replace("label: Builder", "label: The builder")
    monkeypatch.setenv("EDITOR", editor(tmp_path, changed))
    result = sdd("role", "edit", "builder")
    assert result.code == 0, result.stderr
    assert path.read_text() == changed
    assert not (root.local / "role-edits" / "builder").joinpath("ROLE.md").exists()


def test_an_invalid_save_is_reported_and_the_persons_text_is_kept(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = with_builder(root)
    mistake = COMMENTED.replace("level: 0   ", "level: high").replace(
        "Keep commits", "Keep my new commits"
    )
    monkeypatch.setenv("EDITOR", editor(tmp_path, mistake))
    result = sdd("role", "edit", "builder")
    assert result.code == 1
    assert (
        "error: .sdd/local/role-edits/builder/ROLE.md:6: key 'level': must be a number"
        in result.stderr
    )
    assert "Your text is kept in .sdd/local/role-edits/builder/ROLE.md" in result.stderr
    assert path.read_text() == COMMENTED  # the role is unchanged
    kept = root.local / "role-edits" / "builder" / "ROLE.md"
    assert kept.read_text() == mistake  # and nothing the person typed is lost

    fixed = mistake.replace("level: high", "level: 1   ")
    monkeypatch.setenv("EDITOR", editor(tmp_path / "..", fixed))
    again = sdd("role", "edit", "builder")
    assert again.code == 0, again.stderr
    assert "continuing your unsaved edit" in again.stderr
    assert path.read_text() == fixed
    assert not kept.exists()


def test_hidden_roles_leave_the_list_but_stay_in_all_and_keep_routines(
    sdd: SddRunner, root: Root
) -> None:
    with_builder(root)
    routine = root.sdd / "roles/builder/routines/nightly.yaml"
    routine.parent.mkdir()
    routine.write_text("schedule: nightly\npaused: false\n")
    assert sdd("role", "hide", "builder").code == 0
    assert "builder" not in [r["name"] for r in listed(sdd)]
    everything = {r["name"]: r for r in listed(sdd, "--all")}
    assert everything["builder"]["hidden"] is True
    assert routine.read_text() == "schedule: nightly\npaused: false\n"
    assert sdd("role", "unhide", "builder").code == 0
    assert "builder" in [r["name"] for r in listed(sdd)]


def test_list_puts_pinned_roles_first_then_sorts_by_label(sdd: SddRunner, root: Root) -> None:
    sdd("role", "create", "zed", "--job", "j", "--label", "Zed", "--produces", "review")
    sdd("role", "create", "amy", "--job", "j", "--label", "amy", "--produces", "review")
    sdd("role", "pin", "zed")
    names = [r["name"] for r in listed(sdd)]
    assert names[0] == "zed"
    assert names.index("amy") < names.index("executor") < names.index("supervisor")
    row = next(r for r in listed(sdd) if r["name"] == "supervisor")
    assert set(row) == {
        "name",
        "label",
        "job",
        "level",
        "delegation",
        "spawnable",
        "pinned",
        "hidden",
        "source",
    }
    assert "executor" in row["spawnable"] and "amy" in row["spawnable"]  # type: ignore[operator]


def test_show_json_has_profile_boundary_routines_and_runs(sdd: SddRunner, root: Root) -> None:
    with_builder(root)
    runs = root.sdd / "role-runs"
    runs.mkdir()
    (runs / "r1.jsonl").write_text(
        json.dumps({"event": "run_started", "roles": ["builder"]}) + "\n"
    )
    (runs / "r2.jsonl").write_text(json.dumps({"event": "run_started", "roles": ["other"]}) + "\n")
    view = json.loads(sdd("role", "show", "builder", "--json").stdout)
    assert view["job"] == "Implement accepted spec sections for the expenses service"
    assert view["boundary"]["ask_first"] == [{"tool": "git_push"}]
    assert view["recent_runs"] == ["r1"]
    assert view["routines"] == []
    assert view["spawnable"] == []
    text = sdd("role", "show", "builder").stdout
    assert "ask first: git_push" in text and "Keep commits small." in text


def test_show_an_unknown_role_is_an_error(sdd: SddRunner) -> None:
    result = sdd("role", "show", "ghost")
    assert result.code == 1 and "no role 'ghost'" in result.stderr


# --- duplicate and delete ---------------------------------------------------------------------


def test_duplicate_copies_profile_routines_and_boundary_not_local_state(
    sdd: SddRunner, root: Root
) -> None:
    with_builder(root)
    (root.sdd / "roles/builder/routines").mkdir()
    (root.sdd / "roles/builder/routines/nightly.yaml").write_text("schedule: nightly\n")
    local = root.local / "roles" / "builder"
    (local / "attachments").mkdir(parents=True)
    (local / "conversation.jsonl").write_text('{"said": "hi"}\n')
    (local / "memory.yaml").write_text("- prefers small commits\n")
    result = sdd("role", "duplicate", "builder")
    assert result.stdout == "builder-copy\n"
    data = front(root, "builder-copy")
    assert data["role"] == "builder-copy" and data["label"] == "Builder copy"
    assert data["boundary"] == front(root, "builder")["boundary"]
    assert data["skills"] == ["small-commits"]
    assert (root.sdd / "roles/builder-copy/routines/nightly.yaml").is_file()
    assert not (root.local / "roles" / "builder-copy").exists()
    assert (
        "# Standing: reviewed by the team on Mondays" in role_file(root, "builder-copy").read_text()
    )
    assert sdd("role", "duplicate", "builder").stdout == "builder-copy-2\n"


def test_delete_asks_and_reads_the_answer_from_stdin(sdd: SddRunner, root: Root) -> None:
    with_builder(root)
    declined = sdd("role", "delete", "builder", input="n\n")
    assert declined.code == 0 and "[y/N]" in declined.stderr
    assert role_file(root, "builder").exists()
    declined_empty = sdd("role", "delete", "builder", input="")  # end of input: no answer
    assert declined_empty.code == 2 and role_file(root, "builder").exists()
    assert "nothing was deleted" in declined_empty.stderr
    assert "hint: to delete without asking: sdd role delete builder --yes" in declined_empty.stderr
    accepted = sdd("role", "delete", "builder", input="y\n")
    assert accepted.code == 0
    assert not (root.sdd / "roles" / "builder").exists()


def test_delete_removes_profile_routines_conversation_and_memory_not_product_files(
    sdd: SddRunner, root: Root
) -> None:
    with_builder(root)
    (root.sdd / "roles/builder/routines").mkdir()
    (root.sdd / "roles/builder/routines/nightly.yaml").write_text("schedule: nightly\n")
    local = root.local / "roles" / "builder"
    local.mkdir(parents=True)
    (local / "conversation.jsonl").write_text("{}\n")
    product_file = root.path / "src" / "app.py"
    product_file.parent.mkdir()
    product_file.write_text("print('made by builder')\n")
    result = sdd("role", "delete", "builder", "--yes")
    assert result.code == 0
    assert not (root.sdd / "roles" / "builder").exists()
    assert not local.exists()
    assert product_file.read_text() == "print('made by builder')\n"


# --- share and add ----------------------------------------------------------------------------


def test_share_writes_a_template_without_local_state_or_secrets(sdd: SddRunner, root: Root) -> None:
    path = with_builder(root)
    path.write_text(
        COMMENTED.replace("pinned: false", "pinned: true").replace(
            "skills: [small-commits]",
            "skills: [small-commits]\n"
            "model: {kind: openai, model: m, api_key: sk-live-123456789, api_key_env: KEY}",
        )
    )
    (root.sdd / "roles/builder/routines").mkdir()
    (root.sdd / "roles/builder/routines/nightly.yaml").write_text("schedule: nightly\n")
    (root.sdd / "skills/small-commits").mkdir(parents=True)
    (root.sdd / "skills/small-commits/SKILL.md").write_text("# Small commits\n")
    (root.local / "roles/builder").mkdir(parents=True)
    (root.local / "roles/builder/memory.yaml").write_text("- secret preference\n")
    result = sdd("role", "share", "builder")
    assert result.code == 0, result.stderr
    shared = root.path / "templates" / "builder"
    files = sorted(str(p.relative_to(shared)) for p in shared.rglob("*") if p.is_file())
    assert files == ["ROLE.md", "routines/nightly.yaml", "skills/small-commits/SKILL.md"]
    text = (shared / "ROLE.md").read_text()
    assert "sk-live-123456789" not in text and "api_key_env: KEY" in text
    assert "pinned: false" in text and "Keep commits small." in text
    again = sdd("role", "share", "builder")
    assert again.code == 1 and "--force" in again.stderr
    assert sdd("role", "share", "builder", "--force").code == 0


def test_add_makes_a_new_role_each_time_with_a_unique_name(sdd: SddRunner, root: Root) -> None:
    with_builder(root)
    assert sdd("role", "share", "builder").code == 0
    first = sdd("role", "add", "templates/builder")
    second = sdd("role", "add", "templates/builder")
    assert (first.stdout, second.stdout) == ("builder-2\n", "builder-3\n")
    assert front(root, "builder-3")["role"] == "builder-3"
    named = sdd("role", "add", "qa-author", "--name", "qa")
    assert named.stdout == "qa\n" and front(root, "qa")["produces"] == "scenario"


# --- a rule comes only from the person: rules that arrive with a template -------------------

GRANTING = """---
role: runner
label: Runner
job: Run the checks
level: 0
toolPolicy.delegation: deny
boundary:
  always_allow:                # saved by "Always allow"
    - {tool: run_command, inputs: {command: "pytest -q"}}
    - {tool: write_file, inputs: {path: notes.txt, content: "done"}}
  ask_first:                   # never without asking
    - {tool: git_push}
---
Run the checks.
"""


def granting_template(root: Root) -> Path:
    folder = root.path / "templates" / "runner"
    (folder / "routines").mkdir(parents=True)
    (folder / "ROLE.md").write_text(GRANTING)
    (folder / "routines" / "nightly.yaml").write_text("schedule: nightly\n")
    return folder


def boundary_of(root: Root, name: str) -> dict[str, object]:
    boundary = front(root, name)["boundary"]
    assert isinstance(boundary, dict)
    return boundary


KEPT_RULES = [
    {"tool": "run_command", "inputs": {"command": "pytest -q"}},
    {"tool": "write_file", "inputs": {"path": "notes.txt", "content": "done"}},
]


def test_add_with_rules_and_yes_keeps_them_and_shows_them(sdd: SddRunner, root: Root) -> None:
    granting_template(root)
    result = sdd("role", "add", "templates/runner", "--yes")
    assert result.code == 0, result.stderr
    assert result.stdout == "runner\n"
    assert "[y/N]" not in result.stderr  # --yes asks nothing
    assert '`run_command` with command "pytest -q"' in result.stderr
    assert '`write_file` with path "notes.txt", content "done"' in result.stderr
    assert boundary_of(root, "runner")["always_allow"] == KEPT_RULES
    assert "kept 2 always_allow rule(s)" in result.stderr


def test_add_with_rules_and_the_answer_y_keeps_them(sdd: SddRunner, root: Root) -> None:
    granting_template(root)
    result = sdd("role", "add", "templates/runner", input="y\n")
    assert result.code == 0, result.stderr
    assert "Keep what it grants? [y/N]" in result.stderr
    assert '`run_command` with command "pytest -q"' in result.stderr
    assert boundary_of(root, "runner")["always_allow"] == KEPT_RULES


@pytest.mark.parametrize("answer", ["n\n", "", "maybe\n"], ids=["no", "end-of-input", "other"])
def test_add_without_her_yes_leaves_the_rules_out_and_says_so(
    sdd: SddRunner, root: Root, answer: str
) -> None:
    granting_template(root)
    result = sdd("role", "add", "templates/runner", input=answer)
    assert result.code == 0, result.stderr
    assert result.stdout == "runner\n"
    assert "Keep what it grants? [y/N]" in result.stderr
    assert "added role runner" in result.stderr
    assert "left out 2 always_allow rule(s) you did not confirm" in result.stderr
    assert "sdd role add templates/runner --yes" in result.stderr
    assert "sdd allow STOP --always" in result.stderr
    boundary = boundary_of(root, "runner")
    assert boundary["always_allow"] == []
    assert boundary["ask_first"] == [{"tool": "git_push"}]  # stricter rules are always kept
    text = role_file(root, "runner").read_text()
    assert "# never without asking" in text and "# saved by" in text  # her comments stay
    assert (root.sdd / "roles/runner/routines/nightly.yaml").is_file()
    from sdd_git.roles.registry import find_role

    loaded, _ = find_role(root, "runner", use_cache=False)
    assert loaded.boundary.always_allow == ()


@pytest.mark.parametrize("answer", ["", "y\n"], ids=["no-answer", "yes"])
def test_add_an_agent_file_of_another_host_asks_about_its_rules(
    sdd: SddRunner, root: Root, answer: str
) -> None:
    agent = root.path / ".claude" / "agents" / "helper.md"
    agent.parent.mkdir(parents=True)
    agent.write_text(
        "---\nname: helper\ndescription: Helps with the expenses code\ntools: Read, Bash\n"
        "boundary:\n  always_allow:\n    - {tool: run_command, inputs: {command: echo hi}}\n"
        "---\nYou help.\n"
    )
    (agent.parent / "routines").mkdir()  # a sibling folder is not part of a single file
    result = sdd("role", "add", ".claude/agents/helper.md", input=answer)
    assert result.code == 0, result.stderr
    assert result.stdout == "helper\n"
    assert '`run_command` with command "echo hi"' in result.stderr
    data = front(root, "helper")
    assert data["job"] == "Helps with the expenses code" and data["level"] == 0
    rules = [{"tool": "run_command", "inputs": {"command": "echo hi"}}] if answer else []
    assert boundary_of(root, "helper")["always_allow"] == rules
    assert sorted(p.name for p in (root.sdd / "roles" / "helper").iterdir()) == ["ROLE.md"]


def test_add_without_rules_still_shows_what_it_grants_and_waits_without_her_yes(
    sdd: SddRunner, root: Root
) -> None:
    """A template with no always_allow rule still grants: a level, delegation, what it
    produces. She is shown them; with no yes, none of it counts until she confirms it."""
    with_builder(root)
    assert sdd("role", "share", "builder").code == 0
    result = sdd("role", "add", "templates/builder", input="n\n")
    assert result.code == 0, result.stderr
    assert "Keep what it grants? [y/N]" in result.stderr
    assert "new to you: level 0, delegation deny, produces code" in result.stderr
    assert "waits for your confirmation" in result.stderr
    assert boundary_of(root, "builder-2")["ask_first"] == [{"tool": "git_push"}]
    from sdd_git.roles.registry import find_role

    added, _ = find_role(root, "builder-2", use_cache=False)
    assert added.trust is not None and not added.trust.counts
    shipped = sdd("role", "add", "qa-author")
    assert shipped.code == 0 and "[y/N]" not in shipped.stderr  # shipped counts as shipped


def test_add_writes_the_role_whole_with_the_decision_applied(sdd: SddRunner, root: Root) -> None:
    granting_template(root)
    assert sdd("role", "add", "templates/runner", input="").code == 0
    leftovers = [p.name for p in (root.sdd / "roles").iterdir() if p.name.startswith(".")]
    assert leftovers == []
    assert [p.name for p in (root.sdd / "roles/runner").iterdir() if p.name.startswith(".")] == []
    assert "pytest -q" not in role_file(root, "runner").read_text()


def test_add_refuses_a_bad_name_before_asking(sdd: SddRunner, root: Root) -> None:
    granting_template(root)
    result = sdd("role", "add", "templates/runner", "--name", "Bad Name", input="y\n")
    assert result.code == 2 and "[y/N]" not in result.stderr
    assert not (root.sdd / "roles" / "runner").exists()


def test_create_from_a_shared_template_asks_about_its_rules(sdd: SddRunner, root: Root) -> None:
    granting_template(root)
    declined = sdd("role", "create", "checks", "--job", "Run checks", "--template", "runner")
    assert declined.code == 0, declined.stderr
    assert "Keep what it grants? [y/N]" in declined.stderr
    assert "left out 2 always_allow rule(s)" in declined.stderr
    assert boundary_of(root, "checks")["always_allow"] == []
    kept = sdd("role", "create", "checks-2", "--job", "Run checks", "--template", "runner", "--yes")
    assert kept.code == 0, kept.stderr
    assert boundary_of(root, "checks-2")["always_allow"] == KEPT_RULES


def test_create_from_a_shipped_template_keeps_its_rules_without_asking(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "shipped"
    (shipped / "runner").mkdir(parents=True)
    (shipped / "runner" / "ROLE.md").write_text(GRANTING)
    monkeypatch.setattr("sdd_git.roles.templates.shipped_dir", lambda: shipped)
    result = sdd("role", "create", "checks", "--job", "Run checks", "--template", "runner")
    assert result.code == 0, result.stderr
    assert "[y/N]" not in result.stderr
    assert boundary_of(root, "checks")["always_allow"] == KEPT_RULES


def test_share_then_add_keeps_no_local_state_and_asks_about_the_rules(
    sdd: SddRunner, root: Root
) -> None:
    path = role_file(root, "runner")
    path.parent.mkdir(parents=True)
    path.write_text(GRANTING)
    (root.local / "roles/runner").mkdir(parents=True)
    (root.local / "roles/runner/memory.yaml").write_text("- a private note\n")
    (root.local / "roles/runner/conversation.jsonl").write_text("{}\n")
    assert sdd("role", "share", "runner").code == 0
    shared = root.path / "templates" / "runner"
    assert sorted(p.name for p in shared.rglob("*")) == ["ROLE.md"]
    assert "pytest -q" in (shared / "ROLE.md").read_text()  # her own rules travel, shown on add
    added = sdd("role", "add", "templates/runner", input="")
    assert added.stdout == "runner-2\n" and "left out 2" in added.stderr
    assert boundary_of(root, "runner-2")["always_allow"] == []


# --- a rule comes only from the person: packs -------------------------------------------------


def write_pack(home: Path, name: str = "helper", command: str = "pytest -q") -> Path:
    path = home / ".sdd" / "roles" / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Help\nlevel: 0\ntoolPolicy.delegation: deny\n"
        "boundary:\n  always_allow:\n"
        f"    - {{tool: run_command, inputs: {{command: {command!r}}}}}\n"
        "  ask_first:\n    - {tool: git_push}\n---\nHelp out.\n"
    )
    return path


def test_show_and_list_say_whether_a_packs_rules_are_trusted(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    write_pack(isolated_home)
    shown = sdd("role", "show", "helper")
    assert shown.code == 0, shown.stderr
    assert "always allow: nothing" in shown.stdout
    assert "what this file grants does not count yet" in shown.stdout
    assert '`run_command` with command "pytest -q"' in shown.stdout
    assert "sdd role trust helper" in shown.stdout
    view = json.loads(sdd("role", "show", "helper", "--json").stdout)
    assert view["boundary"]["always_allow"] == []
    assert view["trust"]["state"] == "untrusted"
    rows = {r["name"]: r for r in listed(sdd)}
    assert rows["helper"]["trust"] == "untrusted"
    assert "trust" not in rows["executor"]  # shipped rows keep exactly their fields

    assert sdd("role", "trust", "helper", input="y\n").code == 0
    shown = sdd("role", "show", "helper")
    assert 'always allow: run_command {"command": "pytest -q"}' in shown.stdout
    assert "you confirmed what this file grants; it counts" in shown.stdout
    assert {r["name"]: r for r in listed(sdd)}["helper"]["trust"] == "trusted"


def test_trust_of_a_confirmed_role_or_a_shipped_one_has_nothing_to_do(
    sdd: SddRunner, root: Root
) -> None:
    with_builder(root)
    mine = sdd("role", "trust", "builder")
    assert mine.code == 0 and "already" in mine.stderr and "[y/N]" not in mine.stderr
    shipped = sdd("role", "trust", "qa-author")
    assert shipped.code == 0 and "shipped with sdd" in shipped.stderr
    assert not (root.sdd / "trust.yaml").exists()


def test_duplicating_an_untrusted_pack_leaves_its_rules_out(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    write_pack(isolated_home)
    result = sdd("role", "duplicate", "helper")
    assert result.code == 0, result.stderr
    assert result.stdout == "helper-copy\n"
    assert "left out 1 always_allow rule(s) of the pack helper" in result.stderr
    assert boundary_of(root, "helper-copy")["always_allow"] == []
    assert boundary_of(root, "helper-copy")["ask_first"] == [{"tool": "git_push"}]
    assert sdd("role", "trust", "helper", "--yes").code == 0
    trusted = sdd("role", "duplicate", "helper")
    assert trusted.stdout == "helper-copy-2\n" and "left out" not in trusted.stderr
    assert boundary_of(root, "helper-copy-2")["always_allow"] == [
        {"tool": "run_command", "inputs": {"command": "pytest -q"}}
    ]


# --- validate ---------------------------------------------------------------------------------


def test_validate_reports_each_mistake_with_file_line_and_key(sdd: SddRunner, root: Root) -> None:
    path = with_builder(root)
    path.write_text(
        COMMENTED.replace("level: 0   ", "level: high").replace("label: Builder", "labl: Builder")
    )
    result = sdd("role", "validate")
    assert result.code == 1
    assert (
        "error: .sdd/roles/builder/ROLE.md:6: key 'level': must be a number, not 'high'"
        in result.stderr
    )
    assert (  # a misspelt key of sdd's is an error, never ignored (issue 22)
        "error: .sdd/roles/builder/ROLE.md:4: key 'labl': unknown key 'labl': did you mean "
        "'label'?" in result.stderr
    )
    assert "hint: write a number, e.g. level: 10" in result.stderr
    ok = sdd("role", "validate", "templates") if (root.path / "templates").exists() else None
    assert ok is None or ok.code == 0


def test_validate_a_path_outside_a_root(sdd: SddRunner, tmp_path: Path) -> None:
    good = tmp_path / "loose" / "ROLE.md"
    good.parent.mkdir()
    good.write_text(COMMENTED)
    result = sdd("role", "validate", str(good), cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "checked 1 role file(s): 0 with errors" in result.stderr


# --- the wall: a role run cannot change a role ------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("role", "create", "x", "--job", "j", "--produces", "code"),
        ("role", "edit", "builder", "--job", "j"),
        ("role", "pin", "builder"),
        ("role", "hide", "builder"),
        ("role", "duplicate", "builder"),
        ("role", "delete", "builder", "--yes"),
        ("role", "share", "builder"),
        ("role", "add", "builder"),
        ("role", "trust", "builder"),
    ],
    ids=lambda c: c[1],
)
def test_role_changes_refuse_inside_a_role_run(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    with_builder(root)
    before = {p: p.read_bytes() for p in root.sdd.rglob("*") if p.is_file()}
    monkeypatch.setenv("SDD_RUN_ID", "run-9")
    result = sdd(*command)
    assert result.code == 1
    assert "person commands cannot run inside a role run" in result.stderr
    assert {p: p.read_bytes() for p in root.sdd.rglob("*") if p.is_file()} == before


def test_a_role_file_with_a_key_written_twice_is_reported_on_edit(
    sdd: SddRunner, root: Root
) -> None:
    path = with_builder(root)
    text = COMMENTED.replace("hidden: false", "hidden: false\nhidden: true")
    path.write_text(text)
    result = sdd("role", "pin", "builder")
    assert result.code == 1 and "error: .sdd/roles/builder/ROLE.md:" in result.stderr
    assert path.read_text() == text


def test_editing_a_pack_of_the_other_daemon_writes_it_in_sdds_own_keys(
    sdd: SddRunner, root: Root
) -> None:
    path = root.sdd / "roles" / "reviewer" / "ROLE.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "---\nrole: reviewer\nlevel: 50\ntoolPolicy.delegation: deny\nskills: a, b\n---\n"
        "You review code. Carefully.\n"
    )
    assert sdd("role", "pin", "reviewer").code == 0
    data = front(root, "reviewer")
    assert data["job"] == "You review code." and data["pinned"] is True
    assert data["skills"] == ["a", "b"] and data["level"] == 50
    assert path.read_text().endswith("---\nYou review code. Carefully.\n")


# --- issue 10: words that YAML 1.1 and 1.2 read differently ------------------------------------

YAML_WORDS = ["no", "off", "on", "yes", "y", "n", "null", "~", "true", "1.0", "0o17", "1e3", ".inf"]


@pytest.mark.parametrize("word", YAML_WORDS)
def test_edit_job_with_a_yaml_word_reads_back_as_the_same_text(
    sdd: SddRunner, root: Root, word: str
) -> None:
    sdd("role", "create", "r3", "--job", "Start", "--produces", "review")
    result = sdd("role", "edit", "r3", "--job", word)
    assert result.code == 0, result.stderr
    assert front(root, "r3")["job"] == word
    from ruamel.yaml import YAML

    newer = YAML(typ="safe", pure=True).load(role_file(root, "r3").read_text().split("---\n")[1])
    assert newer["job"] == word  # and YAML 1.2 reads the same
    shown = json.loads(sdd("role", "show", "r3", "--json").stdout)
    assert shown["job"] == word


@pytest.mark.parametrize("word", ["no", "on", "1.0"])
def test_create_and_label_with_a_yaml_word(sdd: SddRunner, root: Root, word: str) -> None:
    assert (
        sdd("role", "create", "r4", "--job", word, "--label", word, "--produces", "review").code
        == 0
    )
    assert front(root, "r4")["job"] == word and front(root, "r4")["label"] == word
    assert sdd("role", "edit", "r4", "--label", word).code == 0
    assert front(root, "r4")["label"] == word


def test_duplicate_of_a_pinned_role_starts_unpinned(sdd: SddRunner, root: Root) -> None:
    with_builder(root)
    sdd("role", "pin", "builder")
    assert front(root, "builder")["pinned"] is True
    assert sdd("role", "duplicate", "builder").stdout == "builder-copy\n"
    assert front(root, "builder-copy")["pinned"] is False
    rows = {r["name"]: r for r in listed(sdd)}
    assert rows["builder"]["pinned"] is True and rows["builder-copy"]["pinned"] is False


# --- issue 10: other hosts' agent files ---------------------------------------------------------

AGENTS = Path(__file__).parent.parent / "fixtures" / "agents"


def place_agent(root: Root, fixture: str, folder: str) -> Path:
    target = root.path / folder / Path(fixture).name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text((AGENTS / fixture).read_text())
    return target


def test_list_shows_host_agent_files_where_they_are(sdd: SddRunner, root: Root) -> None:
    place_agent(root, "claude/security-auditor.md", ".claude/agents")
    place_agent(root, "copilot/code-reviewer.agent.md", ".github/agents")
    rows = {r["name"]: r for r in listed(sdd)}
    assert rows["security-auditor"]["source"] == "claude"
    assert rows["code-reviewer"]["source"] == "copilot"
    assert rows["code-reviewer"]["label"] == "Code Reviewer Agent"
    table = sdd("role", "list")
    assert "tools.2" in table.stderr and "'web'" in table.stderr  # unmapped tool: file and line
    assert ".github/agents/code-reviewer.agent.md:6" in table.stderr


def test_show_names_the_tools_a_host_agent_is_offered(sdd: SddRunner, root: Root) -> None:
    place_agent(root, "claude/security-auditor.md", ".claude/agents")
    shown = sdd("role", "show", "security-auditor")
    assert shown.code == 0, shown.stderr
    line = next(x for x in shown.stdout.splitlines() if x.startswith("tools: "))
    assert line.startswith("tools: read_file, list_files, read_record, git_status, git_log,")
    assert "search_files" in line and "write_file" not in line and "run_command" not in line
    assert "Claude Code's file" in shown.stdout
    sdd("role", "create", "builder", "--job", "Build", "--produces", "code")
    assert "tools: all" in sdd("role", "show", "builder").stdout


def test_pin_hide_and_edit_a_host_file_keep_its_keys_and_comments(
    sdd: SddRunner, root: Root
) -> None:
    path = place_agent(root, "copilot/code-reviewer.agent.md", ".github/agents")
    before = path.read_text()
    assert sdd("role", "pin", "code-reviewer").code == 0
    assert sdd("role", "hide", "code-reviewer").code == 0
    assert sdd("role", "edit", "code-reviewer", "--job", "no").code == 0
    after = path.read_text()
    for line in before.split("---\n")[1].splitlines():
        assert line in after  # every host key and the comment stay, as written
    data = yaml.safe_load(after.split("---\n")[1])
    assert data["pinned"] is True and data["hidden"] is True and data["job"] == "no"
    assert "role" not in data and data["name"] == "Code Reviewer Agent"  # still Copilot's shape
    rows = {r["name"]: r for r in listed(sdd, "--all")}
    assert rows["code-reviewer"]["pinned"] is True and rows["code-reviewer"]["job"] == "no"
    assert not (root.sdd / "roles" / "code-reviewer").exists()  # never copied
    shown = json.loads(sdd("role", "show", "code-reviewer", "--json").stdout)
    assert set(shown["tools"]) >= {"read_file", "search_files"}  # tools mapped as before


@pytest.mark.parametrize("inside", [True, False], ids=["to-a-product-file", "to-outside"])
def test_an_agent_file_that_is_a_link_is_not_loaded_and_nothing_is_written_through_it(
    sdd: SddRunner, root: Root, tmp_path: Path, inside: bool
) -> None:
    """A role may write `shared/agents/x.md` (a product file): through a link, that would be
    the agent's own definition. Wherever the link leads, the agent is skipped with the reason,
    and editing it refuses, writing nothing."""
    if inside:
        target = place_agent(root, "claude/security-auditor.md", "shared/agents")
    else:
        target = tmp_path / "elsewhere" / "security-auditor.md"
        target.parent.mkdir()
        target.write_text((AGENTS / "claude/security-auditor.md").read_text())
    link = root.path / ".claude/agents/security-auditor.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(target, link.parent))
    before = target.read_text()

    listed = sdd("role", "list", "--all")
    assert "security-auditor" not in listed.stdout
    assert ".claude/agents/security-auditor.md is a link; sdd reads only" in listed.stderr

    result = sdd("role", "pin", "security-auditor")
    assert result.code == 1
    assert "is a link" in result.stderr and "hint:" in result.stderr
    assert target.read_text() == before and link.is_symlink()


def test_the_editor_refuses_a_host_file_with_a_hint(sdd: SddRunner, root: Root) -> None:
    place_agent(root, "claude/security-auditor.md", ".claude/agents")
    result = sdd("role", "edit", "security-auditor")
    assert result.code == 2 and "claude's agent file" in result.stderr
    assert "sdd role edit security-auditor --job" in result.stderr


def test_role_add_of_a_read_only_reviewer_keeps_its_tools(sdd: SddRunner, root: Root) -> None:
    place_agent(root, "copilot/code-reviewer.agent.md", ".github/agents")
    result = sdd("role", "add", ".github/agents/code-reviewer.agent.md", "--name", "reviewer")
    assert result.code == 0, result.stderr
    data = front(root, "reviewer")
    assert data["label"] == "Code Reviewer Agent"
    from sdd_git.tools.catalog import TOOL_CLASSES

    assert set(data["tools"]) == {  # type: ignore[arg-type]
        name for name, kind in TOOL_CLASSES.items() if kind == "read"
    }


def test_validate_a_folder_with_no_role_files_says_so_and_exits_1(
    sdd: SddRunner, root: Root
) -> None:
    (root.path / "docs").mkdir()
    (root.path / "docs/notes.md").write_text("# Notes\n")
    result = sdd("role", "validate", "docs")
    assert result.code == 1
    assert "no role files here" in result.stderr and "hint:" in result.stderr


def test_validate_checks_host_agent_folders(sdd: SddRunner, root: Root) -> None:
    place_agent(root, "claude/security-auditor.md", ".claude/agents")
    place_agent(root, "claude/examples-style.md", ".claude/agents")
    result = sdd("role", "validate", ".claude/agents")
    assert result.code == 1
    assert "examples-style.md:6: key 'description'" in result.stderr
    assert "hint: quote the description" in result.stderr
    assert "checked 2 role file(s): 1 with errors" in result.stderr
