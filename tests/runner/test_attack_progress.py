"""Attack round on the three runner changes of issue 11: the repeat check (`check_progress`), the
reply cap (`max_reply_tokens`) and the length bounds on ids and names (`_check_length`).

Tests marked FINDING fail on the code as it stands and pass once the fix proposed in the attack
report is in; the others are regressions for routes that are already closed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from sdd_git.providers.base import Message, ProviderReply, ProviderRequest, ToolCall
from sdd_git.root import Root
from sdd_git.runner import run as run_module
from sdd_git.runner import state as run_state
from sdd_git.runner.run import RunRequest, answer, start
from sdd_git.tools.base import Args, ToolFailed
from sdd_git.tools.schema import ID_CHARS, NAME_CHARS
from sdd_git.tools.toolbox import TOOLS
from tests.runner.scripted import accepted_change, events, kinds


class Fake:
    """Answers from a list and keeps every request (the pattern of test_local_server)."""

    name = "openai"
    model = "fake"

    def __init__(self, replies: list[ProviderReply | Exception]) -> None:
        self.replies = replies
        self.requests: list[ProviderRequest] = []

    def complete(self, request: ProviderRequest) -> ProviderReply:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def reply(text: str = "", calls: tuple[ToolCall, ...] = ()) -> ProviderReply:
    tool_calls = []
    for c in calls:
        wire: dict[str, Any] = {"id": c.id, "name": c.name, "args": c.args}
        if c.error:
            wire["error"] = c.error
        tool_calls.append(wire)
    message: Message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return ProviderReply(text, calls, message)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    def use(replies: list[ProviderReply | Exception]) -> Fake:
        provider = Fake(replies)
        monkeypatch.setattr("sdd_git.providers.select.make_provider", lambda settings: provider)
        return provider

    return use


def _of(root: Root, run_id: str | None, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(root, run_id or "") if e["event"] == kind]


# --- 1. the repeat check -------------------------------------------------------------------------


def test_key_order_does_not_hide_a_repeat(root: Root, fake: Any) -> None:
    """Closed: the signature sorts keys, so the same arguments in another order are the same."""
    accepted_change(root)
    orders = [
        {"path": "memory", "glob": "*.md"},
        {"glob": "*.md", "path": "memory"},
        {"path": "memory", "glob": "*.md"},
        {"glob": "*.md", "path": "memory"},
    ]
    provider = fake(
        [reply(calls=(ToolCall(f"c{n}", "list_files", a),)) for n, a in enumerate(orders)]
    )
    outcome = start(root, RunRequest(author="builder", task="Look"))
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert "4 times in a row" in outcome.message
    assert len(provider.requests) == 4
    assert len(_of(root, outcome.run_id, "tool_call")) == 3  # the fourth was not run


def test_a_different_call_id_does_not_hide_a_repeat(root: Root, fake: Any) -> None:
    """Closed: the call id, which servers make up fresh each time, is not part of the signature."""
    accepted_change(root)
    fake([reply(calls=(ToolCall(f"id-{n}", "git_status", {}),)) for n in range(4)])
    outcome = start(root, RunRequest(author="builder", task="Look"))
    assert outcome.status == "failed" and "git_status {}" in outcome.message


def test_nan_infinity_and_big_numbers_in_arguments_neither_crash_nor_hide_a_repeat(
    root: Root, fake: Any
) -> None:
    """Closed: NaN != NaN, but its JSON text is stable; no exception leaves check_progress."""
    accepted_change(root)
    odd = {"path": math.nan, "glob": math.inf, "n": 10**4000, "deep": [[{"x": [None, True]}]]}
    fake([reply(calls=(ToolCall("c", "list_files", dict(odd)),)) for _ in range(4)])
    outcome = start(root, RunRequest(author="builder", task="Look"))
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert "4 times in a row" in outcome.message
    assert "internal error" not in outcome.message
    # each of the three that ran was refused as bad arguments, not run
    assert len(_of(root, outcome.run_id, "tool_result")) == 3


def test_check_progress_takes_any_json_arguments_without_raising() -> None:
    """Closed: unit level; nested objects, lists, floats, None, unicode, U+FFFD."""
    state = run_state.RunState.__new__(run_state.RunState)
    state.last_calls, state.repeats = "", 0
    args = {"a": [1.5, {"b": None}], "é": "\ufffd", "z": -0.0, "n": float("nan")}
    for _ in range(3):
        run_state.check_progress(state, (ToolCall("x", "read_file", dict(args)),))
    with pytest.raises(run_state.ModelStuck):
        run_state.check_progress(state, (ToolCall("y", "read_file", dict(args)),))


def test_a_forbidden_action_asked_again_and_again_ends_the_run_and_never_runs(
    root: Root, fake: Any
) -> None:
    """Closed: the guard refuses each ask; the fourth is not even dispatched."""
    accepted_change(root)
    bad = ToolCall("c", "run_command", {"command": "sdd accept reading CH-0001", "purpose": "p"})
    provider = fake([reply(calls=(bad,))] * 6)
    outcome = start(root, RunRequest(author="builder", task="Accept it"))
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert len(provider.requests) == 4
    rejected = _of(root, outcome.run_id, "rejected")
    assert len(rejected) == 3 and all(e["reason"] != "bad_arguments" for e in rejected)
    assert not _of(root, outcome.run_id, "action_done")
    assert not _of(root, outcome.run_id, "stop")


def test_the_same_broken_arguments_four_times_end_the_run(root: Root, fake: Any) -> None:
    """Closed: a call whose arguments did not parse counts by its error too."""
    accepted_change(root)
    broken = ToolCall("c", "write_file", {}, error="your arguments were not valid JSON (x)")
    fake([reply(calls=(broken,))] * 4)
    outcome = start(root, RunRequest(author="builder", task="Write"))
    assert outcome.status == "failed" and "4 times in a row" in outcome.message
    assert [e["reason"] for e in _of(root, outcome.run_id, "rejected")] == ["bad_arguments"] * 3


def test_varying_the_purpose_escapes_the_repeat_check_but_not_the_call_cap(
    root: Root, fake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Open by design, harmless: the repeat check is a liveness check, not a wall. A model that
    changes one word of `purpose` (or alternates two asks) is never "the same 4 times", but every
    ask still goes through the wall, and MAX_PROVIDER_CALLS (counted across resumes) still ends
    the run. Here: a read tool with varied whitespace, then alternation, ends at the cap."""
    accepted_change(root)
    monkeypatch.setattr(run_module, "MAX_PROVIDER_CALLS", 9)
    asks = [ToolCall(f"c{n}", "list_files", {"path": "memory" + " " * (n % 2)}) for n in range(20)]
    provider = fake([reply(calls=(a,)) for a in asks])
    outcome = start(root, RunRequest(author="builder", task="Look"))
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert "9 provider calls without finishing" in outcome.message
    assert len(provider.requests) == 9


def test_a_purpose_only_change_on_an_action_still_stops_each_time(root: Root, fake: Any) -> None:
    """Closed: escaping the repeat check gains nothing; the action still stops for the person."""
    accepted_change(root)
    ask = ToolCall("c", "write_file", {"path": "src/x.py", "content": "x\n", "purpose": "try 1"})
    fake([reply(calls=(ask,))])
    outcome = start(root, RunRequest(author="builder", task="Write"))
    assert outcome.status == "stopped" and not (root.path / "src" / "x.py").exists()


def test_FINDING_the_repeat_count_survives_a_stop_and_an_answer(root: Root, fake: Any) -> None:
    """FINDING (liveness, not the wall): the count of identical asks lives only in memory. Every
    ask that stops ends the process; `sdd allow`/`sdd deny` rebuilds the state from the log with
    `repeats = 0`, so a model that asks for the same stopping action again and again is put to
    the person every time (until MAX_PROVIDER_CALLS = 200), although the README says the runner
    ends a run after the same calls four times in a row, without running the fourth."""
    accepted_change(root)
    ask = ToolCall("c", "write_file", {"path": "src/x.py", "content": "x\n", "purpose": "p"})
    provider = fake([reply(calls=(ToolCall(f"c{n}", ask.name, dict(ask.args)),)) for n in range(6)])
    outcome = start(root, RunRequest(author="builder", task="Write"))
    answers = 0
    while outcome.status == "stopped" and outcome.stop is not None and answers < 5:
        outcome = answer(root, outcome.stop.id, "deny")
        answers += 1
    assert outcome.status == "failed", f"still asking the person after {answers} denials"
    assert "4 times in a row" in outcome.message
    assert answers == 3  # three identical asks put to the person; the fourth ends the run
    assert len(provider.requests) == 4


def test_FINDING_a_resumed_run_keeps_the_parse_error_of_a_pending_call(
    root: Root, fake: Any
) -> None:
    """FINDING (pre-existing, in the resume path this round touched): `_replay` rebuilds pending
    calls as ToolCall(id, name, args) and drops `error`. A call whose arguments did not parse,
    queued behind a call that stopped, then runs after the answer with `{}` arguments: here a
    broken `git_push` becomes a stop for "push the current branch to its upstream", an action
    the model never validly asked for, instead of being refused as bad arguments."""
    accepted_change(root)
    write = ToolCall("c1", "write_file", {"path": "src/x.py", "content": "x\n", "purpose": "p"})
    broken = ToolCall("c2", "git_push", {}, error="your arguments were not valid JSON (cut)")
    fake([reply(calls=(write, broken)), reply("Done.")])
    first = start(root, RunRequest(author="builder", task="Write and push"))
    assert first.status == "stopped" and first.stop is not None
    after = answer(root, first.stop.id, "allow_once")
    rejected = _of(root, first.run_id, "rejected")
    assert [e["reason"] for e in rejected] == ["bad_arguments"], after.message
    assert not [e for e in _of(root, first.run_id, "stop") if e.get("tool") == "git_push"]
    assert after.status == "done"


def test_FINDING_script_arguments_with_a_number_key_are_refused_not_an_internal_error(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FINDING (small, new with check_progress): the replay provider (`sdd demo`, SDD_PROVIDER=
    script:FILE) takes its arguments from YAML, where a key can be a number. The log writes it
    (json turns the key into text) and Args refuses it as an unknown argument, but
    check_progress sorts the keys first: `'<' not supported between 'str' and 'int'`, and the run
    ends as "an internal error ... this is a bug in sdd"."""
    accepted_change(root)
    path = tmp_path / "s.yaml"
    path.write_text(
        "calls:\n"
        "  - tool_calls:\n"
        "      - tool: list_files\n"
        "        args: {1: x, path: memory}\n"
        "  - say: done\n"
    )
    monkeypatch.setenv("SDD_PROVIDER", f"script:{path}")
    try:
        outcome = start(root, RunRequest(author="builder", task="Look"))
    except Exception as exc:  # what the person would see
        pytest.fail(f"the run ended on: {exc}")
    assert outcome.status == "done"
    (rejected,) = _of(root, outcome.run_id, "tool_result")
    assert "unknown argument 1" in rejected["content"]


# --- 2. the reply cap ----------------------------------------------------------------------------


def test_every_request_carries_a_cap_that_fits_the_context(
    root: Root, fake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed: the cap plus the fitted request never exceeds the context, in a run and in the
    accuracy loop (author and critic)."""
    from tests.runner.scripted import add_role

    accepted_change(root)
    add_role(root, "checker", produces="review")
    monkeypatch.setattr(run_state, "context_size", lambda settings: 6000)
    provider = fake(
        [
            reply(calls=(ToolCall("d1", "submit_draft", {"text": "Draft"}),)),
            reply(calls=(ToolCall("g1", "report_gaps", {"gaps": []}),)),
        ]
    )
    start(root, RunRequest(author="builder", task="Do", critic="checker"))
    assert len(provider.requests) == 2
    for request in provider.requests:
        assert request.max_reply_tokens == 1500
        used = run_state.request_tokens(request.messages, request.tools)
        assert used + request.max_reply_tokens <= 6000


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 7, 100, 32768, 10**9])
def test_the_reply_room_is_a_positive_whole_number_for_any_context(limit: int) -> None:
    room = run_state.reply_room(limit)
    assert isinstance(room, int) and 1 <= room <= run_state.REPLY_ROOM_TOKENS


def test_the_cap_field_and_a_configured_max_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Closed: a configured max_tokens wins; api.openai.com gets max_completion_tokens, any other
    server max_tokens; the body never carries both, and no header or secret rides along."""
    from sdd_git.providers.openai import OpenAIProvider

    sent: list[dict[str, Any]] = []

    def post(url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        sent.append(body)
        return {"choices": [{"message": {"role": "assistant", "content": "ok"}}]}

    request = ProviderRequest("r", "run-1", 1, [{"role": "user", "content": "hi"}], [], None, 77)
    for base, configured, field, value in [
        ("https://api.openai.com/v1", None, "max_completion_tokens", 77),
        ("http://127.0.0.1:8080/v1", None, "max_tokens", 77),
        ("http://127.0.0.1:8080/v1", 5, "max_tokens", 5),
    ]:
        provider = OpenAIProvider("m", base, "sk-test-SECRETVALUE123", "K", max_tokens=configured)
        monkeypatch.setattr(provider._http, "post_json", post)
        provider.complete(request)
        body = sent[-1]
        assert body[field] == value
        assert {"max_tokens", "max_completion_tokens"} & set(body) == {field}
        assert "SECRETVALUE" not in json.dumps(body)


# --- 3. the length bounds ---------------------------------------------------------------------


def _bounded() -> list[tuple[str, str, int]]:
    found = []
    for name, tool in TOOLS.items():
        for key, prop in tool.schema.parameters.get("properties", {}).items():
            if isinstance(prop, dict) and "maxLength" in prop:
                found.append((name, key, int(prop["maxLength"])))
    return found


def test_every_bounded_key_is_read_as_text_so_no_other_type_slips_past_the_bound() -> None:
    """Closed: each id or name with a maxLength, sent too long, or as a list, a number or an
    object holding a long text, is refused by Args (ToolFailed), never a KeyError or a run."""
    assert {(t, k) for t, k, _ in _bounded()} >= {
        ("read_record", "id"),
        ("use_skill", "name"),
        ("git_push", "branch"),
        ("git_tag", "name"),
        ("deploy", "target"),
    }
    for tool, key, limit in _bounded():
        schema = TOOLS[tool].schema
        with pytest.raises(ToolFailed, match=f"at most {limit}"):
            Args(tool, {key: "a" * (limit + 1)}, schema)
        Args(tool, {**{k: "x" for k in schema.parameters.get("required", [])}, key: "a" * limit},
             schema)  # fmt: skip
        for sneaky in (["a" * 10_000], {"v": "a" * 10_000}, 10**100, 1.5, True):
            args = Args(tool, {**{k: "x" for k in schema.parameters.get("required", [])},
                               key: sneaky}, schema)  # fmt: skip
            with pytest.raises(ToolFailed, match="must be text"):
                args.text(key)


def test_lengths_count_characters_as_the_schema_does_not_bytes() -> None:
    """Closed: 64 four-byte characters are 64 characters, as JSON Schema counts them."""
    schema = TOOLS["read_record"].schema
    Args("read_record", {"id": "\U0001f600" * ID_CHARS}, schema)
    with pytest.raises(ToolFailed):
        Args("read_record", {"id": "\U0001f600" * (ID_CHARS + 1)}, schema)
    with pytest.raises(ToolFailed):
        Args("git_push", {"branch": "e\u0301" * NAME_CHARS}, TOOLS["git_push"].schema)


def test_an_unknown_key_with_a_long_value_is_refused_as_unknown_not_a_key_error() -> None:
    """Closed: unknown keys are refused before the length loop looks up their schema."""
    schema = TOOLS["read_record"].schema
    with pytest.raises(ToolFailed, match="unknown argument"):
        Args("read_record", {"id": "CH-0001", "idx": "a" * 100_000}, schema)
    with pytest.raises(ToolFailed, match="must be an object"):
        Args("read_record", ["id", "CH-0001"], schema)


def test_a_too_long_branch_allowed_by_the_person_pushes_nothing(root: Root, fake: Any) -> None:
    """Closed: the bound holds at execution, after the stop; the person's allow does not skip it,
    and the action is logged as failed, not done."""
    accepted_change(root)
    push = ToolCall("p", "git_push", {"remote": "origin", "branch": "b" * (NAME_CHARS + 1)})
    fake([reply(calls=(push,)), reply("ok")])
    first = start(root, RunRequest(author="builder", task="Push"))
    assert first.status == "stopped" and first.stop is not None
    after = answer(root, first.stop.id, "allow_once")
    assert after.status == "done"
    assert not _of(root, first.run_id, "action_done")
    (failed,) = _of(root, first.run_id, "action_failed")
    assert "at most 100" in failed["reason"]
    assert kinds(root, first.run_id or "")[-1] == "run_ended"


# --- pre-existing, found on the way: arguments nested too deep ----------------------------------


def test_FINDING_deeply_nested_arguments_are_bad_arguments_not_a_recursion_error() -> None:
    """FINDING (pre-existing; "crash a run with a traceback"): parse_arguments catches ValueError
    only. Arguments nested ~600 deep overflow `whole_characters`, and ~1,000 deep overflow
    json.loads itself: RecursionError leaves the provider. In a plain run `_drive` turns it into
    "internal error ... a bug in sdd"; in the accuracy loop (`loop.run` has no catch-all) it
    reaches the CLI as a Python traceback."""
    from sdd_git.providers.openai import parse_arguments

    for depth in (600, 5_000):
        args, error = parse_arguments('{"a":' * depth + "1" + "}" * depth)
        assert args == {} and error and "JSON" in error


def test_FINDING_a_deeply_nested_answer_is_a_provider_error() -> None:
    """FINDING (pre-existing): the same through the HTTP layer: `_decode` catches ValueError only,
    so a server answer nested deep raises RecursionError instead of ProviderError."""
    from sdd_git.providers.base import ProviderError
    from sdd_git.providers.http import _decode

    with pytest.raises(ProviderError):
        _decode(b'{"x":' + b"[" * 5_000 + b"]" * 5_000 + b"}", "server", [])
    with pytest.raises(ProviderError):
        _decode(b'{"x":' + b'{"a":' * 700 + b"1" + b"}" * 700 + b"}", "server", [])


def test_FINDING_deep_arguments_in_the_accuracy_loop_end_the_run_cleanly(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FINDING (pre-existing): end to end through the real OpenAI parser in the accuracy loop;
    the run must end failed in its log with a ProviderError/SddError, not raise RecursionError."""
    from sdd_git.errors import SddError
    from sdd_git.providers.openai import OpenAIProvider
    from tests.runner.scripted import add_role

    accepted_change(root)
    add_role(root, "checker", produces="review")
    provider = OpenAIProvider("m", "http://127.0.0.1:9/v1", None, "")
    deep = '{"text":' + "[" * 5_000 + "]" * 5_000 + "}"
    answer_body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "a", "function": {"name": "submit_draft", "arguments": deep}}
                    ],
                }
            }
        ]
    }
    monkeypatch.setattr(provider._http, "post_json", lambda *a, **k: answer_body)
    monkeypatch.setattr("sdd_git.providers.select.make_provider", lambda settings: provider)
    try:
        outcome = start(root, RunRequest(author="builder", task="Do", critic="checker"))
    except SddError:
        outcome = None
    except RecursionError:
        pytest.fail("RecursionError reached the caller: the CLI prints a traceback")
    (log,) = (root.sdd / "role-runs").glob("*.jsonl")
    assert json.loads(log.read_text().splitlines()[-1])["event"] == "run_ended"
    if outcome is not None:
        # told as bad arguments three times: no usable draft, a clean end
        assert outcome.status in ("failed", "no-draft") and outcome.exit_code == 1
