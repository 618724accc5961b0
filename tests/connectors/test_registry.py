"""The registry and the config: built-in kinds by name, entry points for packages (read only for
a kind that is not built in), the `connectors:` config validated with file and key, and a
connector ready to call with its session."""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sdd_git.connectors.base import READ, Operation, Result, Session
from sdd_git.connectors.config import (
    code_host,
    deploy_targets,
    load_connectors,
    repository_from_remote,
)
from sdd_git.connectors.kinds import BUILTIN, SERVICES
from sdd_git.connectors.operations import TABLE
from sdd_git.connectors.registry import ENTRY_POINT_GROUP, load_connector, make_connector
from sdd_git.connectors.script import ScriptConnector
from sdd_git.errors import RecordError
from sdd_git.root import Root
from tests.connectors.core_support import (
    GH_TOKEN,
    TOKEN_VARIABLE,
    configure,
    file_keyring,
    scripted,
)

__all__ = ["file_keyring"]


class PluggedConnector:
    """A connector a package adds through the entry-point group."""

    name = "plugged"
    needs_token = False

    def operations(self) -> Mapping[str, Operation]:
        return {"look": Operation("look", READ, "look")}

    def call(self, session: Session, operation: str, args: Mapping[str, Any]) -> Result:
        return Result("looked")


def test_every_service_of_the_table_is_built_in_by_module_and_class() -> None:
    assert set(SERVICES) == set(TABLE)
    for kind, target in BUILTIN.items():
        module, _, cls = target.partition(":")
        if kind in SERVICES:
            assert module == f"sdd_git.connectors.builtin.{kind.replace('-', '_')}", kind
            assert cls.endswith("Connector"), kind
    assert BUILTIN["mcp"] == "sdd_git.connectors.mcp:McpConnector"
    assert BUILTIN["script"] == "sdd_git.connectors.script:ScriptConnector"


def test_a_package_adds_a_kind_through_an_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dist = tmp_path / "sdd_plugged-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: sdd-plugged\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nplugged = tests.connectors.test_registry:PluggedConnector\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    made = make_connector("plugged")
    assert isinstance(made, PluggedConnector)
    with pytest.raises(RecordError, match="no connector of kind 'nowhere'") as caught:
        make_connector("nowhere")
    assert "entry-point group sdd_git.connectors" in str(caught.value.hint)


def test_a_built_in_kind_never_reads_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(**_: Any) -> Any:
        raise AssertionError("entry points were read for a built-in kind")

    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    assert isinstance(make_connector("script"), ScriptConnector)


def test_config_defaults_the_kind_to_the_name_and_the_public_base_urls(root: Root) -> None:
    configure(
        root,
        connectors={
            "github": {"token_env": "GITHUB_TOKEN", "repo": "acme/app"},
            "slack": None,
            "work-jira": {"kind": "jira", "base_url": "https://acme.atlassian.net"},
        },
    )
    found = load_connectors(root)
    assert list(found) == ["github", "slack", "work-jira"]
    assert found["github"].kind == "github" and found["github"].base_url == "https://api.github.com"
    assert found["github"].settings == {"repo": "acme/app"}
    assert found["slack"].base_url == "https://slack.com/api"
    assert found["work-jira"].table_kind == "jira"
    assert code_host(root) is found["github"] or code_host(root) == found["github"]


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ("[github]", "key 'connectors' must be a mapping"),
        ({"GitHub!": {}}, "key 'connectors.GitHub!'"),
        ({"github": "yes"}, "key 'connectors.github' must be a mapping"),
        ({"github": {"token": "ghp_x"}}, "key 'connectors.github.token' would put a token"),
        ({"github": {"token_env": "not a var"}}, "key 'connectors.github.token_env'"),
        ({"jira": {"base_url": "ftp://x"}}, "key 'connectors.jira.base_url' must be an http"),
        ({"jira": {"base_url": "https://me:pw@x.net"}}, "holds a sign-in"),
        ({"fake": {"kind": "script"}}, "key 'connectors.fake.file'"),
        ({"github": {"reads": [1]}}, "key 'connectors.github.reads'"),
        ({"social": {"kind": "mcp", "url": "https://api.x.com/mcp"}}, "points at X"),
        ({"twitter": {"kind": "mcp", "command": "srv"}}, "points at X"),
    ],
)
def test_a_bad_connectors_section_names_the_file_and_key(
    root: Root, section: Any, words: str
) -> None:
    if isinstance(section, str):
        root.config.write_text(root.config.read_text() + f"connectors: {section}\n")
    else:
        configure(root, connectors=section)
    with pytest.raises(RecordError) as caught:
        load_connectors(root)
    assert "config.yaml" in caught.value.message and words in caught.value.message


def test_a_self_hosted_service_needs_its_base_url(root: Root) -> None:
    configure(root, connectors={"jira": {"token_env": "JIRA_TOKEN"}})
    with pytest.raises(RecordError) as caught:
        load_connector(root, "jira")
    assert "has no base_url" in caught.value.message
    assert caught.value.hint == "connectors: {jira: {base_url: https://acme.atlassian.net}}"


def test_load_connector_gives_a_session_with_the_token_and_a_mask_for_it(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    configure(
        root, connectors={"github": scripted(tmp_path, "github", {}, token_env=TOKEN_VARIABLE)}
    )
    connector, session = load_connector(root, "github")
    assert isinstance(connector, ScriptConnector)
    assert session.name == "github" and session.token == GH_TOKEN
    assert session.masked(f"echo {GH_TOKEN}") == "echo [secret]"
    with pytest.raises(RecordError, match="no connector 'gitlab'"):
        load_connector(root, "gitlab")


def test_deploy_targets_name_their_connector(root: Root) -> None:
    configure(root, deploy={"prod": {"connector": "jenkins", "job": "deploy", "parameters": {}}})
    (target,) = deploy_targets(root).values()
    assert target.connector == "jenkins" and dict(target.args) == {
        "job": "deploy",
        "parameters": {},
    }
    configure(root, deploy={"prod": {"job": "deploy"}})
    with pytest.raises(RecordError, match=r"key 'deploy\.prod' must name its connector"):
        deploy_targets(root)


@pytest.mark.parametrize(
    ("url", "repo"),
    [
        ("git@github.com:acme/app.git", "acme/app"),
        ("https://github.com/acme/app", "acme/app"),
        ("https://x-access-token:secret@github.com/acme/app.git", "acme/app"),
        ("ssh://git@gitlab.example.com:2222/group/sub/project.git", "group/sub/project"),
        ("/srv/git/app.git", None),
        (None, None),
    ],
)
def test_the_repository_comes_from_the_remote_url(url: str | None, repo: str | None) -> None:
    assert repository_from_remote(url) == repo


@pytest.mark.parametrize("argv", [["--help"], ["role", "list"]])
def test_nothing_of_the_connectors_loads_for_help_or_role_list(root: Root, argv: list[str]) -> None:
    import subprocess

    configure(root, connectors={"github": {"token_env": "GITHUB_TOKEN"}})
    probe = (
        "import sys; from sdd_git.cli.main import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sdd_git.connectors', 'keyring'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root.path
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"
