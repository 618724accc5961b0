"""Issue 21, "secrets by name only": secrets under plain names (`CI_JOB_JWT`,
`ACTIONS_ID_TOKEN_REQUEST_TOKEN`) reached the sandboxed command's environment and the model.
Credentials are now masked by their shape wherever they appear, the values of the variables her
config names are masked whatever they are called, and a child process gets an allowlisted
environment, never "everything but secret-looking names"."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml

from sdd_git.childenv import CHILD_ENV
from sdd_git.masking.masker import MASK, Masker
from sdd_git.masking.reach import child_environment, collect_secrets, config_variables
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, script, transcript
from tests.trusthelp import confirm


def _b64(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


JWT = (
    _b64({"alg": "RS256", "typ": "JWT", "kid": "ci"})
    + "."
    + _b64({"sub": "project_path:acme/app:ref_type:branch:ref:main", "aud": "vault"})
    + ".Zm9vYmFyYmF6cXV4X3NpZ25hdHVyZV9ieXRlc19oZXJlXzEyMzQ1Ng"
)
GITHUB = "ghp_R8mZq2Lx7Tv4Kp9Wn3Hc6Bd1Fg5Js0Ye2Ua8"
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDmP4pT9AJmYWtla2V5Ym9keWZvcnRlc3RzMTIzNDU2Nzg5MA==\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
SHAPES = {
    "jwt": JWT,
    "github classic": GITHUB,
    "github oauth": "gho_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6",
    "github app": "ghs_" + "Zx9Wv8Ut7Sr6Qp5On4Ml3Kj2Ih1Gf0Ed9Cb8",
    "github user": "ghu_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "github refresh": "ghr_" + "M9n8B7v6C5x4Z3l2K1j0H9g8F7d6S5a4P3o2",
    "github fine-grained": "github_pat_11ABCDE2F0Gh7Jk9Lm3Np_"
    + "Qr5St7Uv9Wx1Yz3Ab5Cd7Ef9Gh1Ij3Kl5Mn7Op",
    "gitlab": "glpat-Xy7Zq3Lm9Np2Rs5Tv8Wx",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "aws access key id": "AKIAQ3EGRVXN5TPL7KZA",
    "aws temporary key id": "ASIAZ7VXN2QRT5LMK8PD",
    "private key": PRIVATE_KEY.strip(),
}


# -- shapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_each_credential_shape_is_masked_wherever_it_appears(kind: str) -> None:
    """No variable, file or name told the masker about it: its shape is enough."""
    mask = Masker([])
    value = SHAPES[kind]
    for text in (
        f"found {value} in the output",
        f"KEY={value}\n",
        json.dumps({"content": f"token: {value}, done"}),
    ):
        out = mask(text)
        assert value not in out and MASK in out, out
        assert json.dumps(value)[1:-1] not in out, out
    assert json.loads(mask(json.dumps({"content": f"x {value} y"}))) == {"content": f"x {MASK} y"}


def test_a_private_key_cut_short_is_masked_to_where_it_ends() -> None:
    cut = PRIVATE_KEY[:120]
    out = Masker([])(json.dumps({"content": "head\n" + cut}))
    assert "b3BlbnNzaC1rZXktdjEA" not in out
    assert json.loads(out) == {"content": f"head\n{MASK}"}


@pytest.mark.parametrize(
    "text",
    [
        "the ghp_ prefix marks a classic token; github_pat_ a fine-grained one",
        "glpat- is GitLab's prefix, xoxb- Slack's bot tokens, and xoxo is a hug",
        "AKIA is how an access key id starts; ASIAN_MARKETS_2024 = load_markets()",
        "AKIAIOSFODNN7 is too short, and so is ghp_abc123",
        'eyJ is base64 for {"; a.b.c is a version, as is 1.2.3',
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n"
        "-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n",
        "def github_token() -> str:\n    return os.environ['GH_TOKEN']  # never printed",
        "token = header + '.' + payload + '.' + signature",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "id 123e4567-e89b-12d3-a456-426614174000 at https://github.com/acme/app/pull/42",
    ],
)
def test_prose_and_code_that_only_resemble_a_credential_keep_their_words(text: str) -> None:
    assert Masker([])(text) == text


def test_a_value_with_a_credentials_shape_is_masked_in_every_encoding(tmp_path: Path) -> None:
    """By its shape, a plainly named variable's value becomes one of the masker's secrets: its
    base64 and URL forms are hidden too, not only the shape where it appears whole."""
    found = collect_secrets(tmp_path, {"MY_THING": GITHUB, "PLAIN": "hello-world-1234"}, None)
    assert GITHUB in found and "hello-world-1234" not in found
    encoded = base64.b64encode(GITHUB.encode()).decode()
    out = Masker(found)(f"echo {encoded} | base64 -d")
    assert encoded not in out and MASK in out


def test_config_variables_names_every_variable_her_config_names(root: Root) -> None:
    config = yaml.safe_load(root.config.read_text())
    config["provider"] = {
        "kind": "openai",
        "api_key_env": "DEPLOY_WORDS",
        "keys": {
            "critic.example.com": "CRITIC_WORDS",
            "127.0.0.1:8080": ["LOCAL_ONE", "LOCAL_TWO"],
        },
    }
    config["connectors"] = {
        "github": {"token_env": "GH_WORDS"},
        "docs": {
            "command": ["/bin/true"],
            "env": {"DOCS_TOKEN": "$DOCS_SOURCE", "REGION": "${REGION_SOURCE}", "LEVEL": "debug"},
        },
        "wiki": {"command": ["/bin/true"], "env": ["WIKI_PASSED"]},
        "none": {"token_env": "none"},
    }
    root.config.write_text(yaml.safe_dump(config))
    named = ["DEPLOY_WORDS", "CRITIC_WORDS", "LOCAL_ONE", "LOCAL_TWO", "GH_WORDS", "DOCS_SOURCE"]
    assert sorted(config_variables(root.path)) == sorted([*named, "REGION_SOURCE", "WIKI_PASSED"])
    root.config.write_text("provider: [unclosed\n")
    assert config_variables(root.path) == []  # a broken config: no names, and no error


# -- the environment of a child ---------------------------------------------------------------


def test_a_child_gets_only_the_allowlisted_names_and_none_holding_a_secret() -> None:
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/her",
        "LANG": "C.UTF-8",
        "LC_TIME": "en_GB.UTF-8",
        "LC_SMUGGLED": "carried-over-ssh-1234",
        "TERM": "xterm-256color",
        "GIT_AUTHOR_NAME": "Her",
        "GIT_DIR": "/elsewhere/.git",
        "CI_JOB_JWT": JWT,
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-words-5678",
        "MY_THING": "an-ordinary-looking-value",
        "SHELL": GITHUB,  # an allowlisted name holding a credential still stays out
        "USER": "deploy-words-9999",  # named as a key by her config: stays out
        "HTTPS_PROXY": "http://proxy.example:3128",  # how her machine reaches the network
        "HTTP_PROXY": "http://her:proxy-password-123@proxy.example:3128",  # a password: out
    }
    env = child_environment(base, "run-7", ["USER"])
    assert env == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/her",
        "LANG": "C.UTF-8",
        "LC_TIME": "en_GB.UTF-8",
        "TERM": "xterm-256color",
        "GIT_AUTHOR_NAME": "Her",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "SDD_RUN_ID": "run-7",
    }


# -- in a real run ----------------------------------------------------------------------------


def _command(text: str) -> dict[str, object]:
    return {"tool": "run_command", "args": {"command": text, "purpose": "see the environment"}}


def test_a_sandboxed_command_sees_no_variable_outside_the_allowlist(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The route: `env` in a role's command printed CI_JOB_JWT (a plain name) to the model."""
    accepted_change(root)
    monkeypatch.setenv("CI_JOB_JWT", JWT)
    monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "request-words-5678")
    monkeypatch.setenv("MY_THING", "an-ordinary-looking-value")
    script(tmp_path, monkeypatch, [{"tool_calls": [_command("env")]}, {"say": "ok"}])
    first = json.loads(sdd("role", "run", "builder", "--task", "Env", "--json").stdout)
    assert sdd("allow", first["stop"]["id"]).code == 0
    seen = transcript(tmp_path)[1]["messages"][-1]["content"]
    assert f"SDD_RUN_ID={first['run']}" in seen and "PATH=" in seen
    for name in ("CI_JOB_JWT", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "MY_THING"):
        assert f"{name}=" not in seen, seen
    assert "an-ordinary-looking-value" not in seen
    printed = {line.partition("=")[0] for line in seen.splitlines() if "=" in line}
    # What bash itself sets (PWD, SHLVL, _) and what sdd sets; nothing else of sdd's own.
    assert printed - {"exit code 0"} <= {*CHILD_ENV, "SDD_RUN_ID", "PWD", "SHLVL", "_"}, printed


def test_credentials_by_shape_in_a_product_file_reach_the_model_masked(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The route: a token nobody exported (a JWT, a GitHub token, a key block committed in a
    file) went to the model whole, because the masker knew only the values it was given."""
    accepted_change(root)
    (root.path / "notes.md").write_text(
        f"deploy with {JWT}\ntoken: {GITHUB}\naws: {SHAPES['aws access key id']}\n{PRIVATE_KEY}"
    )
    read = {"tool": "read_file", "args": {"path": "notes.md"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [read]}, {"say": "ok"}])
    done = sdd("role", "run", "builder", "--task", "Read the notes", "--json")
    assert done.code == 0, done.stdout + done.stderr
    run = json.loads(done.stdout)["run"]
    sent = (tmp_path / "s.transcript.jsonl").read_text()
    log = (root.sdd / "role-runs" / f"{run}.jsonl").read_text()
    told = transcript(tmp_path)[1]["messages"][-1]["content"]
    assert "deploy with [secret]" in told and "token: [secret]" in told
    for value in (JWT, GITHUB, SHAPES["aws access key id"], "b3BlbnNzaC1rZXktdjEA"):
        assert value not in sent, f"{value[:12]}... reached the model"
        assert value not in log, f"{value[:12]}... is in the run log"


def test_a_variable_her_config_names_is_masked_whatever_its_name(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`api_key_env: DEPLOY_WORDS`: the name says nothing secret and the value looks like words,
    but her config says it is a key, so it never reaches the model or a log."""
    accepted_change(root)
    config = yaml.safe_load(root.config.read_text())
    config["provider"]["api_key_env"] = "DEPLOY_WORDS"
    root.config.write_text(yaml.safe_dump(config))
    confirm(root, ".sdd/config.yaml")
    words = "orchid-lantern-quarry-41"
    monkeypatch.setenv("DEPLOY_WORDS", words)
    (root.path / "notes.md").write_text(f"the deploy phrase is {words}\n")
    read = {"tool": "read_file", "args": {"path": "notes.md"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [read]}, {"say": "ok"}])
    done = sdd("role", "run", "builder", "--task", "Read the notes", "--json")
    assert done.code == 0, done.stdout + done.stderr
    run = json.loads(done.stdout)["run"]
    told = transcript(tmp_path)[1]["messages"][-1]["content"]
    assert "the deploy phrase is [secret]" in told
    assert words not in (tmp_path / "s.transcript.jsonl").read_text()
    assert words not in (root.sdd / "role-runs" / f"{run}.jsonl").read_text()
