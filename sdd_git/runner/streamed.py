"""The reply's text as it streams in, shown to a person who watches (her terminal): masked a
line at a time, since a secret may arrive split across pieces but never across a line, and
handed to the run's listener as a `reply_text` event, which is shown and never logged."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sdd_git.masking.masker import Masker


class StreamedText:
    def __init__(
        self, listener: Callable[[dict[str, Any]], None], masker: Masker, role: str
    ) -> None:
        self.listener = listener
        self.masker = masker
        self.role = role
        self._held = ""

    def __call__(self, piece: str) -> None:
        self._held += piece
        if "\n" in self._held:
            lines, self._held = self._held.rsplit("\n", 1)
            for line in lines.split("\n"):
                self._show(line)

    def flush(self) -> None:
        if self._held:
            self._show(self._held)
        self._held = ""

    def _show(self, line: str) -> None:
        self.listener({"event": "reply_text", "role": self.role, "text": self.masker(line)})


def streamed_text(
    listener: Callable[[dict[str, Any]], None] | None, masker: Masker, role: str
) -> StreamedText | None:
    """A text sink when the listener asks for the text as it comes (`wants_text`), else None:
    a run nobody watches asks its provider for the whole answer at once."""
    if listener is None or not getattr(listener, "wants_text", False):
        return None
    return StreamedText(listener, masker, role)
