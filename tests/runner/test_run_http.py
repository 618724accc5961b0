"""Whole runs against real HTTP servers on loopback that speak the OpenAI and Anthropic wire
formats: role headers on every request, tool calls through the runner, and no key in any log."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change, events
from tests.trusthelp import confirm

KEY = "sk-live-SECRET-abcdef0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def every_written_byte(root: Root) -> str:
    return "\n".join(
        p.read_text(errors="replace")
        for p in root.path.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )


def test_an_openai_compatible_run_carries_role_headers_and_never_logs_the_key(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    (root.path / "README.md").write_text(f"token for the demo: {KEY}\n")
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    monkeypatch.setenv("SDD_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("SDD_MODEL", "gpt-test")
    monkeypatch.setenv("SDD_API_KEY", KEY)  # the key of this run's own server
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": "README.md"})},
    }
    server.reply(
        body={
            "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]
        }
    )
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Read it."}}]})
    result = sdd("role", "run", "builder", "--task", "Read the README", "--json")
    assert result.code == 0, result.stderr
    run_id = json.loads(result.stdout)["run"]
    assert len(server.requests) == 2
    for request in server.requests:
        assert request.headers["x-sdd-role"] == "builder"
        assert request.headers["x-sdd-run"] == run_id
        assert request.headers["authorization"] == f"Bearer {KEY}"
    tool_message = server.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
    assert KEY not in json.dumps(server.requests[1].body)  # the file's copy of the key was masked
    assert "[secret]" in tool_message["content"]
    assert KEY not in every_written_byte(root).replace(f"token for the demo: {KEY}", "")
    log = (root.sdd / "role-runs" / f"{run_id}.jsonl").read_text()
    assert KEY not in log


def test_an_anthropic_run_stops_for_a_write_and_resumes_with_the_thinking_block(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    monkeypatch.setenv("SDD_PROVIDER", "anthropic")
    monkeypatch.setenv("SDD_BASE_URL", server.url)
    monkeypatch.setenv("SDD_MODEL", "claude-test")
    monkeypatch.setenv("SDD_API_KEY", KEY)  # the key of this run's own server
    thinking = {"type": "thinking", "thinking": "C1 needs a file.", "signature": "sig-abc=="}
    use = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "write_file",
        "input": {"path": "a.txt", "content": "hi\n", "purpose": "C1"},
    }
    server.reply(body={"content": [thinking, use], "stop_reason": "tool_use", "usage": {}})
    server.reply(body={"content": [{"type": "text", "text": "Written."}], "usage": {}})
    first = sdd("role", "run", "builder", "--task", "Write a.txt", "--json")
    assert first.code == 3, first.stderr
    stop = json.loads(first.stdout)["stop"]
    assert len(server.requests) == 1
    done = sdd("allow", stop["id"])
    assert done.code == 0, done.stderr
    assert (root.path / "a.txt").read_text() == "hi\n"
    replayed = server.requests[1].body["messages"]
    assert replayed[1]["content"] == [thinking, use]  # verbatim, signature and all
    assert replayed[2]["content"][0]["type"] == "tool_result"
    assert server.requests[1].headers["x-api-key"] == KEY
    assert all(r.headers["x-sdd-role"] == "builder" for r in server.requests)
    assert KEY not in (root.sdd / "role-runs" / f"{stop['run']}.jsonl").read_text()


def test_a_provider_that_is_down_fails_the_run_clearly(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.providers.loopback import closed_port_url

    accepted_change(root)
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    monkeypatch.setenv("SDD_BASE_URL", closed_port_url())
    monkeypatch.setenv("SDD_MODEL", "m")
    result = sdd("role", "run", "builder", "--task", "Hi")
    assert result.code == 1
    assert "cannot reach openai" in result.stderr and "Traceback" not in result.stderr
    run_id = next((root.sdd / "role-runs").glob("run-*.jsonl")).stem
    assert [e["event"] for e in events(root, run_id)][-2:] == ["error", "run_ended"]


def test_a_short_key_is_refused_before_any_call(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    monkeypatch.setenv("SDD_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("SDD_MODEL", "m")
    monkeypatch.setenv("SDD_API_KEY", "short")
    result = sdd("role", "run", "builder", "--task", "Hi")
    assert result.code == 1 and "shorter than 8 characters" in result.stderr
    assert server.requests == []


def test_a_roles_own_model_overrides_the_config(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    accepted_change(root)
    role = root.sdd / "roles" / "critic" / "ROLE.md"
    role.parent.mkdir(parents=True)
    role.write_text(
        "---\nrole: critic\njob: Review\nlevel: 5\ntoolPolicy.delegation: deny\nproduces: review\n"
        f"model: {{kind: openai, model: critic-model, base_url: '{server.url}/v1',"
        " api_key_env: CRITIC_KEY}\n"
        "---\nBe exact.\n"
    )
    monkeypatch.setenv("CRITIC_KEY", KEY)
    # A key variable a role file names goes only to a host the person listed it for.
    root.config.write_text(
        "provider: {kind: openai, model: m, api_key_env: OPENAI_API_KEY,\n"
        "           keys: {'127.0.0.1': CRITIC_KEY}}\n"
    )
    confirm(root)  # she wrote both files herself
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Fine."}}]})
    result = sdd("role", "run", "critic", "--task", "Review")
    assert result.code == 0, result.stderr
    assert server.requests[0].body["model"] == "critic-model"
    assert server.requests[0].headers["x-sdd-role"] == "critic"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_a_role_file_naming_its_own_server_never_gets_the_main_key(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("SDD_API_KEY", KEY)
    role = root.sdd / "roles" / "shared" / "ROLE.md"
    role.parent.mkdir(parents=True)
    front = "---\nrole: shared\njob: Review\nlevel: 5\ntoolPolicy.delegation: deny\n"
    role.write_text(f"{front}model: {{model: m, base_url: '{server.url}/v1'}}\n---\nHi.\n")
    confirm(root)  # she wrote it herself
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "ok"}}]})
    assert sdd("role", "run", "shared", "--task", "Hi").code == 0
    assert "authorization" not in server.requests[0].headers  # no key went to the role's server

    role.write_text(
        f"{front}model: {{model: m, base_url: '{server.url}/v1', api_key_env: OPENAI_API_KEY}}\n"
        "---\nHi.\n"
    )
    confirm(root)
    refused = sdd("role", "run", "shared", "--task", "Hi")
    assert refused.code == 1 and "refuses to hand the main key" in refused.stderr
    assert len(server.requests) == 1


def test_a_reply_with_a_lone_surrogate_does_not_break_the_run_or_its_log(
    root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import run_cli

    accepted_change(root)
    server.reply(
        body={"choices": [{"message": {"role": "assistant", "content": "odd \ud800 text"}}]}
    )
    env = {
        "SDD_PROVIDER": "openai",
        "SDD_BASE_URL": f"{server.url}/v1",
        "SDD_MODEL": "m",
        "OPENAI_API_KEY": KEY,
    }
    result = run_cli("role", "run", "builder", "--task", "Hi", cwd=root.path, env=env)
    assert result.returncode == 0, result.stderr
    assert "odd" in result.stdout
    run_id = next((root.sdd / "role-runs").glob("run-*.jsonl")).stem
    assert events(root, run_id)[-1]["status"] == "done"
