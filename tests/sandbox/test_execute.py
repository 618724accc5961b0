"""A command run the way the wall requires, on this machine, for real: under bubblewrap (the
default here), under Landlock alone, and with no sandbox, where the tamper check holds."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from sdd_git.sandbox import choose
from sdd_git.sandbox.execute import Finished, run

SECRET = "netrc-password-0123456789"


def product(tmp_path: Path) -> Path:
    folder = tmp_path / "product"
    for name in ("memory", "changes", ".sdd", ".git", "src", "templates"):
        (folder / name).mkdir(parents=True)
    (folder / "memory" / "decisions.yaml").write_text("[]\n")
    (folder / "changes" / "qa.yaml").write_text("results: []\n")
    return folder


def sh(folder: Path, command: str, network: bool = False, timeout: float = 20) -> Finished:
    return run(folder, command, {"PATH": os.environ["PATH"]}, network=network, timeout=timeout)


def use(monkeypatch: pytest.MonkeyPatch, name: str) -> choose.Sandbox:
    monkeypatch.setenv("SDD_SANDBOX", name)
    choose.current.cache_clear()
    box = choose.current()
    if name != "none" and box.name != name:
        pytest.skip(f"{name} does not work on this machine: {box.why}")
    return box


def test_bubblewrap_keeps_the_record_and_git_read_only_and_the_product_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, "bwrap")
    folder = product(tmp_path)
    done = sh(
        folder,
        "echo forged >> memory/decisions.yaml; rm -f changes/qa.yaml; touch .git/config;"
        " mkdir templates/x; echo ok > src/app.py; echo top > NOTES.md",
    )
    assert done.output.count("Read-only file system") == 4, done.output
    assert (folder / "memory/decisions.yaml").read_text() == "[]\n"
    assert (folder / "changes/qa.yaml").exists()
    assert not (folder / ".git/config").exists() and not (folder / "templates/x").exists()
    assert (folder / "src/app.py").read_text() == "ok\n"
    assert (folder / "NOTES.md").exists()
    assert done.sandbox == "bwrap" and done.tampered == ()


def test_bubblewrap_tmp_and_home_are_private_and_home_parent_and_venv_are_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    use(monkeypatch, "bwrap")
    folder = product(tmp_path)
    gitconfig = (isolated_home / ".gitconfig").read_text()
    done = sh(
        folder,
        'echo $HOME; touch /tmp/left-behind; echo "[core] x=1" >> '
        f"{isolated_home}/.gitconfig; mv {folder} {folder}-aside; touch {tmp_path}/sibling;"
        " echo end",
    )
    assert done.output.startswith("/tmp\n"), done.output
    assert not Path("/tmp/left-behind").exists()
    assert (isolated_home / ".gitconfig").read_text() == gitconfig
    assert folder.is_dir() and not Path(f"{folder}-aside").exists()
    assert not (tmp_path / "sibling").exists()


def test_bubblewrap_drops_every_capability_and_hides_the_parent_and_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    use(monkeypatch, "bwrap")
    (isolated_home / ".netrc").write_text(f"machine h login me password {SECRET}\n")
    (isolated_home / ".ssh").mkdir()
    (isolated_home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    folder = product(tmp_path)
    done = sh(
        folder,
        f"grep CapEff /proc/self/status; ls /proc/{os.getpid()} >/dev/null 2>&1 &&"
        " echo parent-seen;"
        f" cat {isolated_home}/.netrc; ls {isolated_home}/.ssh; mount -o remount,rw "
        f"{folder}/memory 2>&1 | head -1; unshare -Ur true 2>/dev/null && echo userns",
    )
    assert "CapEff:\t0000000000000000" in done.output
    assert "parent-seen" not in done.output
    assert SECRET not in done.output and "id_ed25519" not in done.output
    assert "userns" not in done.output.split()
    assert "permission denied" in done.output.lower()


def test_the_network_is_off_unless_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, "bwrap")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected || echo refused"
        assert "refused" in sh(product(tmp_path), probe).output
        assert "connected" in sh(tmp_path / "product", probe, network=True).output
    finally:
        listener.close()


@pytest.mark.parametrize("name", ["bwrap", "landlock", "none"])
def test_no_process_outlives_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    use(monkeypatch, name)
    folder = product(tmp_path)
    done = sh(
        folder,
        "setsid nohup sh -c 'sleep 1; echo late > src/late.txt' >/dev/null 2>&1 &"
        " (sh -c 'sleep 1; echo late > src/late2.txt' &) ; echo started",
    )
    assert done.output.strip() == "started"
    time.sleep(1.6)
    assert not (folder / "src/late.txt").exists()
    assert not (folder / "src/late2.txt").exists()


def test_landlock_alone_keeps_the_record_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, "landlock")
    folder = product(tmp_path)
    done = sh(folder, "echo forged >> memory/decisions.yaml; echo ok > src/app.py")
    assert (folder / "memory/decisions.yaml").read_text() == "[]\n"
    assert (folder / "src/app.py").read_text() == "ok\n"
    assert done.sandbox == "landlock" and done.tampered == ()


def test_with_no_sandbox_the_tamper_check_puts_the_record_back_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box = use(monkeypatch, "none")
    folder = product(tmp_path)
    (folder / ".git" / "hooks").mkdir()
    done = sh(
        folder,
        "echo forged >> memory/decisions.yaml; rm changes/qa.yaml; mkdir -p memory/specs;"
        " echo x > memory/specs/SPEC-9.md;"
        " printf '#!/bin/sh\\ntouch pwned' > .git/hooks/pre-commit;"
        " ln -s /etc/passwd .sdd/config.yaml; echo ok > src/app.py",
    )
    assert done.sandbox == box.label == "none: SDD_SANDBOX=none"
    assert set(done.tampered) == {
        "memory/decisions.yaml",
        "changes/qa.yaml",
        "memory/specs",
        "memory/specs/SPEC-9.md",
        ".git/hooks/pre-commit",
        ".sdd/config.yaml",
    }
    assert (folder / "memory/decisions.yaml").read_text() == "[]\n"
    assert (folder / "changes/qa.yaml").read_text() == "results: []\n"
    assert not (folder / "memory/specs").exists()
    assert not (folder / ".git/hooks/pre-commit").exists()
    assert not os.path.lexists(folder / ".sdd/config.yaml")
    assert (folder / "src/app.py").read_text() == "ok\n"


def test_the_tamper_check_sees_a_same_size_rewrite_with_its_time_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use(monkeypatch, "none")
    folder = product(tmp_path)
    done = sh(
        folder,
        "stamp=$(stat -c %y memory/decisions.yaml); printf '{}\\n' > memory/decisions.yaml;"
        ' touch -d "$stamp" memory/decisions.yaml',
    )
    assert done.tampered == ("memory/decisions.yaml",)
    assert (folder / "memory/decisions.yaml").read_text() == "[]\n"


OTHER_AGENTS_FILES = {
    ".claude/settings.json": '{"permissions": {"deny": ["Bash(sdd next)"]}}\n',
    "AGENTS.md": "Never run sdd next.\n",
    "src/AGENTS.md": "Nested rules.\n",
    ".github/workflows/ci.yml": "on: push\n",
    ".github/copilot-instructions.md": "Be careful.\n",
    ".gitattributes": "*.txt text\n",
    ".vscode/tasks.json": "{}\n",
    ".husky/pre-commit": "#!/bin/sh\n",
    "tools/hooks/pre-commit": "#!/bin/sh\n",
}
PLANTED = (
    "CLAUDE.md",
    ".mcp.json",
    ".codex/rules/x.rules",
    ".cursor/rules/x.mdc",
    "docs/CLAUDE.md",
)


@pytest.mark.parametrize("name", ["bwrap", "landlock", "none"])
def test_other_agents_rule_files_and_hook_folders_stay_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Issue 21: after one allowed command, a role replaced the deny rules `sdd agents install
    claude` wrote with allows. Every other agent's rule file, the workflows, the editor's tasks and
    the hook folders (also the one `core.hooksPath` names) are kept; what it made is removed."""
    use(monkeypatch, name)
    folder = product(tmp_path)
    (folder / ".git").rmdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(
        ["git", "-C", str(folder), "config", "core.hooksPath", "tools/hooks"], check=True
    )
    for path, text in OTHER_AGENTS_FILES.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    (folder / "docs").mkdir()
    rewrite = "; ".join(f"echo pwned > {path}" for path in OTHER_AGENTS_FILES)
    plant = "; ".join(f"mkdir -p $(dirname {path}); echo pwned > {path}" for path in PLANTED)
    done = sh(folder, f"{rewrite}; {plant}; echo ok > src/app.py")
    for path, text in OTHER_AGENTS_FILES.items():
        assert (folder / path).read_text() == text, (name, path, done.output)
    for path in PLANTED:
        assert not (folder / path).exists(), (name, path)
    assert (folder / "src/app.py").read_text() == "ok\n"
