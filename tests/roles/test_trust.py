"""What a role file grants counts only once she confirms it (CONTRACT §13): her packs, packages'
packs, other hosts' agent files and this repo's own role files alike (`sdd role trust`,
`sdd trust accept`); person commands that write a role file record it as they write."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sdd_git.roles.profile import Rule
from sdd_git.roles.registry import find_role
from sdd_git.root import Root
from sdd_git.trust import ledger
from tests.conftest import SddRunner

PYTEST = {"command": "pytest -q"}


def write_pack(folder: Path, name: str = "helper", command: str = "pytest -q") -> Path:
    path = folder / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Help\nlevel: 0\ntoolPolicy.delegation: deny\n"
        "boundary:\n"
        f"  always_allow:\n    - {{tool: run_command, inputs: {{command: {command!r}}}}}\n"
        "  ask_first:\n    - {tool: git_push}\n"
        "---\nHelp out.\n"
    )
    return path


def packs(home: Path) -> Path:
    return home / ".sdd" / "roles"


def for_a_run(root: Root, name: str = "helper") -> tuple[Rule, ...]:
    """The always_allow rules a run enforces: the role as `sdd role run` loads it."""
    role, _ = find_role(root, name, use_cache=False)
    return role.boundary.always_allow


def test_a_packs_rules_count_only_after_she_trusts_them(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    write_pack(packs(isolated_home))
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.source == "user"
    assert role.boundary.always_allow == ()
    assert role.boundary.ask_first == (Rule("git_push"),)  # ask_first counts all along
    assert role.trust is not None and role.trust.state == "untrusted"
    assert for_a_run(root) == ()

    result = sdd("role", "trust", "helper", input="y\n")
    assert result.code == 0, result.stderr
    assert "Confirm what it grants? [y/N]" in result.stderr
    assert 'always-allow gains `run_command` with command "pytest -q"' in result.stderr
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.boundary.always_allow == (Rule("run_command", PYTEST),)
    assert role.trust is None  # confirmed: loaded whole, with nothing held back
    assert for_a_run(root) == (Rule("run_command", PYTEST),)


def test_changing_a_trusted_packs_rules_untrusts_them(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    path = write_pack(packs(isolated_home))
    assert sdd("role", "trust", "helper", "--yes").code == 0
    assert for_a_run(root) == (Rule("run_command", PYTEST),)

    write_pack(packs(isolated_home), command="rm -rf /")  # the pack is rewritten
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.boundary.always_allow == ()
    assert role.trust is not None and role.trust.state == "changed"
    assert for_a_run(root) == ()
    shown = sdd("role", "show", "helper")
    assert "it changed since you confirmed it" in shown.stdout

    again = sdd("role", "trust", "helper", input="yes\n")
    assert again.code == 0 and '"rm -rf /"' in again.stderr
    assert for_a_run(root) == (Rule("run_command", {"command": "rm -rf /"}),)
    read = ledger.read(root)
    assert [k for k in read.entries if k.endswith("helper/ROLE.md")] == [str(path)]


@pytest.mark.parametrize("answer", ["", "n\n", "sure\n"], ids=["end-of-input", "no", "other"])
def test_trust_without_her_yes_records_nothing(
    sdd: SddRunner, root: Root, isolated_home: Path, answer: str
) -> None:
    write_pack(packs(isolated_home))
    result = sdd("role", "trust", "helper", input=answer)
    assert result.code == 0, result.stderr
    assert "nothing was recorded" in result.stderr
    assert "sdd role trust helper" in result.stderr
    assert find_role(root, "helper", use_cache=False)[0].boundary.always_allow == ()


def test_a_repo_role_written_by_hand_counts_once_she_confirms_it(
    sdd: SddRunner, root: Root
) -> None:
    """A ROLE.md in `.sdd/roles/` may have arrived by a merge: the repository is not her."""
    write_pack(root.sdd / "roles")
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.source == "repo" and role.trust is not None and not role.trust.counts
    assert role.boundary.always_allow == ()
    assert sdd("trust", "accept", ".sdd/roles/helper/ROLE.md").code == 0
    assert for_a_run(root) == (Rule("run_command", PYTEST),)


def test_a_role_she_creates_and_edits_counts_as_she_writes_it(sdd: SddRunner, root: Root) -> None:
    assert sdd("role", "create", "helper", "--job", "Help", "--produces", "other").code == 0
    assert sdd("role", "edit", "helper", "--level", "3").code == 0
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.trust is None and role.level == 3  # confirmed as she wrote it


def test_a_person_command_on_a_merged_role_does_not_confirm_what_it_grants(
    sdd: SddRunner, root: Root
) -> None:
    """`sdd role hide` of a role whose rules she never confirmed leaves them unconfirmed."""
    write_pack(root.sdd / "roles")
    assert sdd("role", "hide", "helper").code == 0
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.trust is not None and not role.trust.counts
    assert role.boundary.always_allow == () and role.hidden is False


def test_a_package_packs_rules_count_only_after_she_trusts_them(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    dist = site / "grantpack-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: grantpack\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[sdd_git.roles]\ngranter = grantpack_roles:ROLE\n")
    (site / "grantpack_roles.py").write_text(
        textwrap.dedent(
            """
            ROLE = (
                "---\\nrole: granter\\njob: Grant\\nlevel: 0\\ntoolPolicy.delegation: deny\\n"
                "boundary:\\n  always_allow:\\n"
                "    - {tool: run_command, inputs: {command: 'pytest -q'}}\\n---\\nGrant.\\n"
            )
            """
        )
    )
    monkeypatch.syspath_prepend(str(site))
    role, _ = find_role(root, "granter", use_cache=False)
    assert role.source == "package" and role.boundary.always_allow == ()
    assert role.trust is not None and role.trust.source.startswith("entry point granter")
    result = sdd("role", "trust", "granter", input="y\n")
    assert result.code == 0, result.stderr
    role, _ = find_role(root, "granter", use_cache=False)
    assert role.boundary.always_allow == (Rule("run_command", PYTEST),)


def test_always_allow_on_an_untrusted_pack_copies_it_without_its_rules(
    root: Root, isolated_home: Path
) -> None:
    from sdd_git.roles.manage import add_always_allow

    write_pack(packs(isolated_home))
    path = add_always_allow(root, "helper", "read_file", {"path": "a.txt"})
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.source == "repo" and path == root.sdd / "roles" / "helper" / "ROLE.md"
    # Only the rule she just allowed is in the copy: the pack's own rule was never confirmed.
    # What else the pack grants was not confirmed either, so the copy waits for her review.
    from sdd_git.roles.rolefile import read_role

    written = read_role(path, folder_name="helper").profile.boundary.always_allow
    assert written == (Rule("read_file", {"path": "a.txt"}),)
    assert role.trust is not None and not role.trust.counts
    assert role.boundary.ask_first == (Rule("git_push"),)


def test_always_allow_on_a_trusted_pack_keeps_its_rules(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    from sdd_git.roles.manage import add_always_allow

    write_pack(packs(isolated_home))
    assert sdd("role", "trust", "helper", "--yes").code == 0
    add_always_allow(root, "helper", "read_file", {"path": "a.txt"})
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.boundary.always_allow == (
        Rule("run_command", PYTEST),
        Rule("read_file", {"path": "a.txt"}),
    )
