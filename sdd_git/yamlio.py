"""YAML in and out of the record.

Reads use PyYAML's C-backed safe loader (listing 1,000 change packs is a hot path); writes use
ruamel.yaml, imported only when something is written, so a person's comments and key order
survive a round trip.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import yaml

from sdd_git.errors import RecordError, UsageError
from sdd_git.paths import display as display  # re-exported for the record modules

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader


MAX_VALUES_THROUGH_ALIASES = 10_000  # a file's values once its aliases are expanded
MAX_YAML_BYTES = 2 * 1024 * 1024


class AliasBomb(RecordError):
    """YAML whose aliases expand beyond the bound; `line` is where (1-based, in the file)."""

    def __init__(self, message: str, hint: str, line: int) -> None:
        super().__init__(message, hint)
        self.line = line


ALIAS_HINT = "write the values out, or use fewer aliases (an alias bomb is refused)"


def refuse_alias_bombs(text: str, source: Path | str, line_offset: int = 0) -> None:
    """Aliases can make a kilobyte expand to gigabytes (CONTRACT §6: YAML from the repo
    refuses aliases beyond a small bound). Counted on the composed nodes, where an alias is the
    same node again, so the count costs what the file holds; only where the text has both an
    anchor and an alias, so ordinary files pay nothing. Every loader of YAML from the repo
    calls this before it builds values: building shares an alias's value, but whatever walks
    the values afterwards (a hash of a role's grants, a JSON dump) would walk every copy.

    The error names the file and the line of the value whose aliases expand too far."""
    where = display(source) if isinstance(source, Path) else source
    if "&" not in text or "*" not in text:
        return
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return  # the load below says what is wrong, with the line
    done: dict[int, int] = {}  # a node's values, aliases expanded
    on_path: set[int] = set()  # the nodes being counted: one met again is a loop
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if node is None:
            continue
        key = id(node)
        parts = _parts(node)
        if leaving:
            on_path.discard(key)
            done[key] = 1 + sum(done[id(part)] for part in parts)
            if done[key] > MAX_VALUES_THROUGH_ALIASES:
                line = node.start_mark.line + 1 + line_offset
                raise AliasBomb(
                    f"{where}:{line}: its aliases expand to more than "
                    f"{MAX_VALUES_THROUGH_ALIASES:,} values",
                    ALIAS_HINT,
                    line,
                )
            continue
        if key in done:
            continue
        on_path.add(key)
        stack.append((node, True))
        for part in parts:
            if id(part) in on_path:
                line = part.start_mark.line + 1 + line_offset
                raise AliasBomb(
                    f"{where}:{line}: an alias refers to the value that holds it",
                    "write the value out instead of the alias",
                    line,
                )
            if id(part) not in done:
                stack.append((part, False))


def _parts(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [v for pair in node.value for v in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def parse_yaml(text: str, source: Path, line_offset: int = 0) -> Any:
    """Parse YAML text; a syntax error names the file and the line (1-based). A file over
    2 MiB, or whose aliases expand beyond a bound, is refused."""
    if len(text) > MAX_YAML_BYTES:
        raise RecordError(
            f"{display(source)}: {len(text):,} characters is more than a settings or record "
            f"file may hold ({MAX_YAML_BYTES:,})",
            hint="split it, or remove what does not belong there",
        )
    refuse_alias_bombs(text, source, line_offset)
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark is not None else 1 + line_offset
        problem = exc.problem or exc.context or "malformed YAML"
        raise RecordError(
            f"{display(source)}:{line}: {problem}",
            hint="fix the YAML at that line (indentation, a missing ':' or an unclosed quote)",
        ) from None
    except yaml.YAMLError as exc:
        raise RecordError(f"{display(source)}: malformed YAML: {exc}") from None


def capped(data: bytes, path: Path) -> bytes:
    """`data` (read as at most MAX_YAML_BYTES + 1 bytes), refused when over the cap."""
    if len(data) > MAX_YAML_BYTES:
        raise RecordError(
            f"{display(path)}: more than {MAX_YAML_BYTES:,} bytes, more than a settings or "
            "record file may hold",
            hint="split it, or remove what does not belong there",
        )
    return data


def read_text(path: Path, within: Path | None) -> str:
    """A file's text. `within` is the product folder holding it: the file is then read with no
    link followed at any name below it, only if it is a regular file, and from a state folder
    only if that is hers alone. None is for a file she named outside the product."""
    try:
        if within is None:
            with path.open("rb") as handle:
                data = handle.read(MAX_YAML_BYTES + 1)
        else:
            from sdd_git import beneath, statefolders

            statefolders.check(path)
            data = beneath.read_bytes(within, path, MAX_YAML_BYTES + 1)
        # Read no further than the cap: a huge file costs nothing to refuse.
        return capped(data, path).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise RecordError(f"{display(path)}: file not found") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{display(path)}: not UTF-8 text ({exc.reason})") from None


def exists(path: Path, within: Path | None) -> bool:
    """Whether anything is at `path` (a link too: reading it then says why it is refused)."""
    return os.path.lexists(path) if within is not None else path.exists()


def read_yaml(path: Path, within: Path | None) -> Any:
    return parse_yaml(read_text(path, within), path)


def read_mapping(path: Path, within: Path | None) -> dict[str, Any]:
    data = read_yaml(path, within)
    if not isinstance(data, dict):
        raise RecordError(
            f"{display(path)}:1: expected a mapping of keys to values, found {type(data).__name__}",
            hint="the file must hold `key: value` lines at the top level",
        )
    return data


def read_list(path: Path, within: Path | None) -> list[Any]:
    """A top-level YAML list; a missing or empty file is an empty list."""
    if not exists(path, within):
        return []
    data = read_yaml(path, within)
    if data is None:
        return []
    if not isinstance(data, list):
        raise RecordError(
            f"{display(path)}:1: expected a list of entries ('- ...'), found {type(data).__name__}",
            hint="each entry starts with '- ' at the left margin",
        )
    return data


def dump_yaml(data: Any) -> str:
    """Render new data as block YAML that the reader loads back to the same values.

    PyYAML writes it: ruamel.yaml speaks YAML 1.2, where `yes` is text, while the C loader speaks
    1.1, where it is true; writing with the reader's own dialect keeps every word verbatim. The
    result is read back before anyone writes it: a character YAML folds (U+0085) makes it fall
    back to escapes, and text that is not Unicode at all is refused.
    """
    refuse_surrogates(data)
    for readable in (True, False):
        text = yaml.safe_dump(
            data, default_flow_style=False, sort_keys=False, allow_unicode=readable, width=4096
        )
        try:
            if yaml.load(text, Loader=_Loader) == data:
                return text
        except yaml.YAMLError:
            continue
    raise RecordError("these words cannot be written to YAML and read back the same")


def refuse_surrogates(data: Any) -> None:
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                "the words hold bytes that are not valid UTF-8 text; nothing was written",
                hint="type them in a UTF-8 terminal (LANG=C.UTF-8 or similar)",
            ) from None
    elif isinstance(data, dict):
        for key, value in data.items():
            refuse_surrogates(key)
            refuse_surrogates(value)
    elif isinstance(data, list | tuple):
        for value in data:
            refuse_surrogates(value)


def edit_mapping(path: Path, updates: dict[str, Any], within: Path | None) -> str:
    """The text of the YAML mapping at `path` with `updates` applied, comments and order kept."""
    from ruamel.yaml import YAML

    original = read_text(path, within)
    expected = read_mapping(path, within)
    expected.update(updates)
    editor = YAML(typ="rt")
    editor.width = 4096
    editor.preserve_quotes = True
    document = round_trip_load(editor, original, path)
    for key, value in updates.items():
        document[key] = value
    buffer = io.StringIO()
    editor.dump(document, buffer)
    text = buffer.getvalue()
    if parse_yaml(text, path) != expected:
        raise RecordError(
            f"{display(path)}: could not edit this file without changing other values",
            hint="edit the file by hand, then run the command again",
        )
    return text


def round_trip_load(editor: Any, text: str, source: Path, line_offset: int = 0) -> Any:
    """ruamel.yaml's round-trip load, its errors (a duplicate key, say) turned into ours."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return editor.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark is not None else 1 + line_offset
        raise RecordError(
            f"{display(source)}:{line}: {exc.problem or exc.context or 'malformed YAML'}",
            hint="fix it by hand (a key written twice, say); nothing was changed",
        ) from None
    except YAMLError as exc:
        raise RecordError(f"{display(source)}: {exc}", hint="nothing was changed") from None
