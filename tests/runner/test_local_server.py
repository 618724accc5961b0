"""What a real local server does must not break a run (issue 10, item 5, the runner's part), and
the runner defects of item 6: tools by `produces`, the context budget, the accuracy loop told
why a pass was spent, unparsable arguments, a provider error that names what was done, progress
as it happens, signals, refused runs that leave no `running` log, and the reply's id."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sdd_git.providers.base import (
    Message,
    ProviderError,
    ProviderReply,
    ProviderRequest,
    ToolCall,
    ToolSchema,
)
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root
from sdd_git.runner import state as run_state
from sdd_git.runner.run import RunRequest, answer, start
from sdd_git.runner.runlog import Event, read_events
from sdd_git.runner.state import ContextOverflow, fit_context, offered_tools
from tests.conftest import SddRunner
from tests.runner.scripted import (
    accepted_change,
    add_role,
    events,
    kinds,
    script,
    transcript,
    write_call,
)

READS = {"read_file", "list_files", "search_files", "git_status", "git_log", "git_diff"}


class Fake:
    """A provider that answers from a list and keeps every request, for what the script
    provider cannot send: arguments that did not parse, a server error."""

    name = "openai"
    model = "fake"

    def __init__(self, replies: list[ProviderReply | Exception]) -> None:
        self.replies = replies
        self.requests: list[ProviderRequest] = []
        self.on_call: list[Any] = []

    def complete(self, request: ProviderRequest) -> ProviderReply:
        self.requests.append(request)
        for hook in self.on_call:
            hook()
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


def reply(text: str = "", calls: tuple[ToolCall, ...] = ()) -> ProviderReply:
    message: Message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [{"id": c.id, "name": c.name, "args": c.args} for c in calls],
    }
    return ProviderReply(text, calls, message)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    def use(replies: list[ProviderReply | Exception]) -> Fake:
        provider = Fake(replies)
        monkeypatch.setattr("sdd_git.providers.select.make_provider", lambda settings: provider)
        return provider

    return use


def role(produces: str, tools: tuple[str, ...] | None = None) -> RoleProfile:
    return RoleProfile("r", "R", "j", 10, "deny", "d", produces=produces, tools=tools)


# --- a role is offered only the tools it can use -----------------------------------------------


@pytest.mark.parametrize(
    ("produces", "beyond_reads"),
    [
        ("reading", {"draft_reading", "remember"}),
        ("code", {"write_file", "delete_file", "run_command", "git_commit", "git_push", "git_tag"}),
        ("scenario", {"draft_scenarios", "remember"}),
        ("plan", {"draft_plan", "remember"}),
        ("review", {"remember"}),
    ],
)
def test_a_role_is_offered_the_tools_of_what_it_produces(
    produces: str, beyond_reads: set[str]
) -> None:
    offered = set(offered_tools(role(produces), None))
    assert offered >= READS
    extra = offered - READS - {"read_record", "use_skill"}
    # Every role may hand off (it stops for the person like any action).
    assert extra == beyond_reads | {"handoff"} | ({"remember"} if produces == "code" else set())
    assert not offered & set(run_state.LOOP_TOOLS)


def test_other_gets_every_tool_and_the_loop_tools_only_with_a_critic() -> None:
    everything = set(offered_tools(role("other"), None))
    assert {"write_file", "draft_reading", "draft_scenarios", "deploy"} <= everything
    assert not everything & set(run_state.LOOP_TOOLS)
    assert set(run_state.LOOP_TOOLS) <= set(offered_tools(role("other"), "critic"))


def test_a_roles_own_tools_list_narrows_what_it_is_offered() -> None:
    offered = offered_tools(role("code", tools=("read_file", "write_file", "deploy")), "critic")
    assert set(offered) == {"read_file", "write_file", *run_state.LOOP_TOOLS}


def test_a_review_role_sends_only_read_tool_schemas(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "reviewer", produces="review")
    script(tmp_path, monkeypatch, [{"say": "Looks fine."}])
    assert sdd("role", "run", "reviewer", "--task", "Review it").code == 0
    (call,) = transcript(tmp_path)
    names = {t["name"] for t in call["tools"]}
    assert names <= READS | {"read_record", "remember", "use_skill", "handoff"}
    assert "write_file" not in names and "run_command" not in names


def test_after_the_draft_is_allowed_the_loop_tools_are_never_offered_again(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "checker", produces="review")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [{"tool": "submit_draft", "args": {"text": "Write src/x.py"}}]},
            {"role": "checker", "tool_calls": [{"tool": "report_gaps", "args": {"gaps": []}}]},
            {"tool_calls": [write_call("src/x.py")]},
            {"say": "Written."},
        ],
    )
    first = json.loads(
        sdd("role", "run", "builder", "--task", "Do", "--with", "checker", "--json").stdout
    )
    assert first["stop"]["kind"] == "draft"
    second = json.loads(sdd("allow", first["stop"]["id"], "--json").stdout)
    assert second["stop"]["kind"] == "approval"
    assert sdd("allow", second["stop"]["id"]).code == 0  # a new process: rebuilt from the log
    calls = transcript(tmp_path)
    assert len(calls) == 4
    for after in calls[2:]:
        assert not {t["name"] for t in after["tools"]} & set(run_state.LOOP_TOOLS)


# --- the context budget ------------------------------------------------------------------------


def _tool(index: int, size: int) -> Message:
    return {"role": "tool", "tool_call_id": f"c{index}", "name": "read_file", "content": "x" * size}


def _turn(index: int) -> Message:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": f"c{index}", "name": "read_file", "args": {"path": "a"}}],
    }


def test_old_tool_results_are_trimmed_oldest_first_never_the_prompt_task_or_last_turn() -> None:
    messages: list[Message] = [
        {"role": "system", "content": "s" * 4000},
        {"role": "user", "content": "t" * 4000},
        _turn(1),
        _tool(1, 8000),
        _turn(2),
        _tool(2, 8000),
        _turn(3),
        _tool(3, 8000),
    ]
    fitted, trimmed = fit_context(messages, [], 9000)  # 2,250 kept for the reply
    assert trimmed == 1
    assert fitted[3]["content"] == "[trimmed: 8,000 characters of an old tool result]"
    assert fitted[5]["content"] == "x" * 8000  # the newer one stays while the request fits
    assert fitted[:3] == messages[:3] and fitted[6:] == messages[6:]
    assert messages[3]["content"] == "x" * 8000  # the run's own messages are left whole


def test_a_request_that_cannot_fit_names_its_size_and_how_to_raise_the_context() -> None:
    schema = ToolSchema("read_file", "Read a file", {"type": "object"})
    messages: list[Message] = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "t" * 40000},
    ]
    with pytest.raises(ContextOverflow) as caught:
        fit_context(messages, [schema], 8192)
    assert "about 10,0" in caught.value.message and "8,192 tokens" in caught.value.message
    assert "context:" in (caught.value.hint or "") and "num_ctx" in (caught.value.hint or "")


def test_the_context_size_comes_from_settings_else_from_where_the_server_is() -> None:
    @dataclasses.dataclass
    class Settings:
        base_url: str | None
        context: int | None = None

    assert run_state.context_size(Settings("http://localhost:8080/v1")) == 8192
    assert run_state.context_size(Settings("http://127.0.0.1:11434/v1")) == 8192
    assert run_state.context_size(Settings("https://api.openai.com/v1")) == 128000
    assert run_state.context_size(Settings(None)) == 128000
    assert run_state.context_size(Settings("http://localhost:8080/v1", 32768)) == 32768


def test_a_run_trims_old_results_to_fit_and_ends_with_a_clear_error_when_it_cannot(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    (root.path / "big.txt").write_text("word " * 3000)  # about 4,000 tokens
    monkeypatch.setattr(run_state, "context_size", lambda settings: 8192)
    read = {"tool": "read_file", "args": {"path": "big.txt"}}
    script(
        tmp_path,
        monkeypatch,
        [{"tool_calls": [read]}, {"tool_calls": [read]}, {"tool_calls": [read]}, {"say": "ok"}],
    )
    outcome = start(root, RunRequest(author="builder", task="Read it"))
    assert outcome.status == "done"
    last = transcript(tmp_path)[-1]["messages"]
    results = [m["content"] for m in last if m["role"] == "tool"]
    assert results[0].startswith("[trimmed: ") and not results[-1].startswith("[trimmed")
    assert "context_trimmed" in kinds(root, outcome.run_id or "")

    monkeypatch.setattr(run_state, "context_size", lambda settings: 1500)
    script(tmp_path, monkeypatch, [{"say": "never"}], name="small")
    small = start(root, RunRequest(author="builder", task="Read it"))
    assert small.status == "failed" and small.exit_code == 1
    assert "1,500 tokens" in small.message and "context:" in (small.hint or "")
    assert transcript(tmp_path, "small") == []  # no request that cannot fit is sent
    assert kinds(root, small.run_id or "")[-1] == "run_ended"


def test_the_reply_is_capped_at_the_room_the_budget_left_for_it(
    root: Root, monkeypatch: pytest.MonkeyPatch, fake: Any
) -> None:
    accepted_change(root)
    monkeypatch.setattr(run_state, "context_size", lambda settings: 4096)
    provider = fake([reply("Done.")])
    assert start(root, RunRequest(author="builder", task="Look")).status == "done"
    assert provider.requests[0].max_reply_tokens == 1024  # a quarter of a small context
    assert run_state.reply_room(200_000) == run_state.REPLY_ROOM_TOKENS
    assert run_state.reply_cap(200_000) is None  # a hosted model keeps its own output limit


# --- a model that asks the same thing forever ---------------------------------------------------


def test_a_model_asking_the_same_thing_again_and_again_ends_the_run_without_running_it_again(
    root: Root, fake: Any
) -> None:
    accepted_change(root)
    same = ToolCall("c", "list_files", {})
    other = ToolCall("d", "list_files", {"path": "memory"})
    provider = fake(
        [reply(calls=(same,))] * 3 + [reply(calls=(other,))] + [reply(calls=(same,))] * 4
    )
    outcome = start(root, RunRequest(author="builder", task="Look"))
    assert outcome.status == "failed" and outcome.exit_code == 1
    assert "the same thing 4 times in a row (list_files {})" in outcome.message
    assert "larger model" in (outcome.hint or "")
    assert len(provider.requests) == 8  # three, one other ask that resets the count, then four
    ran = [e for e in events(root, outcome.run_id or "") if e["event"] == "tool_call"]
    assert len(ran) == 7  # the fourth identical ask was not run
    assert kinds(root, outcome.run_id or "")[-2:] == ["error", "run_ended"]


# --- the accuracy loop tells the model what it needs ------------------------------------------


def test_a_bad_draft_is_refused_in_its_answer_and_explained_in_the_next_message(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: Any
) -> None:
    accepted_change(root)
    add_role(root, "checker", produces="review")
    provider = fake(
        [
            reply(calls=(ToolCall("d1", "submit_draft", {"text": "  "}),)),
            reply("I think it is fine."),  # no tool call at all: the pass is spent
            reply(calls=(ToolCall("d2", "submit_draft", {"text": "Write src/x.py"}),)),
            reply(calls=(ToolCall("g1", "report_gaps", {"gaps": []}),)),
        ]
    )
    outcome = start(root, RunRequest(author="builder", task="Do", critic="checker"))
    assert outcome.status == "stopped"
    first, second, third, critique = provider.requests
    assert [r.tool_choice for r in provider.requests] == [
        "submit_draft",
        "submit_draft",
        "submit_draft",
        "report_gaps",
    ]
    answered = second.messages[-2]
    assert answered["role"] == "tool" and answered["content"].startswith("Refused: submit_draft")
    told = second.messages[-1]
    assert told["role"] == "user" and told["content"].startswith("Pass 1 was spent: submit_draft")
    assert "the reply did not call submit_draft" in third.messages[-1]["content"]
    assert {t.name for t in critique.tools} <= READS | {"read_record", "use_skill", "report_gaps"}
    assert not any(m.get("content") == "Received." for m in first.messages)


def test_a_refused_critique_is_told_to_the_critic_and_to_the_author(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: Any
) -> None:
    accepted_change(root)
    add_role(root, "checker", produces="review")
    bad = {"id": "G1", "cites": ["taste"], "text": "I would not do it this way"}
    provider = fake(
        [
            reply(calls=(ToolCall("d1", "submit_draft", {"text": "Draft"}),)),
            reply(calls=(ToolCall("g1", "report_gaps", {"gaps": [bad]}),)),
            reply(calls=(ToolCall("d2", "submit_draft", {"text": "Draft"}),)),
            reply(calls=(ToolCall("g2", "report_gaps", {"gaps": []}),)),
        ]
    )
    start(root, RunRequest(author="builder", task="Do", critic="checker"))
    _, _, redraft, second_critique = provider.requests
    assert "checker's critique of it did not hold up" in redraft.messages[-1]["content"]
    answered, shown = second_critique.messages[-2:]
    assert answered["content"].startswith("Refused: gap G1: taste is not")
    assert shown["content"].startswith("Your last critique was refused: gap G1: taste is not")


# --- arguments that did not parse ---------------------------------------------------------------


def test_arguments_that_are_not_json_are_told_so_and_logged_bad_arguments(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: Any
) -> None:
    accepted_change(root)
    broken = ToolCall("c1", "write_file", {}, error="Unterminated string at char 30")
    provider = fake([reply(calls=(broken,)), reply("Sorry.")])
    outcome = start(root, RunRequest(author="builder", task="Write"))
    assert outcome.status == "done"
    told = provider.requests[1].messages[-1]["content"]
    assert "your arguments were not valid JSON: Unterminated string" in told
    assert "outside the product folder" not in told
    (rejected,) = [e for e in events(root, outcome.run_id or "") if e["event"] == "rejected"]
    assert rejected["reason"] == "bad_arguments"


# --- a provider error says what was done, with the run's id -------------------------------------


def test_a_provider_error_names_what_was_already_done_and_the_run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(
        root,
        "builder",
        extra="boundary:\n  always_allow:\n"
        '    - {tool: write_file, inputs: {path: src/x.py, content: "x\\n"}}\n',
    )
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("src/x.py")]}])
    shown = sdd("role", "run", "builder", "--task", "Write")
    assert shown.code == 1
    assert "error: script exhausted after 1 calls" in shown.stderr
    assert "Already done in this run, and it stays done: write_file src/x.py" in shown.stderr
    assert "hint: what happened, event by event: sdd role log run-" in shown.stderr
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("src/x.py")]}], name="again")
    document = json.loads(sdd("role", "run", "builder", "--task", "Write", "--json").stdout)
    assert document["run"].startswith("run-") and document["status"] == "failed"
    assert "write_file src/x.py (by a saved rule)" in document["message"]


def test_a_provider_error_in_the_loop_is_a_failed_run_with_its_id(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: Any
) -> None:
    accepted_change(root)
    add_role(root, "checker", produces="review")
    fake([ProviderError("the server rejected the request")])
    outcome = start(root, RunRequest(author="builder", task="Do", critic="checker"))
    assert (outcome.status, outcome.exit_code) == ("failed", 1)
    assert outcome.run_id and kinds(root, outcome.run_id)[-2:] == ["error", "run_ended"]


# --- progress as it happens ---------------------------------------------------------------------


def test_each_event_reaches_the_caller_as_it_is_written(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: Any
) -> None:
    accepted_change(root)
    seen: list[Event] = []
    provider = fake([reply("Hello.")])
    at_call: list[list[str]] = []
    provider.on_call.append(lambda: at_call.append([str(e["event"]) for e in seen]))
    outcome = start(root, RunRequest(author="builder", task="Hi"), on_event=seen.append)
    assert at_call == [["run_started", "plan", "message", "message", "provider_call"]]
    assert [e["event"] for e in seen] == kinds(root, outcome.run_id or "")


def test_progress_is_on_stderr_and_json_prints_only_the_document(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "Hello."}, {"say": "Again."}])
    shown = sdd("role", "run", "builder", "--task", "Hi")
    assert "  · provider call 1 as builder (author)" in shown.stderr
    assert shown.stdout == "Hello.\n"
    quiet = sdd("role", "run", "builder", "--task", "Hi", "--json")
    assert "·" not in quiet.stderr
    assert json.loads(quiet.stdout)["reply"] == "Hello."  # each run replays from the top


# --- the reply's id -----------------------------------------------------------------------------


def test_the_reply_id_is_shown_and_reply_to_takes_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "Which month?"}, {"say": "March it is."}])
    first = sdd("role", "run", "builder", "--task", "Find the charge")
    assert 'reply M2 (answer it with --reply-to M2 --task "...")' in first.stderr
    second = sdd("role", "run", "builder", "--task", "March", "--reply-to", "M2", "--json")
    assert json.loads(second.stdout)["reply_id"] == "M4"
    assert "(In reply to M2: Which month?)" in transcript(tmp_path)[1]["messages"][1]["content"]


# --- a refused run leaves no log that shows it running ------------------------------------------


@pytest.mark.parametrize(
    "extra",
    [("--attach", "missing.log", "--as", "the log"), ("--reply-to", "M9")],
)
def test_a_run_refused_before_any_call_writes_no_run_log(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: tuple[str, ...],
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "never"}])
    result = sdd("role", "run", "builder", "--task", "Look", *extra)
    assert result.code == 2, result.stderr
    assert transcript(tmp_path) == []
    runs = root.sdd / "role-runs"
    assert not runs.exists() or list(runs.glob("*.jsonl")) == []
    assert "running" not in sdd("role", "runs").stdout


def test_an_error_after_the_log_opened_still_ends_the_run(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"say": "never"}])

    def broken(*args: object, **kwargs: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr("sdd_git.runner.prompt.system_prompt", broken)
    with pytest.raises(OSError):
        start(root, RunRequest(author="builder", task="Look"))
    (log,) = (root.sdd / "role-runs").glob("*.jsonl")
    assert read_events(log)[-1]["event"] == "run_ended"


# --- signals: the run ends once, and the command's children die ---------------------------------


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in raw.split(b"\0") and b"sdd_git" not in raw:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sandbox", ["none", None])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_during_a_command_end_the_run_once_and_kill_its_children(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int, sandbox: str | None
) -> None:
    """`sdd allow` runs the command in a real child process; Ctrl-C (SIGINT) or SIGTERM, sent
    three times, must end the run once and leave none of the command's processes behind."""
    if sandbox is not None:
        monkeypatch.setenv("SDD_SANDBOX", sandbox)
    accepted_change(root)
    marker = str(31000 + int(signum) * 7 + os.getpid() % 1000 + (0 if sandbox else 500))
    text = f"sleep {marker} & sleep {marker}"
    call = {"tool": "run_command", "args": {"command": text, "purpose": "p"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "never"}])
    stopped = start(root, RunRequest(author="builder", task="Sleep"))
    assert stopped.stop is not None
    child = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "allow", stopped.stop.id],
        cwd=root.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the test's own group is not signalled with it
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(_processes_with(marker)) < 2:
            time.sleep(0.05)
        if len(_processes_with(marker)) < 2:
            child.kill()
            pytest.fail(f"the command never started: {child.communicate()[1]!r}")
        for _ in range(3):  # the second and third signal must not cut the closing short
            os.kill(child.pid, signum)
            time.sleep(0.02)
        code = child.wait(timeout=30)
        time.sleep(0.2)  # what the kernel still had to reap is gone by now
        left = _processes_with(marker)
    finally:
        if child.poll() is None:
            child.kill()
        for pid in _processes_with(marker):  # never leave them behind, even on failure
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert code == 130
    assert left == []
    logged = events(root, stopped.run_id or "")
    assert [e["status"] for e in logged if e["event"] == "run_ended"] == [
        "stopped",
        "interrupted",
    ]
    assert logged[-1]["event"] == "run_ended"


def test_an_answer_shows_the_reply_id_too(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("src/x.py")]}, {"say": "Written."}])
    first = start(root, RunRequest(author="builder", task="Write"))
    assert first.stop is not None
    done = answer(root, first.stop.id, "allow_once")
    assert (done.reply, done.reply_id) == ("Written.", "M2")
