"""Reaching a run from outside it: "Stop now", `say`, and reading its log in plain words."""

from __future__ import annotations

import time

from sdd_git import lockfile, statefolders
from sdd_git.errors import LockError, SddError, UsageError
from sdd_git.root import Root
from sdd_git.runner import logevents, stops
from sdd_git.runner.clock import system_clock
from sdd_git.runner.run import control_folder, role_lock
from sdd_git.runner.runlog import Event, RunLog, log_path, read_events


def stop_now(root: Root, target: str) -> str:
    """ "Stop now": end the run's turn; completed actions stay. Returns the run id.

    A run in progress reads the flag before its next provider call. A run waiting at a stop, or
    one whose process died (SIGKILL, a crash), is closed here; the dead run's stale lock is
    cleared, since the person asked for exactly that."""
    is_run = target.startswith("run-") and log_path(root, target).exists()
    run_id = target if is_run else _latest_run(root, target)
    events = read_events(log_path(root, run_id))
    started = next((e for e in events if e.get("event") == "run_started"), {})
    role = (started.get("roles") or [""])[0]
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
    from sdd_git.runner.history import ENDED_UNEXPECTEDLY, runs

    for summary in runs(root, role):
        if summary.status in ("running", "stopped", ENDED_UNEXPECTEDLY):
            return summary.run
    raise SddError(
        f"{role} has no run in progress or waiting",
        hint=f'start one: sdd role run {role} --task "..."',
    )


def event_text(event: Event) -> str:
    """One log event in plain words (for `sdd role log`)."""
    kind = event.get("event")
    if kind == "run_started":
        return f'started: {", ".join(event.get("roles", []))} on "{event.get("task")}"'
    if kind == "plan":
        return f"plan: checks {', '.join(event.get('checks') or []) or 'none'}"
    if kind == "provider_call":
        in_pass = f", pass {event.get('pass')}" if event.get("pass") else ""
        who = f"as {event.get('role')} ({event.get('purpose')}{in_pass})"
        return f"provider call {event.get('call')} {who}"
    if kind == "draft":
        return f"pass {event.get('pass')}: draft submitted: {_short(event.get('text'))}"
    if kind == "revision":
        changed = ", ".join(event.get("changed") or [])
        return f"pass {event.get('pass')}: revision of {changed}: {_short(event.get('text'))}"
    if kind == "critique":
        gaps = event.get("gaps") or []
        if not gaps:
            return f"pass {event.get('pass')}: {event.get('role')} found no gap"
        said = "; ".join(
            f"{g.get('id')} ({', '.join(g.get('cites') or [])}): {g.get('text')}" for g in gaps
        )
        return f"pass {event.get('pass')}: {event.get('role')} found {len(gaps)} gap(s): {said}"
    if kind == "reply":
        message = event.get("message") or {}
        calls = ", ".join(c.get("name", "?") for c in message.get("tool_calls") or [])
        text = " ".join(str(message.get("content") or "").split())[:120]
        return f"reply: {text}" + (f" [calls {calls}]" if calls else "")
    if kind == "tool_call":
        return f"tool call {event.get('tool')} {event.get('args')}"
    if kind == "tool_result":
        text = " ".join(str(event.get("content") or "").split())[:120]
        return f"result of {event.get('tool')}: {text}"
    if kind == "rejected":
        return f"rejected {event.get('tool')}: {event.get('message')} ({event.get('reason')})"
    if kind == "stop":
        return f"STOP {event.get('stop') or ''} [{event.get('kind')}]: {event.get('action')}"
    if kind == "decision":
        return f"decision on {event.get('stop') or 'the run'}: {event.get('choice')}"
    if kind == "action_done":
        return f"done: {event.get('tool')} ({event.get('by')})"
    if kind == "action_failed":
        return f"not done: {event.get('tool')} ({event.get('by')}): {event.get('reason')}"
    if kind == "context_trimmed":
        return (
            f"context: {event.get('results')} old tool result(s) trimmed to fit "
            f"(about {event.get('tokens')} tokens)"
        )
    if kind == "error":
        return f"error: {event.get('message')}"
    if kind == "warning":  # its text already says "warning: ..."
        return str(event.get("message"))
    if kind == "run_ended":
        return f"ended: {event.get('status')}"
    return f"{kind}: " + ", ".join(
        f"{k}={v}" for k, v in event.items() if k not in ("ts", "run", "seq", "event")
    )


def _short(text: object) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= 120 else flat[:117] + "..."
