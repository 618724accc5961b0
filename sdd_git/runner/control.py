"""Reaching a run from outside it: "Stop now", `say`, and reading its log in plain words."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sdd_git import lockfile, statefolders
from sdd_git.errors import LockError, SddError, UsageError
from sdd_git.root import Root
from sdd_git.runner import logevents, stops
from sdd_git.runner.clock import system_clock
from sdd_git.runner.logwriter import RunLog
from sdd_git.runner.run import control_folder, role_lock
from sdd_git.runner.runlog import Event, first, log_path, read_events


def stop_now(root: Root, target: str) -> str:
    """ "Stop now": end the run's turn; completed actions stay. Returns the run id.

    A run in progress reads the flag before its next provider call. A run waiting at a stop, or
    one whose process died (SIGKILL, a crash), is closed here; the dead run's stale lock is
    cleared, since the person asked for exactly that."""
    is_run = target.startswith("run-") and log_path(root, target).exists()
    run_id = target if is_run else _latest_run(root, target)
    events = read_events(log_path(root, run_id))
    role = ((first(events, "run_started") or {}).get("roles") or [""])[0]
    flag = control_folder(root, run_id) / "stop-now"
    statefolders.append(flag, b"")
    lock = role_lock(root, role)
    if lock.exists() and lockfile.describe_holder(lock)[1]:
        lock.unlink()  # its holder died: the person asked to close the run, so clear it
    try:
        # Not while an answer or the run itself holds the role: it reads the flag instead.
        with lockfile.hold(lock, wait_seconds=0.5):
            _close(root, run_id)
    except LockError:
        pass
    return run_id


def _close(root: Root, run_id: str) -> None:
    events = read_events(log_path(root, run_id))
    waiting = [s for s in stops.pending(root) if s.run == run_id]
    ended = bool(events) and events[-1].get("event") == "run_ended"
    if ended and not waiting:
        return
    log = RunLog.open(root, run_id, lambda s: s, system_clock)
    for stop in waiting:
        log.append(logevents.Decision(stop.id, "stop_now"))
        stops.remove(root, stop.id)
    if not waiting:
        log.append(logevents.Decision(None, "stop_now"))
    log.append(logevents.RunEnded("stopped-now"))


def say(root: Root, role: str, text: str) -> str:
    import json

    if not text.strip():
        raise UsageError("say something", hint='sdd role say NAME "the next instruction"')
    run_id = _latest_run(root, role)
    inbox = control_folder(root, run_id) / "say.jsonl"
    line = json.dumps({"text": text, "at": time.time()}) + "\n"
    statefolders.append(inbox, line.encode("utf-8"), sync=False)
    return run_id


def _latest_run(root: Root, role: str) -> str:
    from sdd_git.runner.history import ENDED_UNEXPECTEDLY
    from sdd_git.runner.runindex import runs

    for summary in runs(root, role):
        if summary.status in ("running", "stopped", ENDED_UNEXPECTEDLY):
            return summary.run
    raise SddError(
        f"{role} has no run in progress or waiting",
        hint=f'start one: sdd role run {role} --task "..."',
    )


def event_text(event: Event) -> str:
    """One log event in plain words (for `sdd role log`); a kind with no words of its own is
    shown field by field, as it was written."""
    words = _WORDS.get(type(parsed := logevents.parse(event)))
    if words is not None:
        return words(parsed)
    shown = (f"{k}={v}" for k, v in event.items() if k not in logevents.HEADER)
    return f"{event.get('event')}: " + ", ".join(shown)


def _started(e: logevents.RunStarted) -> str:
    return f'started: {", ".join(e.roles or [])} on "{e.task}"'


def _provider_call(e: logevents.ProviderCall) -> str:
    in_pass = f", pass {e.pass_}" if e.pass_ else ""
    return f"provider call {e.call} as {e.role} ({e.purpose}{in_pass})"


def _critique(e: logevents.Critique) -> str:
    gaps = e.gaps or []
    if not gaps:
        return f"pass {e.pass_}: {e.role} found no gap"
    said = "; ".join(
        f"{g.get('id')} ({', '.join(g.get('cites') or [])}): {g.get('text')}" for g in gaps
    )
    return f"pass {e.pass_}: {e.role} found {len(gaps)} gap(s): {said}"


def _reply(e: logevents.Reply) -> str:
    message = e.message or {}
    calls = ", ".join(c.get("name", "?") for c in message.get("tool_calls") or [])
    return f"reply: {_flat(message.get('content'))}" + (f" [calls {calls}]" if calls else "")


def _flat(text: object) -> str:
    return " ".join(str(text or "").split())[:120]


_WORDS: dict[type[logevents.LogEvent], Callable[[Any], str]] = {
    logevents.RunStarted: _started,
    logevents.Plan: lambda e: f"plan: checks {', '.join(e.checks or []) or 'none'}",
    logevents.ProviderCall: _provider_call,
    logevents.Draft: lambda e: f"pass {e.pass_}: draft submitted: {_short(e.text)}",
    logevents.Revision: lambda e: (
        f"pass {e.pass_}: revision of {', '.join(e.changed or [])}: {_short(e.text)}"
    ),
    logevents.Critique: _critique,
    logevents.Reply: _reply,
    logevents.ToolCall: lambda e: f"tool call {e.tool} {e.args}",
    logevents.ToolResult: lambda e: f"result of {e.tool}: {_flat(e.content)}",
    logevents.Rejected: lambda e: f"rejected {e.tool}: {e.message} ({e.reason})",
    logevents.Stop: lambda e: f"STOP {e.stop or ''} [{e.kind_}]: {e.action}",
    logevents.Decision: lambda e: f"decision on {e.stop or 'the run'}: {e.choice}",
    logevents.ActionDone: lambda e: f"done: {e.tool} ({e.by})",
    logevents.ActionFailed: lambda e: f"not done: {e.tool} ({e.by}): {e.reason}",
    logevents.ContextTrimmed: lambda e: (
        f"context: {e.results} old tool result(s) trimmed to fit (about {e.tokens} tokens)"
    ),
    logevents.RunError: lambda e: f"error: {e.message}",
    logevents.RunWarning: lambda e: str(e.message),  # its text already says "warning: ..."
    logevents.RunEnded: lambda e: f"ended: {e.status}",
}


def _short(text: object) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= 120 else flat[:117] + "..."
