"""A pack's always_allow rules count only once the person trusts them (`sdd role trust`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from sdd_git.roles.profile import Rule
from sdd_git.roles.registry import find_role, load_registry
from sdd_git.roles.trust import rules_sha256
from sdd_git.root import Root
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
    assert "Trust these 1 rule(s)? [y/N]" in result.stderr
    assert 'run_command with command "pytest -q"' in result.stderr
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.boundary.always_allow == (Rule("run_command", PYTEST),)
    assert role.trust is not None and role.trust.state == "trusted"
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
    assert "they changed since you trusted them" in shown.stdout

    again = sdd("role", "trust", "helper", input="yes\n")
    assert again.code == 0 and "changed since you last trusted" in again.stderr
    assert for_a_run(root) == (Rule("run_command", {"command": "rm -rf /"}),)
    entries = yaml.safe_load((root.sdd / "trust.yaml").read_text())
    assert len(entries) == 1  # her newer confirmation replaces the older one
    assert entries[0]["source"] == str(path)


@pytest.mark.parametrize("answer", ["", "n\n", "sure\n"], ids=["end-of-input", "no", "other"])
def test_trust_without_her_yes_records_nothing(
    sdd: SddRunner, root: Root, isolated_home: Path, answer: str
) -> None:
    write_pack(packs(isolated_home))
    result = sdd("role", "trust", "helper", input=answer)
    assert result.code == 0, result.stderr
    assert "nothing was recorded" in result.stderr
    assert "sdd role trust helper" in result.stderr
    assert not (root.sdd / "trust.yaml").exists()
    assert find_role(root, "helper", use_cache=False)[0].boundary.always_allow == ()


def test_the_trust_file_is_written_whole_with_what_she_confirmed(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    path = write_pack(packs(isolated_home))
    write_pack(packs(isolated_home), "other")
    assert sdd("role", "trust", "other", "--yes").code == 0
    assert sdd("role", "trust", "helper", input="y\n").code == 0
    assert [p.name for p in root.sdd.iterdir() if p.name.startswith(".trust")] == []
    text = (root.sdd / "trust.yaml").read_text()
    assert text.startswith("# ")
    entries = yaml.safe_load(text)
    assert [e["role"] for e in entries] == ["other", "helper"]
    helper = entries[1]
    assert helper["source"] == str(path)
    assert helper["always_allow_sha256"] == rules_sha256((Rule("run_command", PYTEST),))
    assert helper["confirmed"] == "answered y" and entries[0]["confirmed"] == "--yes"
    assert isinstance(helper["at"], str) and helper["at"].endswith("Z")
    already = sdd("role", "trust", "helper")
    assert already.code == 0 and "already" in already.stderr and "[y/N]" not in already.stderr


def test_the_rules_hash_is_of_their_canonical_json() -> None:
    import hashlib

    rules = (Rule("run_command", {"command": "ls", "cwd": "é"}),)
    same = (Rule("run_command", {"cwd": "é", "command": "ls"}),)
    canonical = '[{"inputs":{"command":"ls","cwd":"é"},"tool":"run_command"}]'
    assert rules_sha256(rules) == hashlib.sha256(canonical.encode()).hexdigest()
    assert rules_sha256(same) == rules_sha256(rules)


def test_trust_is_for_that_pack_file_only(
    sdd: SddRunner, root: Root, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pack(packs(isolated_home))
    assert sdd("role", "trust", "helper", "--yes").code == 0
    elsewhere = tmp_path / "other-home"
    write_pack(elsewhere / "roles")  # the same rules, from another place
    monkeypatch.setenv("SDD_HOME", str(elsewhere))
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.boundary.always_allow == () and role.trust is not None
    assert role.trust.state == "untrusted"  # she never trusted this file


def test_a_broken_trust_file_trusts_nothing_and_is_not_overwritten(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    write_pack(packs(isolated_home))
    broken = "- role: helper\n  source: [\n"
    (root.sdd / "trust.yaml").write_text(broken)
    registry = load_registry(root)
    helper = registry.get("helper")
    assert helper is not None and helper.boundary.always_allow == ()
    assert any("no pack's always_allow rules count" in w for w in registry.warnings)
    result = sdd("role", "trust", "helper", "--yes")
    assert result.code == 1 and "trust.yaml" in result.stderr
    assert (root.sdd / "trust.yaml").read_text() == broken


def test_repo_roles_rules_count_as_written(root: Root) -> None:
    path = write_pack(root.sdd / "roles")
    role, _ = find_role(root, "helper", use_cache=False)
    assert role.source == "repo" and role.trust is None
    assert role.boundary.always_allow == (Rule("run_command", PYTEST),)
    assert path.is_file()


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
    # Only the rule she just allowed: the pack's own rule was never confirmed.
    assert role.boundary.always_allow == (Rule("read_file", {"path": "a.txt"}),)
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


def test_trusting_a_pack_after_saving_a_rule_for_it_adds_its_rules_to_the_copy(
    sdd: SddRunner, root: Root, isolated_home: Path
) -> None:
    """`sdd allow --always` on a pack's stop copies the pack into the repo without the rules she
    had not confirmed; trusting the pack later must reach the copy, which is what a run reads."""
    from sdd_git.roles.manage import add_always_allow

    write_pack(packs(isolated_home))
    mine = Rule("run_command", {"command": "echo mine"})
    add_always_allow(root, "helper", "run_command", {"command": "echo mine"})
    assert for_a_run(root) == (mine,)

    declined = sdd("role", "trust", "helper", input="")
    assert declined.code == 0 and "this repo's copy" in declined.stderr
    assert for_a_run(root) == (mine,)

    result = sdd("role", "trust", "helper", input="y\n")
    assert result.code == 0, result.stderr
    assert "1 added to .sdd/roles/helper/ROLE.md" in result.stderr
    assert for_a_run(root) == (mine, Rule("run_command", PYTEST))
    again = sdd("role", "trust", "helper")
    assert again.code == 0 and "already" in again.stderr and "[y/N]" not in again.stderr
    assert for_a_run(root) == (mine, Rule("run_command", PYTEST))
