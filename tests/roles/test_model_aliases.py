"""Model aliases (`model: sonnet`) in a role or a Claude Code agent file, resolved through her
settings' `models:` over sdd's built-in ones; an agent file's keys sdd does not use, each said."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.providers.base import ProviderError
from sdd_git.providers.select import BUILTIN_MODELS, settings_for
from sdd_git.roles.registry import find_role
from sdd_git.roles.rolefile import RoleFileError, parse_role
from sdd_git.root import Root
from sdd_git.settings import user_config_file
from tests.conftest import SddRunner

CLAUDE_AGENT = """---
name: reviewer
description: Reviews code for quality and security.
tools: Read, Grep, Glob
model: sonnet
permissionMode: acceptEdits
maxTurns: 12
mcpServers: {docs: {command: docs-server}}
hooks: {PreToolUse: []}
---
You are a careful reviewer.
"""


def _agent(root: Root, text: str = CLAUDE_AGENT) -> Path:
    path = root.path / ".claude" / "agents" / "reviewer.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _user(text: str) -> None:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_claude_agent_file_keeps_its_alias_and_says_what_sdd_does_instead(root: Root) -> None:
    _agent(root)
    profile, warnings = find_role(root, "reviewer", use_cache=False)
    assert profile.model == "sonnet"
    said = "\n".join(warnings)
    assert (
        "maxTurns is not used: sdd stops a run when it needs you, not after a count of turns"
        in (said)
    )
    for key in ("permissionMode", "mcpServers", "hooks"):
        assert said.count(f"{key} is not used:") == 1
    assert ".claude/agents/reviewer.md" in said


def test_a_built_in_alias_resolves_without_settings(root: Root) -> None:
    _agent(root)
    profile, _ = find_role(root, "reviewer", use_cache=False)
    chosen = settings_for(root, profile.model, role_path=profile.path)
    assert (chosen.kind, chosen.model) == ("anthropic", BUILTIN_MODELS["sonnet"]["model"])


def test_her_user_file_overrides_and_adds_aliases(root: Root) -> None:
    _user(
        "models:\n"
        "  sonnet: {kind: anthropic, model: claude-sonnet-4-6}\n"
        "  local: {kind: openai, model: qwen3, base_url: 'http://127.0.0.1:11434/v1'}\n"
    )
    assert settings_for(root, "sonnet").model == "claude-sonnet-4-6"
    local = settings_for(root, "local")
    assert (local.model, local.base_url) == ("qwen3", "http://127.0.0.1:11434/v1")
    assert local.key is None  # a server named by an alias gets no main key


def test_an_unknown_alias_names_the_file_line_and_key(root: Root) -> None:
    path = _agent(root, CLAUDE_AGENT.replace("model: sonnet", "model: sonet"))
    profile, _ = find_role(root, "reviewer", use_cache=False)
    with pytest.raises(ProviderError) as caught:
        settings_for(root, profile.model, role_path=profile.path)
    assert caught.value.message.endswith("reviewer.md:5: key 'model': unknown model alias 'sonet'")
    assert str(path.name) in caught.value.message
    assert "did you mean 'sonnet'?" in (caught.value.hint or "")


def test_a_bad_alias_entry_names_her_file(root: Root) -> None:
    _user("models:\n  fast: {kind: openai, modle: x}\n")
    with pytest.raises(ProviderError) as caught:
        settings_for(root, "fast")
    assert f"{user_config_file()}:" in caught.value.message
    assert "modle" in caught.value.message


def test_inherit_is_the_settings_own_model() -> None:
    parsed = parse_role(CLAUDE_AGENT.replace("model: sonnet", "model: inherit"), None)
    assert parsed.profile.model is None


def test_a_role_file_may_name_an_alias_and_a_malformed_one_is_an_error() -> None:
    text = "---\nrole: r\njob: Do it.\nlevel: 0\ntoolPolicy.delegation: deny\nmodel: haiku\n---\n"
    assert parse_role(text, None).profile.model == "haiku"
    with pytest.raises(RoleFileError) as caught:
        parse_role(text.replace("model: haiku", "model: 'two words'"), None)
    assert "key 'model'" in caught.value.message


def test_role_show_and_run_use_the_alias(root: Root, sdd: SddRunner) -> None:
    _agent(root)
    shown = sdd("provider", "show", "--role", "reviewer", "--json")
    assert shown.code == 0, shown.stderr
    assert '"model": "claude-sonnet-4-5"' in shown.stdout


def test_trust_review_says_a_role_s_alias_in_words() -> None:
    from sdd_git.trust.words import role_changes

    said = role_changes({"model": {"kind": "openai"}}, {"model": "sonnet"})
    assert said == ['its model becomes `sonnet` (was `{"kind": "openai"}`)']
