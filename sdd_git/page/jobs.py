"""Work the page starts in the background (a role run, an answer to a stop, `sdd work`), with its
progress kept for the live view.

A run can take minutes with a real model; the request that starts it returns at once (or as soon
as the run is done, when that is quick) and the page follows the run over server-sent events.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

QUIET = ("message",)  # the prompts sent: in the run's log, not in her progress view
SETTLE_SECONDS = 2.0  # quick work is shown done at once; slow work is followed live
Work = Callable[[Callable[[dict[str, Any]], None]], Any]


@dataclass
class Job:
    id: str
    title: str
    change: str | None
    lines: list[str] = field(default_factory=list)  # her progress, in sentences
    run: str | None = None  # the run it follows, once its log names it: its raw log's page
    outcome: Any = None
    error: str | None = None
    hint: str | None = None
    # What it could not start on: grants she has not confirmed (`WaitsForHer`). Nothing ran.
    waits: tuple[Any, ...] = ()
    done: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)
    # Her answer to a stop is taken once the run logs its `decision`: the page shows that at
    # once and follows what the role does next live, however long the model takes.
    ready_on: str | None = None
    receipt: str | None = None
    answered: bool = False
    ready: threading.Event = field(default_factory=threading.Event)

    def settle(self) -> None:
        """Wait (briefly) until her request is answered: the work done, or its `ready_on`
        event logged."""
        (self.ready if self.ready_on else self.done).wait(SETTLE_SECONDS)


class Jobs:
    """The jobs of one page server, in memory: a restart forgets them, never the run logs."""

    def __init__(self, product: Callable[[], Path | None] = lambda: None) -> None:
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._product = product  # the product folder in use: where a write's old file is

    def start(
        self,
        title: str,
        change: str | None,
        work: Work,
        ready_on: str | None = None,
        receipt: str | None = None,
        role: str = "",
    ) -> Job:
        from sdd_git.errors import SddError
        from sdd_git.page.herwords import for_her
        from sdd_git.page.progress import sentences_for
        from sdd_git.trust.pending import WaitsForHer

        job = Job(secrets.token_hex(8), title, change, ready_on=ready_on, receipt=receipt)
        sentence = sentences_for(self._product())
        sentence.role = role  # the role it follows, when known before its run says it

        def told(event: dict[str, Any]) -> None:
            if job.run is None and isinstance(event.get("run"), str):
                job.run = event["run"]
            said = sentence(event) if event.get("event") not in QUIET else None
            if said:
                job.lines.append(said)
            if ready_on is not None and event.get("event") == ready_on:
                job.answered = True
                job.ready.set()

        def body() -> None:
            from sdd_git.runner.asked import ASKED_FROM

            ASKED_FROM.set("page")  # this thread's own context: her work, asked on the page
            try:
                job.outcome = work(told)
            except WaitsForHer as exc:  # not a failure: it waits for her, said on the page
                job.waits = exc.items
            except SddError as exc:
                job.error, job.hint = for_her(exc.message), exc.hint
            except Exception as exc:  # shown on the page: the server goes on serving her
                job.error = f"something went wrong inside ({exc}); the run's log has the rest"
            finally:
                job.done.set()
                job.ready.set()

        with self._lock:
            self._jobs[job.id] = job
        threading.Thread(target=body, name=f"page-job-{job.id}", daemon=True).start()
        return job

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)
