"""`sdd agents install HOST`: each host gets the files it reads today, in its documented format.

The formats are checked against the hosts' own documentation:

- AGENTS.md: https://agents.md (plain markdown at the repository root); Kilo:
  https://kilo.ai/docs/agent-behavior/agents-md; Grok Build reads AGENTS.md and CLAUDE.md:
  https://docs.x.ai/build/features/project-rules.
- Claude Code memory: https://code.claude.com/docs/en/memory (CLAUDE.md, `@path` imports).
- Claude Code permissions: https://code.claude.com/docs/en/permissions ("Permission rule syntax":
  `Tool` or `Tool(specifier)`; `*` matches any sequence of characters; a space before `*` is a
  word boundary, so `Bash(ls *)` matches `ls -la` but not `lsof`; the legacy `:*` suffix is
  equivalent but deprecated) and https://code.claude.com/docs/en/settings (`permissions.deny`).
- Copilot setup steps: https://docs.github.com/en/copilot/how-tos/use-copilot-agents/coding-agent/
  customize-the-agent-environment (`.github/workflows/copilot-setup-steps.yml`, a workflow whose
  single job must be named `copilot-setup-steps`; the example triggers on `workflow_dispatch`
  and on `push`/`pull_request` to that file). Copilot's cloud agent reads AGENTS.md since
  https://github.blog/changelog/2025-08-28-copilot-coding-agent-now-supports-agents-md-custom-instructions/
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git import __version__
from sdd_git.errors import InsideRunError, SddError, UsageError
from sdd_git.hoststubs import (
    BEGIN_MARK,
    COPILOT_JOB,
    END_MARK,
    HOSTS,
    PERSON_COMMANDS,
    deny_rules,
    install,
    merge_settings,
    plan,
)
from sdd_git.root import Root, init_root

FIXTURES = Path(__file__).parent / "fixtures" / "hosts"
EXPECTED_PATHS = {
    "copilot": [
        "AGENTS.md",
        ".github/copilot-instructions.md",
        ".github/workflows/copilot-setup-steps.yml",
    ],
    "claude": ["AGENTS.md", "CLAUDE.md", ".claude/settings.json"],
    "grok": ["AGENTS.md"],
    "kilo": ["AGENTS.md"],
}
INSTALLABLE = tuple(EXPECTED_PATHS)
# The person's commands the brief names; the host must refuse each (Claude) or be told (all).
MUST_DENY = (
    "sdd accept reading CH-1",
    "sdd -C . accept reading CH-1",
    "sdd -C. accept reading CH-1",
    "sdd -C /work/product accept reading CH-1",
    "sdd --no-agent accept reading CH-1",
    "sdd --no-agent -C . complete",
    "sdd -- accept reading CH-1",
    "python -m sdd_git accept reading CH-1",
    "python3 -m sdd_git -C . next",
    ".venv/bin/sdd next",
    "/usr/local/bin/sdd complete",
    "sdd send D-1",
    "sdd role create reviewer",
    "sdd routine delete nightly",
    "sdd hooks install",
    "sdd page --no-browser",
    "sdd accept section SPEC-1#S2 --words ok",
    "sdd next",
    "sdd next CH-1",
    "sdd complete",
    "sdd complete CH-1",
    "sdd qa record CH-1/SC-1 pass works",
    "sdd release generate CH-1 --tag v1",
    "sdd decision replace D-1 new words",
    "sdd correct reading CH-1 words",
    "sdd change new words",
    "sdd allow STOP-1 --always",
    "sdd deny STOP-1",
    "sdd --no-agent next",
)
# What the agent may run: no deny rule may catch these.
MUST_ALLOW = (
    "sdd change list",
    "sdd change show CH-1",
    "sdd role list",
    "sdd role run builder --task 'accept the next change'",
    "sdd stops",
    "sdd decision list",
    "sdd nextcloud",  # the word boundary: `sdd next *` is not `sdd next*`
)
RULE = re.compile(r"^(?P<tool>[A-Z][A-Za-z]*)(\((?P<spec>[^()]+)\))?$")


@pytest.fixture(autouse=True)
def _outside_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SDD_RUN_ID", raising=False)


GIT_PIN = "git+https://github.com/acme/sdd.git@3f1c2a9be4d07c6815e2fa03b9d84c7e5a61f0d2"


@pytest.fixture
def root(tmp_path: Path) -> Root:
    from tests.trusthelp import confirm

    made = init_root(tmp_path / "p", product="p").root
    # Where Copilot's setup steps install sdd from: her pinned, confirmed source (ci.install).
    made.config.write_text(made.config.read_text() + f"ci: {{install: '{GIT_PIN}'}}\n")
    confirm(made, ".sdd/config.yaml")
    return made


def _files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _claude_rule_matches(rule: str, command: str) -> bool:
    """The documented Bash rule semantics: `*` is any sequence (empty too), the rest literal."""
    found = RULE.match(rule)
    assert found and found["tool"] == "Bash" and found["spec"], rule
    pattern = "".join(".*" if ch == "*" else re.escape(ch) for ch in found["spec"])
    return re.fullmatch(pattern, command) is not None


def _workflow_on(data: dict[Any, Any]) -> Any:
    # PyYAML reads YAML 1.1, where the bare key `on` is the boolean true; GitHub reads it as "on".
    return data.get("on", data.get(True))


# --- what each host gets ---------------------------------------------------------------------


@pytest.mark.parametrize("host", INSTALLABLE)
def test_install_writes_the_files_the_host_reads(root: Root, host: str) -> None:
    report = install(root, host)
    assert report.host == host
    assert list(report.written) == EXPECTED_PATHS[host]
    assert report.unchanged == ()
    for rel in EXPECTED_PATHS[host]:
        assert (root.path / rel).is_file()
    assert "AGENTS.md" in report.reads


def test_ollama_is_refused_with_the_provider_route(root: Root) -> None:
    before = _files_under(root.path)
    with pytest.raises(UsageError) as caught:
        install(root, "ollama")
    assert caught.value.exit_code == 2
    assert "cannot run commands" in caught.value.message
    hint = caught.value.hint or ""
    assert "kind: openai" in hint and "base_url: http://localhost:11434/v1" in hint
    assert _files_under(root.path) == before


def test_unknown_host_is_a_usage_error(root: Root) -> None:
    with pytest.raises(UsageError) as caught:
        install(root, "x")
    assert caught.value.message == "unknown host 'x'"
    assert caught.value.hint == "choose one of: copilot, claude, grok, ollama, kilo, codex"
    assert HOSTS == ("copilot", "claude", "grok", "ollama", "kilo", "codex")


# --- AGENTS.md and CLAUDE.md -------------------------------------------------------------------


def test_agents_md_is_markdown_with_what_the_agent_may_and_may_not_run(root: Root) -> None:
    install(root, "kilo")
    text = (root.path / "AGENTS.md").read_text("utf-8")
    lines = text.splitlines()
    assert lines[0] == BEGIN_MARK and lines[-1] == END_MARK
    assert lines[1] == "## sdd"
    # Plain markdown: every inline code span is closed on its line, no front matter, no HTML
    # but the two comment markers (which render as nothing).
    for line in lines:
        assert line.count("`") % 2 == 0, line
    assert not text.startswith("---")
    assert [line for line in lines if line.startswith("<")] == [BEGIN_MARK, END_MARK]
    may, _, only_person = text.partition("Only the person runs")
    for command in ("sdd role list", "sdd role run NAME", "sdd stops", "sdd change show CH"):
        assert f"`{command}" in may, command
    for command in (
        "accept",
        "correct",
        "qa record",
        "decision replace",
        "release generate",
        "next",
        "complete",
        "change new",
    ):
        assert f"- `sdd {command} ...`" in only_person, command
    for record in ("memory/decisions.yaml", "changes/*/qa.yaml", ".sdd/"):
        assert record in text


def test_claude_md_imports_agents_md(root: Root) -> None:
    install(root, "claude")
    text = (root.path / "CLAUDE.md").read_text("utf-8")
    # The memory docs' import syntax: `@path` on its own, outside any code span.
    assert "@AGENTS.md" in text.splitlines()
    assert text.startswith(BEGIN_MARK) and text.rstrip().endswith(END_MARK)


def test_an_existing_import_of_agents_md_is_not_repeated(root: Root) -> None:
    (root.path / "CLAUDE.md").write_text("# Notes\n\n@AGENTS.md\n", encoding="utf-8")
    install(root, "claude")
    text = (root.path / "CLAUDE.md").read_text("utf-8")
    assert text.startswith("# Notes\n\n@AGENTS.md\n\n" + BEGIN_MARK)
    assert text.splitlines().count("@AGENTS.md") == 1


def test_the_persons_agents_md_is_kept_and_the_section_appended(root: Root) -> None:
    mine = "# My project\n\nRun `make test` before you push.\n"
    (root.path / "AGENTS.md").write_text(mine, encoding="utf-8")
    report = install(root, "grok")
    assert [f.action for f in report.files] == ["update"]
    text = (root.path / "AGENTS.md").read_text("utf-8")
    assert text.startswith(mine + "\n" + BEGIN_MARK + "\n")
    assert text.count(BEGIN_MARK) == 1


def test_an_old_section_is_replaced_in_place_and_her_text_around_it_stays(root: Root) -> None:
    before, after = "# Top\n\n", "\n## Hers, below\n\nKeep this.\n"
    old = f"{before}{BEGIN_MARK}\n## sdd\n\nan older sdd text\n{END_MARK}\n{after}"
    (root.path / "AGENTS.md").write_text(old, encoding="utf-8")
    install(root, "kilo")
    text = (root.path / "AGENTS.md").read_text("utf-8")
    assert text.startswith(before + BEGIN_MARK) and text.endswith(END_MARK + "\n" + after)
    assert "an older sdd text" not in text and "sdd role list" in text


def test_broken_markers_are_refused_and_nothing_is_written(root: Root) -> None:
    (root.path / "AGENTS.md").write_text(f"{BEGIN_MARK}\nhalf a section\n", encoding="utf-8")
    before = _files_under(root.path)
    with pytest.raises(SddError) as caught:
        install(root, "claude")
    assert "markers are broken" in caught.value.message
    assert caught.value.hint and "AGENTS.md" in caught.value.hint
    assert _files_under(root.path) == before


def test_crlf_files_keep_crlf(root: Root) -> None:
    (root.path / "AGENTS.md").write_bytes(b"# Mine\r\n\r\nWindows text.\r\n")
    install(root, "kilo")
    data = (root.path / "AGENTS.md").read_bytes()
    assert data.startswith(b"# Mine\r\n\r\nWindows text.\r\n\r\n")
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert install(root, "kilo").written == ()


def test_not_utf8_is_refused(root: Root) -> None:
    (root.path / "AGENTS.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(SddError) as caught:
        install(root, "kilo")
    assert "not UTF-8" in caught.value.message


def test_claude_md_linked_to_agents_md_gets_no_self_import(root: Root) -> None:
    (root.path / "AGENTS.md").write_text("# Shared rules\n", encoding="utf-8")
    (root.path / "CLAUDE.md").symlink_to("AGENTS.md")
    install(root, "claude")
    assert (root.path / "CLAUDE.md").is_symlink()
    text = (root.path / "AGENTS.md").read_text("utf-8")
    assert "@AGENTS.md" not in text and text.count(BEGIN_MARK) == 1


def test_a_linked_agents_md_is_written_through_its_link(root: Root) -> None:
    (root.path / "docs").mkdir()
    (root.path / "docs" / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    (root.path / "AGENTS.md").symlink_to("docs/AGENTS.md")
    install(root, "kilo")
    assert (root.path / "AGENTS.md").is_symlink()
    assert BEGIN_MARK in (root.path / "docs" / "AGENTS.md").read_text("utf-8")


def test_a_link_outside_the_repository_is_refused(root: Root, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Not in the repo\n", encoding="utf-8")
    (root.path / "AGENTS.md").symlink_to(outside)
    with pytest.raises(SddError) as caught:
        install(root, "kilo")
    assert "outside this repository" in caught.value.message
    assert outside.read_text("utf-8") == "# Not in the repo\n"


def test_a_folder_in_the_way_is_refused(root: Root) -> None:
    (root.path / "AGENTS.md").mkdir()
    with pytest.raises(SddError) as caught:
        install(root, "grok")
    assert "is not a file" in caught.value.message


# --- Claude Code settings ----------------------------------------------------------------------


def test_settings_deny_rules_follow_the_documented_grammar_and_cover_every_person_command(
    root: Root,
) -> None:
    install(root, "claude")
    data = json.loads((root.path / ".claude/settings.json").read_text("utf-8"))
    deny = data["permissions"]["deny"]
    assert deny == list(deny_rules())
    for rule in deny:
        found = RULE.match(rule)
        assert found and found["tool"] in ("Bash", "Edit") and found["spec"], rule
        assert not found["spec"].endswith(":*"), "the legacy :* form is deprecated"
    bash = [rule for rule in deny if rule.startswith("Bash(")]
    for command in MUST_DENY:
        assert any(_claude_rule_matches(rule, command) for rule in bash), command
    for command in MUST_ALLOW:
        assert not any(_claude_rule_matches(rule, command) for rule in bash), command
    for command in PERSON_COMMANDS:
        for spelling in (f"sdd {command}", f"sdd -C . {command}", f"sdd --no-agent {command}"):
            assert any(_claude_rule_matches(rule, f"{spelling} x") for rule in bash), spelling
            assert any(_claude_rule_matches(rule, spelling) for rule in bash), spelling


def test_settings_edit_rules_cover_the_record_and_the_rule_files(root: Root) -> None:
    """Claude Code's Edit rules are gitignore patterns, `/PATH` from the project root; they
    apply to every built-in tool that edits files (Write, MultiEdit, NotebookEdit too)."""
    install(root, "claude")
    deny = json.loads((root.path / ".claude/settings.json").read_text("utf-8"))["permissions"][
        "deny"
    ]
    edits = {rule for rule in deny if rule.startswith("Edit(")}
    for folder in ("memory", "changes", ".sdd", ".git", ".claude", ".codex", "templates"):
        assert f"Edit(/{folder}/**)" in edits
    for name in ("CLAUDE.md", "AGENTS.md", "ROLE.md", "SKILL.md"):
        assert f"Edit(/**/{name})" in edits
    assert not any(rule.startswith("Write(") for rule in deny)  # not a documented path rule


def test_settings_merge_keeps_every_key_of_the_persons(root: Root) -> None:
    # The fixture is the example settings.json of code.claude.com/docs/en/settings, with a few
    # more keys a person sets (model, defaultMode, cleanupPeriodDays).
    mine = (FIXTURES / "claude-settings.json").read_text("utf-8")
    target = root.path / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(mine, encoding="utf-8")
    install(root, "claude")
    old, new = json.loads(mine), json.loads(target.read_text("utf-8"))
    assert list(new) == [*old, "hooks"]
    for key in old:
        if key != "permissions":
            assert new[key] == old[key]
    assert new["permissions"]["allow"] == old["permissions"]["allow"]
    assert new["permissions"]["defaultMode"] == "acceptEdits"
    assert new["permissions"]["deny"] == old["permissions"]["deny"] + list(deny_rules())
    once = target.read_bytes()
    assert install(root, "claude").written == ()
    assert target.read_bytes() == once


def test_settings_with_some_rules_already_gets_only_the_missing_ones(root: Root) -> None:
    target = root.path / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"permissions": {"deny": ["Bash(sdd next)"]}}), encoding="utf-8")
    install(root, "claude")
    deny = json.loads(target.read_text("utf-8"))["permissions"]["deny"]
    assert deny.count("Bash(sdd next)") == 1 and set(deny) == set(deny_rules())


def _pre_tool_use(root: Root) -> list[Any]:
    data = json.loads((root.path / ".claude" / "settings.json").read_text("utf-8"))
    entries = data["hooks"]["PreToolUse"]
    assert isinstance(entries, list)
    return entries


def test_sdd_guard_is_registered_as_the_pretooluse_hook_of_the_five_tools(root: Root) -> None:
    """Claude Code's hooks shape (code.claude.com/docs/en/hooks): `hooks.PreToolUse` is a list
    of `{matcher, hooks: [{type: command, command}]}`; the matcher is a regex of tool names."""
    install(root, "claude")
    [entry] = _pre_tool_use(root)
    assert set(entry) == {"matcher", "hooks"}
    for tool in ("Bash", "Edit", "Write", "MultiEdit", "NotebookEdit"):
        assert re.fullmatch(entry["matcher"], tool)
    for tool in ("Read", "Grep", "WebFetch", "BashOutput"):
        assert not re.fullmatch(entry["matcher"], tool)
    [hook] = entry["hooks"]
    assert hook["type"] == "command"
    # This interpreter by its absolute path, as `sdd hooks install` writes SDD_PYTHON, and -P:
    # no sdd_git folder in the product may stand in for the installed one.
    assert hook["command"].startswith(f"{shlex.quote(sys.executable)} -P -m sdd_git guard ")
    assert "--host claude" in hook["command"]


def _hook_runs(command: str, product: Path, tool_input: dict[str, str]) -> Any:
    data = {
        "session_id": "s",
        "cwd": str(product),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": tool_input,
    }
    # As Claude Code runs a command hook: through the shell, the input on stdin.
    return subprocess.run(
        ["bash", "-c", command], input=json.dumps(data), text=True, cwd=product,
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip


def test_the_registered_command_runs_the_real_guard_and_fails_closed(root: Root) -> None:
    install(root, "claude")
    [entry] = _pre_tool_use(root)
    command = entry["hooks"][0]["command"]
    refused = _hook_runs(command, root.path, {"command": "sdd -C . accept reading CH-0001"})
    assert refused.returncode == 2 and refused.stderr.startswith("sdd guard: ")
    allowed = _hook_runs(command, root.path, {"command": "git status"})
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
    # An interpreter that is gone (the venv moved, sdd uninstalled) refuses every call: any
    # exit but 0 and 2 would let Claude Code run it.
    gone = command.replace(shlex.quote(sys.executable), "/nonexistent/python", 1)
    broken = _hook_runs(gone, root.path, {"command": "git status"})
    assert broken.returncode == 2 and "sdd guard could not run" in broken.stderr


def test_the_hook_merges_with_her_hooks_and_is_idempotent(root: Root) -> None:
    target = root.path / ".claude" / "settings.json"
    target.parent.mkdir()
    hers = {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "~/bin/audit-bash.sh", "timeout": 5}],
    }
    after = {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier"}]}
    mine = {"hooks": {"PreToolUse": [hers], "PostToolUse": [after]}, "model": "sonnet"}
    target.write_text(json.dumps(mine), encoding="utf-8")
    install(root, "claude")
    data = json.loads(target.read_text("utf-8"))
    assert data["model"] == "sonnet" and data["hooks"]["PostToolUse"] == [after]
    entries = data["hooks"]["PreToolUse"]
    assert entries[0] == hers and len(entries) == 2
    once = target.read_bytes()
    assert install(root, "claude").written == ()
    assert target.read_bytes() == once
    # Another interpreter later: sdd's entry is brought up to date in place, never added twice.
    moved = merge_settings(target.read_text("utf-8"), python="/opt/py/bin/python3")
    entries = json.loads(moved)["hooks"]["PreToolUse"]
    assert entries[0] == hers and len(entries) == 2
    assert entries[1]["hooks"][0]["command"].startswith("/opt/py/bin/python3 -P -m sdd_git")


def test_her_hook_in_the_same_entry_as_sdd_s_is_kept_apart(root: Root) -> None:
    ours = merge_settings(None)
    data = json.loads(ours)
    entry = data["hooks"]["PreToolUse"][0]
    entry["hooks"].append({"type": "command", "command": "./check.sh"})
    again = json.loads(merge_settings(json.dumps(data)))["hooks"]["PreToolUse"]
    assert again[0]["hooks"] == [{"type": "command", "command": "./check.sh"}]
    assert again[1] == json.loads(ours)["hooks"]["PreToolUse"][0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"hooks": []}\n', "`hooks` is not an object"),
        ('{"hooks": {"PreToolUse": {}}}\n', "`hooks.PreToolUse` is not a list"),
    ],
)
def test_a_broken_hooks_shape_is_refused(root: Root, text: str, message: str) -> None:
    target = root.path / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(text, encoding="utf-8")
    with pytest.raises(SddError) as caught:
        install(root, "claude")
    assert message in caught.value.message
    assert target.read_text("utf-8") == text


def test_claude_md_says_what_the_guard_does(root: Root) -> None:
    install(root, "claude")
    text = (root.path / "CLAUDE.md").read_text("utf-8")
    assert "@AGENTS.md" in text and "sdd guard" in text and "PreToolUse" in text
    assert "memory/" in text and "tell the person the exact command" in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"permissions": {"deny": [}\n', "not valid JSON"),
        ("[1, 2]\n", "not a JSON object"),
        ('{"permissions": []}\n', "`permissions` is not an object"),
        ('{"permissions": {"deny": "Bash"}}\n', "`permissions.deny` is not a list"),
    ],
)
def test_broken_settings_are_refused_and_nothing_is_written(
    root: Root, text: str, message: str
) -> None:
    target = root.path / ".claude" / "settings.json"
    target.parent.mkdir()
    target.write_text(text, encoding="utf-8")
    before = _files_under(root.path)
    with pytest.raises(SddError) as caught:
        install(root, "claude")
    assert message in caught.value.message
    assert caught.value.hint and "nothing was changed" in caught.value.hint
    assert _files_under(root.path) == before  # not even AGENTS.md


# --- Copilot -------------------------------------------------------------------------------------


def _steps(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text("utf-8"))
    steps = data["jobs"][COPILOT_JOB]["steps"]
    assert isinstance(steps, list)
    return steps


def test_setup_steps_follow_githubs_documented_shape(root: Root) -> None:
    install(root, "copilot")
    path = root.path / ".github/workflows/copilot-setup-steps.yml"
    data = yaml.safe_load(path.read_text("utf-8"))
    on = _workflow_on(data)
    assert "workflow_dispatch" in on
    assert on["push"]["paths"] == [".github/workflows/copilot-setup-steps.yml"]
    assert list(data["jobs"]) == [COPILOT_JOB]
    job = data["jobs"][COPILOT_JOB]
    assert job["runs-on"] == "ubuntu-latest"
    assert job["permissions"] == {"contents": "read"}
    steps = job["steps"]
    assert any(str(step.get("uses", "")).startswith("actions/setup-python@") for step in steps)
    install_step = next(step for step in steps if step.get("name") == "Install sdd")
    assert install_step["run"] == f"python -m pip install 'sdd-git @ {GIT_PIN}'\nsdd --version\n"


def test_an_install_step_an_older_sdd_wrote_with_a_bare_name_is_pinned(root: Root) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    target.write_text(
        "on: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/setup-python@v5\n      - name: Install sdd\n"
        f'        run: |\n          python -m pip install "sdd-git=={__version__}"\n'
        "          sdd --version\n      - run: echo mine\n",
        encoding="utf-8",
    )
    install(root, "copilot")
    text = target.read_text("utf-8")
    assert "sdd-git==" not in text
    steps = _steps(target)
    assert [step.get("name") for step in steps] == [None, "Install sdd", None]
    assert steps[1]["run"] == f"python -m pip install 'sdd-git @ {GIT_PIN}'\nsdd --version\n"
    assert steps[2] == {"run": "echo mine"}
    assert install(root, "copilot").written == ()


def test_copilot_instructions_carry_the_sdd_section(root: Root) -> None:
    install(root, "copilot")
    text = (root.path / ".github/copilot-instructions.md").read_text("utf-8")
    assert text == (root.path / "AGENTS.md").read_text("utf-8")


def test_setup_steps_merge_into_the_persons_workflow(root: Root) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "copilot-setup-steps.yml", target)
    old_steps = _steps(target)
    install(root, "copilot")
    text = target.read_text("utf-8")
    new_steps = _steps(target)
    assert new_steps[: len(old_steps)] == old_steps
    assert [step["name"] for step in new_steps[len(old_steps) :]] == [
        "Set up Python",
        "Install sdd",
    ]
    # Her comments stay: ruamel.yaml round-trips them.
    assert "# The job MUST be called `copilot-setup-steps`" in text
    assert "# Set the permissions to the lowest permissions possible" in text
    once = target.read_bytes()
    assert install(root, "copilot").written == ()
    assert target.read_bytes() == once


def test_a_workflow_that_sets_up_python_gets_only_the_install_step(root: Root) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    target.write_text(
        "on: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/setup-python@v5\n        with:\n"
        "          python-version: '3.13'\n",
        encoding="utf-8",
    )
    install(root, "copilot")
    steps = _steps(target)
    assert [step.get("name") for step in steps] == [None, "Install sdd"]
    assert steps[0]["with"]["python-version"] == "3.13"


def test_a_workflow_installing_sdd_from_a_source_she_named_is_left_alone(root: Root) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    mine = (
        "on: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: pipx install 'SDD_Git @ git+https://example.org/sdd.git@"
        + "ab" * 20
        + "'   # my own way\n"
    )
    target.write_text(mine, encoding="utf-8")
    report = install(root, "copilot")
    assert ".github/workflows/copilot-setup-steps.yml" in report.unchanged
    assert target.read_text("utf-8") == mine
    assert report.notes == ()


def test_a_step_of_hers_installing_sdd_by_its_bare_name_is_replaced_by_the_pinned_step(
    root: Root,
) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    target.write_text(
        "on: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      # her tools\n      - name: Tools\n"
        "        run: pipx install SDD.git   # my own way\n      - run: echo mine\n",
        encoding="utf-8",
    )
    report = install(root, "copilot")
    text = target.read_text("utf-8")
    assert "SDD.git" not in text and "# her tools" in text
    steps = _steps(target)
    assert [step.get("name") for step in steps] == ["Set up Python", "Install sdd", None]
    assert steps[1]["run"] == f"python -m pip install 'sdd-git @ {GIT_PIN}'\nsdd --version\n"
    assert steps[2] == {"run": "echo mine"}
    assert len(report.notes) == 1
    assert "'Tools' installed sdd by its bare name (SDD.git)" in report.notes[0]
    assert "ci.install" in report.notes[0]
    assert install(root, "copilot").written == ()


def test_a_bare_install_of_sdd_is_taken_out_of_her_step_and_her_other_commands_stay(
    root: Root,
) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    target.write_text(
        "on: workflow_dispatch\njobs:\n  copilot-setup-steps:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/setup-python@v5\n      - name: Tools\n"
        "        env: {PIP_NO_COLOR: '1'}\n        run: |\n"
        "          python -m pip install ruff 'sdd_git>=0.1' \\\n            mypy\n"
        "          ruff --version\n",
        encoding="utf-8",
    )
    report = install(root, "copilot")
    steps = _steps(target)
    assert [step.get("name") for step in steps] == [None, "Install sdd", "Tools"]
    assert steps[1]["run"] == f"python -m pip install 'sdd-git @ {GIT_PIN}'\nsdd --version\n"
    assert steps[2] == {
        "name": "Tools",
        "env": {"PIP_NO_COLOR": "1"},
        "run": "python -m pip install ruff mypy\nruff --version\n",
    }
    assert "its other commands stay" in report.notes[0]
    assert install(root, "copilot").written == ()


def test_a_workflow_without_the_job_is_refused_with_the_steps_to_add(root: Root) -> None:
    target = root.path / ".github/workflows/copilot-setup-steps.yml"
    target.parent.mkdir(parents=True)
    target.write_text("on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n", encoding="utf-8")
    before = _files_under(root.path)
    with pytest.raises(SddError) as caught:
        install(root, "copilot")
    assert "jobs.copilot-setup-steps.steps" in caught.value.message
    assert caught.value.hint and "- name: Install sdd" in caught.value.hint
    assert _files_under(root.path) == before


# --- every host -----------------------------------------------------------------------------------


@pytest.mark.parametrize("host", INSTALLABLE)
def test_install_twice_changes_nothing(root: Root, host: str) -> None:
    install(root, host)
    before = _files_under(root.path)
    again = install(root, host)
    assert again.written == ()
    assert list(again.unchanged) == EXPECTED_PATHS[host]
    assert _files_under(root.path) == before


@pytest.mark.parametrize("host", INSTALLABLE)
def test_install_creates_no_role_and_writes_nothing_under_sdd(root: Root, host: str) -> None:
    before = _files_under(root.sdd)
    install(root, host)
    assert _files_under(root.sdd) == before
    assert not any((root.sdd / "roles").iterdir())


@pytest.mark.parametrize("host", INSTALLABLE)
def test_dry_run_writes_nothing_and_says_what_would_be(root: Root, host: str) -> None:
    before = _files_under(root.path)
    report = install(root, host, dry_run=True)
    assert report.dry_run
    assert _files_under(root.path) == before
    assert [f.action for f in report.files] == ["create"] * len(EXPECTED_PATHS[host])
    install(root, host)
    for planned in report.files:
        assert (root.path / planned.path).read_text("utf-8") == planned.text
    assert {f.action for f in plan(root, host).files} == {"unchanged"}


@pytest.mark.parametrize("host", INSTALLABLE)
def test_install_refuses_inside_a_role_run(
    root: Root, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _files_under(root.path)
    monkeypatch.setenv("SDD_RUN_ID", "run-1")
    with pytest.raises(InsideRunError):
        install(root, host)
    assert _files_under(root.path) == before
