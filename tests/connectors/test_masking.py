"""No connector token appears in any log, transcript, run log, conversation, draft, child
environment or model request, in any encoding the masker knows; and a value a service returns
that looks like a credential is masked in what the role reads."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from sdd_git.connectors.signin import store_token
from sdd_git.connectors.tokens import masker_for
from sdd_git.masking.reach import child_environment
from sdd_git.masking.returned import mask_returned
from sdd_git.roles.registry import find_role
from sdd_git.root import Root
from sdd_git.runner.state import provider_settings
from tests.conftest import SddRunner
from tests.connectors.core_support import (
    GH_TOKEN,
    TOKEN_VARIABLE,
    calls,
    configure,
    file_keyring,
    scripted,
)
from tests.runner.scripted import script

__all__ = ["file_keyring"]

SLACK_TOKEN = "xoxb-4242-1717-QwErTyUiOpAsDfGh"  # kept in the keyring by `sdd connect`
FOREIGN = "glpat-Zz9Yy8Xx7Ww6Vv5Uu4Tt"  # someone's token pasted into an issue
SHA = "3f2a9b1c4d5e6f708192a3b4c5d6e7f8091a2b3c"


def forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        secret,
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
        raw.hex().upper(),
        quote(secret, safe=""),
        secret[::-1],
    ]


def every_text(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(errors="replace")
        for p in folder.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(folder).parts
    }


def test_no_token_reaches_any_file_or_model_request_in_any_encoding(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    echoed = " ".join(forms(GH_TOKEN)[1:])  # the service echoes the token, encoded
    github = scripted(
        tmp_path,
        "github",
        {
            "get_issue": {
                "text": f"Issue 7 by a bot. Auth was ${{token}}, also {echoed}. "
                f'Pasted: {FOREIGN} and {{"password": "Hunter2-Very-Long-Pw"}}. '
                f"Fixed in {SHA}.",
            }
        },
        token_env=TOKEN_VARIABLE,
        needs_token=True,
    )
    slack = scripted(tmp_path, "slack", {}, like="slack", needs_token=True,
                     send_draft={"text": f"ok, posted with {SLACK_TOKEN}"})  # fmt: skip
    configure(root, connectors={"github": github, "slack": slack})
    store_token("slack", SLACK_TOKEN)
    read = {
        "tool": "connector_read",
        "args": {"connector": "github", "operation": "get_issue",
                 "args": {"repo": "acme/app", "number": 7}},
    }  # fmt: skip
    leaky = f"Tokens: {GH_TOKEN} and {SLACK_TOKEN}"  # a model that repeats what it should not
    post = {
        "tool": "connector_read",
        "args": {"connector": "slack", "operation": "post_message",
                 "args": {"channel": "dev", "text": leaky}},
    }  # fmt: skip
    script(tmp_path, monkeypatch, [{"tool_calls": [read]}, {"tool_calls": [post]},
                                   {"say": f"Done. {leaky}"}])  # fmt: skip
    result = sdd("role", "run", "executor", "--task", "Read @github 7, tell @slack", "--json")
    assert result.code == 0, result.stderr
    assert sdd("send", "DR-0001").code == 0
    assert calls(tmp_path, "slack")[0]["signed_in"] is True  # the keyring token signed it in

    texts = every_text(root.path)
    texts["transcript"] = (tmp_path / "s.transcript.jsonl").read_text()  # the model's requests
    texts["stdout"] = result.stdout + result.stderr
    assert any(name.startswith(".sdd/role-runs/") for name in texts)
    assert any(name.startswith(".sdd/local/drafts/") for name in texts)
    for secret in (GH_TOKEN, SLACK_TOKEN, FOREIGN, "Hunter2-Very-Long-Pw"):
        for form in forms(secret):
            leaks = [name for name, text in texts.items() if form in text]
            assert leaks == [], f"{form!r} of {secret[:6]}... is in {leaks}"
    request = [json.loads(line) for line in texts["transcript"].splitlines()][1]
    shown = request["messages"][-1]["content"]
    assert shown.startswith("Issue 7 by a bot. Auth was [secret], also [secret]")
    assert "${token}" not in shown and SHA in shown  # echoed and masked; the hash kept


def test_the_run_masker_and_child_processes_cover_every_connector_token(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    configure(
        root,
        connectors={
            "github": {"token_env": TOKEN_VARIABLE},
            "jira": {"base_url": "https://acme.atlassian.net"},
        },
    )
    store_token("jira", "jira-api-token-0123456789")
    mask = masker_for(root.path)
    assert mask(f"a {GH_TOKEN} b jira-api-token-0123456789 c") == "a [secret] b [secret] c"
    script(tmp_path, monkeypatch, [{"say": "unused"}])
    role, _ = find_role(root, "executor")
    _, _, names, _ = provider_settings(root, role)
    assert TOKEN_VARIABLE in names
    env = child_environment({TOKEN_VARIABLE: GH_TOKEN, "PATH": "/bin"}, "run-1", names)
    assert TOKEN_VARIABLE not in env and env["PATH"] == "/bin"


def test_a_broken_config_still_gives_a_masker(root: Root) -> None:
    root.config.write_text("connectors: [not, a, mapping\n")
    assert masker_for(root.path)("plain text") == "plain text"


@pytest.mark.parametrize(
    "secret",
    [
        "ghp_" + "a1B2" * 9,
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "glpat-Zz9Yy8Xx7Ww6Vv5Uu4Tt",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
        "xoxp-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
        "AKIAIOSFODNN7EXAMPLE",
        "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlLXZhbHVl",
    ],
)
def test_a_returned_value_of_a_known_credential_shape_is_masked(secret: str) -> None:
    assert mask_returned(f"see {secret} here") == "see [secret] here"


def test_a_secret_named_field_is_masked_and_ordinary_identifiers_stay() -> None:
    text = (
        f'{{"token": "Ab3dEf6hIj9kLm", "commit": "{SHA}", "run_id": 884422, '
        f'"api_key": "k-19Zq8xW7v", "author": "octocat"}} password=S3cr3t-Pass'
    )
    masked = mask_returned(text)
    assert "Ab3dEf6hIj9kLm" not in masked and "k-19Zq8xW7v" not in masked
    assert "S3cr3t-Pass" not in masked
    assert SHA in masked and "884422" in masked and "octocat" in masked
