"""`sdd agents install HOST`: the host stubs, written all-or-nothing, never a role."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sdd_git.errors import InsideRunError, SddError, UsageError
from sdd_git.hoststubs import HOSTS, STUB_NAMES, install, stub_files
from sdd_git.root import Root, init_root

EXPECTED_PATHS = {
    "copilot": [f".github/agents/{name}.agent.md" for name in STUB_NAMES],
    "claude": [f".claude/agents/{name}.md" for name in STUB_NAMES],
    "grok": [".grok/GROK.md"],
    "ollama": [f"ollama/{name}.Modelfile" for name in STUB_NAMES],
    "kilo": [f".kilo/agents/{name}.md" for name in STUB_NAMES],
}
FRONT_MATTER_NAME_HOSTS = ("copilot", "claude")  # `name` is a key; Kilo takes it from the file
PERSON_COMMANDS = (
    "sdd accept",
    "sdd next",
    "sdd complete",
    "sdd qa record",
    "sdd release generate",
)


@pytest.fixture(autouse=True)
def _outside_a_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SDD_RUN_ID", raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Root:
    return init_root(tmp_path / "p", product="p").root


def _files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def _front_matter(text: str) -> dict[str, object]:
    assert text.startswith("---\n")
    block = text.split("---\n", 2)[1]
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def test_hosts_and_stub_names_are_the_contract() -> None:
    assert HOSTS == ("copilot", "claude", "grok", "ollama", "kilo")
    assert STUB_NAMES == ("sdd", "sdd-planner", "sdd-implementer", "sdd-reviewer")


@pytest.mark.parametrize("host", HOSTS)
def test_install_writes_the_four_stubs_at_the_host_paths(root: Root, host: str) -> None:
    report = install(root, host)
    assert report.host == host
    assert list(report.written) == EXPECTED_PATHS[host]
    assert report.unchanged == ()
    for rel in EXPECTED_PATHS[host]:
        assert (root.path / rel).is_file()
    every_stub_text = "".join((root.path / rel).read_text("utf-8") for rel in report.written)
    for name in STUB_NAMES:
        assert name in every_stub_text


@pytest.mark.parametrize("host", HOSTS)
def test_each_stub_names_sdd_and_forbids_the_person_commands(host: str) -> None:
    for stub in stub_files(host):
        assert "sdd change list" in stub.content
        assert "sdd change show CH" in stub.content
        assert "sdd role list" in stub.content
        for command in PERSON_COMMANDS:
            assert command in stub.content, (stub.path, command)
        for record in ("memory/decisions.yaml", "changes/*/qa.yaml", ".sdd/"):
            assert record in stub.content
        assert "\\" not in stub.path and not stub.path.startswith("/")


@pytest.mark.parametrize("host", HOSTS)
def test_install_creates_no_role(root: Root, host: str) -> None:
    roles = root.sdd / "roles"
    before = _files_under(root.sdd)
    install(root, host)
    assert _files_under(root.sdd) == before
    assert not any(roles.iterdir())
    assert not any(stub.path.startswith(".sdd/") for stub in stub_files(host))


@pytest.mark.parametrize("host", HOSTS)
def test_install_twice_reports_unchanged(root: Root, host: str) -> None:
    install(root, host)
    again = install(root, host)
    assert again.written == ()
    assert list(again.unchanged) == EXPECTED_PATHS[host]


def test_install_writes_only_the_missing_stubs(root: Root) -> None:
    first = stub_files("claude")[0]
    (root.path / first.path).parent.mkdir(parents=True)
    (root.path / first.path).write_text(first.content, encoding="utf-8")
    report = install(root, "claude")
    assert report.unchanged == (first.path,)
    assert list(report.written) == EXPECTED_PATHS["claude"][1:]


@pytest.mark.parametrize("host", HOSTS)
def test_a_differing_file_makes_install_fail_and_write_nothing(root: Root, host: str) -> None:
    conflict = root.path / EXPECTED_PATHS[host][-1]
    conflict.parent.mkdir(parents=True, exist_ok=True)
    conflict.write_text("the person's own agent\n", encoding="utf-8")
    with pytest.raises(SddError) as caught:
        install(root, host)
    assert "exists and differs from the sdd stub" in caught.value.message
    assert caught.value.hint is not None and "--force" in caught.value.hint
    assert conflict.read_text("utf-8") == "the person's own agent\n"
    for rel in EXPECTED_PATHS[host][:-1]:
        assert not (root.path / rel).exists()


@pytest.mark.parametrize("host", HOSTS)
def test_force_replaces_a_differing_file(root: Root, host: str) -> None:
    conflict = root.path / EXPECTED_PATHS[host][-1]
    conflict.parent.mkdir(parents=True, exist_ok=True)
    conflict.write_text("old\n", encoding="utf-8")
    report = install(root, host, force=True)
    assert list(report.written) == EXPECTED_PATHS[host]
    assert conflict.read_text("utf-8") == stub_files(host)[-1].content


def test_a_crlf_copy_counts_as_different(root: Root) -> None:
    stub = stub_files("grok")[0]
    target = root.path / stub.path
    target.parent.mkdir(parents=True)
    target.write_bytes(stub.content.replace("\n", "\r\n").encode("utf-8"))
    with pytest.raises(SddError):
        install(root, "grok")


def test_a_folder_in_the_way_is_refused_even_with_force(root: Root) -> None:
    (root.path / ".grok" / "GROK.md").mkdir(parents=True)
    with pytest.raises(SddError) as caught:
        install(root, "grok", force=True)
    assert "is not a file" in caught.value.message


def test_unknown_host_is_a_usage_error(root: Root) -> None:
    with pytest.raises(UsageError) as caught:
        install(root, "x")
    assert caught.value.message == "unknown host 'x'"
    assert caught.value.hint == "choose one of: copilot, claude, grok, ollama, kilo"
    with pytest.raises(UsageError):
        stub_files("x")


@pytest.mark.parametrize("host", HOSTS)
def test_install_refuses_inside_a_role_run(
    root: Root, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _files_under(root.path)
    monkeypatch.setenv("SDD_RUN_ID", "run-1")
    with pytest.raises(InsideRunError):
        install(root, host)
    assert _files_under(root.path) == before


@pytest.mark.parametrize("host", ("copilot", "claude", "kilo"))
def test_front_matter_parses(host: str) -> None:
    files = stub_files(host)
    assert len(files) == len(STUB_NAMES)
    for name, stub in zip(STUB_NAMES, files, strict=True):
        data = _front_matter(stub.content)
        assert isinstance(data["description"], str) and data["description"]
        if host in FRONT_MATTER_NAME_HOSTS:
            assert data["name"] == name
        else:
            assert "name" not in data
            assert stub.path.endswith(f"/{name}.md")
        body = stub.content.split("---\n", 2)[2]
        assert "sdd accept" in body


def test_claude_reviewer_is_read_only() -> None:
    by_name = dict(zip(STUB_NAMES, stub_files("claude"), strict=True))
    assert "Edit" not in str(_front_matter(by_name["sdd-reviewer"].content)["tools"])
    assert "tools" not in _front_matter(by_name["sdd-implementer"].content)


def test_ollama_modelfiles_have_from_and_system() -> None:
    for name, stub in zip(STUB_NAMES, stub_files("ollama"), strict=True):
        lines = [line for line in stub.content.splitlines() if not line.startswith("#")]
        assert lines[0].startswith("FROM ")
        assert lines[1].startswith('SYSTEM """')
        assert stub.content.rstrip().endswith('"""')
        assert stub.content.count('"""') == 2
        assert f"ollama create {name} -f {stub.path}" in stub.content


def test_grok_file_holds_the_four_stubs() -> None:
    (only,) = stub_files("grok")
    for name in STUB_NAMES:
        assert f"\n## {name}\n" in only.content
