"""Text shown as text, never as control: what a terminal or her page shows of a value that came
from a file, a merge or a model.

Control characters (C0 and C1), format characters (bidirectional overrides and isolates,
zero-width characters, the byte-order mark, tag characters) and the line and paragraph
separators can move her cursor, clear a line, reorder what she reads or hide words in it. Each is
written out as an escape instead: `\\x1b` below U+0020, else `\\u202e`, and an astral one as its
two UTF-16 halves (`\\udb40\\udc41`). That is how JSON writes them too, so an escape inside a
JSON string stays valid JSON and reads back as the character it stands for. A backslash is left
as it is, so the escaping is idempotent."""

from __future__ import annotations

import re
from typing import Any, TextIO, cast

# Every character of Unicode's categories Cc, Cf, Zl and Zp (Unicode 15: tests check it against
# the running Python's unicodedata). A literal class: reading the categories of all code points
# at start would cost a tenth of a second on every command.
_HIDDEN = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f"
)
_ALL = re.compile(f"[\t\n{_HIDDEN}]")
_BUT_LINES = re.compile(f"[{_HIDDEN}]")
_ONE_LINE = {"\n": "\\n", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _ONE_LINE:
        return _ONE_LINE[char]
    code = ord(char)
    if code < 0x20:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def visible(text: str, keep_newlines: bool = False) -> str:
    """`text` with every control, format and separator character written out as an escape.
    A newline and a tab are kept with `keep_newlines` (text of many lines), else written `\\n`
    and `\\t` (a value on one line)."""
    if not isinstance(text, str):  # a stream's write(b"") must fail, as a text stream's does
        raise TypeError(f"visible() takes text, not {type(text).__name__}")
    return (_BUT_LINES if keep_newlines else _ALL).sub(_escape, text)


class VisibleStream:
    """A text stream that writes everything through `visible` (lines kept): what sdd prints
    reaches her terminal as text, whoever wrote the words. It has no `buffer`, so nothing (click
    included) can go around it to the bytes beneath."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(visible(text, keep_newlines=True))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        if name in ("buffer", "detach"):
            raise AttributeError(name)
        return getattr(self.stream, name)


def visible_stream(stream: TextIO | None) -> TextIO | None:
    """`stream` wrapped in a VisibleStream (once: wrapping twice changes nothing anyway)."""
    if stream is None or isinstance(stream, VisibleStream):
        return stream
    return cast(TextIO, VisibleStream(stream))
