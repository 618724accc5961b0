"""Changing a ROLE.md in place: a ruamel.yaml round trip of the front matter only.

The person's comments, key order, quoting and indentation survive, and the body is kept byte for
byte unless the change is to the description itself.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.roles.hostagents import HOST_SOURCES
from sdd_git.roles.rolefile import parse_role, split_front_matter
from sdd_git.yamlio import round_trip_load

DELEGATION_KEY = "toolPolicy.delegation"


def edit_role_text(
    text: str,
    path: Path,
    updates: dict[str, Any] | None = None,
    description: str | None = None,
    source: str = "repo",
) -> str:
    """The ROLE.md text with `updates` set in its front matter and, if given, a new description.

    Another host's agent file edited where it is (`source` claude or copilot) keeps its shape:
    sdd's keys are written beside the host's, which all stay, so the host reads it as before."""
    if source not in HOST_SOURCES:
        text = canonical(text, path)
    split = split_front_matter(text, display(path))
    front = split.front
    if updates:
        editor = _editor_for(front, path)
        document = round_trip_load(editor, front, path, line_offset=1) or {}
        for key, raw in updates.items():
            value = same_in_both(raw)
            if key == DELEGATION_KEY and DELEGATION_KEY not in document:
                policy = document.get("toolPolicy")
                if isinstance(policy, dict):
                    policy["delegation"] = value
                    continue
            document[key] = value
        front = _dump(editor, document)
    head = text[: text.index("\n") + 1]  # the opening '---' line as written
    closing = "---\n"
    if description is None:
        body = split.body
    else:
        body = description.strip() + "\n" if description.strip() else ""
    new_text = head + front + ("" if front.endswith("\n") else "\n") + closing + body
    parse_role(new_text, path, source)  # never write a file that would not load
    return new_text


def same_in_both(value: Any) -> Any:
    """`value` marked so that ruamel.yaml writes every text in it as a scalar that YAML 1.1 (the
    C loader sdd reads with) and YAML 1.2 (ruamel.yaml, and other hosts' readers) both read back
    as the same text: `no`, `on`, `~`, `1.0` or `0o17` written plain would come back as a bool,
    null or number in one of them."""
    if isinstance(value, str):
        from ruamel.yaml.scalarstring import DoubleQuotedScalarString

        return value if _plain_reads_back(value) else DoubleQuotedScalarString(value)
    if isinstance(value, dict):
        return {k: same_in_both(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [same_in_both(v) for v in value]
    return value


def _plain_reads_back(text: str) -> bool:
    if not text or "\n" in text or text != text.strip():
        return False
    import yaml
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError as RuamelError

    line = f"k: {text}\n"
    try:
        older = yaml.safe_load(line)
        newer = YAML(typ="safe", pure=True).load(line)
    except (yaml.YAMLError, RuamelError):
        return False
    return bool(older == {"k": text} and newer == {"k": text})


def add_rule_text(text: str, path: Path, section: str, rule: dict[str, Any]) -> str:
    """The ROLE.md text with `rule` appended to `boundary.<section>`, everything else kept."""
    text = canonical(text, path)
    split = split_front_matter(text, display(path))
    editor = _editor_for(split.front, path)
    document = round_trip_load(editor, split.front, path, line_offset=1) or {}
    boundary = document.get("boundary")
    if boundary is None:
        document["boundary"] = boundary = {}
    rules = boundary.get(section)
    if rules is None:
        boundary[section] = rules = []
    if _unsaved(rule) not in [_unsaved(dict(r)) for r in rules if isinstance(r, dict)]:
        rules.append(rule)
    front = _dump(editor, document)
    new_text = text[: text.index("\n") + 1] + front + "---\n" + split.body
    parse_role(new_text, path)
    return new_text


def _unsaved(rule: dict[str, Any]) -> dict[str, Any]:
    """A rule without its note of when it was saved: the same rule saved twice is one rule."""
    return {k: v for k, v in rule.items() if k != "saved"}


def remove_rule_text(text: str, path: Path, section: str, index: int) -> str:
    """The ROLE.md text without rule `index` (from 0) of `boundary.<section>`, all else kept."""
    text = canonical(text, path)
    split = split_front_matter(text, display(path))
    editor = _editor_for(split.front, path)
    document = round_trip_load(editor, split.front, path, line_offset=1) or {}
    boundary = document.get("boundary")
    rules = boundary.get(section) if isinstance(boundary, dict) else None
    if not isinstance(rules, list) or not 0 <= index < len(rules):
        raise RecordError(f"{display(path)}: it has no rule {index + 1} in boundary.{section}")
    del rules[index]
    new_text = text[: text.index("\n") + 1] + _dump(editor, document) + "---\n" + split.body
    parse_role(new_text, path)  # never write a file that would not load
    return new_text


def drop_always_allow_text(text: str, path: Path) -> str:
    """The ROLE.md text with `boundary.always_allow` emptied, everything else kept: a template's
    or pack's rules the person did not confirm."""
    text = canonical(text, path)
    split = split_front_matter(text, display(path))
    editor = _editor_for(split.front, path)
    document = round_trip_load(editor, split.front, path, line_offset=1) or {}
    boundary = document.get("boundary")
    if not isinstance(boundary, dict) or not boundary.get("always_allow"):
        return text
    # Assigned, not cleared in place: ruamel keeps the key's comment on a new empty list.
    boundary["always_allow"] = []
    new_text = text[: text.index("\n") + 1] + _dump(editor, document) + "---\n" + split.body
    if parse_role(new_text, path).profile.boundary.always_allow:  # never hand back a rule
        raise RecordError(
            f"{display(path)}: its always_allow rules could not be left out; nothing was written",
            hint="copy the folder by hand and empty boundary.always_allow yourself",
        )
    return new_text


def canonical(text: str, path: Path) -> str:
    """A foreign role file (an agentproto ROLE.md, another host's agent) in sdd's own keys,
    so an edit never leaves a file that only loads by guesswork; sdd's own files pass as they
    are, byte for byte."""
    from sdd_git.roles.rolefile import render_role

    parsed = parse_role(text, path)
    if parsed.shape == "sdd":
        return text
    return render_role(parsed.profile)


def _editor_for(front: str, path: Path) -> Any:
    """A round-trip YAML whose layout reproduces `front` unchanged, so untouched lines stay."""
    from ruamel.yaml import YAML

    best: tuple[int, Any] | None = None
    original = front.splitlines()
    for mapping in (2, 4):
        for offset in (0, 2, 4):
            editor = YAML(typ="rt")
            editor.width = 4096
            editor.preserve_quotes = True
            editor.indent(mapping=mapping, sequence=offset + 2, offset=offset)
            editor.representer.add_representer(type(None), _represent_null)
            rendered = _dump(
                editor, round_trip_load(editor, front, path, line_offset=1)
            ).splitlines()
            same = sum(1 for a, b in zip(rendered, original, strict=False) if a == b)
            if rendered == original:
                return editor
            if best is None or same > best[0]:
                best = (same, editor)
    assert best is not None
    return best[1]


def _represent_null(representer: Any, _data: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")


def _dump(editor: Any, document: Any) -> str:
    buffer = io.StringIO()
    editor.dump(document, buffer)
    return buffer.getvalue()
