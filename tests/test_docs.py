"""The README stays a front door and the manual behind it stays whole: the README is under 300
lines, mkdocs.yml's nav lists every page of docs/ (a page it omits is orphaned), and every
relative link of the README and of each page reaches a file, and its anchor a heading there.
CI also builds the manual with `mkdocs build --strict`; these checks need no mkdocs."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"#{1,6} (.+)")


def nav_pages(entries: list[object]) -> list[str]:
    found: list[str] = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            found += nav_pages(value)
        else:
            found.append(str(value))
    return found


def prose(page: Path) -> list[str]:
    """The page's lines outside fenced blocks, where links and headings are."""
    lines: list[str] = []
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """Python-Markdown's toc slug, which mkdocs gives each heading as its anchor."""
    text = re.sub(r"`|\*\*", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    return {slug(m[1]) for line in prose(page) if (m := HEADING.fullmatch(line))}


def test_the_readme_is_a_front_door_under_300_lines() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines < 300, f"README.md has {lines} lines: move reference into a page of docs/"


def test_the_manuals_nav_lists_every_page_and_only_pages_that_exist() -> None:
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages
    assert len(listed) == len(set(listed)), "a page listed twice in the nav"
    assert config["strict"] is True
    assert config["validation"]["links"]["anchors"] == "warn"  # a warning fails, being strict


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_relative_link_of_a_page_reaches_a_file_and_its_heading(page: Path) -> None:
    broken: list[str] = []
    for line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # an address on the web: not ours to check offline
            path, _, anchor = unquote(target).partition("#")
            goal = (page.parent / path).resolve() if path else page
            if not goal.exists():
                broken.append(f"{target}: no such file")
            elif anchor and anchor not in anchors(goal):
                broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}: {broken}"


def test_the_readme_links_into_the_manual() -> None:
    readme = "\n".join(prose(REPO / "README.md"))
    assert "(docs/index.md)" in readme
    assert len(set(re.findall(r"\(docs/[a-z-]+\.md", readme))) >= 10


def test_the_anchor_of_a_heading_is_the_one_mkdocs_makes() -> None:
    assert slug("Routing: `sdd work CH`") == "routing-sdd-work-ch"
    assert slug("Her page (`sdd page`)") == "her-page-sdd-page"
    assert slug("Trackers and chat: Jira, Aha!, Asana, Slack, Teams") == (
        "trackers-and-chat-jira-aha-asana-slack-teams"
    )
