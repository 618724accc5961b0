"""ROLE.md: read it fast, validate it with file, line and key, and write it back canonically.

Three shapes load: sdd's own (YAML front matter + the description as body); an agentproto
ROLE.md (flat `key: value`, dotted keys, comma lists, no `job`: the job is the body's first
sentence); an agent file of another host (Claude Code, Copilot: `name` and `description`).
The two foreign shapes load unchanged, each with one warning; sdd itself writes canonical keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sdd_git import frontmatter
from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.roles import rolefields
from sdd_git.roles.hostagents import HOST_SOURCES, file_stem, identity, map_tools, tool_names
from sdd_git.roles.profile import (
    NAME_PATTERN,
    Boundary,
    RoleProfile,
    Rule,
)
from sdd_git.toolnames import TOOL_CLASSES

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader

KNOWN_KEYS = frozenset(
    {
        "role",
        "label",
        "job",
        "level",
        "toolPolicy.delegation",
        "toolPolicy",
        "spawnableRoles",
        "produces",
        "scope",
        "skills",
        "model",
        "pinned",
        "hidden",
        "boundary",
        "deferredTools",
        "tools",
    }
)
_DAEMON_KEYS = frozenset({"role", "level", "toolPolicy.delegation", "skills", "spawnableRoles"})
_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)", re.DOTALL)


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or odd) in a role file, where it is, and how to fix it."""

    path: str
    line: int
    key: str | None
    message: str
    hint: str
    severity: str = "error"  # or "warning"

    def render(self) -> str:
        where = f"{self.path}:{self.line}"
        key = f" key '{self.key}':" if self.key else ""
        return f"{where}:{key} {self.message}"


class RoleFileError(RecordError):
    """A role file that cannot load; `problems` holds every error found."""

    def __init__(self, problems: list[Problem], warnings: list[Problem] | None = None) -> None:
        self.warnings = tuple(warnings or ())
        first = problems[0]
        extra = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(first.render() + extra, hint=first.hint)
        self.problems = tuple(problems)


@dataclass(frozen=True)
class ParsedRole:
    profile: RoleProfile
    warnings: tuple[Problem, ...]
    shape: str = "sdd"  # or "daemon" (an agentproto ROLE.md) or "host" (another host's agent)


def split_front_matter(text: str, where: str) -> frontmatter.FrontMatter:
    try:
        return frontmatter.split(text)
    except frontmatter.NotOpened:
        raise RoleFileError(
            [
                Problem(
                    where, 1, None, "a role file must start with a '---' line",
                    "put the keys (role, job, level, toolPolicy.delegation) between two '---' "
                    "lines at the top, then the description",
                )
            ]
        ) from None  # fmt: skip
    except frontmatter.NotClosed:
        raise RoleFileError(
            [
                Problem(
                    where, 1, None, "the front matter is never closed", "add a line '---' after it"
                )
            ]
        ) from None


def _flat_parse(front: str) -> dict[str, Any] | None:
    """An agentproto ROLE.md: flat `key: value`, read without YAML; None if it is not that."""
    data: dict[str, Any] = {}
    for raw in front.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or raw[:1] in (" ", "\t"):
            return None
        data[key.strip()] = value.strip()
    return data


def _load_front(front: str, where: str, line_offset: int) -> tuple[dict[str, Any], bool]:
    """The front matter as a mapping, and whether it was read as a flat daemon pack."""
    from sdd_git.yamlio import AliasBomb, refuse_alias_bombs

    try:
        # Before any value is built: a 611-byte alias bomb in one ROLE.md must fail here, at
        # once, and never reach what walks the values (the grant digest would walk them all).
        refuse_alias_bombs(front, where, line_offset - 1)
    except AliasBomb as exc:
        message = exc.message.split(": ", 1)[-1]
        raise RoleFileError([Problem(where, exc.line, None, message, exc.hint or "")]) from None
    try:
        data = yaml.load(front, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        flat = _flat_parse(front)
        if flat is not None and "role" in flat and "job" not in flat:
            return flat, True
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line if mark else 0) + line_offset
        hint = (
            "check the indentation (keys of a block start in the same column), a missing "
            "':' or an unclosed quote or bracket"
        )
        key = None
        examples = _examples_description(front)
        if examples is not None:
            # Claude Code's `/agents` writes the description on one line, with literal "\n" and
            # "Context: ..." examples: YAML reads each ": " in it as a new key.
            line, key = examples + line_offset, "description"
            hint = (
                "quote the description: put it between double quotes, "
                'description: "Use this agent when ... <example>...</example>", and write a " '
                'inside it as \\"'
            )
        raise RoleFileError(
            [
                Problem(
                    where, line, key, f"this is not valid YAML: {exc.problem or exc.context}", hint
                )
            ]
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RoleFileError(
            [Problem(where, line_offset, None, "the front matter must be `key: value` lines", "")]
        )
    return data, False


def _examples_description(front: str) -> int | None:
    """The 0-based line of an unquoted `/agents`-style description (with examples), if any."""
    for index, raw in enumerate(front.splitlines()):
        key, sep, value = raw.partition(":")
        value = value.strip()
        quoted = value[:1] in ("'", '"', "|", ">")
        examples = "<example>" in value or "\\n" in value or ": " in value
        if sep and key == "description" and not quoted and examples:
            return index
    return None


def _key_lines(front: str, line_offset: int) -> dict[str, int]:
    """Dotted key paths of the front matter -> 1-based file lines. Only built when reporting."""
    lines: dict[str, int] = {}
    try:
        node = yaml.compose(front, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        for index, raw in enumerate(front.splitlines()):
            key = raw.partition(":")[0].strip()
            if key and not raw.startswith((" ", "\t", "#")):
                lines.setdefault(key, index + line_offset)
        return lines

    def walk(current: yaml.Node | None, prefix: str) -> None:
        if isinstance(current, yaml.MappingNode):
            for key_node, value_node in current.value:
                path = f"{prefix}{key_node.value}"
                lines.setdefault(path, key_node.start_mark.line + line_offset)
                walk(value_node, path + ".")
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                path = f"{prefix}{index}"
                lines.setdefault(path, item.start_mark.line + line_offset)
                walk(item, path + ".")

    walk(node, "")
    return lines


class _Checker:
    """Collects problems with their key paths; lines are resolved once, at the end."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.found: list[tuple[str, str | None, str, str]] = []  # severity, key, message, hint

    def error(self, key: str | None, message: str, hint: str) -> None:
        self.found.append(("error", key, message, hint))

    def warn(self, key: str | None, message: str, hint: str = "") -> None:
        self.found.append(("warning", key, message, hint))

    def problems(self, front: str, line_offset: int, flat: bool) -> list[Problem]:
        if not self.found:
            return []
        lines = _key_lines(front, line_offset) if not flat else _flat_lines(front, line_offset)
        out = []
        for severity, key, message, hint in self.found:
            line = _line_for(lines, key, line_offset - 1)
            out.append(Problem(self.where, line, key, message, hint, severity))
        return out


def _flat_lines(front: str, line_offset: int) -> dict[str, int]:
    lines: dict[str, int] = {}
    for index, raw in enumerate(front.splitlines()):
        key = raw.partition(":")[0].strip()
        if key:
            lines.setdefault(key, index + line_offset)
    return lines


def _line_for(lines: dict[str, int], key: str | None, fallback: int) -> int:
    while key:
        if key in lines:
            return lines[key]
        key = key.rpartition(".")[0] if "." in key else None
    return max(fallback, 1)


def _names(value: Any, checker: _Checker, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        checker.error(key, "must be a list of names", f"write {key}: [a, b] or {key}: a, b")
        return None
    return tuple(v for v in items if v)


def _rules(value: Any, checker: _Checker, key: str, need_inputs: bool) -> tuple[Rule, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        checker.error(key, "must be a list of rules", f"write {key}: [] or '- {{tool: git_push}}'")
        return ()
    rules = []
    for index, item in enumerate(value):
        at = f"{key}.{index}"
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            checker.error(at, "a rule is a mapping with a 'tool'", "write - {tool: git_push}")
            continue
        tool = item["tool"]
        if tool not in TOOL_CLASSES:
            checker.error(
                f"{at}.tool",
                f"'{tool}' is not a tool",
                "name one of: " + ", ".join(sorted(TOOL_CLASSES)),
            )
            continue
        inputs = item.get("inputs")
        if inputs is not None and not isinstance(inputs, dict):
            checker.error(f"{at}.inputs", "inputs must be a mapping", "write inputs: {key: value}")
            continue
        if "prefix" in item:
            rule = _prefix_rule(item, at, checker, need_inputs)
            if rule is not None:
                rules.append(rule)
            continue
        if need_inputs and inputs is None:
            checker.error(
                at,
                "an always_allow rule must name the exact inputs it allows",
                "add inputs: {...} (use {} for a call with no inputs); only the same inputs match",
            )
            continue
        for extra in sorted(set(item) - {"tool", "inputs", "saved", "match", "not_match"}):
            checker.warn(f"{at}.{extra}", f"unknown key '{extra}' in a rule is ignored")
        if "match" in item or "not_match" in item:
            checker.error(
                at,
                "match and not_match examples belong to a prefix rule",
                "add prefix: [program, word, ...] or take the examples out",
            )
            continue
        rules.append(Rule(tool, inputs, saved=_saved(item.get("saved"), at, checker)))
    return tuple(rules)


def _prefix_rule(
    item: dict[str, Any], at: str, checker: _Checker, always_allow: bool
) -> Rule | None:
    """A command-prefix rule, checked whole: a rule with any fault is refused (the file does
    not load), so that a broken rule never allows more than she wrote."""
    from sdd_git.shellpolicy.prefix import matches_prefix, prefix_problem

    hint = 'write - {tool: run_command, prefix: [npm, test], match: ["npm test"]}'
    if not always_allow:
        checker.error(
            f"{at}.prefix",
            "a prefix belongs to an always_allow rule: ask_first matches inputs",
            "write inputs: {command: 'git push*'} to be asked first about a command",
        )
        return None
    if item["tool"] != "run_command":
        checker.error(f"{at}.prefix", "only a run_command rule can name a prefix", hint)
        return None
    if "inputs" in item:
        checker.error(at, "a rule names a prefix or inputs, not both", hint)
        return None
    words = item["prefix"]
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        checker.error(f"{at}.prefix", "a prefix is a list of words", hint)
        return None
    problem = prefix_problem(words)
    if problem is not None:
        checker.error(f"{at}.prefix", problem, hint)
        return None
    examples: dict[str, tuple[str, ...]] = {}
    for key in ("match", "not_match"):
        value = item.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            checker.error(f"{at}.{key}", f"{key} is a list of commands", hint)
            return None
        examples[key] = tuple(value)
    if not examples["match"]:
        checker.error(
            f"{at}.match",
            "a prefix rule needs at least one match example",
            f'add match: ["{" ".join(words)}"]',
        )
        return None
    for example in examples["match"]:
        if not matches_prefix(example, words):
            checker.error(
                f"{at}.match",
                f"the example '{example}' is not matched by the prefix {' '.join(words)}: the "
                "rule is refused",
                "a match is one plain command that begins with the prefix's words, as written",
            )
            return None
    for example in examples["not_match"]:
        if matches_prefix(example, words):
            checker.error(
                f"{at}.not_match",
                f"the example '{example}' is matched by the prefix {' '.join(words)}: the rule "
                "is refused",
                "lengthen the prefix, or take the example out",
            )
            return None
    for extra in sorted(set(item) - {"tool", "prefix", "match", "not_match", "saved"}):
        checker.warn(f"{at}.{extra}", f"unknown key '{extra}' in a rule is ignored")
    return Rule(
        "run_command",
        None,
        tuple(words),
        examples["match"],
        examples["not_match"],
        _saved(item.get("saved"), at, checker),
    )


def _saved(value: Any, at: str, checker: _Checker) -> dict[str, str] | None:
    """When and from which stop `sdd allow --always` saved the rule: a note, granting nothing."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        checker.warn(f"{at}.saved", "saved is {at: ISO time, stop: stop id}; it is ignored")
        return None
    return {k: value[k] for k in ("at", "stop") if k in value}


def _flag(data: dict[str, Any], key: str, checker: _Checker) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        checker.error(key, f"must be true or false, not {value!r}", f"write {key}: true")
        return False
    return value


def _first_sentence(body: str) -> str:
    text = " ".join(body.split())
    match = _SENTENCE.match(text)
    return (match.group(1) if match else text)[:200]


def parse_role(
    text: str, path: Path | None = None, source: str = "repo", folder_name: str | None = None
) -> ParsedRole:
    """Parse and validate a ROLE.md; raise RoleFileError listing every error."""
    where = display(path) if path else "<ROLE.md>"
    split = split_front_matter(text, where)
    data, flat = _load_front(split.front, where, 2)
    checker = _Checker(where)
    body = split.body

    shape = "sdd"
    host_tools: list[str] | None = None
    host_denied: list[str] | None = None
    if source in HOST_SOURCES or ("role" not in data and "name" in data):
        shape = "host"
        data, host_tools, host_denied = _host_data(data, path, body, source, checker)
    elif "job" not in data and "role" in data and set(data) <= _DAEMON_KEYS:
        shape = "daemon"
        checker.warn(
            None,
            "an agentproto ROLE.md: its job is taken from the first sentence of its body",
        )
        data = {**data, "job": _first_sentence(body)}

    # The checks run in this order so that her problems are listed in it.
    name = rolefields.role_name(data, folder_name, checker)
    job = rolefields.job(data, checker)
    level = rolefields.level(data, flat, checker)
    delegation = rolefields.delegation(data, checker)
    produces = rolefields.produces(data, shape, host_tools, checker)
    scope = rolefields.scope(data, checker)
    label = rolefields.label(data, name, checker)
    model = rolefields.model(data, checker)
    deferred = rolefields.deferred(data, checker)
    boundary = _boundary(data, checker)
    if shape == "host":
        tools = _host_tools(host_tools, host_denied, checker)
        if tools is not None and delegation == "deny":
            # The host's `agent`/`Task` maps to handoff, which a role that may not delegate
            # can never use: a read-only reviewer is offered read tools only.
            tools = tuple(t for t in tools if t != "handoff")
    else:
        tools = _sdd_tools(data.get("tools"), checker)
    if shape == "sdd":
        rolefields.unknown_keys(data, KNOWN_KEYS, checker)

    profile = RoleProfile(
        name=name,
        label=label,
        job=job,
        level=level,
        delegation=delegation,
        description=body.strip(),
        source=source,
        path=path,
        spawnable_roles=_names(data.get("spawnableRoles"), checker, "spawnableRoles"),
        produces=produces,
        scope=scope,
        skills=_names(data.get("skills"), checker, "skills") or (),
        model=model,
        pinned=_flag(data, "pinned", checker),
        hidden=_flag(data, "hidden", checker),
        boundary=boundary,
        deferred_tools=deferred,
        tools=tools,
    )
    problems = checker.problems(split.front, 2, flat)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise RoleFileError(errors, [p for p in problems if p.severity == "warning"])
    return ParsedRole(profile, tuple(p for p in problems if p.severity == "warning"), shape)


def _boundary(data: dict[str, Any], checker: _Checker) -> Boundary:
    boundary_raw = data.get("boundary") or {}
    if not isinstance(boundary_raw, dict):
        checker.error(
            "boundary", "must be a mapping", "write boundary: {always_allow: [], ask_first: []}"
        )
        boundary_raw = {}
    for extra in sorted(set(boundary_raw) - {"always_allow", "ask_first"}, key=str):
        # Never ignored: a boundary holds stops, and `ask_frist:` or `ask:` read as nothing
        # would let `always_allow` run what she meant to be asked about first.
        from sdd_git.config import did_you_mean

        meant = did_you_mean(str(extra), ("always_allow", "ask_first")) or "ask_first"
        checker.error(
            f"boundary.{extra}",
            f"unknown key '{extra}' in the boundary: a boundary has only always_allow and "
            "ask_first",
            f"rename it: {meant}: {rolefields.shown_value(boundary_raw[extra])}",
        )
    return Boundary(
        always_allow=_rules(
            boundary_raw.get("always_allow"), checker, "boundary.always_allow", True
        ),
        ask_first=_rules(boundary_raw.get("ask_first"), checker, "boundary.ask_first", False),
    )


# Keys of another host that mean something else in sdd, or that sdd reads its own way.
_HOST_ONLY = ("tools", "disallowedTools", "color", "mode", "permission", "target")
# Keys of another host that sdd does not use, each said once with what sdd does instead.
_HOST_UNUSED = {
    "permissionMode": "sdd asks you before every consequential action unless the role's "
    "boundary always allows it; write boundary: {always_allow: [...]} instead",
    "maxTurns": "sdd stops a run when it needs you, not after a count of turns",
    "mcpServers": "sdd reaches an MCP server only as a connector in your settings "
    "(connectors: in .sdd/config.yaml), attached to a run with @NAME",
    "hooks": "sdd runs nothing around a role's tool calls; routines in "
    ".sdd/roles/NAME/routines/ react to merges, builds and schedules",
}


def _host_data(
    data: dict[str, Any], path: Path | None, body: str, source: str, checker: _Checker
) -> tuple[dict[str, Any], list[str] | None, list[str] | None]:
    """Another host's agent file in sdd's terms; sdd's own keys written beside the host's win.

    The identity is the file name when `name` is missing or a display name, as both hosts
    read it; such a name becomes the label."""
    if source not in HOST_SOURCES:
        # Listed where they are, they are expected; anywhere else, say how they were read.
        checker.warn(
            None,
            "an agent file of another host: 'name' is read as role, 'description' as job, "
            "and a missing level and delegation default to 0 and deny",
        )
    data = {**data}
    raw_name = data.pop("name", None)
    shown = raw_name.strip() if isinstance(raw_name, str) else ""
    if NAME_PATTERN.match(shown):
        data["role"] = shown
    else:
        if path is not None and path.name != "ROLE.md":
            data["role"] = identity(file_stem(path))
        elif shown:
            data["role"] = identity(shown)  # copied in as a ROLE.md: the folder names it
        else:
            data["role"] = raw_name
        if shown and "label" not in data:
            data["label"] = shown
    description = data.pop("description", None)
    if "job" not in data:
        data["job"] = description if description is not None else _first_sentence(body) or None
    data.setdefault("level", 0)
    if "toolPolicy.delegation" not in data and "toolPolicy" not in data:
        data["toolPolicy.delegation"] = "deny"
    allowed = denied = None
    if "tools" in data:
        allowed = tool_names(data["tools"])
        if allowed is None and data["tools"] is not None:
            checker.error(
                "tools",
                f"must be tool names, not {data['tools']!r}",
                "write tools: Read, Grep, Glob (Claude Code) or tools: ['read', 'search']",
            )
            allowed = []  # a broken allowlist grants nothing rather than everything
    if data.get("disallowedTools") is not None:
        denied = tool_names(data["disallowedTools"]) or []
    for foreign in _HOST_ONLY:
        data.pop(foreign, None)
    for key, instead in _HOST_UNUSED.items():
        if key in data:
            data.pop(key)
            checker.warn(key, f"{key} is not used: {instead}")
    return data, allowed, denied


def _host_tools(
    allowed: list[str] | None, denied: list[str] | None, checker: _Checker
) -> tuple[str, ...] | None:
    mapping = map_tools(allowed, denied)
    for index, name in mapping.unmapped:
        checker.warn(
            f"tools.{index}",
            f"the tool '{name}' has no sdd tool: the role is offered nothing for it",
            "sdd's tools: " + ", ".join(sorted(TOOL_CLASSES)),
        )
    return mapping.tools


def _sdd_tools(value: Any, checker: _Checker) -> tuple[str, ...] | None:
    """sdd's own `tools:` (the tools a role is offered): sdd's tool names; missing is all."""
    names = _names(value, checker, "tools")
    if names is None:
        return None
    unknown = [n for n in names if n not in TOOL_CLASSES]
    if unknown:
        checker.error(
            "tools",
            f"{', '.join(repr(n) for n in unknown)} is not a tool",
            "name sdd's tools: " + ", ".join(sorted(TOOL_CLASSES)),
        )
        return tuple(n for n in names if n in TOOL_CLASSES)
    return names


def read_role(
    path: Path,
    source: str = "repo",
    folder_name: str | None = None,
    within: Path | None = None,
) -> ParsedRole:
    """The role file at `path`. `within`: the product holding it, read with no link followed
    and nothing but a regular file opened; None for a file of hers (a pack, a path she named)."""
    try:
        from sdd_git.yamlio import MAX_YAML_BYTES, capped

        if within is not None:
            from sdd_git import beneath

            data = beneath.read_bytes(within, path, MAX_YAML_BYTES + 1)
        else:
            with path.open("rb") as handle:
                data = handle.read(MAX_YAML_BYTES + 1)
        text = capped(data, path).decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise RecordError(f"{display(path)}: role file not found") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{display(path)}: not UTF-8 text ({exc.reason})") from None
    return parse_role(text, path, source, folder_name)


def render_role(profile: RoleProfile) -> str:
    """A new ROLE.md in the canonical shape."""
    from sdd_git.yamlio import dump_yaml

    data: dict[str, Any] = {
        "role": profile.name,
        "label": profile.label,
        "job": profile.job,
        "level": profile.level_shown,
        "toolPolicy.delegation": profile.delegation,
    }
    if profile.spawnable_roles is not None:
        data["spawnableRoles"] = list(profile.spawnable_roles)
    if profile.produces is not None:
        data["produces"] = profile.produces
    if profile.scope:
        data["scope"] = profile.scope
    data["skills"] = list(profile.skills)
    if profile.model:
        data["model"] = profile.model
    if profile.tools is not None:
        data["tools"] = list(profile.tools)
    data["pinned"] = profile.pinned
    data["hidden"] = profile.hidden
    data["boundary"] = profile.boundary.as_dict()
    description = profile.description.strip()
    return "---\n" + dump_yaml(data) + "---\n" + (description + "\n" if description else "")
