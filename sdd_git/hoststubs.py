"""`sdd agents install HOST`: the four host stubs that point another agent tool at sdd.

A stub is an agent file in the host's own convention. It teaches the host agent to read the sdd
record with sdd's read commands and to leave the person's commands and records alone. It creates
no sdd role and never writes under `.sdd/`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import SddError, UsageError
from sdd_git.records.person import refuse_inside_run
from sdd_git.root import Root

HOSTS: tuple[str, ...] = ("copilot", "claude", "grok", "ollama", "kilo")
STUB_NAMES: tuple[str, ...] = ("sdd", "sdd-planner", "sdd-implementer", "sdd-reviewer")


@dataclass(frozen=True)
class StubFile:
    path: str  # relative to the root, POSIX separators
    content: str


@dataclass(frozen=True)
class InstallReport:
    host: str
    written: tuple[str, ...]  # relative paths written now
    unchanged: tuple[str, ...]  # relative paths already holding exactly this content


@dataclass(frozen=True)
class _Stub:
    name: str
    description: str
    duty: str
    read_only: bool  # reviews and answers; edits no file


_STUBS: tuple[_Stub, ...] = (
    _Stub(
        name="sdd",
        description="Guide to this spec-driven (sdd) repo: reads the state of its changes and "
        "says what comes next.",
        duty="You are the sdd guide. Report where each change stands, explain what the person "
        "can do next (naming the command they run), and hand planning, implementing and "
        "reviewing to sdd-planner, sdd-implementer and sdd-reviewer.",
        read_only=True,
    ),
    _Stub(
        name="sdd-planner",
        description="Plans an sdd change from its accepted spec sections.",
        duty="You plan a change from its accepted spec sections only; a draft section is no "
        "basis for a plan, so say that it awaits the person's acceptance. Tie each step to the "
        "check ids (C1, C2, ...) it covers, leave no check uncovered, and add nothing the "
        "sections do not ask for. Your plan is a draft until the person accepts it.",
        read_only=False,
    ),
    _Stub(
        name="sdd-implementer",
        description="Implements the accepted spec sections of an sdd change, and nothing else.",
        duty="You implement accepted spec sections only. Before you change code, run "
        "`sdd change show CH` and confirm the section is accepted; if it is not, stop and say "
        "so. Trace each change to the check ids (C1, C2, ...) it satisfies, run the tests, and "
        "do not widen the scope. If a section looks wrong, say why: correcting it is the "
        "person's call.",
        read_only=False,
    ),
    _Stub(
        name="sdd-reviewer",
        description="Reviews work on an sdd change against the check ids of its accepted sections.",
        duty="You critique work against the check ids (C1, C2, ...) of the change's accepted "
        "sections. For each gap, cite its check id (or `SPEC-n#Sm/D-n` for a section as a "
        "whole) and say what is missing and where. No gaps is a valid answer. You review; you "
        "do not fix, accept, or record QA.",
        read_only=True,
    ),
)

_COMMON = """\
You work in an sdd repository: the product's git repo, driven by specs. The person accepts spec
sections, scenarios and plans; you work only from what the person has accepted.

Learn the state with sdd's read commands:
- `sdd change list`: the changes and their stages
- `sdd change show CH`: one change, its spec sections (accepted or draft) and their check ids
- `sdd role list`: the sdd roles of this repo

Never run the person's commands: `sdd accept ...`, `sdd correct ...`, `sdd decision replace`,
`sdd qa record`, `sdd release generate`, `sdd next`, `sdd complete`, `sdd change new`. Never
edit `memory/decisions.yaml`, `memory/releases/`, `changes/*/change.yaml`, `changes/*/qa.yaml`
or anything under `.sdd/`. Those belong to the person: when one is needed, stop and tell the
person the exact command to run.
"""


def _body(stub: _Stub) -> str:
    return f"{stub.duty}\n\n{_COMMON}"


def _front_matter(fields: dict[str, object]) -> str:
    # JSON scalars and lists are valid YAML, so every value is quoted safely.
    lines = [f"{key}: {json.dumps(value)}" for key, value in fields.items()]
    return "---\n" + "\n".join(lines) + "\n---\n\n"


def _copilot(stub: _Stub) -> StubFile:
    fields: dict[str, object] = {"name": stub.name, "description": stub.description}
    if stub.read_only:
        fields["tools"] = ["read", "search", "execute"]
    text = _front_matter(fields) + f"# {stub.name}\n\n" + _body(stub)
    return StubFile(f".github/agents/{stub.name}.agent.md", text)


def _claude(stub: _Stub) -> StubFile:
    fields: dict[str, object] = {"name": stub.name, "description": stub.description}
    if stub.read_only:
        fields["tools"] = "Read, Grep, Glob, Bash"
    return StubFile(f".claude/agents/{stub.name}.md", _front_matter(fields) + _body(stub))


def _kilo(stub: _Stub) -> StubFile:
    # Kilo takes the agent's name from the file name; unknown keys would reach the model.
    fields: dict[str, object] = {"description": stub.description, "mode": "all"}
    if stub.read_only:
        fields["permission"] = {"edit": "deny"}
    return StubFile(f".kilo/agents/{stub.name}.md", _front_matter(fields) + _body(stub))


def _ollama(stub: _Stub) -> StubFile:
    path = f"ollama/{stub.name}.Modelfile"
    text = (
        f"# sdd stub. Build it with: ollama create {stub.name} -f {path}\n"
        "# Change FROM to the local model you use.\n"
        "FROM qwen2.5-coder\n"
        f'SYSTEM """{_body(stub)}"""\n'
    )
    return StubFile(path, text)


def _grok() -> StubFile:
    parts = [
        "# sdd\n\n",
        "This repo is driven by sdd. Take on the sdd role the person names (sdd, sdd-planner, "
        "sdd-implementer or sdd-reviewer); without one, act as sdd.\n\n",
        _COMMON,
    ]
    for stub in _STUBS:
        parts.append(f"\n## {stub.name}\n\n{stub.description}\n\n{stub.duty}\n")
    return StubFile(".grok/GROK.md", "".join(parts))


def stub_files(host: str) -> tuple[StubFile, ...]:
    """The files `sdd agents install HOST` writes, in the host's own convention."""
    if host == "copilot":
        # GitHub Copilot custom agents: .github/agents/NAME.agent.md, front matter name/description.
        return tuple(_copilot(stub) for stub in _STUBS)
    if host == "claude":
        # Claude Code subagents: .claude/agents/NAME.md, front matter name/description/tools.
        return tuple(_claude(stub) for stub in _STUBS)
    if host == "grok":
        # Grok CLI (superagent-ai/grok-cli): one custom-instructions file, .grok/GROK.md.
        return (_grok(),)
    if host == "ollama":
        # Ollama: one Modelfile per stub (FROM + SYSTEM), built with `ollama create NAME -f FILE`.
        return tuple(_ollama(stub) for stub in _STUBS)
    if host == "kilo":
        # Kilo Code (CLI, current extension): .kilo/agents/NAME.md, front matter description/mode.
        return tuple(_kilo(stub) for stub in _STUBS)
    raise UsageError(f"unknown host '{host}'", hint="choose one of: " + ", ".join(HOSTS))


def install(root: Root, host: str, force: bool = False) -> InstallReport:
    """Write the host stubs into the root: all of them, or (on a conflict) none."""
    refuse_inside_run()
    files = stub_files(host)
    to_write: list[StubFile] = []
    unchanged: list[str] = []
    for stub in files:
        target = root.path / stub.path
        if target.exists() and not target.is_file():
            raise SddError(
                f"{stub.path} exists and is not a file",
                hint=f"move {stub.path} out of the way, then run `sdd agents install {host}` again",
            )
        if target.is_file():
            if target.read_bytes() == stub.content.encode("utf-8"):
                unchanged.append(stub.path)
                continue
            if not force:
                raise SddError(
                    f"{stub.path} exists and differs from the sdd stub",
                    hint=f"run `sdd agents install {host} --force` to replace it",
                )
        to_write.append(stub)
    for stub in to_write:
        write_text_atomic(root.path / stub.path, stub.content)
    return InstallReport(
        host=host,
        written=tuple(stub.path for stub in to_write),
        unchanged=tuple(unchanged),
    )
