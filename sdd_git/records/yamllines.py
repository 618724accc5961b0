"""Where a key path stands in a YAML file: its line, for messages that name file, line and key.

The fast loader keeps no positions, so lines are looked up (with a compose) only when something
is wrong or an edit needs them."""

from __future__ import annotations

from typing import Any

KeyPath = tuple[str | int, ...]


def key_text(at: KeyPath) -> str:
    """`modules[1].services[0].name`: the key a message points at."""
    text = ""
    for part in at:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def line_of(text: str, at: KeyPath) -> int:
    """The 1-based line of the key at `at` (or of the deepest part of it that exists)."""
    node = compose(text)
    line = 1
    for part in at:
        if node is None:
            break
        line = node.start_mark.line + 1
        node, key_line = child(node, part)
        if key_line is not None:
            line = key_line
    if node is not None and not at:
        line = node.start_mark.line + 1
    return line


def compose(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.compose(text, Loader=loader)
    except yaml.YAMLError:
        return None


def child(node: Any, part: str | int) -> tuple[Any, int | None]:
    import yaml

    if isinstance(part, int) and isinstance(node, yaml.SequenceNode) and part < len(node.value):
        child = node.value[part]
        return child, child.start_mark.line + 1
    if isinstance(part, str) and isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if getattr(key, "value", None) == part:
                return value, key.start_mark.line + 1
    return None, None


def last_line(node: Any) -> int:
    """The 0-based line of the last thing written in `node` (a block's own end mark runs on past
    the comments after it)."""
    import yaml

    if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
        end = node.end_mark
        return int(
            end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line
        )
    children: list[Any] = []
    if isinstance(node, yaml.SequenceNode):
        children = list(node.value)
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    return max((last_line(child) for child in children), default=int(node.start_mark.line))
