"""What a CI file sdd writes pins: where it installs sdd from, and the actions it uses.

No package registry serves the name `sdd-git`, so a file that ran `pip install sdd-git==0.1.0`
would run, beside her model key, whatever whoever registers that name first put there. So every
CI file sdd writes (`sdd routine export` for GitHub, GitLab and Jenkins, and the Copilot setup
steps of `sdd agents install copilot`) installs sdd only from the source that her confirmed
`.sdd/config.yaml` pins, in one of two forms:

    ci:
      install: git+https://github.com/OWNER/sdd.git@<the full 40-hex commit id>

    ci:
      install:
        wheel: https://host/path/sdd_git-0.1.0-py3-none-any.whl  # or a path in the repository
        sha256: <the wheel's 64-hex sha256>
        requirements: ci/sdd-requirements.txt  # its dependencies, each with --hash=sha256:

The git form installs that one commit (its dependencies come from the index, as with any
install). The wheel form is installed in pip's hash-checking mode (`--require-hashes`), which is
all or nothing: pip refuses to install any package whose hash it was not given, the wheel's
dependencies too. So they come with their hashes from a requirements file she keeps
(`pip-compile --generate-hashes`, `uv pip compile --generate-hashes`), and pip refuses a
package whose hash is missing or different. Paths are relative to the sdd root, where the
install runs.

The value counts only once she confirmed the settings that hold it (CONTRACT §13): a pull
request that changes `ci.install` changes nothing sdd writes until she accepts it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.root import Root

# Third-party actions, at the commit of a release tag (read from the actions' own repositories:
# `git rev-parse v4.2.2^{commit}`); a tag can be moved, a commit id cannot.
CHECKOUT = "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683"
CHECKOUT_TAG = "v4.2.2"
SETUP_PYTHON = "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065"
SETUP_PYTHON_TAG = "v5.6.0"
# A stopped run's stops and logs, carried to the job that answers them (routines/ci/carry.py).
UPLOAD_ARTIFACT = "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02"
UPLOAD_ARTIFACT_TAG = "v4.6.2"
DOWNLOAD_ARTIFACT = "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093"
DOWNLOAD_ARTIFACT_TAG = "v4.3.0"

KEY = "ci.install"
_GIT = re.compile(
    r"git\+https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?/[A-Za-z0-9._~/-]+@[0-9a-fA-F]{40}\Z"
)
_WHEEL_URL = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?/[A-Za-z0-9._~/%+-]*\Z")
_PATH = re.compile(r"[A-Za-z0-9._+-][A-Za-z0-9._/+-]{0,299}\Z")
_WHEEL_NAME = re.compile(r"sdd_git-[A-Za-z0-9._+-]+\.whl\Z")
_SHA256 = re.compile(r"[0-9a-fA-F]{64}\Z")
_HASHED = re.compile(r"--hash[= ]sha256:[0-9a-fA-F]{64}")
# A requirement's name as PEP 508 spells it; pip compares names after PEP 503's folding.
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
PROJECT = "sdd-git"

HINT = (
    "pin the sdd that CI installs in .sdd/config.yaml, in one of two forms:\n"
    "  ci: {install: git+https://github.com/OWNER/sdd.git@COMMIT}   (the full 40-hex commit id)\n"
    "  ci: {install: {wheel: URL-or-path/sdd_git-VERSION-py3-none-any.whl, sha256: HEX, "
    "requirements: PATH}}\n"
    "  (requirements: its dependencies, each with --hash=sha256:..., e.g. from "
    "pip-compile --generate-hashes); then confirm the settings with `sdd trust accept "
    ".sdd/config.yaml`"
)


@dataclass(frozen=True)
class InstallSource:
    """Where CI installs sdd from: a git commit, or a wheel with its hash and its dependencies'."""

    git: str = ""
    wheel: str = ""  # an https URL, or a path relative to the sdd root
    sha256: str = ""
    requirements: str = ""  # a path relative to the sdd root

    @property
    def needs_checkout(self) -> bool:
        """Whether the install reads files of the repository (the wheel form's requirements)."""
        return not self.git

    def shown(self) -> str:
        """The source in a few words, for a CI file's header comment."""
        if self.git:
            return self.git
        return f"{self.wheel} (sha256 {self.sha256}, dependencies from {self.requirements})"

    def shell(self, python: str) -> list[str]:
        """POSIX shell lines that install it with `python` (every value is of a charset that
        needs no quoting but single quotes, and holds no backslash: a Jenkinsfile's ''' string
        takes the lines as they are)."""
        if self.git:
            return [f"{python} -m pip install 'sdd-git @ {self.git}'"]
        wheel = self.wheel if self.wheel.startswith("https://") else "./" + self.wheel
        named = f"sdd-git @ {wheel}" if wheel.startswith("https://") else wheel
        # --require-hashes reads hashes from requirements files only: the wheel's line goes into
        # one of its own, beside hers.
        return [
            "sdd_requirement=$(mktemp)",
            f"echo '{named} --hash=sha256:{self.sha256}' > \"$sdd_requirement\"",
            f'{python} -m pip install --require-hashes -r "$sdd_requirement" '
            f"-r '{self.requirements}'",
        ]


def action(uses: str, tag: str) -> str:
    """A `uses:` value with its release tag as a trailing YAML comment."""
    return f"{uses} # {tag}"


def install_source(root: Root, doing: str) -> InstallSource:
    """The pinned source of her confirmed settings. Raises `WaitsForHer` while the settings are
    unconfirmed, and RecordError (exit 1) when `ci.install` is missing or not one of the two
    forms: a CI file is then not written at all, never with a bare name."""
    from sdd_git.paths import display
    from sdd_git.settings import REPO
    from sdd_git.settings import layer as settings_layer
    from sdd_git.trust.pending import require_settings

    require_settings(root, doing)
    where = display(root.config)
    # The product's own settings only: the CI engine reads no user or local layer.
    shared = settings_layer(root, REPO)
    data = shared.data if shared is not None else {}
    section = data.get("ci")
    value = section.get("install") if isinstance(section, dict) else None
    if section is not None and not isinstance(section, dict):
        raise RecordError(f"{where}: key 'ci' must be a mapping, not {section!r}", hint=HINT)
    if value is None:
        raise RecordError(
            f"{where} pins no source for CI to install sdd from (key {KEY} is missing), and "
            "sdd never writes a CI file that installs it by name: no registry serves sdd-git, "
            "so whoever registered the name first would run code beside your model key",
            hint=HINT,
        )
    if isinstance(value, str):
        if not _GIT.match(value.strip()):
            raise RecordError(
                f"{where}: key {KEY} must be a git URL at a full commit id "
                f"(git+https://HOST/OWNER/REPO.git@<40 hex digits>), not {value!r}",
                hint=HINT,
            )
        return InstallSource(git=value.strip())
    if not isinstance(value, dict):
        raise RecordError(
            f"{where}: key {KEY} must be a git URL or a mapping (wheel, sha256, requirements), "
            f"not {value!r}",
            hint=HINT,
        )
    return _wheel(root, where, value)


def _wheel(root: Root, where: str, value: dict[str, Any]) -> InstallSource:
    unknown = sorted(str(k) for k in value if k not in ("wheel", "sha256", "requirements"))
    if unknown:
        raise RecordError(
            f"{where}: key {KEY}.{unknown[0]} is not one of wheel, sha256, requirements",
            hint=HINT,
        )
    wheel, sha256, requirements = (
        str(value.get(k) or "").strip() for k in ("wheel", "sha256", "requirements")
    )
    if not wheel or not sha256 or not requirements:
        missing = [k for k, v in (("wheel", wheel), ("sha256", sha256),
                                  ("requirements", requirements)) if not v]  # fmt: skip
        raise RecordError(
            f"{where}: key {KEY} names a wheel without {', '.join(missing)}; pip installs a "
            "wheel with --require-hashes only when it has the wheel's hash and a hash for each "
            "of its dependencies",
            hint=HINT,
        )
    if not _SHA256.match(sha256):
        raise RecordError(
            f"{where}: key {KEY}.sha256 must be 64 hex digits, not {sha256!r}", hint=HINT
        )
    name = wheel.rsplit("/", 1)[-1]
    fits = bool(_WHEEL_URL.match(wheel)) if wheel.startswith("https://") else _relative(wheel)
    if not fits or not _WHEEL_NAME.match(name):
        raise RecordError(
            f"{where}: key {KEY}.wheel must be an https URL or a path in the repository, "
            f"ending in sdd_git-VERSION-...whl, not {wheel!r}",
            hint=HINT,
        )
    if not wheel.startswith("https://"):
        found = _regular_file(root, wheel, f"{KEY}.wheel")
        actual = hashlib.sha256(found.read_bytes()).hexdigest()
        if actual != sha256.lower():
            raise RecordError(
                f"{where}: key {KEY}.sha256 is {sha256}, and {wheel} has the sha256 {actual}",
                hint=f"write the wheel's own hash (sha256sum {wheel}), or name the wheel you meant",
            )
    if not _relative(requirements):
        raise RecordError(
            f"{where}: key {KEY}.requirements must be a path in the repository, not "
            f"{requirements!r}",
            hint=HINT,
        )
    _check_requirements(_regular_file(root, requirements, f"{KEY}.requirements"), requirements)
    return InstallSource(wheel=wheel, sha256=sha256.lower(), requirements=requirements)


def _relative(path: str) -> bool:
    return bool(_PATH.match(path)) and ".." not in path.split("/") and not path.startswith("/")


def _regular_file(root: Root, relative: str, key: str) -> Path:
    path = root.path / relative
    linked = path.is_symlink() or not path.resolve().is_relative_to(root.path.resolve())
    if linked or not path.is_file():
        raise RecordError(
            f"{key}: {relative} is not a file of the repository"
            + (" (it is a link)" if linked else ""),
            hint=f"put the file at {relative} below the sdd root, or name where it is",
        )
    return path


def _check_requirements(path: Path, relative: str) -> None:
    """Each requirement of her file carries a sha256 (pip would refuse it in CI otherwise: said
    here, before the file is written), and none is sdd itself (its line is the wheel's)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{KEY}.requirements: {relative} cannot be read ({exc})") from None
    number = 0
    for number, line in _logical_lines(text):
        if not line or line.startswith("-"):
            continue  # an option of pip's (--index-url, ...); pip checks what it brings
        named = _NAME.match(line)
        if named and names_sdd(named.group()):
            raise RecordError(
                f"{relative}:{number}: names sdd-git; sdd's own line comes from {KEY}.wheel",
                hint=f"remove line {number} from {relative}",
            )
        if not _HASHED.search(line):
            raise RecordError(
                f"{relative}:{number}: the requirement {line.split()[0]!r} has no "
                "--hash=sha256:..., and pip's --require-hashes refuses it",
                hint="write the file with its hashes, e.g. pip-compile --generate-hashes",
            )


def names_sdd(name: str) -> bool:
    """Whether pip reads `name` as sdd's own project (`SDD..Git`, `sdd__git`: PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower() == PROJECT


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) with comments dropped and backslash continuations joined."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((start, (pending + line).strip()))
        pending = ""
    if pending:
        out.append((start, pending.strip()))
    return out


# --- a shell script that installs sdd by its bare name ------------------------------------------

# Shell words (quotes and backslashes kept, as written) and the operators between commands.
_TOKEN = re.compile(r"""&&|\|\||[;&|()]|(?:'[^']*'|"(?:\\.|[^"\\])*"|\\.|[^\s'"\\;&|()])+""")
_QUOTED = re.compile(r"""'([^']*)'|"((?:\\.|[^"\\])*)"|\\(.)""")
_OPERATORS = frozenset({"&&", "||", ";", "&", "|", "(", ")"})
# What fetches a package by name from an index: pip (also as `python -m pip` and `uv pip`), pipx,
# uv's tools, poetry, pdm.
_INSTALLER = re.compile(r"(pip[0-9.]*|pipx|uv|uvx|easy_install|poetry|pdm)\Z")
_SUBCOMMANDS = frozenset({"pip", "install", "add", "run", "tool", "-m"})


@dataclass(frozen=True)
class BareInstall:
    """A script's installs of sdd by its bare name, and the script without them."""

    words: tuple[str, ...]  # the words naming sdd, as written (`'sdd_git>=0.1'`)
    rest: str  # the script with those words taken out (a command left empty goes)
    only_sdd: bool  # the script did nothing else (a `sdd --version` aside)


def bare_installs(script: str) -> BareInstall | None:
    """Where `script` installs sdd by a bare name in any spelling pip folds to sdd-git (`SDD-Git`,
    `sdd_git>=0.1`, `pipx install sdd-git`): what no registry serves, so whoever registers the
    name runs there. A direct reference (`sdd-git @ URL`) or a wheel's path is not bare."""
    words: list[str] = []
    lines: list[str] = []
    for physical, line in _shell_lines(script):
        tokens, comment = _tokens(line)
        kept, found = _without_sdd(tokens)
        if not found:
            lines.extend(physical)
            continue
        words += found
        if kept:
            lines.append(" ".join(kept) + (f" {comment}" if comment else ""))
    if not words:
        return None
    rest = "\n".join(lines) + ("\n" if script.endswith("\n") and lines else "")
    others = [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    return BareInstall(tuple(words), rest, all(ln == "sdd --version" for ln in others))


def _shell_lines(script: str) -> list[tuple[list[str], str]]:
    """(its physical lines, the logical line): a line ending in a backslash goes on."""
    out: list[tuple[list[str], str]] = []
    physical: list[str] = []
    for line in script.splitlines():
        physical.append(line)
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            continue
        out.append((physical, " ".join(p[:-1] if i < len(physical) - 1 else p
                                       for i, p in enumerate(physical))))  # fmt: skip
        physical = []
    if physical:
        out.append((physical, " ".join(physical)))
    return out


def _tokens(line: str) -> tuple[list[str], str]:
    tokens: list[str] = []
    for found in _TOKEN.finditer(line):
        if found.group().startswith("#"):
            return tokens, line[found.start() :]
        tokens.append(found.group())
    return tokens, ""


def _unquoted(word: str) -> str:
    return _QUOTED.sub(lambda m: next(g for g in m.groups() if g is not None), word)


def _names_sdd_bare(value: str) -> bool:
    named = _NAME.match(value)
    if not named or not names_sdd(named.group()):
        return False
    rest = value[named.end() :].strip()
    return "@" not in rest and "/" not in rest and (not rest or rest[0] in "[<>=!~;(,")


def _without_sdd(tokens: list[str]) -> tuple[list[str], list[str]]:
    """The tokens with each command's bare sdd words out; a command left naming nothing goes,
    with the operator that joined it."""
    commands: list[list[str]] = [[]]
    joins: list[str] = []
    for token in tokens:
        if token in _OPERATORS:
            joins.append(token)
            commands.append([])
        else:
            commands[-1].append(token)
    found: list[str] = []
    kept: list[list[str] | None] = []
    for command in commands:
        values = [_unquoted(word) for word in command]
        at = next((i for i, v in enumerate(values) if _INSTALLER.match(v.rsplit("/", 1)[-1])), -1)
        sdd = [i for i, v in enumerate(values) if i > at >= 0 and _names_sdd_bare(v)]
        if not sdd:
            kept.append(command)
            continue
        found += [command[i] for i in sdd]
        rest = [w for i, w in enumerate(command) if i not in sdd]
        named = [v for i, v in enumerate(values) if i > at and i not in sdd
                 and not v.startswith("-") and v not in _SUBCOMMANDS]  # fmt: skip
        kept.append(rest if named else None)
    out: list[str] = []
    for index, left in enumerate(kept):
        if left is None:
            continue
        if out and index:
            out.append(joins[index - 1])
        out += left
    return out, found
