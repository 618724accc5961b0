"""Round-trip edits of a YAML list (append an item, remove one) that keep the person's comments.

ruamel.yaml keeps the comment lines that follow an item in the last leaf of that item. Left
there, a new item appended after it would land below them (a file's closing comment would no
longer close it), and removing the item would drop them. The helpers below move those lines
to where they still read the same, and `comments_kept` checks the outcome.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path
from typing import Any

from sdd_git.records.yamllines import KeyPath, child, compose, last_line
from sdd_git.yamlio import round_trip_load


def editor_for(text: str, path: Path) -> Any:
    """A round-trip YAML whose indentation reproduces `text`, so untouched lines stay as they
    are. Ties go to the layout of CONTRACT's example (`  - name:` under `modules:`)."""
    from ruamel.yaml import YAML

    best: tuple[int, Any] | None = None
    original = text.splitlines()
    layouts = [(m, o, gap) for gap in (2, 4) for m in (2, 4) for o in (2, 0, 4)]
    for mapping, offset, gap in layouts:
        editor = YAML(typ="rt")
        editor.width = 4096
        editor.preserve_quotes = True
        editor.brace_single_entry_mapping_in_flow_sequence = True  # `[{name: x}]` as written
        editor.indent(mapping=mapping, sequence=offset + gap, offset=offset)
        buffer = io.StringIO()
        editor.dump(round_trip_load(editor, text, path), buffer)
        rendered = buffer.getvalue().splitlines()
        if rendered == original:
            return editor
        same = sum(1 for a, b in zip(rendered, original, strict=False) if a == b)
        if best is None or same > best[0]:
            best = (same, editor)
    assert best is not None
    return best[1]


def list_at(mapping: Any, key: str) -> Any:
    """The list under `key`, made (empty) where the key is missing or null."""
    from ruamel.yaml.comments import CommentedSeq

    value = mapping.get(key)
    if not isinstance(value, CommentedSeq):
        value = CommentedSeq()
        mapping[key] = value
    return value


def append_item(seq: Any, fields: dict[str, Any]) -> None:
    from ruamel.yaml.comments import CommentedMap

    from sdd_git.roles.roleedit import same_in_both

    # Words YAML 1.1 reads as something else (`no`, `2024`) are quoted.
    item = CommentedMap((key, same_in_both(value)) for key, value in fields.items())
    if seq:
        flow = bool(seq.fa.flow_style())
        following = "" if flow else _take_following(seq[-1])
    else:
        flow = False
        following = _take_following_empty(seq)
        seq.fa.set_block_style()  # `modules: []` grows into a block list
    if flow:
        item.fa.set_flow_style()
    seq.append(item)
    _give_following(item, following)


def remove_item(parent: Any, key: str, index: int) -> None:
    seq = parent[key]
    following = "" if seq.fa.flow_style() else _take_following(seq[index])
    del seq[index]
    if not seq:
        # An empty list is written `[]` on its key's line. The comment lines that were above
        # the item, those after it, and ruamel's end comments (which an empty list drops) all
        # follow it, starting on that line.
        above = (seq.ca.comment or [None, None])[1] or []
        lines = "".join(" " * getattr(t, "column", 0) + str(t.value) for t in above)
        lines += following + "".join(str(token.value) for token in (seq.ca.end or []))
        seq.ca.end = []
        seq.fa.set_flow_style()
        slots = parent.ca.items.setdefault(key, [None, None, None, None])
        slots[3] = None
        seq.ca.comment = None
        if lines.strip():
            token = _token(lines.lstrip(" "))
            seq.ca.comment = [token, None]
            slots[2] = token
    elif index > 0:
        _give_following(seq[index - 1], following)
    elif following.strip():
        # The lines sat above the item that is now first: keep them there.
        comment = seq.ca.comment
        if not comment:
            seq.ca.comment = comment = [None, None]
        if comment[1] is None:
            comment[1] = []
        comment[1].append(_token(following))
        # The loader keeps these lines both on the list and on its key; the writer reads one
        # or the other depending on what else the list holds, so both get them.
        parent.ca.items.setdefault(key, [None, None, None, None])[3] = comment[1]


def _token(value: str) -> Any:
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    return CommentToken(value, CommentMark(0), None)


def _tail_slot(node: Any) -> tuple[list[Any], int] | None:
    """Where ruamel keeps the comment of the last line of a block item: its slot list and index."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    def nested(value: Any) -> bool:
        return (
            isinstance(value, CommentedMap | CommentedSeq)
            and bool(value)
            and (not value.fa.flow_style())
        )

    if isinstance(node, CommentedMap) and node:
        key = list(node)[-1]
        if nested(node[key]):
            return _tail_slot(node[key])
        return node.ca.items.setdefault(key, [None, None, None, None]), 2
    if isinstance(node, CommentedSeq) and node:
        if nested(node[-1]):
            return _tail_slot(node[-1])
        return node.ca.items.setdefault(len(node) - 1, [None, None, None, None]), 0
    return None


def _split_off(token: Any) -> str:
    """Keep the comment on the token's own line; hand back the whole lines after it."""
    if token is None:
        return ""
    value = str(token.value)
    cut = value.find("\n")
    if cut < 0:
        return ""
    token.value = value[: cut + 1]
    return value[cut + 1 :]


def _take_following(node: Any) -> str:
    slot = _tail_slot(node)
    return _split_off(slot[0][slot[1]]) if slot is not None else ""


def _take_following_empty(seq: Any) -> str:
    # An empty `[]` keeps its line's comment, and the lines after it, on itself.
    comment = seq.ca.comment
    return _split_off(comment[0]) if comment else ""


def _give_following(node: Any, lines: str) -> None:
    if not lines:
        return
    slot = _tail_slot(node)
    if slot is None:  # pragma: no cover - items here always have a name
        return
    slots, index = slot
    token = slots[index]
    if token is None:
        slots[index] = _token("\n" + lines)
        return
    if not str(token.value).endswith("\n"):
        token.value = str(token.value) + "\n"
    token.value = str(token.value) + lines


def comments_kept(before: str, after: str, removed: KeyPath | None) -> bool:
    """Every whole-line comment of `before` is still in `after`, but those inside the removed
    entry. A comment that moved to the end of a line (`services: [] # ...`) still counts."""
    gone_lines: range = range(0)
    if removed is not None:
        node = compose(before)
        for part in removed:
            node, _ = child(node, part)
        if node is not None:
            gone_lines = range(node.start_mark.line, last_line(node) + 1)
    wanted = Counter(
        line.strip()
        for number, line in enumerate(before.splitlines())
        if line.strip().startswith("#") and number not in gone_lines
    )
    found: Counter[str] = Counter()
    for line in after.splitlines():
        for start in (m.start() for m in re.finditer("#", line)):
            if start == 0 or line[start - 1].isspace():
                found[line[start:].strip()] += 1
    return not (wanted - found)
