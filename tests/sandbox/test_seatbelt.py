"""The Seatbelt profile, read back with a small s-expression reader and judged by the rule that
decides in SBPL: the last matching one. Paths with spaces, quotes, backslashes and non-ASCII
letters must come back exactly."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from sdd_git.sandbox import seatbelt
from sdd_git.sandbox.policy import Policy


@dataclass(frozen=True)
class Text:
    """A string literal, unescaped."""

    value: str


@dataclass(frozen=True)
class Regex:
    value: str


Form = str | Text | Regex | list["Form"]


def read(source: str) -> list[Form]:
    """Every top-level form of an SBPL profile. Fails on unbalanced parentheses or an
    unterminated string, so a broken quote in the profile fails the test."""
    position = 0
    stack: list[list[Form]] = [[]]
    while position < len(source):
        char = source[position]
        if char.isspace():
            position += 1
        elif char == ";":
            end = source.find("\n", position)
            position = len(source) if end < 0 else end
        elif char == "(":
            stack.append([])
            position += 1
        elif char == ")":
            assert len(stack) > 1, f"unbalanced ')' at {position}"
            done = stack.pop()
            stack[-1].append(done)
            position += 1
        elif char == '"' or source.startswith('#"', position):
            regex = char == "#"
            position += 2 if regex else 1
            chars: list[str] = []
            while True:
                assert position < len(source), "unterminated string literal"
                char = source[position]
                if char == "\\" and not regex:
                    chars.append(source[position + 1])
                    position += 2
                elif char == '"':
                    position += 1
                    break
                else:
                    chars.append(char)
                    position += 1
            stack[-1].append(Regex("".join(chars)) if regex else Text("".join(chars)))
        else:
            match = re.compile(r"[^\s()\";]+").match(source, position)
            assert match, f"unexpected {char!r} at {position}"
            stack[-1].append(match.group())
            position = match.end()
    assert len(stack) == 1, "unbalanced '('"
    return stack[0]


@dataclass(frozen=True)
class Rule:
    index: int
    action: str
    operations: tuple[str, ...]
    filters: tuple[Form, ...]


def rules(forms: list[Form]) -> list[Rule]:
    out: list[Rule] = []
    for index, form in enumerate(forms):
        assert isinstance(form, list) and form, form
        action = form[0]
        if action not in ("allow", "deny"):
            continue
        operations = tuple(item for item in form[1:] if isinstance(item, str))
        filters = tuple(item for item in form[1:] if isinstance(item, list))
        out.append(Rule(index, action, operations, filters))
    return out


def _matches_filter(item: Form, path: str) -> bool:
    assert isinstance(item, list) and len(item) == 2, item
    kind, argument = item
    if kind == "literal":
        assert isinstance(argument, Text)
        return path == argument.value
    if kind == "subpath":
        assert isinstance(argument, Text)
        base = argument.value
        return path == base or path.startswith(base.rstrip("/") + "/")
    if kind == "regex":
        assert isinstance(argument, Regex)
        return re.search(argument.value, path) is not None
    if kind in ("global-name", "target"):
        return False
    raise AssertionError(f"unknown filter {kind}")


def _matches_operation(pattern: str, operation: str) -> bool:
    if pattern == "default":
        return True
    if pattern.endswith("*"):
        return operation.startswith(pattern[:-1])
    return pattern == operation


def decide(profile: str, operation: str, path: str) -> str:
    """What SBPL decides for a file operation: the last rule that matches it."""
    verdict = ""
    for rule in rules(read(profile)):
        if not any(_matches_operation(op, operation) for op in rule.operations):
            continue
        if rule.filters and not any(_matches_filter(item, path) for item in rule.filters):
            continue
        verdict = rule.action
    assert verdict, f"no rule decides {operation} {path}"
    return verdict


def paths_in(rule: Rule) -> set[str]:
    return {
        item[1].value
        for item in rule.filters
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], Text)
    }


TRICKY = 'pro duct "quoted" back\\slash ünïcødé ✓'


@pytest.fixture
def policy(tmp_path: Path) -> Policy:
    product = tmp_path / TRICKY
    for name in ("memory", "changes", ".sdd", ".git", "src", ".venv/lib"):
        (product / name).mkdir(parents=True)
    home = tmp_path / 'home "me"'
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y")
    (home / "sub\\dir").mkdir()
    (home / "sub\\dir" / "token").write_text("t")
    scratch = tmp_path / "scratch ✓"
    scratch.mkdir()
    read_only = tuple(product / name for name in ("memory", "changes", ".sdd", ".git", ".venv/lib"))
    hidden = (home / ".ssh", home / ".netrc", home / "sub\\dir" / "token")
    return Policy(product, read_only, hidden, scratch, home, network=False)


def test_paths_come_back_exactly_from_the_profile(policy: Policy) -> None:
    mentioned = set().union(*(paths_in(rule) for rule in rules(read(seatbelt.profile(policy)))))
    expected = {str(policy.product), str(policy.scratch)}
    expected |= {str(path) for path in policy.read_only + policy.hidden}
    assert expected <= mentioned
    assert TRICKY in str(policy.product)


def test_it_denies_by_default(policy: Policy) -> None:
    forms = read(seatbelt.profile(policy))
    assert forms[0] == ["version", "1"]
    assert forms[1] == ["deny", "default"]
    assert decide(seatbelt.profile(policy), "mach-register", "") == "deny"


def test_every_hidden_path_is_denied_read_after_the_global_read_allow(policy: Policy) -> None:
    text = seatbelt.profile(policy)
    found = rules(read(text))
    global_read = [r for r in found if r.action == "allow" and "file-read*" in r.operations]
    assert [r.filters for r in global_read] == [()]
    for path in policy.hidden:
        denials = [
            r
            for r in found
            if r.action == "deny" and "file-read*" in r.operations and str(path) in paths_in(r)
        ]
        assert denials and denials[-1].index > global_read[0].index
        assert decide(text, "file-read-data", str(path)) == "deny"
    kinds = {
        item[1].value: item[0]
        for r in found
        if r.action == "deny" and "file-read*" in r.operations
        for item in r.filters
        if isinstance(item, list) and isinstance(item[1], Text)
    }
    ssh, netrc, token = (str(path) for path in policy.hidden)
    assert kinds == {ssh: "subpath", netrc: "literal", token: "literal"}
    assert decide(text, "file-read-data", ssh + "/id_ed25519") == "deny"
    assert decide(text, "file-read-data", netrc + "-not-it") == "allow"
    assert decide(text, "file-read-data", str(policy.home / ".bashrc")) == "allow"
    assert decide(text, "file-read-data", "/usr/bin/env") == "allow"


def test_writes_are_allowed_only_beneath_the_product_and_the_scratch(policy: Policy) -> None:
    text = seatbelt.profile(policy)
    allowed = [
        r for r in rules(read(text)) if r.action == "allow" and "file-write*" in r.operations
    ]
    assert len(allowed) == 1
    subpaths = {
        item[1].value
        for item in allowed[0].filters
        if isinstance(item, list) and item[0] == "subpath" and isinstance(item[1], Text)
    }
    assert subpaths == {str(policy.product), str(policy.scratch)}
    literals = {
        item[1].value
        for item in allowed[0].filters
        if isinstance(item, list) and isinstance(item[1], Text)
    }
    assert all(path.startswith("/dev/") for path in literals - subpaths)
    assert decide(text, "file-write-data", str(policy.product / "src/app.py")) == "allow"
    assert decide(text, "file-write-create", str(policy.product / "new.txt")) == "allow"
    assert decide(text, "file-write-data", str(policy.scratch / "t")) == "allow"
    assert decide(text, "file-write-data", "/dev/null") == "allow"
    assert decide(text, "file-write-data", str(policy.product) + "-sibling/x") == "deny"
    assert decide(text, "file-write-data", str(policy.product.parent / "x")) == "deny"
    assert decide(text, "file-write-data", str(policy.home / ".bashrc")) == "deny"
    assert decide(text, "file-write-data", "/etc/passwd") == "deny"


def test_each_read_only_path_is_denied_write_after_the_product_write_allow(policy: Policy) -> None:
    text = seatbelt.profile(policy)
    found = rules(read(text))
    allow = next(r for r in found if r.action == "allow" and "file-write*" in r.operations)
    for path in policy.read_only:
        denials = [
            r
            for r in found
            if r.action == "deny" and "file-write*" in r.operations and str(path) in paths_in(r)
        ]
        assert denials and denials[-1].index > allow.index
        assert decide(text, "file-write-data", str(path / "decisions.yaml")) == "deny"
        assert decide(text, "file-write-unlink", str(path)) == "deny"
        assert decide(text, "file-read-data", str(path / "decisions.yaml")) == "allow"
    assert decide(text, "file-write-data", str(policy.product / ".venv/bin/python")) == "allow"
    assert decide(text, "file-write-data", str(policy.product / "memory-notes.md")) == "allow"


def test_a_hidden_path_reached_through_a_link_is_denied_by_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere" / "ssh"
    real.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".ssh").symlink_to(real)
    product = tmp_path / "product"
    (product / "memory").mkdir(parents=True)
    (product / "notes").mkdir()
    (product / "memo").symlink_to(product / "notes")
    policy = Policy(
        product, (product / "memo",), (home / ".ssh",), tmp_path / "s", home, network=False
    )
    text = seatbelt.profile(policy)
    assert decide(text, "file-read-data", str(real / "id_rsa")) == "deny"
    assert decide(text, "file-read-data", str(home / ".ssh/id_rsa")) == "deny"
    assert decide(text, "file-write-data", str(product / "notes/x")) == "deny"


def test_network_is_denied_unless_the_policy_allows_it(policy: Policy) -> None:
    closed = seatbelt.profile(policy)
    assert decide(closed, "network-outbound", "") == "deny"
    assert ["deny", "network*"] in read(closed)
    assert ["allow", "network*"] not in read(closed)
    opened = seatbelt.profile(replace(policy, network=True))
    assert decide(opened, "network-outbound", "") == "allow"
    assert ["allow", "network*"] in read(opened)
    assert ["deny", "network*"] not in read(opened)


def test_signals_reach_only_the_commands_own_processes(policy: Policy) -> None:
    signals = [r for r in rules(read(seatbelt.profile(policy))) if "signal" in r.operations]
    assert signals and all(r.action == "allow" for r in signals)
    targets = {str(item[1]) for r in signals for item in r.filters if isinstance(item, list)}
    assert targets == {"self", "same-sandbox"}


@pytest.mark.parametrize("bad", ["a\0b", "a\nb", "a\rb"])
def test_a_nul_or_a_line_break_in_a_path_is_refused(policy: Policy, bad: str) -> None:
    with pytest.raises(ValueError, match="NUL or a line break"):
        seatbelt.profile(replace(policy, read_only=(Path("/x") / bad,)))
    with pytest.raises(ValueError):
        seatbelt.profile(replace(policy, product=Path("/p") / bad))


def test_quote_escapes_backslashes_and_quotes() -> None:
    assert seatbelt.quote('a\\b"c') == '"a\\\\b\\"c"'
    assert read("(x " + seatbelt.quote('a\\b"c') + ")") == [["x", Text('a\\b"c')]]


def test_argv_runs_the_command_under_the_profile(policy: Policy) -> None:
    argv = seatbelt.argv(policy, ["bash", "-c", "true"])
    assert argv == ["/usr/bin/sandbox-exec", "-p", seatbelt.profile(policy), "bash", "-c", "true"]


@pytest.mark.skipif(
    sys.platform != "darwin" or not os.path.exists(seatbelt.SANDBOX_EXEC),
    reason="Seatbelt exists only on macOS",
)
def test_sandbox_exec_enforces_the_profile(policy: Policy, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    bash = shutil.which("bash") or "/bin/bash"

    def run(script: str) -> int:
        argv = seatbelt.argv(policy, [bash, "-c", script])
        return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode

    assert run(f"echo x > {quote_sh(policy.product / 'src/ok')}") == 0
    assert run(f"echo x > {quote_sh(policy.scratch / 'ok')}") == 0
    assert run(f"echo x > {quote_sh(policy.product / 'memory/no')}") != 0
    assert run(f"echo x > {quote_sh(outside / 'no')}") != 0
    assert run(f"cat {quote_sh(policy.hidden[1])}") != 0
    assert run("cat /etc/hosts > /dev/null") == 0


def quote_sh(path: Path) -> str:
    return "'" + str(path).replace("'", "'\\''") + "'"
