"""The one front-matter splitter, for role files, skills and specs alike: a leading UTF-8 BOM
is dropped (an editor on Windows writes one), then the keys between the opening `---` line and
the next `---` line are the front matter, and what follows is the body."""

from __future__ import annotations

import re
from dataclasses import dataclass

BOM = "\ufeff"
_CLOSING = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)


class NotOpened(ValueError):
    """The text does not start with a `---` line."""


class NotClosed(ValueError):
    """The `---` line that opens the front matter has none after it."""


@dataclass(frozen=True)
class FrontMatter:
    text: str  # the whole text, without a leading BOM
    front: str  # the front matter, without the --- lines (its last newline kept)
    body_start: int  # offset in `text` of the body: after the closing line and its newline
    body_line: int  # 1-based line where the body starts

    @property
    def body(self) -> str:
        """Everything after the closing --- line, byte for byte."""
        return self.text[self.body_start :]


FRONT_LINE = 2  # 1-based file line of the front matter's first line


def split(text: str) -> FrontMatter:
    """Split `text`; NotOpened or NotClosed when it has no front matter."""
    text = text.removeprefix(BOM)
    first, newline, _rest = text.partition("\n")
    if first.rstrip() != "---" or not newline:
        raise NotOpened()
    opened = len(first) + 1
    match = _CLOSING.search(text, opened)
    if match is None:
        raise NotClosed()
    body_start = match.end()
    if text[body_start : body_start + 1] == "\n":
        body_start += 1
    return FrontMatter(
        text, text[opened : match.start()], body_start, text.count("\n", 0, body_start) + 1
    )
