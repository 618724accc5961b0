"""`use_skill`: the body of a skill, found in any of the four skill folders; never frontmatter."""

from __future__ import annotations

import shutil
from pathlib import Path

from sdd_git.root import Root
from sdd_git.tools.catalog import TOOL_CLASSES
from tests.tools import fails, make_context, run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skills"


def test_use_skill_is_a_read_tool() -> None:
    assert TOOL_CLASSES["use_skill"] == "read"


def test_use_skill_loads_the_body_with_its_folder(root: Root) -> None:
    shutil.copytree(FIXTURES / "internal-comms", root.path / ".github/skills/internal-comms")
    outcome = run(make_context(root), "use_skill", name="internal-comms")
    assert outcome.text.startswith('<skill_content name="internal-comms">\n## When to use')
    assert "Skill folder: .github/skills/internal-comms" in outcome.text
    assert "license: Complete terms" not in outcome.text
    assert outcome.data == {
        "skill": "internal-comms",
        "path": ".github/skills/internal-comms/SKILL.md",
    }
    assert run(make_context(root), "use_skill", name="/internal-comms").data == outcome.data


def test_use_skill_names_the_skills_there_are(root: Root) -> None:
    assert fails(make_context(root), "use_skill", name="pdf") == (
        "no skill named 'pdf'; the skills of this product: none"
    )
    shutil.copytree(FIXTURES / "internal-comms", root.path / ".sdd/skills/internal-comms")
    message = fails(make_context(root), "use_skill", name="pdf")
    assert message.endswith("the skills of this product: internal-comms")


def test_use_skill_reads_an_edit_made_after_discovery(root: Root) -> None:
    path = root.path / ".sdd/skills/notes/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: notes\ndescription: Take notes.\n---\nFirst.\n")
    ctx = make_context(root)
    assert "First." in run(ctx, "use_skill", name="notes").text
    path.write_text("---\nname: notes\ndescription: Take notes.\n---\nSecond.\n")
    assert "Second." in run(ctx, "use_skill", name="notes").text
