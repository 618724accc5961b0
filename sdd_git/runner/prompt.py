"""What the model is told: the role's disposition and the runner's rules (system), and the task
with its mentions, skills, the message it replies to and attachments (user)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sdd_git.errors import UsageError
from sdd_git.roles.lattice import disposition
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root
from sdd_git.runner.gate import Plan
from sdd_git.tools.catalog import TOOL_CLASSES

_MENTION = re.compile(r"(?<![\w@])@([a-z0-9][a-z0-9_-]*)")
_SKILL = re.compile(r"(?<!\S)/([a-z0-9][a-z0-9-]*)(?=\s|$|[.,;:!?])")

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
    skills: tuple[tuple[str, str], ...]  # (name, SKILL.md text)


def resolve_mentions(root: Root, task: str, role_names: Iterable[str]) -> Mentions:
    """`@role`, `@tool` and `/skill` in the task: each resolves, or the run is refused."""
    known_roles = set(role_names)
    roles, tools = [], []
    for name in _MENTION.findall(task):
        if name in known_roles:
            roles.append(name)
        elif name in TOOL_CLASSES:
            tools.append(name)
        else:
            raise UsageError(
                f"@{name} is not a role or a tool of this product",
                hint="`sdd role list --all` shows the roles; tools are listed in the README",
            )
    skills = []
    for name in _SKILL.findall(task):
        path = root.sdd / "skills" / name / "SKILL.md"
        if not path.is_file():
            raise UsageError(
                f"/{name} is not a skill of this product (no .sdd/skills/{name}/SKILL.md)",
                hint="add the skill, or write the task without the /",
            )
        skills.append((name, path.read_text(encoding="utf-8")))
    return Mentions(tuple(roles), tuple(tools), tuple(skills))


def system_prompt(
    role: RoleProfile,
    all_roles: Iterable[RoleProfile],
    plan: Plan,
    memory_notes: list[str],
    prompt_append: str | None,
) -> str:
    parts = [disposition(role, all_roles)]
    if prompt_append and prompt_append.strip():
        parts.append(prompt_append.strip())
    parts.append(f'You are the role "{role.name}" ({role.label}). Your one job: {role.job}')
    parts.append(RULES)
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
        parts.append(f"Skill /{name}:\n{text.strip()}")
    if mentions.roles:
        parts.append("Roles mentioned: " + ", ".join(f"@{r}" for r in mentions.roles))
    if mentions.tools:
        parts.append("Tools mentioned: " + ", ".join(f"@{t}" for t in mentions.tools))
    parts.extend(attachments)
    return "\n\n".join(parts)
