"""What the model is told: the role's disposition and the runner's rules (system), and the task
with its mentions, skills, the message it replies to and attachments (user)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sdd_git.connectors.config import ConnectorConfig
from sdd_git.roles import skills
from sdd_git.roles.lattice import disposition
from sdd_git.roles.profile import RoleProfile
from sdd_git.roles.skills import Skill
from sdd_git.root import Root
from sdd_git.runner.gate import Plan
from sdd_git.tools.catalog import CONNECTOR_TOOLS, TOOL_CLASSES

# A mention is a whole word: `@types/node`, `@angular/core` and `me@example.com` are not ones.
_MENTION = re.compile(r"(?<![\w@./+-])@([a-z0-9][\w-]*)(?![\w@/-]|[.:]\w)")
# `/name` as a whole word: not a piece of a path (`src/app`, `/tmp/x`, `https://...`).
_SLASH = re.compile(r"(?<![\w/.~:@-])/([\w-]+)(?![\w/-]|[.:]\w)")
SKILL_TOOL = "use_skill"

RULES = """\
How this runner works:
- Read tools run at once. Draft tools write drafts only; the person decides.
- Every action that changes something (writing or deleting a file, running a command, a commit,
  push, tag, pull request, merge or deploy) stops for the person unless they allowed exactly
  that action before. Allowing a file edit never commits it; ask for a commit as its own action.
- No role can accept a spec, replace a decision, write a QA result, generate a release, run
  `sdd next` or `sdd complete`, or create a change pack. Do not try; it is refused.
- A consequential claim cites the spec section, decision or tool record it rests on. A missing
  source is reported as missing, never invented.
- Your memory holds preferences and summaries; it is not the spec and not the decisions."""


@dataclass(frozen=True)
class Mentions:
    roles: tuple[str, ...]
    tools: tuple[str, ...]
    skills: tuple[tuple[str, str], ...]  # (name, the body as the model receives it)
    role_skills: tuple[Skill, ...] = ()  # the role's `skills:`, named in its system prompt
    warnings: tuple[str, ...] = ()  # for the run log (no "warning:" prefix); none refuses a run
    # Configured connectors named as `@NAME`: attached to the run (their tools are offered).
    connectors: tuple[str, ...] = ()
    connector_notes: str = ""  # what the model is told of them: operations and their classes


def resolve_mentions(
    root: Root,
    task: str,
    role_names: Iterable[str],
    role: RoleProfile | None = None,
    attach_from: str | None = None,
) -> Mentions:
    """What in the task names something of this product. Task text is the person's words: a
    `@name` is a mention only when a role or tool has that name, and a `/name` invokes a skill
    only when a skill has that name; anything else stays as written, never an error.

    A connector is attached only by a `@NAME` in `attach_from` (the task itself when None): the
    person's own words, never a model's or an event's (see RunRequest.attach)."""
    known_roles = set(role_names)
    roles: list[str] = []
    tools: list[str] = []
    others: list[str] = []
    for name in _MENTION.findall(task):
        if name in known_roles and name not in roles:
            roles.append(name)
        elif name in TOOL_CLASSES and name not in tools:
            tools.append(name)
        elif name not in known_roles and name not in TOOL_CLASSES and name not in others:
            others.append(name)
    catalog = skills.discover(root.path)
    invoked: list[tuple[str, str]] = []
    warnings: list[str] = []
    for match in _SLASH.finditer(task):
        name = match.group(1)
        found = catalog.get(name)
        if found is not None and all(name != n for n, _ in invoked):
            invoked.append((name, skills.activation(found, root.path)))
        elif found is None and not task[: match.start()].strip():
            # At the start, `/name` reads as a command; a typo there deserves a word, not a
            # refusal ("/tmp is full" is a fine task).
            warnings.append(f"/{name} is not a skill of this product; the task was sent as written")
    role_skills: tuple[Skill, ...] = ()
    if role is not None and role.skills:
        role_skills, unknown = skills.for_role(catalog, role.skills, role.path, root.path)
        warnings.extend(w.removeprefix("warning: ") for w in unknown)
    if attach_from is not None and attach_from != task:
        named = others
        others = [
            n for n in dict.fromkeys(_MENTION.findall(attach_from))
            if n not in known_roles and n not in TOOL_CLASSES
        ]  # fmt: skip
        unattached = [n for n in named if n not in others]
    else:
        unattached = []
    attached, notes, said = _connector_mentions(root, others, roles)
    warnings.extend(said)
    if unattached:
        configured = _configured_names(root)
        warnings.extend(
            f"@{n} in a task that is not the person's own words attaches no connector"
            for n in unattached
            if n in configured
        )
    allowed = role.tools if role is not None else None
    if attached and role is not None and allowed is not None and "connector_read" not in allowed:
        warnings.append(
            f"{role.name}'s tools: list leaves out connector_read, so it cannot use "
            f"{', '.join('@' + n for n in attached)}"
        )
    return Mentions(
        tuple(roles),
        tuple(tools),
        tuple(invoked),
        role_skills,
        tuple(warnings),
        attached,
        notes,
    )


def _connector_mentions(
    root: Root, names: list[str], roles: list[str]
) -> tuple[tuple[str, ...], str, list[str]]:
    """`@NAME` for a configured connector attaches it. The config is read only when the task
    names something that is neither a role nor a tool. A name that is both a role and a
    connector is the role (a warning says so)."""
    from sdd_git.connectors.config import load_connectors
    from sdd_git.connectors.kinds import BUILTIN

    if not names and not roles:
        return (), "", []
    configured = load_connectors(root)  # a broken config is an error before the run starts
    attached = tuple(n for n in names if n in configured)
    warnings = [
        f"@{n} names both a role and a connector; it was read as the role"
        for n in roles
        if n in configured
    ] + [
        f"@{n} names a connector that is not configured, so none was attached (add it under "
        f"connectors: in .sdd/config.yaml)"
        for n in names
        if n not in configured and n in BUILTIN
    ]
    notes = "\n".join(_connector_note(configured[n]) for n in attached)
    return attached, notes, warnings


def _configured_names(root: Root) -> set[str]:
    from sdd_git.connectors.config import load_connectors

    return set(load_connectors(root))


def _connector_note(config: ConnectorConfig) -> str:
    from sdd_git.connectors.operations import TABLE

    rows = TABLE.get(config.table_kind)
    if rows is None and config.kind == "mcp":
        return (
            f"- {config.name} (an MCP server): its tools that the person offers, and no other; "
            f"reads (connector_read): {', '.join(config.reads) or 'none'}; acts, each stops for "
            f"her (connector_act): {', '.join(config.acts) or 'none'}."
        )
    if rows is None:
        declared = ", ".join(config.reads) or "none"
        return (
            f"- {config.name} ({config.kind}): operations as the service names them; reads "
            f"the person declared: {declared}; any other operation acts as the person."
        )
    by_kind: dict[str, list[str]] = {}
    for operation in rows.values():
        args = ", ".join(operation.args) + (
            f"; optional {', '.join(operation.optional)}" if operation.optional else ""
        )
        by_kind.setdefault(operation.kind, []).append(f"{operation.name} {{{args}}}")
    labels = (
        ("read", "read (connector_read)"),
        ("draft", "draft for the person to send (connector_read)"),
        ("act", "act as the person, stops for her (connector_act)"),
        ("forbidden", "never, by any route"),
    )
    parts = [f"{label}: {'; '.join(by_kind[k])}" for k, label in labels if k in by_kind]
    settings = ", ".join(
        f"{k}: {v}" for k, v in config.settings.items() if k in ("repo", "project", "job")
    )
    where = f" [{settings}]" if settings else ""
    return f"- {config.name} ({config.table_kind}){where}. " + ". ".join(parts) + "."


def with_connectors(
    offered: Iterable[str], attached: Sequence[str], allowed: Sequence[str] | None
) -> tuple[str, ...]:
    """The offered tools with the connector tools, when a connector is attached: its reads, and
    its acts where the role may act at all (it has a consequential tool). A role file's own
    `tools:` list narrows these too."""
    names = tuple(n for n in offered if n not in CONNECTOR_TOOLS)
    if not attached:
        return names
    added = []
    if allowed is None or "connector_read" in allowed:
        added.append("connector_read")
    acts = any(TOOL_CLASSES.get(n) == "consequential" for n in names)
    if acts and (allowed is None or "connector_act" in allowed):
        added.append("connector_act")
    return names + tuple(added)


def with_skill_tool(offered: Iterable[str], root: Root) -> tuple[str, ...]:
    """The offered tools, `use_skill` among them only when the product has a skill: a tool with
    nothing to load would only cost the model tokens and a wasted turn."""
    names = tuple(offered)
    if SKILL_TOOL in names and not skills.discover(root.path):
        return tuple(n for n in names if n != SKILL_TOOL)
    return names


def system_prompt(
    role: RoleProfile,
    all_roles: Iterable[RoleProfile],
    plan: Plan,
    memory_notes: list[str],
    prompt_append: str | None,
    role_skills: Sequence[Skill] = (),
) -> str:
    parts = [disposition(role, all_roles)]
    if prompt_append and prompt_append.strip():
        parts.append(prompt_append.strip())
    parts.append(f'You are the role "{role.name}" ({role.label}). Your one job: {role.job}')
    parts.append(RULES)
    if role_skills:
        # The standard's first tier: names and descriptions only; bodies load on use_skill.
        parts.append(skills.catalog_text(role_skills))
    if plan.change:
        if plan.sections:
            lines = "\n".join(f"- {check}" for check in plan.checks) or "- (no check lines)"
            parts.append(
                f"The change is {plan.change}. Its accepted sections: {', '.join(plan.sections)} "
                f"(decisions {', '.join(plan.decisions)}). Their checks:\n{lines}"
            )
        else:
            parts.append(f"The change is {plan.change}; none of its spec is accepted yet.")
    if memory_notes:
        parts.append(
            "What you remember from earlier runs:\n" + "\n".join(f"- {n}" for n in memory_notes)
        )
    return "\n\n".join(parts)


def user_message(
    task: str,
    mentions: Mentions,
    reply_to: dict[str, object] | None,
    attachments: list[str],
) -> str:
    parts = []
    if reply_to is not None:
        parts.append(f"(In reply to {reply_to.get('id')}: {reply_to.get('text')})")
    parts.append(task)
    for name, text in mentions.skills:
        parts.append(f"The person invoked the skill /{name}:\n{text}")
    if mentions.roles:
        parts.append("Roles mentioned: " + ", ".join(f"@{r}" for r in mentions.roles))
    if mentions.tools:
        parts.append("Tools mentioned: " + ", ".join(f"@{t}" for t in mentions.tools))
    if mentions.connectors:
        parts.append(
            "Connectors attached to this run (use connector_read and connector_act with "
            "{connector, operation, args}; a record that is not there is reported as "
            "missing, never guessed):\n" + mentions.connector_notes
        )
    parts.extend(attachments)
    return "\n\n".join(parts)
