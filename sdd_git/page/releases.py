"""A release as she reads it: its title, her sentence, the changes it holds (each in her words),
and whether its git tag was written. The file itself (memory/releases/R-n.md: YAML front matter,
then the notes in Markdown) is the record; this is how the page shows it, never its raw text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git.errors import SddError
from sdd_git.root import Root


@dataclass(frozen=True)
class Block:
    kind: str  # "heading", "quote" or "text"
    text: str


@dataclass(frozen=True)
class ReleaseDocument:
    id: str
    title: str
    words: str | None  # her sentence: the words of the release's decision
    day: str  # "on 2 December"
    blocks: tuple[Block, ...]  # the notes: each change, its words, any failure she accepted
    tag: str  # whether the git tag was written, in a sentence


def releases_of(root: Root, change_id: str) -> list[ReleaseDocument]:
    """The releases that hold this change, newest first, each as a document."""
    from sdd_git import beneath

    found = []
    for name in sorted(beneath.entries(root.path, root.releases).files, reverse=True):
        if name.startswith("R-") and name.endswith(".md"):
            text = beneath.read_text(root.path, root.releases / name)
            if change_id in text:
                found.append(document(root, name.removesuffix(".md"), text))
    return found


def document(root: Root, release_id: str, text: str) -> ReleaseDocument:
    from sdd_git.page.herwords import on_day

    meta, body = _split(root, release_id, text)
    words = None
    decision = meta.get("decision")
    if isinstance(decision, str):
        from sdd_git.records import decisions

        try:
            words = decisions.load(root).by_id(decision).words
        except SddError:  # a release whose decision is gone: the notes still say what it is
            words = None
    return ReleaseDocument(
        id=release_id,
        title=f"Release {release_id}",
        words=words,
        day=on_day(meta.get("at")),
        blocks=tuple(_blocks(body)),
        tag=_tag_words(meta),
    )


def _split(root: Root, release_id: str, text: str) -> tuple[dict[str, Any], str]:
    """The front matter as data and the notes; a file that does not split is all notes."""
    from sdd_git.roles.rolefile import split_front_matter
    from sdd_git.yamlio import parse_yaml

    try:
        parts = split_front_matter(text, f"memory/releases/{release_id}.md")
        meta = parse_yaml(parts.front, root.releases / f"{release_id}.md")
    except SddError:
        return {}, text
    return (meta if isinstance(meta, dict) else {}), parts.body


def _blocks(body: str) -> list[Block]:
    """The notes' Markdown, as the few blocks the release file is made of: headings, quotes
    (her words) and plain lines. The top heading is the document's title, not repeated."""
    blocks: list[Block] = []
    quote: list[str] = []

    def close_quote() -> None:
        if quote:
            blocks.append(Block("quote", "\n".join(quote).strip()))
            quote.clear()

    for line in body.splitlines():
        if line.startswith(">"):
            quote.append(line[1:].removeprefix(" "))
            continue
        close_quote()
        if line.startswith("# ") or line.startswith("The git tag "):
            continue  # the title, and the tag (said apart)
        if line.startswith("#"):
            blocks.append(Block("heading", line.lstrip("#").strip()))
        elif line.strip():
            blocks.append(Block("text", line.strip()))
    close_quote()
    return blocks


def _tag_words(meta: dict[str, Any]) -> str:
    name = meta.get("tag")
    if not name:
        return "No git tag was asked for. Nothing was pushed or deployed."
    if meta.get("tag_written"):
        return f"The git tag {name} was written. Nothing was pushed or deployed."
    note = str(meta.get("tag_note") or "the tag was not written").removeprefix("the tag ")
    return f"The git tag {name} {note}. Nothing was pushed or deployed."
