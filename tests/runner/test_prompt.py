"""Task text is text, and skills reach the model as the Agent Skills standard says: end to end
with the scripted provider."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script, transcript
from tests.trusthelp import confirm

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skills"


def install(root: Root, name: str, where: str = ".sdd/skills") -> None:
    shutil.copytree(FIXTURES / name, root.path / where / name)


def tools_offered(call: dict[str, object]) -> list[str]:
    return [str(t["name"]) for t in call["tools"]]  # type: ignore[attr-defined]


EVERYDAY = [
    "Fix the /login route",
    "The /health endpoint",
    "Check /tmp",
    "Upgrade @types/node",
    "Bump @angular/core",
    "Use the @property decorator",
    "Reply to @octocat",
]


@pytest.mark.parametrize("task", EVERYDAY)
def test_everyday_task_text_reaches_the_model_as_written(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "On it."}])
    result = sdd("role", "run", "builder", "--task", task)
    assert result.code == 0, result.stderr
    assert transcript(tmp_path)[0]["messages"][1]["content"] == task


def test_a_task_from_stdin(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "On it."}])
    task = 'Fix the /login route.\nIt says `$HOME` and "quotes" and @types/node.\n'
    result = sdd("role", "run", "builder", "--task", "-", input=task)
    assert result.code == 0, result.stderr
    assert transcript(tmp_path)[0]["messages"][1]["content"] == task.strip()
    empty = sdd("role", "run", "builder", "--task", "-", input="  \n")
    assert empty.code == 2 and "read no text from stdin" in empty.stderr


def test_real_role_and_tool_mentions_still_resolve(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "reviewer", produces="review")
    script(tmp_path, monkeypatch, [{"say": "ok"}])
    result = sdd("role", "run", "builder", "--task", "Ask @reviewer, then use @git_log.")
    assert result.code == 0, result.stderr
    sent = transcript(tmp_path)[0]["messages"][1]["content"]
    assert "Roles mentioned: @reviewer" in sent and "Tools mentioned: @git_log" in sent


def test_slash_name_loads_the_skill_body_into_the_message_never_its_frontmatter(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    install(root, "internal-comms", ".agents/skills")
    script(tmp_path, monkeypatch, [{"say": "ok"}, {"say": "ok"}])
    first = sdd("role", "run", "builder", "--task", "/internal-comms weekly update for the team")
    second = sdd("role", "run", "builder", "--task", "Write it with /internal-comms, please.")
    assert first.code == 0 and second.code == 0, first.stderr + second.stderr
    for call in transcript(tmp_path):
        sent = call["messages"][1]["content"]
        assert "The person invoked the skill /internal-comms" in sent
        assert "## When to use this skill" in sent
        assert "examples/faq-answers.md" in sent  # its folder's files, to read on demand
        assert "license: Complete terms" not in sent and "name: internal-comms" not in sent


def test_an_unknown_slash_name_at_the_start_is_sent_with_a_warning(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "ok"}])
    result = sdd("role", "run", "builder", "--task", "/revew the diff")
    assert result.code == 0, result.stderr
    assert "/revew is not a skill of this product" in result.stderr
    assert transcript(tmp_path)[0]["messages"][1]["content"] == "/revew the diff"


def test_a_roles_skills_are_named_in_its_system_prompt_and_load_with_use_skill(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    install(root, "webapp-testing", ".claude/skills")
    add_role(root, "tester", extra="skills: [webapp-testing, no-such-skill]\n")
    confirm(root)  # she installed the skill herself
    helper = ".claude/skills/webapp-testing/scripts/with_server.py"
    calls = [
        {"tool_calls": [{"tool": "use_skill", "args": {"name": "webapp-testing"}}]},
        {"tool_calls": [{"tool": "read_file", "args": {"path": helper}}]},
        {"say": "Ready to test."},
    ]
    script(tmp_path, monkeypatch, calls)
    result = sdd("role", "run", "tester", "--task", "Test the login page")
    assert result.code == 0, result.stderr
    sent = transcript(tmp_path)
    system = sent[0]["messages"][0]["content"]
    assert "<name>webapp-testing</name>" in system and "using Playwright" in system
    assert "# Web Application Testing" not in system  # the body waits for use_skill
    assert "license" not in system and "no-such-skill" not in system
    assert "use_skill" in tools_offered(sent[0])
    loaded = sent[1]["messages"][-1]["content"]
    assert loaded.startswith('<skill_content name="webapp-testing">\n# Web Application Testing')
    assert "license: Complete terms" not in loaded
    assert f"<file>{helper}</file>" in loaded
    assert "def main" in sent[2]["messages"][-1]["content"]  # the skill's folder is readable
    assert ".sdd/roles/tester/ROLE.md" in result.stderr and "no-such-skill" in result.stderr


def test_use_skill_is_offered_only_when_a_skill_exists(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "ok"}, {"say": "ok"}])
    sdd("role", "run", "builder", "--task", "Look around")
    install(root, "internal-comms")
    sdd("role", "run", "builder", "--task", "Look around")
    first, second = transcript(tmp_path)
    assert "use_skill" not in tools_offered(first)
    assert "use_skill" in tools_offered(second)


def test_a_skills_script_still_runs_only_behind_the_wall(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    install(root, "webapp-testing")
    command = "python .sdd/skills/webapp-testing/scripts/with_server.py --help"
    run = {"tool": "run_command", "args": {"command": command, "purpose": "try the helper"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [run]}])
    result = sdd("role", "run", "builder", "--task", "Use the helper")
    assert result.code == 3, result.stderr  # a stop for the person: it runs nothing by itself
    (outcome,) = [e for e in events(root, _last_run(root)) if e["event"] == "stop"]
    assert outcome["kind"] == "approval"


def _last_run(root: Root) -> str:
    return sorted(p.stem for p in (root.sdd / "role-runs").glob("*.jsonl"))[-1]
