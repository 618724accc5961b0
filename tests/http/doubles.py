"""A transport for tests: records every request it is sent and answers from a queue, so a
caller of `sdd_git.http` is tested without a socket."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sdd_git.http.transport import Answer, Request


@dataclass
class RecordingTransport:
    answers: deque[Answer | BaseException] = field(default_factory=deque)
    sent: list[Request] = field(default_factory=list)
    closed: int = 0

    def answer(self, status: int = 200, body: bytes = b"{}", **headers: str) -> None:
        self.answers.append(Answer(status, {k.lower(): v for k, v in headers.items()}, body))

    def fail(self, error: BaseException) -> None:
        self.answers.append(error)

    def send(self, request: Request) -> Answer:
        self.sent.append(request)
        given = self.answers.popleft()
        if isinstance(given, BaseException):
            raise given
        return given

    def close(self) -> None:
        self.closed += 1
