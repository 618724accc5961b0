"""The masker: which names are secret, where values come from, and every form a value is hidden
in (exact, base64 at three offsets and wrapped, URL-encoded, JSON-escaped, hex, reversed, split)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from sdd_git.masking.files import parse_dotenv
from sdd_git.masking.masker import MASK, Masker, looks_like_credential
from sdd_git.masking.names import is_secret_name
from sdd_git.masking.reach import child_environment, collect_secrets
from sdd_git.root import Root
from tests.conftest import SddRunner

SECRET = 's3cr3t/Value+=&"x'
KEY = "sk_live_Zq8RmYx4TuV7wKp2Nd5Hc9Lb"


def hidden(mask: Masker, text: str, secret: str) -> str:
    """`text` masked, asserting that neither the secret nor `text`'s secret part survive."""
    out = mask(text)
    assert secret not in out, out
    assert MASK in out, out
    return out


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "STRIPE_KEY",
        "CRITIC_KEY",
        "apiKey",
        "SSH_KEYS",
        "MYSQL_PWD",
        "DB_PASS",
        "DBPASS",
        "SMTP_PASSWORD",
        "PGPASSWORD",
        "MY_PASSWD",
        "GPG_PASSPHRASE",
        "SENTRY_DSN",
        "BASIC_AUTH",
        "HTTP_AUTHORIZATION",
        "AUTH_HEADER",
        "OAUTH_CLIENT",
        "SESSION_COOKIE",
        "COOKIE_JAR",
        "SESSION_ID",
        "FLASK_SESSION",
        "PRIVATE_PEM",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GH_TOKEN",
        "access_token",
        "CLIENT_SECRET",
        "SLACK_WEBHOOK_URL",
        "DATABASE_URL",
        "SQLALCHEMY_DATABASE_URI",
        "REDIS_URL",
        "MONGODB_URI",
    ],
)
def test_secret_names_are_matched_broadly(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["PATH", "HOME", "PWD", "OLDPWD", "GIT_AUTHOR_NAME", "PASSENGER_APP_ENV", "LANG", "API_URL"],
)
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret_name(name)


# -- forms ------------------------------------------------------------------------------------


def test_every_form_of_a_secret_is_masked() -> None:
    mask = Masker([SECRET])
    raw = SECRET.encode()
    forms = {
        "exact": SECRET,
        "url": quote(SECRET, safe=""),
        "url, lower-case %xx": re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), quote(SECRET)),
        "url+": quote_plus(SECRET),
        "json": json.dumps(SECRET)[1:-1],
        "json, not ascii": json.dumps(SECRET, ensure_ascii=False)[1:-1],
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "reversed": SECRET[::-1],
        "base64": base64.b64encode(raw).decode(),
        "base64, unpadded": base64.b64encode(raw).decode().rstrip("="),
        "base64url": base64.urlsafe_b64encode(raw).decode(),
    }
    for name, form in forms.items():
        assert mask(f"before {form} after") == f"before {MASK} after", name


def test_json_escapes_of_non_ascii_secrets_are_masked_both_ways() -> None:
    secret = "pässwörd-Ünïcode-42"
    mask = Masker([secret])
    for ensure_ascii in (True, False):
        text = json.dumps({"content": f"here: {secret}."}, ensure_ascii=ensure_ascii)
        out = hidden(mask, text, secret)
        assert json.loads(out) == {"content": f"here: {MASK}."}


@pytest.mark.parametrize("offset", [0, 1, 2])
@pytest.mark.parametrize("urlsafe", [False, True])
def test_base64_inside_a_longer_stream_is_masked_at_each_offset(offset: int, urlsafe: bool) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    for before in (offset, offset + 3, offset + 30):
        stream = encode(b"\x01" * before + KEY.encode() + b"\x02" * 11).decode()
        out = Masker([KEY])(f"payload={stream}")
        assert MASK in out
        assert KEY.encode() not in _decoded_runs(out), (before, out)


@pytest.mark.parametrize("width", [76, 64])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_wrapped_base64_is_masked(width: int, newline: str, offset: int) -> None:
    # Long enough that the key's part of the stream crosses a line break at every alignment.
    stream = base64.b64encode(b"\x07" * (offset + 40) + KEY.encode() + b"\x09" * 40).decode()
    wrapped = newline.join(stream[i : i + width] for i in range(0, len(stream), width))
    text = f"-----BEGIN DATA-----{newline}{wrapped}{newline}-----END DATA-----"
    out = Masker([KEY])(text)
    assert MASK in out
    assert KEY.encode() not in _decoded_runs(out.replace(newline, ""))
    # The same text inside a JSON string, where the line breaks are \n escapes.
    as_json = Masker([KEY])(json.dumps({"content": text}))
    assert KEY.encode() not in _decoded_runs(json.loads(as_json)["content"].replace(newline, ""))


def _decoded_runs(text: str) -> bytes:
    """Every base64 run in `text` decoded at every alignment, joined."""
    found = b""
    for run in re.findall(r"[A-Za-z0-9+/_-]{4,}", text):
        for skip in range(4):
            part = run[skip:]
            part = part[: len(part) // 4 * 4]
            found += base64.b64decode(part.replace("-", "+").replace("_", "/") + "==")
    return found


def test_a_multi_line_secret_is_masked_line_by_line() -> None:
    pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\nAbCdEfGhIjKlMnOpQrStUv\n-----END KEY-----"
    mask = Masker([pem])
    leaked = "the log printed: AbCdEfGhIjKlMnOpQrStUv and MIIBOgIBAAJBAKj34GkxFhD9"
    assert mask(leaked) == f"the log printed: {MASK} and {MASK}"


def test_a_secret_split_over_words_or_lines_is_masked() -> None:
    mask = Masker([KEY])
    assert mask(f"first {KEY[:10]} {KEY[10:]} end") == f"first {MASK} end"
    assert mask(f"{KEY[:6]} {KEY[6:12]} {KEY[12:20]} {KEY[20:]}") == MASK
    assert mask(f"{KEY[:16]}\n  {KEY[16:]}") == MASK


def test_a_partial_echo_of_a_credential_is_masked() -> None:
    mask = Masker([KEY])
    assert mask(f"invalid key {KEY[:14]}...") == f"invalid key {MASK}..."
    assert mask(f"ends in {KEY[-13:]}") == f"ends in {MASK}"


def test_short_values_are_never_used_as_masks() -> None:
    assert Masker(["abc", "", "1234567"])("abc is a word, 1234567 a number") == (
        "abc is a word, 1234567 a number"
    )


def test_masked_json_stays_json() -> None:
    tricky = 'ab"cd\\ef/gh\u00e9ij'
    mask = Masker([tricky])
    for ensure_ascii in (True, False):
        text = json.dumps({"a": f"x{tricky}y", "b": [tricky[::-1]]}, ensure_ascii=ensure_ascii)
        assert json.loads(mask(text)) == {"a": f"x{MASK}y", "b": [MASK]}


def test_plain_text_around_a_secret_is_left_as_it_was() -> None:
    text = "line one\n\tline two  with spaces\nand the end"
    assert Masker([KEY])(text) == text
    assert Masker([KEY])(f"a  b\n{KEY}\n  c") == f"a  b\n{MASK}\n  c"


# -- where values come from -------------------------------------------------------------------


def test_values_come_from_secret_names_and_url_passwords(tmp_path: Path) -> None:
    environ = {
        "STRIPE_KEY": KEY,
        "MYSQL_PWD": "Mysq1Pw_Qh7Tz3Rk9",
        "HTTPS_PROXY": "http://proxy-user:Pr0xy%40Pass@proxy.example:3128",
        "EDITOR": "vim-or-something-long",
        "SHORT_TOKEN": "abc",
    }
    found = collect_secrets(tmp_path, environ, tmp_path / "home")
    assert KEY in found and "Mysq1Pw_Qh7Tz3Rk9" in found
    assert "Pr0xy%40Pass" in found and "Pr0xy@Pass" in found  # as written and decoded
    assert "proxy-user:Pr0xy@Pass" in found  # what Basic authentication encodes
    assert "vim-or-something-long" not in found and "abc" not in found


def test_dotenv_files_are_read_in_all_their_forms(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "# settings\n"
        "\n"
        "APP_NAME=expenses-service\n"
        "PORT=8080\n"
        "DEBUG=true\n"
        "DATA_DIR=/var/lib/expenses\n"
        "PAYMENT_PASS=payPass_Yw2Kd8Rq5Zt3Xm9Ff\n"
        "export EXPORTED_SECRET=exported_Kx9Wm2Pq7Z\n"
        "SINGLE='single quoted #not a comment Zr4Tv8'\n"
        'DOUBLE="double_Qh7Tz3Rk9Vx2"   # a comment\n'
        "UNQUOTED=unquoted_Lq4Zx8Rm2Tk7 # a comment\n"
        "SPACED = spaced_Hn3Ee5Jc1Hd0\n"
        'PRIVATE_KEY="-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END KEY-----"\n'
        "DB=postgres://app:PgPw_Rt5Ky8Zm2Qx7Vn@db.example/app\n"
    )
    (tmp_path / ".env.production").write_text("OTHER_VALUE=prod_Gh7Rk2Zx9Qm4Tv8\n")
    (tmp_path / ".env.local").mkdir()  # a folder: skipped
    found = collect_secrets(tmp_path, {}, tmp_path / "home")
    for value in (
        "payPass_Yw2Kd8Rq5Zt3Xm9Ff",
        "exported_Kx9Wm2Pq7Z",
        "double_Qh7Tz3Rk9Vx2",
        "unquoted_Lq4Zx8Rm2Tk7",
        "spaced_Hn3Ee5Jc1Hd0",
        "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\n-----END KEY-----",
        "PgPw_Rt5Ky8Zm2Qx7Vn",
        "prod_Gh7Rk2Zx9Qm4Tv8",
    ):
        assert value in found, value
    assert "single quoted #not a comment Zr4Tv8" not in found  # spaces: no credential...
    assert ("SINGLE", "single quoted #not a comment Zr4Tv8") in parse_dotenv(
        (tmp_path / ".env").read_text()
    )  # ...but read whole
    for plain in ("expenses-service", "8080", "true", "/var/lib/expenses"):
        assert plain not in found


def test_what_looks_like_a_credential() -> None:
    for value in ("sk_live_abc123XYZ", "Tr0ub4dor&3", "https://hooks.example/T0AB12CD/xyzXYZ123"):
        assert looks_like_credential(value), value
    for value in ("production", "us-east-1", "2024-01-01", "/usr/local/bin", "localhost:5432"):
        assert not looks_like_credential(value), value
    for value in ("https://api.example.com/v1", "person@example.com", "short", "two words here"):
        assert not looks_like_credential(value), value


def test_netrc_one_line_and_multi_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text(
        "machine one.example login alice password netrc_Pw9Qz3Xk7Rm2\n"
        "# a comment password notThisOne_123\n"
        "machine two.example\n"
        "    login bob-the-builder\n"
        '    password "quoted pass phrase"\n'
        "    account acct_Lb5Jc1Hd0FsAk\n"
        "macdef init\n"
        "password inside_a_macro_1\n"
        "\n"
        "default login anonymous password guest_Zr4Tv8Yb3\n"
    )
    found = collect_secrets(tmp_path / "product", {}, home)
    for value in (
        "netrc_Pw9Qz3Xk7Rm2",
        "alice:netrc_Pw9Qz3Xk7Rm2",
        "bob-the-builder",
        "quoted pass phrase",
        "acct_Lb5Jc1Hd0FsAk",
        "guest_Zr4Tv8Yb3",
        "anonymous",
    ):
        assert value in found, value
    assert "notThisOne_123" not in found and "inside_a_macro_1" not in found


def test_other_credential_files_of_the_home_folder_are_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(
        "[default]\naws_access_key_id = AKIAEXAMPLE1\naws_secret_access_key = AwsSec_Yt6Hn3Kq9\n"
    )
    (home / ".git-credentials").write_text("https://me:ghp_Gh7Rk2Zx9Qm4@github.com\n")
    found = collect_secrets(tmp_path, {}, home)
    assert {"AKIAEXAMPLE1", "AwsSec_Yt6Hn3Kq9", "ghp_Gh7Rk2Zx9Qm4"} <= set(found)


def test_unreadable_files_are_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".env.pipe")  # reading it would block forever
    (tmp_path / ".env").write_bytes(b"TOKEN=\xff\xfebinary_Zx9Qm4Tv8\n")
    found = collect_secrets(tmp_path, {}, None)
    assert any("binary_Zx9Qm4Tv8" in value for value in found)


# -- children ---------------------------------------------------------------------------------


def test_children_get_the_run_id_and_no_secrets() -> None:
    base = {
        "PATH": "/bin",
        "HOME": "/home/me",
        "GIT_AUTHOR_NAME": "Me",
        "OPENAI_API_KEY": "k" * 20,
        "GH_TOKEN": "t" * 20,
        "STRIPE_KEY": KEY,
        "MYSQL_PWD": "p" * 20,
        "SENTRY_DSN": "https://abc@sentry.example/1",
        "DATABASE_URL": "postgres://localhost/app",
        "HTTPS_PROXY": "http://user:proxyPass1@proxy:3128",
        "SESSION_COOKIE": "c" * 20,
        "MY_LLM": "x" * 20,
        "SDD_API_KEY": "s" * 20,
    }
    env = child_environment(base, "run-1", extra_secret_names=["MY_LLM"])
    assert env == {
        "PATH": "/bin",
        "HOME": "/home/me",
        "GIT_AUTHOR_NAME": "Me",
        "SDD_RUN_ID": "run-1",
    }


# -- stderr -----------------------------------------------------------------------------------


def test_an_error_printed_by_the_cli_masks_a_dotenv_secret(sdd: SddRunner, root: Root) -> None:
    secret = "dotenv_Lq4Zx8Rm2Tk7Wv9Hn3Ee"
    (root.path / ".env").write_text(f"PAYMENT_PASS={secret}\n")
    result = sdd(secret)  # "No such command '<secret>'"
    assert result.code == 2
    assert secret not in result.stderr
    assert f"error: No such command '{MASK}'." in result.stderr
    encoded = base64.b64encode(secret.encode()).decode()
    result = sdd(f"x{encoded}")
    assert encoded not in result.stderr and MASK in result.stderr


def test_an_error_outside_a_root_masks_secrets_of_the_current_folder(
    sdd: SddRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / ".env.local").write_text("SOMETHING=else_Kx9Wm2Pq7Zr4\n")
    monkeypatch.setenv("CRITIC_KEY", "crit_Kx9Wm2Pq7Zr4Tv8Yb3NhQ")
    for secret in ("else_Kx9Wm2Pq7Zr4", "crit_Kx9Wm2Pq7Zr4Tv8Yb3NhQ"):
        result = sdd(secret, cwd=folder)
        assert secret not in result.stderr and MASK in result.stderr


def test_help_imports_no_masking(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from sdd_git.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('sdd_git.masking.reach' in sys.modules, file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert result.stderr.strip() == "False"
