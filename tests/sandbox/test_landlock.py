"""Landlock: which paths get which rights (on a real folder, any machine), and, where the kernel
has Landlock, what a child process under the rules can and cannot do."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sdd_git.errors import SddError
from sdd_git.sandbox import landlock
from sdd_git.sandbox.landlock import (
    IOCTL_DEV,
    NET_BIND_TCP,
    NET_CONNECT_TCP,
    REFER,
    SCOPE_ABSTRACT_UNIX_SOCKET,
    SCOPE_SIGNAL,
    TRUNCATE,
    WRITE_FILE,
    Prepared,
    Rule,
    ruleset,
    write_rights,
)
from sdd_git.sandbox.policy import Policy

READ_ONLY = ("memory", "changes", ".sdd", ".git", ".venv/lib", ".claude/agents")


@pytest.fixture
def policy(tmp_path: Path) -> Policy:
    product = tmp_path / "product"
    for name in (*READ_ONLY, "src/pkg", ".venv/bin", ".claude/commands"):
        (product / name).mkdir(parents=True)
    (product / "memory/decisions.yaml").write_text("accepted: []\n")
    (product / "README.md").write_text("# readme\n")
    (product / ".venv/pyvenv.cfg").write_text("home = /usr\n")
    (product / "src/app.py").write_text("print('hi')\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (product / "link").symlink_to(outside)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    read_only = tuple(product / name for name in READ_ONLY)
    return Policy(product, read_only, (), scratch, tmp_path / "home", network=False)


def in_product(policy: Policy, version: int) -> dict[str, Rule]:
    found = ruleset(policy, version).rules
    return {
        str(rule.path.relative_to(policy.product)): rule
        for rule in found
        if rule.path.is_relative_to(policy.product)
    }


def test_each_writable_entry_of_the_product_gets_a_rule_but_not_the_root(policy: Policy) -> None:
    rules = in_product(policy, 7)
    assert set(rules) == {"src", "README.md", ".venv/bin", ".venv/pyvenv.cfg", ".claude/commands"}
    assert all(rule.path != policy.product for rule in ruleset(policy, 7).rules)
    assert {name for name, rule in rules.items() if rule.folder} == {
        "src",
        ".venv/bin",
        ".claude/commands",
    }
    assert not any(rule.follow for rule in rules.values())


def test_folders_get_every_write_right_and_files_only_the_file_rights(policy: Policy) -> None:
    for version in range(1, 8):
        rules = in_product(policy, version)
        assert rules["src"].access == write_rights(version)
        assert rules["README.md"].access == write_rights(version) & (
            WRITE_FILE | TRUNCATE | IOCTL_DEV
        )
    assert in_product(policy, 1)["README.md"].access == WRITE_FILE
    assert in_product(policy, 3)["README.md"].access == WRITE_FILE | TRUNCATE
    assert in_product(policy, 5)["README.md"].access == WRITE_FILE | TRUNCATE | IOCTL_DEV


def test_the_handled_rights_grow_with_the_abi(policy: Policy) -> None:
    assert ruleset(policy, 1).handled_fs & (REFER | TRUNCATE | IOCTL_DEV) == 0
    assert ruleset(policy, 2).handled_fs & REFER
    assert ruleset(policy, 3).handled_fs & TRUNCATE
    assert not ruleset(policy, 4).handled_fs & IOCTL_DEV
    assert ruleset(policy, 5).handled_fs & IOCTL_DEV
    assert [ruleset(policy, v).handled_net for v in (3, 4, 7)] == [
        0,
        NET_BIND_TCP | NET_CONNECT_TCP,
        NET_BIND_TCP | NET_CONNECT_TCP,
    ]
    networked = replace(policy, network=True)
    assert ruleset(networked, 7).handled_net == 0
    assert ruleset(policy, 5).scoped == 0
    assert ruleset(policy, 6).scoped == SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL


def test_scratch_and_terminal_devices_are_writable(policy: Policy) -> None:
    rules = {rule.path: rule for rule in ruleset(policy, 7).rules}
    assert rules[policy.scratch].access == write_rights(7)
    assert rules[policy.scratch].folder
    if os.path.exists("/dev/null"):
        assert rules[Path("/dev/null")].access == WRITE_FILE | TRUNCATE | IOCTL_DEV
        assert not rules[Path("/dev/null")].folder
    if os.path.isdir("/dev/pts"):
        assert rules[Path("/dev/pts")].folder


def test_a_product_that_is_itself_read_only_gets_no_rule(policy: Policy) -> None:
    locked = replace(policy, read_only=(policy.product,))
    assert in_product(locked, 7) == {}


def test_a_hidden_path_inside_the_product_is_not_granted(policy: Policy) -> None:
    hidden = replace(policy, hidden=(policy.product / "src/pkg",))
    rules = in_product(hidden, 7)
    assert "src" not in rules
    assert "src/app.py" in rules


def test_a_read_only_path_named_through_a_link_is_still_excluded(
    policy: Policy, tmp_path: Path
) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(policy.product)
    through = replace(policy, read_only=(alias / "src",))
    assert "src" not in in_product(through, 7)
    via_alias = replace(policy, product=alias)
    granted = {Path(os.path.realpath(rule.path)) for rule in ruleset(via_alias, 7).rules}
    assert policy.product / "src" in granted
    assert not any(path.is_relative_to(policy.product / "memory") for path in granted)


def test_describe_says_what_is_granted_and_what_is_not(policy: Policy) -> None:
    lines = landlock.describe(policy, 7)
    assert lines[0] == "Landlock ABI 7"
    assert "reads: not restricted" in lines
    assert any(line.startswith(f"allow folder {policy.product / 'src'}: ") for line in lines)
    assert not any(str(policy.product / "memory") in line for line in lines)
    assert "network: no TCP bind or connect on any port" in lines
    assert landlock.describe(policy, 0) == ["no Landlock on this kernel: nothing is enforced"]


def test_prepare_refuses_without_landlock(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    with pytest.raises(SddError, match="no Landlock"):
        landlock.prepare(policy)


# Enforcement: only where the kernel has Landlock.


def needs_landlock(version: int = 1) -> None:
    have = landlock.abi()
    if have == 0:
        pytest.skip(
            f"this kernel has no Landlock: {os.uname().sysname} {os.uname().release} "
            f"{os.uname().machine} (landlock_create_ruleset failed or is not a Linux syscall)"
        )
    if have < version:
        pytest.skip(f"this kernel has Landlock ABI {have}; the test needs ABI {version}")


def run(prepared: Prepared, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script],
        preexec_fn=prepared.apply,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def writes(prepared: Prepared, path: Path) -> bool:
    return run(prepared, f'echo x > "{path}"').returncode == 0


def test_a_child_writes_only_where_the_rules_allow(policy: Policy, tmp_path: Path) -> None:
    needs_landlock()
    product = policy.product
    with landlock.prepare(policy) as prepared:
        assert writes(prepared, product / "src/new.py")
        assert writes(prepared, product / "src/pkg/deep.py")
        assert writes(prepared, product / "README.md")
        assert writes(prepared, product / ".venv/bin/tool")
        assert writes(prepared, policy.scratch / "tmpfile")
        assert writes(prepared, Path("/dev/null"))
        assert not writes(prepared, product / "memory/decisions.yaml")
        assert not writes(prepared, product / "memory/new.yaml")
        assert not writes(prepared, product / ".venv/lib/evil.pth")
        assert not writes(prepared, product / ".claude/agents/x.md")
        assert not writes(prepared, tmp_path / "outside/file")
        assert not writes(prepared, product / "link/through-the-link")
        # The documented limit: nothing new directly in the product folder's top.
        assert not writes(prepared, product / "new-top-level-file")
    assert (product / "src/new.py").read_text() == "x\n"
    assert (product / "memory/decisions.yaml").read_text() == "accepted: []\n"
    assert not (product / "memory/new.yaml").exists()
    assert not (tmp_path / "outside/file").exists()


def test_a_child_cannot_move_delete_or_link_its_way_into_the_record(policy: Policy) -> None:
    needs_landlock()
    product = policy.product
    with landlock.prepare(policy) as prepared:
        assert run(prepared, f'mv "{product}/memory" "{product}/src/memory"').returncode != 0
        assert run(prepared, f'rm -rf "{product}/memory"').returncode != 0
        linked = f'ln "{product}/memory/decisions.yaml" "{product}/src/d.yaml"'
        assert run(prepared, linked).returncode != 0
        assert run(prepared, f'mv "{product}/src/app.py" "{product}/src/pkg/"').returncode == 0
    assert (product / "memory/decisions.yaml").exists()
    assert not (product / "src/d.yaml").exists()


@pytest.mark.parametrize("version", range(1, 8))
def test_every_abi_up_to_the_kernels_is_accepted(policy: Policy, version: int) -> None:
    needs_landlock(version)
    # An older ABI's shorter struct and smaller right set must still be taken by a newer kernel.
    with Prepared(ruleset(policy, version)) as prepared:
        assert writes(prepared, policy.product / "src/ok.py")
        assert not writes(prepared, policy.product / "memory/no.yaml")


def connects(prepared: Prepared, port: int) -> bool:
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5).close()"
    done = subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=prepared.apply,
        capture_output=True,
        timeout=30,
        check=False,
    )
    return done.returncode == 0


def test_no_tcp_connection_unless_the_policy_says_network(policy: Policy) -> None:
    needs_landlock(4)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with landlock.prepare(policy) as prepared:
            assert not connects(prepared, port)
        networked = replace(policy, network=True)
        with landlock.prepare(networked) as prepared:
            assert connects(prepared, port)


def test_the_command_cannot_signal_sdd(policy: Policy) -> None:
    needs_landlock(6)
    with landlock.prepare(policy) as prepared:
        assert run(prepared, f"kill -0 {os.getpid()}").returncode != 0
        assert run(prepared, "sleep 5 & kill $! && wait $!; test $? -eq 143").returncode == 0


def test_close_closes_the_descriptors(policy: Policy) -> None:
    needs_landlock()
    prepared = landlock.prepare(policy)
    fds = list(prepared._fds)
    assert fds
    prepared.close()
    prepared.close()
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)


def test_nothing_can_be_mounted_under_landlock(policy: Policy, tmp_path: Path) -> None:
    """Why bubblewrap must start first and Landlock be applied inside it, never around it."""
    needs_landlock()
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to make a mount namespace")
    target = tmp_path / "mnt"
    target.mkdir()
    mount = ["mount", "-t", "tmpfs", "none", str(target)]
    if subprocess.run([unshare, "-Urm", *mount], capture_output=True, check=False).returncode:
        pytest.skip("this machine does not allow a user namespace to mount")
    helper = (
        "import os, sys; from sdd_git.sandbox import landlock; "
        "from sdd_git.sandbox.policy import Policy; from pathlib import Path; "
        f"p = landlock.prepare(Policy(Path({str(policy.product)!r}), (), (), "
        f"Path({str(policy.scratch)!r}), Path('/'), False)); p.apply(); p.close(); "
        "os.execvp(sys.argv[1], sys.argv[1:])"
    )
    done = subprocess.run(
        [unshare, "-Urm", sys.executable, "-c", helper, *mount],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode != 0
    assert "permission denied" in done.stderr.lower()
