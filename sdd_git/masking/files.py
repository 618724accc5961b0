"""The files secrets are read from: `.env*` files at the top of the product, `~/.netrc`, and the
credential files of common tools, each read small and never through a FIFO or a folder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

MAX_FILE_BYTES = 1 << 20  # a credential file is small; a huge one is not read whole

# Credential files of common tools, read for any value under a secret-looking key and any
# password inside a URL (`~/.netrc` has its own reader).
HOME_CREDENTIAL_FILES = (
    ".aws/credentials",
    ".aws/config",
    ".pypirc",
    ".npmrc",
    ".docker/config.json",
    ".git-credentials",
    ".config/git/credentials",
)


def read_small(path: Path) -> str:
    try:
        if not path.is_file():  # a venv called .env, a FIFO a role planted: never read
            return ""
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def dotenv_texts(product: Path) -> Iterator[str]:
    try:
        names = sorted(p.name for p in product.iterdir() if p.name.startswith(".env"))
    except OSError:
        return
    for name in names:
        text = read_small(product / name)
        if text:
            yield text


_DOTENV_KEY = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*")
_DOUBLE_QUOTED_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "$": "$"}


def parse_dotenv(text: str) -> list[tuple[str, str]]:
    """`KEY=VALUE` pairs of a `.env` file as dotenv tools read them: `export KEY=VALUE`, single
    quotes (literal), double quotes (with \\n-style escapes, across lines), unquoted values up to
    a ` #` comment, blank and comment lines skipped. A double-quoted value is given both as written
    and unescaped, since either may be what leaks."""
    pairs: list[tuple[str, str]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        match = _DOTENV_KEY.match(line)
        if not line or line.startswith("#") or match is None:
            continue
        key, rest = match.group(1), line[match.end() :]
        quote_char = rest[:1]
        if quote_char in ("'", '"'):
            body = rest[1:]
            end = _closing_quote(body, quote_char)
            while end < 0 and index < len(lines):  # a quoted value may go on over lines
                body += "\n" + lines[index]
                index += 1
                end = _closing_quote(body, quote_char)
            written = body if end < 0 else body[:end]
            pairs.append((key, written))
            if quote_char == '"':
                unescaped = re.sub(
                    r"\\(.)", lambda m: _DOUBLE_QUOTED_ESCAPES.get(m.group(1), m.group(0)), written
                )
                if unescaped != written:
                    pairs.append((key, unescaped))
        else:
            value = re.split(r"\s+#", rest, maxsplit=1)[0].strip()
            pairs.append((key, value))
    return pairs


def _closing_quote(body: str, quote_char: str) -> int:
    escaped = False
    for position, char in enumerate(body):
        if escaped:
            escaped = False
        elif char == "\\" and quote_char == '"':
            escaped = True
        elif char == quote_char:
            return position
    return -1


def netrc_secrets(text: str) -> list[str]:
    """Passwords and accounts of a `.netrc`, and the login of every entry with a password (also as
    `login:password`, what HTTP Basic authentication encodes). Entries may be on one line or many;
    `macdef` bodies and `#` comments are skipped."""
    tokens = list(_netrc_tokens(text))
    found: list[str] = []
    entry: dict[str, str] = {}

    def close() -> None:
        password = entry.get("password")
        if password:
            found.append(password)
            login = entry.get("login")
            if login:
                found.extend((login, f"{login}:{password}"))
        if entry.get("account"):
            found.append(entry["account"])
        entry.clear()

    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in ("machine", "default"):
            close()
            index += 2 if token == "machine" else 1
        elif token in ("login", "password", "account", "port") and index + 1 < len(tokens):
            entry[token] = tokens[index + 1]
            index += 2
        else:
            index += 1
    close()
    return found


def _netrc_tokens(text: str) -> Iterator[str]:
    lines = iter(text.splitlines())
    for line in lines:
        words = iter(_netrc_line_tokens(line))
        for word in words:
            if word == "macdef":
                next(words, None)  # the macro's name; its body runs to the next blank line
                for body in lines:
                    if not body.strip():
                        break
                break
            yield word


def _netrc_line_tokens(line: str) -> Iterator[str]:
    position = 0
    while position < len(line):
        if line[position].isspace():
            position += 1
            continue
        if line[position] == "#":
            return  # a comment runs to the end of the line
        if line[position] == '"':
            token = []
            position += 1
            while position < len(line) and line[position] != '"':
                if line[position] == "\\" and position + 1 < len(line):
                    position += 1
                token.append(line[position])
                position += 1
            position += 1
            yield "".join(token)
            continue
        end = position
        while end < len(line) and not line[end].isspace():
            end += 1
        yield line[position:end]
        position = end


def assignments(text: str) -> Iterator[tuple[str, str]]:
    """`key = value`, `key: value` and `"key": "value"` pairs of INI, rc and JSON credential
    files, loosely: a key that is not secret-named is ignored by the caller anyway."""
    for key, value in re.findall(r'"([^"\n]+)"\s*:\s*"([^"\n]*)"', text):
        yield key, value
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;[{":
            continue
        separator = "=" if "=" in line else ":"
        key, found, value = line.partition(separator)
        if found:
            yield key.strip().strip("\"'"), value.strip().rstrip(",").strip().strip("\"'")
