from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from sdd_git.parsecache import shard_of
from sdd_git.roles.cache import RoleCache
from sdd_git.roles.registry import find_role, load_registry
from sdd_git.root import Root, init_root
from tests.conftest import SddRunner


def write_role(
    folder: Path, name: str, level: int = 10, delegation: str = "deny", extra: str = ""
) -> Path:
    path = folder / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Do {name} work\nlevel: {level}\n"
        f"toolPolicy.delegation: {delegation}\n{extra}---\nRules of {name}.\n"
    )
    return path


def test_built_ins_are_always_present(root: Root) -> None:
    registry = load_registry(root)
    executor, supervisor = registry.get("executor"), registry.get("supervisor")
    assert executor is not None and supervisor is not None
    assert (executor.level, executor.delegation, executor.deferred_tools) == (0, "deny", True)
    assert (supervisor.level, supervisor.delegation) == (100, "allow")


def test_a_pack_named_executor_cannot_shadow_the_built_in(root: Root, isolated_home: Path) -> None:
    write_role(root.sdd / "roles", "executor", level=100, delegation="allow")
    write_role(isolated_home / ".sdd" / "roles", "supervisor", level=1)
    registry = load_registry(root)
    executor = registry.get("executor")
    assert executor is not None and executor.source == "builtin" and executor.delegation == "deny"
    assert registry.get("supervisor").level == 100  # type: ignore[union-attr]
    shadowing = [w for w in registry.warnings if "cannot be shadowed" in w]
    assert len(shadowing) == 2
    assert find_role(root, "executor")[0].source == "builtin"


def test_a_malformed_pack_beside_good_ones_is_skipped_with_one_line(
    root: Root, sdd: SddRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.path)
    write_role(root.sdd / "roles", "good-one")
    write_role(root.sdd / "roles", "good-two")
    broken = write_role(root.sdd / "roles", "broken")
    broken.write_text(broken.read_text().replace("level: 10", "level: high"))
    registry = load_registry(root)
    assert registry.get("good-one") and registry.get("good-two")
    assert registry.get("broken") is None
    (warning,) = [w for w in registry.warnings if "broken" in w]
    assert "\n" not in warning
    assert (
        warning
        == "warning: skipped .sdd/roles/broken/ROLE.md:4: key 'level': must be a number, not 'high'"
    )

    listed = sdd("role", "list")
    assert listed.code == 0 and "good-one" in listed.stdout and "broken" not in listed.stdout
    assert "warning: skipped .sdd/roles/broken/ROLE.md:4" in listed.stderr
    shown = sdd("role", "show", "broken")
    assert shown.code == 1
    assert shown.stderr.startswith("error: .sdd/roles/broken/ROLE.md:4: key 'level'")


def test_the_grant_cap_loads_a_self_granted_allow_as_deny(root: Root) -> None:
    root.config.write_text(
        root.config.read_text().replace(
            "max_grantable_delegation: null", "max_grantable_delegation: 50"
        )
    )
    write_role(root.sdd / "roles", "greedy", level=90, delegation="allow")
    write_role(root.sdd / "roles", "modest", level=50, delegation="allow")
    registry = load_registry(root)
    assert registry.get("greedy").delegation == "deny"  # type: ignore[union-attr]
    assert registry.get("modest").delegation == "allow"  # type: ignore[union-attr]
    assert any("greedy grants itself delegation allow at level 90" in w for w in registry.warnings)
    assert find_role(root, "greedy")[0].delegation == "deny"


def test_user_packs_come_from_sdd_home(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "sdd-home"
    write_role(home / "roles", "personal")
    monkeypatch.setenv("SDD_HOME", str(home))
    personal = load_registry(root).get("personal")
    assert personal is not None and personal.source == "user"


def test_repo_roles_win_over_user_packs_and_templates(root: Root, isolated_home: Path) -> None:
    write_role(root.sdd / "roles", "builder", level=3)
    write_role(isolated_home / ".sdd" / "roles", "builder", level=4)
    builder = load_registry(root).get("builder")
    assert builder is not None and (builder.source, builder.level) == ("repo", 3)


def test_shipped_templates_are_in_the_registry(root: Root) -> None:
    registry = load_registry(root)
    for name in (
        "spec-steward",
        "builder",
        "qa-author",
        "release-editor",
        "module-lead",
        "product-lead",
    ):
        found = registry.get(name)
        assert found is not None and found.source == "template", name
    assert registry.warnings == ()


def test_packs_carried_by_installed_packages_load_from_the_entry_point_group(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    dist = site / "fakepack-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepack\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[sdd_git.roles]\nreviewer = fakepack_roles:REVIEWER\nbroken = fakepack_roles:BROKEN\n"
        "pair = fakepack_roles:pair\nexplodes = fakepack_roles:explode\n"
    )
    (site / "fakepack_roles.py").write_text(
        textwrap.dedent(
            """
            REVIEWER = (
                "---\\nrole: reviewer\\nlevel: 50\\ntoolPolicy.delegation: deny\\n---\\n"
                "You review code. Carefully.\\n"
            )
            BROKEN = "no front matter"
            def pair():
                return [REVIEWER.replace("reviewer", f"reviewer-{x}") for x in "ab"]
            def explode():
                raise RuntimeError("boom")
            """
        )
    )
    monkeypatch.syspath_prepend(str(site))
    registry = load_registry(root)
    reviewer = registry.get("reviewer")
    assert (
        reviewer is not None and reviewer.source == "package" and reviewer.job == "You review code."
    )
    assert registry.get("reviewer-a") and registry.get("reviewer-b")
    assert any("entry point broken" in w and "skipped" in w for w in registry.warnings)
    assert any("entry point explodes" in w and "boom" in w for w in registry.warnings)


def test_a_role_folder_copied_into_another_clone_shows_up_there(
    tmp_path: Path, sdd: SddRunner
) -> None:
    first = init_root(tmp_path / "clone-a", product="p").root
    second = init_root(tmp_path / "clone-b", product="p").root
    write_role(first.sdd / "roles", "steward", extra="label: Steward\n")
    shutil.copytree(first.sdd / "roles" / "steward", second.sdd / "roles" / "steward")
    listed = sdd("role", "list", "--json", cwd=second.path)
    import json

    assert "steward" in [r["name"] for r in json.loads(listed.stdout)]


def test_the_cache_never_serves_a_stale_role(root: Root, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr("sdd_git.parsecache.RACY_NS", 0)  # cache even a file written just now
    path = write_role(root.sdd / "roles", "cached", level=10)
    assert load_registry(root).get("cached").level == 10  # type: ignore[union-attr]
    assert "repo:cached" in RoleCache(root).entries()

    before = os.stat(path)
    path.write_text(path.read_text().replace("level: 10", "level: 11"))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old mtime, as cp -p does
    assert load_registry(root).get("cached").level == 11  # type: ignore[union-attr]

    path.write_text(path.read_text().replace("level: 11", "level: x1"))
    assert load_registry(root).get("cached") is None
    shutil.rmtree(path.parent)
    assert load_registry(root).get("cached") is None
    assert "repo:cached" not in RoleCache(root).entries()


def test_a_file_written_within_the_clock_tick_is_not_cached(root: Root) -> None:

    write_role(root.sdd / "roles", "fresh")
    assert load_registry(root).get("fresh") is not None
    assert "repo:fresh" not in RoleCache(root).entries()


def test_a_run_reads_its_role_from_the_file_never_from_the_cache(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setattr("sdd_git.parsecache.RACY_NS", 0)
    write_role(root.sdd / "roles", "builder", level=10)
    find_role(root, "builder")
    cache = root.local / "cache" / "roles" / f"{shard_of('repo:builder'):02d}.json"
    document = json.loads(cache.read_text())
    document["entries"]["repo:builder"]["value"]["profile"]["level"] = 99  # a tampered cache
    cache.write_text(json.dumps(document))
    assert find_role(root, "builder")[0].level == 99  # listings trust the cache...
    assert find_role(root, "builder", use_cache=False)[0].level == 10  # ...a run does not


def test_the_six_shipped_templates_load_cleanly() -> None:
    from sdd_git.roles.rolefile import read_role
    from sdd_git.roles.templates import shipped_dir, shipped_names

    expected = {
        "spec-steward": ("reading", "deny"),
        "builder": ("code", "deny"),
        "qa-author": ("scenario", "deny"),
        "release-editor": ("release-notes", "deny"),
        "module-lead": ("plan", "allow"),
        "product-lead": ("plan", "allow"),
    }
    assert shipped_names() == sorted(expected)
    levels = {}
    for name, (produces, delegation) in expected.items():
        parsed = read_role(shipped_dir() / name / "ROLE.md", "template", folder_name=name)
        role = parsed.profile
        assert parsed.warnings == ()
        assert (role.produces, role.delegation) == (produces, delegation), name
        assert role.job and len(role.description) > 200
        assert role.boundary.always_allow == ()  # only the person saves allow rules
        assert role.boundary.ask_first, name
        levels[name] = role.level
    assert (
        levels["module-lead"] > levels["builder"] and levels["product-lead"] > levels["module-lead"]
    )


def test_a_broken_repo_role_is_not_replaced_by_a_template_of_the_same_name(
    root: Root, isolated_home: Path, sdd: SddRunner
) -> None:
    broken = write_role(root.sdd / "roles", "builder")
    broken.write_text(broken.read_text().replace("level: 10", "level: high"))
    write_role(isolated_home / ".sdd" / "roles", "mine")
    (isolated_home / ".sdd" / "roles" / "mine" / "ROLE.md").write_text("no front matter\n")
    assert load_registry(root).get("builder") is None
    shown = sdd("role", "show", "mine")
    assert shown.code == 1 and "role 'mine' did not load:" in shown.stderr
