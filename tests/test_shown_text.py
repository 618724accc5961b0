"""Text shown as text (issue 21, part 10): every control, format and separator character is
written out as an escape, in one form that also keeps JSON valid and reads back as itself."""

from __future__ import annotations

import io
import json
import sys
import unicodedata

import pytest

from sdd_git.shown_text import VisibleStream, visible

HIDDEN_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")
EVERY_HIDDEN = [
    chr(code)
    for code in range(sys.maxunicode + 1)
    if unicodedata.category(chr(code)) in HIDDEN_CATEGORIES
]


def test_every_control_format_and_separator_character_is_written_out() -> None:
    """The literal class in shown_text covers every Cc, Cf, Zl and Zp code point this Python
    knows (a newer Unicode adds some: this fails then, and names them)."""
    raw = [c for c in EVERY_HIDDEN if visible(c) == c]
    assert raw == []
    for char in EVERY_HIDDEN:
        shown = visible(f"a{char}b")
        assert shown.startswith("a\\") and shown.endswith("b") and shown.isascii(), repr(char)


@pytest.mark.parametrize(
    ("char", "written"),
    [
        ("\u202e", "\\u202e"),  # right-to-left override
        ("\u2066", "\\u2066"),  # left-to-right isolate
        ("\u200b", "\\u200b"),  # zero-width space
        ("\u2060", "\\u2060"),  # word joiner
        ("\ufeff", "\\ufeff"),  # byte-order mark
        ("\x1b", "\\x1b"),  # escape: starts a terminal sequence
        ("\r", "\\x0d"),
        ("\x7f", "\\u007f"),
        ("\x9b", "\\u009b"),  # C1 control sequence introducer
        ("\U000e0041", "\\udb40\\udc41"),  # a tag character (invisible ASCII)
    ],
)
def test_each_hidden_character_has_one_written_form(char: str, written: str) -> None:
    assert visible(f"x{char}y") == f"x{written}y"


def test_one_line_text_writes_newlines_and_tabs_and_many_lines_keep_them() -> None:
    text = "first\tcell\nsecond\u202eline"
    assert visible(text) == "first\\tcell\\nsecond\\u202eline"
    assert visible(text, keep_newlines=True) == "first\tcell\nsecond\\u202eline"


def test_escapes_inside_json_read_back_as_the_same_characters() -> None:
    """`--json` output goes through the same escaping: still JSON, and the same text."""
    value = {"command": "ls\u202e\u200b\x7f\x85\U000e0041 -la", "path": "a\u2066b.txt"}
    shown = visible(json.dumps(value, ensure_ascii=False), keep_newlines=True)
    assert shown.isascii()
    assert json.loads(shown) == value


def test_ordinary_text_and_its_backslashes_are_left_as_they_are() -> None:
    text = "Café — 東京 🙂 C:\\path\\u202e"
    assert visible(text) == text
    assert visible(visible("a\u202eb")) == visible("a\u202eb")  # idempotent


def test_a_visible_stream_escapes_what_is_written_and_offers_no_way_around() -> None:
    target = io.StringIO()
    stream = VisibleStream(target)
    stream.write("one\u202e\n")
    stream.writelines(["two\x1b[2J\n"])
    assert target.getvalue() == "one\\u202e\ntwo\\x1b[2J\n"
    assert getattr(stream, "buffer", None) is None  # click writes bytes to a buffer it finds
    with pytest.raises(TypeError):
        stream.write(b"")  # type: ignore[arg-type]  # click's test for a binary stream
