"""`sdd skill list | show | validate`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sdd_git.root import Root
from tests.conftest import SddRunner

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skills"


def install(root: Root, name: str, where: str = ".sdd/skills") -> Path:
    target = root.path / where / name
    shutil.copytree(FIXTURES / name, target)
    return target


def test_skill_list_shows_each_skill_and_where_it_was_found(sdd: SddRunner, root: Root) -> None:
    assert "no skills yet" in sdd("skill", "list").stderr
    install(root, "internal-comms", ".agents/skills")
    install(root, "webapp-testing", ".claude/skills")
    shown = sdd("skill", "list")
    assert shown.code == 0
    lines = shown.stdout.splitlines()
    assert lines[0].split() == ["NAME", "FOUND", "IN", "DESCRIPTION"]
    assert lines[1].startswith("internal-comms") and ".agents/skills" in lines[1]
    assert lines[2].startswith("webapp-testing") and ".claude/skills" in lines[2]
    listed = json.loads(sdd("skill", "list", "--json").stdout)
    assert [s["name"] for s in listed] == ["internal-comms", "webapp-testing"]
    assert listed[1]["path"] == ".claude/skills/webapp-testing/SKILL.md"
    assert listed[1]["license"] == "Complete terms in LICENSE.txt"


def test_skill_show_prints_fields_files_and_body(sdd: SddRunner, root: Root) -> None:
    install(root, "webapp-testing")
    shown = sdd("skill", "show", "webapp-testing")
    assert shown.code == 0
    assert shown.stdout.startswith("name: webapp-testing\ndescription: Toolkit")
    assert "files: .sdd/skills/webapp-testing/LICENSE.txt" in shown.stdout
    assert "# Web Application Testing" in shown.stdout
    as_json = json.loads(sdd("skill", "show", "webapp-testing", "--json").stdout)
    assert as_json["body"].startswith("# Web Application Testing")
    missing = sdd("skill", "show", "pdf")
    assert missing.code == 1 and "no skill 'pdf'" in missing.stderr
    assert "webapp-testing" in missing.stderr  # the hint names the skills there are


def test_skill_validate_passes_real_skills(sdd: SddRunner, root: Root) -> None:
    install(root, "internal-comms")
    install(root, "webapp-testing", ".github/skills")
    result = sdd("skill", "validate")
    assert result.code == 0, result.stderr
    assert "checked 2 skill file(s): 0 with errors" in result.stderr
    assert sdd("skill", "validate", str(FIXTURES)).code == 0


def test_skill_validate_names_file_line_and_key(sdd: SddRunner, root: Root) -> None:
    path = root.path / ".claude/skills/Review/SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: Review\ndescription: Reviews.\ntools: Read\n---\nBody.\n")
    result = sdd("skill", "validate")
    assert result.code == 1
    assert "error: .claude/skills/Review/SKILL.md:2: key 'name': 'Review' is not a skill name" in (
        result.stderr
    )
    assert "error: .claude/skills/Review/SKILL.md:4: key 'tools': is not a key of the Agent" in (
        result.stderr
    )
    assert "hint: the standard allows only name, description" in result.stderr
    assert "1 with errors" in result.stderr


def test_skill_validate_on_a_folder_without_skills_says_so(
    sdd: SddRunner, root: Root, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = sdd("skill", "validate", str(empty))
    assert result.code == 1 and f"no SKILL.md in {empty}" in result.stderr


def test_skill_validate_warns_of_a_roles_unknown_skill(sdd: SddRunner, root: Root) -> None:
    role = root.sdd / "roles" / "writer" / "ROLE.md"
    role.parent.mkdir(parents=True)
    role.write_text(
        "---\nrole: writer\njob: Write updates\nlevel: 1\ntoolPolicy.delegation: deny\n"
        "skills: [internal-comms]\n---\nWrites.\n"
    )
    result = sdd("skill", "validate")
    assert result.code == 0
    assert "warning: .sdd/roles/writer/ROLE.md: key 'skills': no skill 'internal-comms'" in (
        result.stderr
    )
