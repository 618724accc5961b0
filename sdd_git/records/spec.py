"""Specs: a YAML front matter and `## S<n> Title` sections holding `- C<n>: ...` checks."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import frontmatter
from sdd_git.errors import RecordError
from sdd_git.records.ids import SPEC_ID
from sdd_git.yamlio import display, dump_yaml, parse_yaml

_SECTION_HEADING = re.compile(r"^## (S\d+)(?:[ \t]+(.*))?$", re.MULTILINE)
_CHECK_LINE = re.compile(r"^[ \t]*- (C\d+):[ \t]*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Check:
    id: str
    text: str


@dataclass(frozen=True)
class Section:
    spec_id: str
    id: str
    title: str
    text: str  # heading included, whitespace at both ends stripped
    body: str  # the text under the heading, stripped
    line: int  # 1-based line of the heading in the file
    start: int  # offsets of the section in the file's text
    end: int
    checks: tuple[Check, ...]

    @property
    def full_id(self) -> str:
        return f"{self.spec_id}#{self.id}"

    @property
    def hash(self) -> str:
        return section_hash(self.text)


@dataclass(frozen=True)
class Spec:
    path: Path
    text: str
    meta: dict[str, Any]
    sections: tuple[Section, ...]

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    def section(self, section_id: str) -> Section:
        for section in self.sections:
            if section.id == section_id:
                return section
        known = ", ".join(s.id for s in self.sections) or "none"
        raise RecordError(
            f"{display(self.path)}: no section {section_id} in {self.id} (sections: {known})",
            hint=f"a section is a heading line '## {section_id} Title'",
        )


def section_hash(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def parse_spec(path: Path, text: str) -> Spec:
    try:
        parts = frontmatter.split(text)
    except frontmatter.NotOpened:
        raise RecordError(
            f"{display(path)}:1: a spec must start with a '---' line opening its front matter",
            hint="put the id, title, kind and change between two '---' lines at the top",
        ) from None
    except frontmatter.NotClosed:
        raise RecordError(
            f"{display(path)}:1: the front matter is never closed",
            hint="add a line '---' after the front matter",
        ) from None
    text = parts.text
    meta = parse_yaml(parts.front, path, line_offset=1)
    if not isinstance(meta, dict):
        raise RecordError(f"{display(path)}:2: the front matter must be `key: value` lines")
    spec_id = meta.get("id")
    if not isinstance(spec_id, str) or not SPEC_ID.match(spec_id):
        raise RecordError(
            f"{display(path)}:2: key 'id' must be a spec id like SPEC-0001, found {spec_id!r}",
            hint="set 'id: SPEC-0001' (the file's own name) in the front matter",
        )
    body_start = parts.body_start
    return Spec(
        path=path, text=text, meta=meta, sections=_sections(path, spec_id, text, body_start)
    )


def _sections(path: Path, spec_id: str, text: str, body_start: int) -> tuple[Section, ...]:
    headings = list(_SECTION_HEADING.finditer(text, body_start))
    sections: list[Section] = []
    seen: dict[str, int] = {}
    for index, match in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        raw = text[match.start() : end]
        line = text.count("\n", 0, match.start()) + 1
        section_id = match.group(1)
        if section_id in seen:
            raise RecordError(
                f"{display(path)}:{line}: section {section_id} appears twice "
                f"(first at line {seen[section_id]})",
                hint="give each section its own number",
            )
        seen[section_id] = line
        body = raw[match.end() - match.start() :].strip()
        sections.append(
            Section(
                spec_id=spec_id,
                id=section_id,
                title=(match.group(2) or "").strip(),
                text=raw.strip(),
                body=body,
                line=line,
                start=match.start(),
                end=end,
                checks=tuple(
                    Check(m.group(1), m.group(2).strip()) for m in _CHECK_LINE.finditer(body)
                ),
            )
        )
    return tuple(sections)


def read_spec(path: Path) -> Spec:
    """The spec at `path`, which is always `ROOT/memory/specs/ID.md`: read beneath ROOT, with
    no link followed and nothing but a regular file opened."""
    from sdd_git import beneath

    try:
        text = beneath.read_text(path.parents[2], path)
    except (FileNotFoundError, NotADirectoryError):
        raise RecordError(f"{display(path)}: spec file not found") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{display(path)}: not UTF-8 text ({exc.reason})") from None
    return parse_spec(path, text)


def with_section_body(spec: Spec, section_id: str, body: str) -> str:
    """The spec's text with one section's body replaced; every other byte stays."""
    section = spec.section(section_id)
    line_end = spec.text.find("\n", section.start)
    if line_end == -1 or line_end >= section.end:
        heading = spec.text[section.start : section.end].rstrip("\n") + "\n"
    else:
        heading = spec.text[section.start : line_end + 1]
    content = body.strip()
    new_section = heading + (content + "\n" if content else "")
    if section.end < len(spec.text):
        new_section += "\n"
    return spec.text[: section.start] + new_section + spec.text[section.end :]


def new_spec_text(meta: dict[str, Any]) -> str:
    return "---\n" + dump_yaml(meta) + "---\n## S1 Reading\n"
