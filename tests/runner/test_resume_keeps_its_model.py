"""A resumed run keeps the provider and model of its `run_started` (issue 22, 3): an answer given
later, from another terminal without the SDD_MODEL the run started with, must not quietly go on
with another model. When it cannot keep them (she set another one), it says so, from what to
what, on screen and in the log."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve
from tests.runner.scripted import accepted_change, events, script, write_call
from tests.trusthelp import confirm

KEY = "sk-local-0123456789abcdef"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def _write_then_done(server: Loopback) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {
            "name": "write_file",
            "arguments": json.dumps({"path": "a.txt", "content": "hi\n", "purpose": "C1"}),
        },
    }
    server.reply(
        body={
            "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]
        }
    )
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "Written."}}]})


def _config(root: Root, server: Loopback) -> None:
    (root.sdd / "config.yaml").write_text(
        "provider: {kind: openai, model: small-model, "
        f"base_url: '{server.url}/v1', api_key_env: LOCAL_MODEL_KEY}}\n"
    )
    confirm(root, ".sdd/config.yaml")


def test_a_run_resumed_without_sdd_model_goes_on_with_the_model_it_started_with(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    _config(root, server)
    monkeypatch.setenv("LOCAL_MODEL_KEY", KEY)
    monkeypatch.setenv("SDD_MODEL", "big-model")
    _write_then_done(server)
    first = sdd("role", "run", "builder", "--task", "Write a.txt", "--json")
    assert first.code == 3, first.stderr
    stop = json.loads(first.stdout)["stop"]
    started = events(root, stop["run"])[0]
    assert (started["provider"], started["model"]) == ("openai", "big-model")
    assert KEY not in json.dumps(started)

    monkeypatch.delenv("SDD_MODEL")  # another terminal, hours later
    done = sdd("allow", stop["id"])
    assert done.code == 0, done.stderr
    assert [r.body["model"] for r in server.requests] == ["big-model", "big-model"]
    assert "warning" not in done.stderr
    assert not [e for e in events(root, stop["run"]) if e["event"] == "warning"]


def test_a_run_resumed_with_another_model_set_says_it_switched_from_what_to_what(
    sdd: SddRunner, root: Root, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    _config(root, server)
    monkeypatch.setenv("LOCAL_MODEL_KEY", KEY)
    _write_then_done(server)
    first = sdd("role", "run", "builder", "--task", "Write a.txt", "--json")
    assert first.code == 3, first.stderr
    stop = json.loads(first.stdout)["stop"]

    monkeypatch.setenv("SDD_MODEL", "other-model")  # she chose another one, on purpose
    done = sdd("allow", stop["id"])
    assert done.code == 0, done.stderr
    assert [r.body["model"] for r in server.requests] == ["small-model", "other-model"]
    said = (
        "this run started with openai model small-model at "
        f"{server.url}/v1; it goes on with openai model other-model at {server.url}/v1, "
        "because SDD_MODEL is set"
    )
    assert said in done.stderr
    warnings = [e for e in events(root, stop["run"]) if e["event"] == "warning"]
    assert len(warnings) == 1 and said in warnings[0]["message"]
    assert warnings[0]["switched"]["from"]["model"] == "small-model"
    assert warnings[0]["switched"]["to"]["model"] == "other-model"


def test_a_scripted_run_resumed_without_sdd_provider_keeps_its_script(
    sdd: SddRunner, root: Root, tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    first = sdd("role", "run", "builder", "--task", "Write a.txt", "--json")
    assert first.code == 3, first.stderr
    stop = json.loads(first.stdout)["stop"]
    monkeypatch.delenv("SDD_PROVIDER")
    done = sdd("allow", stop["id"])
    assert done.code == 0, done.stderr
    assert "Done." in done.stdout
    assert (root.path / "a.txt").read_text() == "x\n"
