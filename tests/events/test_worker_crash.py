"""A worker killed in the middle of a routine's run, and started again: the event is not lost,
and the routine does not run a second time for it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sdd_git.events import hooks as core
from sdd_git.events.queue import done_folder, events_folder
from sdd_git.events.worker import lock_path
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.events.hookhelp import event_files, merge_feature, product, routine, runs_of, wait_until
from tests.providers.loopback import PROXY_VARIABLES


@dataclass
class HeldModel:
    """An OpenAI-compatible model on loopback that holds every request until released."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldModel]:
    state = HeldModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            state.requests.append(json.loads(self.rfile.read(length) or b"{}"))
            state.release.wait(timeout=60)
            body = json.dumps(
                {"choices": [{"message": {"role": "assistant", "content": "Noted."}}]}
            ).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the worker that asked was killed

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SDD_PROVIDER", "openai")
    monkeypatch.setenv("SDD_BASE_URL", f"{state.url}/v1")
    monkeypatch.setenv("SDD_MODEL", "held-model")
    monkeypatch.setenv("SDD_API_KEY", "sk-test-key")
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def gone(pid: int) -> bool:
    """Dead: reaped, or a zombie nobody has reaped yet (the hook that started the worker has
    long exited, and not every init reaps at once; the lock file counts a zombie as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def test_killing_the_worker_mid_routine_loses_no_event_and_runs_nothing_twice(
    root: Root, model: HeldModel
) -> None:
    product(root)
    core.install(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    merge_feature(root)
    [event] = event_files(root)
    # The hook's worker is in the routine's run, waiting on the model.
    [run] = wait_until(lambda: runs_of(root, "on-merge", event["id"]), what="the run starting")
    wait_until(lambda: model.requests, what="the model being asked")
    holder = json.loads(lock_path(root).read_text(encoding="utf-8"))
    os.kill(holder["pid"], signal.SIGKILL)
    wait_until(lambda: gone(holder["pid"]), what="the worker's death")
    assert (events_folder(root) / f"{event['id']}.json").exists()  # still waiting

    model.release.set()
    again = subprocess.run(
        [sys.executable, "-m", "sdd_git", "event-worker", str(root.path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0
    assert not (events_folder(root) / f"{event['id']}.json").exists()
    done = json.loads((done_folder(root) / f"{event['id']}.json").read_text(encoding="utf-8"))
    [outcome] = done["outcomes"]
    assert (outcome["status"], outcome["run"]) == ("already", Path(run["_path"]).stem)
    assert len(runs_of(root, "on-merge", event["id"])) == 1
    assert len(model.requests) == 1  # the model was asked once, by the killed worker
    assert not lock_path(root).exists()


def test_sigterm_ends_the_run_in_progress_cleanly_and_releases_the_lock(
    root: Root, model: HeldModel
) -> None:
    product(root)
    core.install(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    merge_feature(root)
    [event] = event_files(root)
    [run] = wait_until(lambda: runs_of(root, "on-merge", event["id"]), what="the run starting")
    wait_until(lambda: model.requests, what="the model being asked")
    holder = json.loads(lock_path(root).read_text(encoding="utf-8"))
    os.kill(holder["pid"], signal.SIGTERM)
    wait_until(lambda: gone(holder["pid"]), what="the worker's end")
    assert not lock_path(root).exists()
    last = json.loads(Path(run["_path"]).read_text(encoding="utf-8").splitlines()[-1])
    assert (last["event"], last["status"]) == ("run_ended", "interrupted")
    done = json.loads((done_folder(root) / f"{event['id']}.json").read_text(encoding="utf-8"))
    assert done["outcomes"][0]["status"] == "interrupted"
    assert "worker stopped (SIGTERM)" in (root.local / "events" / "worker.log").read_text()
