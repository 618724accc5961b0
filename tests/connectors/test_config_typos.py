"""A connector config typo gets "did you mean" (issue 22, 3): `tokn_env` under a connector was
kept in silence as a setting nobody reads, and the token came from elsewhere, or from nowhere."""

from __future__ import annotations

import pytest

from sdd_git.connectors.config import load_connectors
from sdd_git.errors import RecordError
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.connectors.core_support import configure


def test_a_misspelt_token_env_is_refused_with_did_you_mean(sdd: SddRunner, root: Root) -> None:
    configure(root, connectors={"github": {"tokn_env": "GITHUB_TOKEN"}})
    with pytest.raises(RecordError) as caught:
        load_connectors(root)
    assert caught.value.message.endswith(
        "unknown key 'connectors.github.tokn_env': did you mean 'token_env'?"
    )
    listed = sdd("connectors")
    assert listed.code == 1
    assert "did you mean 'token_env'?" in listed.stderr
    assert "hint: rename it: connectors.github.token_env" in listed.stderr


def test_a_misspelt_setting_of_a_built_in_connector_is_refused_too(root: Root) -> None:
    configure(root, connectors={"jira": {"base_url": "https://acme.atlassian.net", "projct": "X"}})
    with pytest.raises(RecordError, match="did you mean 'project'"):
        load_connectors(root)


def test_the_keys_connectors_read_and_a_plug_ins_own_keys_still_load(root: Root) -> None:
    configure(
        root,
        connectors={
            "github": {"token_env": "GITHUB_TOKEN", "repo": "acme/app"},
            "docs": {"kind": "mcp", "command": "docs-server", "token_as": "DOCS_TOKEN"},
            "tracker": {"kind": "acme-tracker", "base_url": "https://t.example", "project_id": 7},
        },
    )
    loaded = load_connectors(root)
    assert loaded["github"].token_env == "GITHUB_TOKEN"
    assert loaded["tracker"].settings["project_id"] == 7
