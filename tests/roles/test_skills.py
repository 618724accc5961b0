"""Skills as the Agent Skills standard defines them: the strict check (`sdd skill validate`),
the lenient discovery a run uses, and agreement with the reference validator `skills-ref`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from skills_ref.validator import validate as reference_validate

from sdd_git.roles import skills
from sdd_git.roles.templates import shipped_dir
from sdd_git.root import Root

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skills"
REAL = ("webapp-testing", "internal-comms")  # from anthropics/skills, see fixtures/skills/SOURCE


def make_skill(base: Path, folder: str, front: str, body: str = "Do the thing.\n") -> Path:
    path = base / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{front}---\n{body}", encoding="utf-8")
    return path


def install(root: Root, name: str, where: str = ".sdd/skills") -> Path:
    target = root.path / where / name
    shutil.copytree(FIXTURES / name, target)
    return target


# --- the strict check ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", REAL)
def test_real_skills_pass_our_check_and_the_reference_validator(name: str) -> None:
    checked = skills.check_file(FIXTURES / name / "SKILL.md")
    assert checked.problems == ()
    assert reference_validate(FIXTURES / name) == []


BAD = [
    # (folder, frontmatter, key, line, words in the message)
    ("x", "description: d\n", None, 2, "'name' is missing"),
    ("x", "name: x\n", None, 2, "'description' is missing"),
    ("Big", "name: Big\ndescription: d\n", "name", 2, "not a skill name"),
    ("-x", "name: -x\ndescription: d\n", "name", 2, "not a skill name"),
    ("a--b", "name: a--b\ndescription: d\n", "name", 2, "not a skill name"),
    ("x" * 65, f"name: {'x' * 65}\ndescription: d\n", "name", 2, "not a skill name"),
    ("other", "name: mine\ndescription: d\n", "name", 2, "does not match its folder 'other'"),
    ("x", "name: x\ndescription: ''\n", "description", 3, "must be non-empty text"),
    ("x", f"name: x\ndescription: {'d' * 1025}\n", "description", 3, "1025 characters"),
    ("x", f"name: x\ndescription: d\ncompatibility: {'c' * 501}\n", "compatibility", 4, "501"),
    ("x", "name: x\ndescription: d\nversion: 2\n", "version", 4, "not a key of the Agent"),
    ("x", "name: x\ndescription: d\nmetadata: text\n", "metadata", 4, "must be a map"),
    ("x", "name: x\nname: x\ndescription: d\n", "name", 3, "appears twice"),
]


@pytest.mark.parametrize(("folder", "front", "key", "line", "words"), BAD)
def test_each_rule_of_the_standard_is_an_error_with_file_line_and_key(
    tmp_path: Path, folder: str, front: str, key: str | None, line: int, words: str
) -> None:
    path = make_skill(tmp_path, folder, front)
    checked = skills.check_file(path)
    assert not checked.ok
    problem = next(p for p in checked.problems if words in p.message)
    assert (problem.key, problem.line, problem.severity) == (key, line, "error")
    assert problem.path.endswith("SKILL.md") and problem.hint
    # The reference validator refuses the same file: our check is not looser than it. (It does
    # not check metadata's type, which the standard's text does: a map of text to text.)
    if key != "metadata":
        assert reference_validate(path.parent) != []


def test_a_file_without_frontmatter_is_an_error_at_line_1(tmp_path: Path) -> None:
    path = tmp_path / "x" / "SKILL.md"
    path.parent.mkdir()
    path.write_text("# Small commits\nOne idea per commit.\n")
    (problem,) = skills.check_file(path).problems
    assert problem.line == 1 and "frontmatter" in problem.message


def test_an_unquoted_colon_is_an_error_that_says_quote_it(tmp_path: Path) -> None:
    path = make_skill(tmp_path, "pdf", "name: pdf\ndescription: Use when: the file is a PDF\n")
    (problem,) = skills.check_file(path).problems
    assert problem.line == 3 and "not valid YAML" in problem.message
    assert problem.hint.startswith("quote the value")
    assert reference_validate(path.parent) != []


def test_optional_fields_of_the_standard_pass(tmp_path: Path) -> None:
    front = (
        "name: pdf-processing\ndescription: Extract text from PDFs. Use for PDFs.\n"
        "license: Apache-2.0\ncompatibility: Requires pdftotext\n"
        'metadata:\n  author: example-org\n  version: "1.0"\n'
        "allowed-tools: Bash(pdftotext:*) Read\n"
    )
    path = make_skill(tmp_path, "pdf-processing", front)
    assert skills.check_file(path).problems == ()
    assert reference_validate(path.parent) == []


def test_what_only_skills_ref_refuses_is_a_warning(tmp_path: Path) -> None:
    path = make_skill(tmp_path, "x", "name: x\ndescription: d\nmetadata: {version: 1.0}\n")
    checked = skills.check_file(path)
    assert checked.ok
    assert {p.severity for p in checked.problems} == {"warning"}
    assert any("flow style" in p.message for p in checked.problems)
    assert any("quote it" in p.hint for p in checked.problems)


# --- discovery --------------------------------------------------------------------------------


def test_skills_are_found_in_the_four_folders(root: Root) -> None:
    for index, where in enumerate(skills.SKILL_FOLDERS):
        make_skill(root.path / where, f"s{index}", f"name: s{index}\ndescription: skill {index}\n")
    catalog = skills.discover(root.path)
    assert {s.name: s.source for s in catalog.skills.values()} == {
        f"s{i}": where for i, where in enumerate(skills.SKILL_FOLDERS)
    }
    assert catalog.warnings == ()


def test_the_first_folder_wins_a_name_clash_with_a_warning(root: Root) -> None:
    make_skill(root.path / ".claude/skills", "review", "name: review\ndescription: claude's\n")
    make_skill(root.path / ".sdd/skills", "review", "name: review\ndescription: sdd's\n")
    catalog = skills.discover(root.path)
    assert catalog.skills["review"].description == "sdd's"
    (warning,) = catalog.warnings
    assert ".claude/skills/review/SKILL.md is shadowed by .sdd/skills/review/SKILL.md" in warning


def test_discovery_is_lenient_as_the_standard_advises(root: Root, tmp_path: Path) -> None:
    base = root.path / ".agents/skills"
    make_skill(base, "folder-name", "name: other-name\ndescription: loads anyway\n")
    make_skill(base, "no-description", "name: no-description\n")
    make_skill(base, "colon", "name: colon\ndescription: Use when: a colon is unquoted\n")
    outside = make_skill(tmp_path / "elsewhere", "linked", "name: linked\ndescription: out\n")
    (base / "linked").symlink_to(outside.parent)
    catalog = skills.discover(root.path)
    assert sorted(catalog.skills) == ["colon", "other-name"]
    assert catalog.skills["colon"].description == "Use when: a colon is unquoted"
    text = "\n".join(catalog.warnings)
    assert "does not match its folder 'folder-name'" in text
    assert "skipped .agents/skills/no-description/SKILL.md" in text
    # A linked skill folder is never followed (CONTRACT §6), wherever it leads.
    assert (
        "skipped .agents/skills/linked is a link; sdd reads only regular files inside the "
        "product" in text
    )


def test_a_roles_unknown_skill_is_a_warning_naming_the_file_and_the_skill(root: Root) -> None:
    install(root, "internal-comms")
    catalog = skills.discover(root.path)
    role_file = root.sdd / "roles" / "writer" / "ROLE.md"
    found, warnings = skills.for_role(
        catalog, ("internal-comms", "no-such-skill"), role_file, root.path
    )
    assert [s.name for s in found] == ["internal-comms"]
    (warning,) = warnings
    assert ".sdd/roles/writer/ROLE.md" in warning and "no skill 'no-such-skill'" in warning


# --- what a model receives --------------------------------------------------------------------


def test_the_catalog_holds_name_and_description_never_frontmatter_or_body(root: Root) -> None:
    install(root, "webapp-testing")
    skill = skills.discover(root.path).skills["webapp-testing"]
    text = skills.catalog_text([skill])
    assert "<name>webapp-testing</name>" in text and "using Playwright" in text
    assert "license" not in text and "# Web Application Testing" not in text
    assert "---" not in text


def test_activation_is_the_body_with_its_folder_and_files_never_the_frontmatter(
    root: Root,
) -> None:
    install(root, "webapp-testing", ".claude/skills")
    skill = skills.discover(root.path).skills["webapp-testing"]
    text = skills.activation(skill, root.path)
    assert text.startswith('<skill_content name="webapp-testing">\n# Web Application Testing')
    assert "license: Complete terms" not in text and "name: webapp-testing" not in text
    assert "Skill folder: .claude/skills/webapp-testing" in text
    assert "<file>.claude/skills/webapp-testing/scripts/with_server.py</file>" in text
    assert "<file>.claude/skills/webapp-testing/LICENSE.txt</file>" in text


# --- what sdd ships ---------------------------------------------------------------------------


def test_every_skill_sdd_ships_or_shares_passes_the_reference_validator(
    root: Root, tmp_path: Path
) -> None:
    """skills-ref (the standard's reference validator, a dev dependency) on the shipped
    templates' skills and on a skill as `sdd role share` writes it."""
    from sdd_git.cli.main import main

    shipped = sorted(p.parent for p in shipped_dir().glob("*/skills/*/SKILL.md"))
    for folder in shipped:
        assert reference_validate(folder) == [], folder
        assert skills.check_file(folder / "SKILL.md").ok, folder
    install(root, "internal-comms")
    role = root.sdd / "roles" / "writer" / "ROLE.md"
    role.parent.mkdir(parents=True)
    role.write_text(
        "---\nrole: writer\njob: Write updates\nlevel: 1\ntoolPolicy.delegation: deny\n"
        "skills: [internal-comms]\n---\nWrites.\n"
    )
    import os

    cwd = Path.cwd()
    os.chdir(root.path)
    try:
        with pytest.raises(SystemExit) as done:
            main(["role", "share", "writer"])
    finally:
        os.chdir(cwd)
    assert done.value.code in (0, None)
    shared = root.path / "templates" / "writer" / "skills" / "internal-comms"
    assert reference_validate(shared) == []
