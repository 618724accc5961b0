"""What `sdd agents install claude` writes for Claude Code, in the formats its docs give.

- `.claude/settings.json` (code.claude.com/docs/en/settings, /hooks, /permissions):
  - `hooks.PreToolUse`: `sdd guard --host claude` for Bash, Edit, Write, MultiEdit and
    NotebookEdit (one entry: `matcher` is a regex of tool names, `hooks` a list of
    `{"type": "command", "command": ...}`). This is the wall: every call of those tools is
    checked by sdd's classifier and path rules before it runs.
  - `permissions.deny`: a second layer Claude Code applies itself. `Bash(...)` rules for every
    person command in each global-option spelling (`sdd -C DIR`, `-CDIR`, `--no-agent`, `--`,
    sdd by path, `python -m sdd_git`, `python3 -m sdd_git`), and `Edit(...)` rules for the
    protected folders and rule files. Claude Code's Edit rules cover every built-in tool that
    edits files (Write, MultiEdit, NotebookEdit); its docs give path rules to Read and Edit
    only, so no `Write(...)` rule is written. What these rules miss (chains, wrappers, a
    case-folded path, a link) is in docs/guard.md: the hook is the wall.
- The sdd section of `CLAUDE.md`, which imports `@AGENTS.md`.

The hook command names this interpreter by its absolute path (as `sdd hooks install` writes
`SDD_PYTHON`): Claude Code runs hooks with its own PATH, where `sdd` may not be. It runs with
`-P`, so that no `sdd_git` folder in the product shadows the installed one, and a guard that
cannot start (a moved interpreter, a broken install) refuses the call, since any exit but 0 or 2
would let it run.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

from sdd_git.errors import SddError
from sdd_git.personcommands import PERSON_COMMANDS
from sdd_git.sandbox.policy import AGENT_FILE_NAMES, RECORD_FOLDERS, RULE_FILE_NAMES, RULE_FOLDERS

CLAUDE_SETTINGS = ".claude/settings.json"
GUARDED_TOOLS = ("Bash", "Edit", "Write", "MultiEdit", "NotebookEdit")
HOOK_MATCHER = "|".join(GUARDED_TOOLS)
# How sdd knows its own hook among hers, whatever interpreter wrote it.
HOOK_MARK = "-m sdd_git guard --host claude"
# The spellings that reach sdd before its command words. `*` is Claude Code's wildcard (any
# sequence, spaces too): `sdd -C*` covers `-C DIR` and `-CDIR`, and anything after them;
# `sdd --*` covers `--no-agent` and `--`; `*/sdd*` sdd by any path; `*python* -m sdd_git*`
# python, python3, python3.12 or a venv's python, with or without global options.
SDD_PREFIXES = ("sdd", "sdd -C*", "sdd --*", "*/sdd*", "*python* -m sdd_git*")
# Rule files by name, wherever they are in the project (gitignore's `/**/NAME`).
_NAMED_ANYWHERE = (*RULE_FILE_NAMES, *AGENT_FILE_NAMES)


def deny_rules() -> tuple[str, ...]:
    """Claude Code `permissions.deny` rules: every person command in every spelling, then the
    protected paths.

    Both `P COMMAND` and `P COMMAND *` are listed: `sdd next` is usually run with no argument,
    and the docs' space-star form is word-bounded (`sdd next *` never matches `sdd nextcloud`).
    The legacy `:*` suffix is deprecated, so it is not used."""
    rules: list[str] = []
    for command in PERSON_COMMANDS:
        for prefix in SDD_PREFIXES:
            rules.append(f"Bash({prefix} {command})")
            rules.append(f"Bash({prefix} {command} *)")
    return (*rules, *edit_rules())


def edit_rules() -> tuple[str, ...]:
    """`Edit` rules (gitignore patterns; `/PATH` is from the project root): the record, sdd's
    and git's folders, the rule folders, rule files by name anywhere, and the `.env` files."""
    folders = [f"Edit(/{folder}/**)" for folder in (*RECORD_FOLDERS, *RULE_FOLDERS)]
    files = [f"Edit(/**/{name})" for name in _NAMED_ANYWHERE]
    return (*folders, *files, "Edit(/.env)", "Edit(/.env.*)")


def hook_command(python: str | None = None, host: str = "claude") -> str:
    """A host's pre-tool-use hook command line: the guard, run by this interpreter; any exit but
    0 (allowed, or asked) and 2 (refused) turned into a refusal that says why."""
    interpreter = shlex.quote(python or sys.executable)
    return (
        f"{interpreter} -P -m sdd_git guard --host {host}; s=$?; "
        '[ "$s" -eq 0 ] || [ "$s" -eq 2 ] || { '
        'echo "sdd guard could not run (exit $s), so this call is refused: run '
        f'\'sdd agents install {host}\' again where sdd is installed" >&2; exit 2; }}; exit "$s"'
    )


def _hook_entry(python: str | None) -> dict[str, Any]:
    return {
        "matcher": HOOK_MATCHER,
        "hooks": [{"type": "command", "command": hook_command(python)}],
    }


def merge_settings(
    existing: str | None, rel: str = CLAUDE_SETTINGS, python: str | None = None
) -> str:
    """Claude Code settings with sdd's hook and deny rules; every key and hook of hers kept.
    sdd's own hook (known by HOOK_MARK) is brought up to date in place, never added twice."""
    data = _load(existing, rel)
    permissions = _object(data, "permissions", rel)
    deny = _list(permissions, "deny", "permissions.deny", rel)
    hooks = _object(data, "hooks", rel)
    pre = _list(hooks, "PreToolUse", "hooks.PreToolUse", rel)
    changed = _merge_hook(pre, _hook_entry(python), rel)
    missing = [rule for rule in deny_rules() if rule not in deny]
    if not missing and not changed and existing is not None and existing.strip():
        return existing  # nothing to add: keep her formatting byte for byte
    deny.extend(missing)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _merge_hook(pre: list[Any], entry: dict[str, Any], rel: str) -> bool:
    """Put sdd's entry in `pre` (her other entries kept as they are); True when it changed."""
    ours = [
        index
        for index, item in enumerate(pre)
        if isinstance(item, dict)
        and isinstance(item.get("hooks"), list)
        and any(
            isinstance(hook, dict) and HOOK_MARK in str(hook.get("command", ""))
            for hook in item["hooks"]
        )
    ]
    if not ours:
        pre.append(entry)
        return True
    first = ours[0]
    changed = pre[first] != entry or len(ours) > 1
    for index in reversed(ours[1:]):
        del pre[index]
    item = pre[first]
    others = [h for h in item["hooks"] if HOOK_MARK not in str(h.get("command", ""))]
    if others:
        # Her own hooks share sdd's entry: sdd's is kept separate, hers stay where they are.
        item["hooks"] = others
        pre.insert(first + 1, entry)
        return True
    pre[first] = entry
    return changed


def _load(existing: str | None, rel: str) -> dict[str, Any]:
    if existing is None or existing.strip() == "":
        return {}
    try:
        loaded = json.loads(existing)
    except json.JSONDecodeError as exc:
        raise SddError(
            f"{rel}:{exc.lineno}: not valid JSON ({exc.msg})",
            hint=f"fix {rel} by hand, then run `sdd agents install claude` again; "
            "nothing was changed",
        ) from None
    if not isinstance(loaded, dict):
        raise SddError(
            f"{rel}: the settings are not a JSON object",
            hint=f"fix {rel} by hand; nothing was changed",
        )
    return loaded


def _object(data: dict[str, Any], key: str, rel: str) -> dict[str, Any]:
    found = data.setdefault(key, {})
    if not isinstance(found, dict):
        raise SddError(
            f"{rel}: `{key}` is not an object", hint=f"fix {rel} by hand; nothing was changed"
        )
    return found


def _list(data: dict[str, Any], key: str, shown: str, rel: str) -> list[Any]:
    found = data.setdefault(key, [])
    if not isinstance(found, list):
        raise SddError(
            f"{rel}: `{shown}` is not a list", hint=f"fix {rel} by hand; nothing was changed"
        )
    return found


def claude_section(imports_agents_already: bool) -> str:
    # Claude Code loads CLAUDE.md and inlines `@path` imports; it does not read AGENTS.md itself.
    head = "## sdd\n\n"
    if not imports_agents_already:
        head += "@AGENTS.md\n\n"
    return head + (
        "The sdd rules are in AGENTS.md, imported above: read its sdd section before you run\n"
        "any `sdd` command. `sdd guard` checks every Bash, Edit, Write, MultiEdit and\n"
        "NotebookEdit call before it runs (a PreToolUse hook in `.claude/settings.json`): it\n"
        "refuses the person's sdd commands (`sdd accept`, `sdd next`, `sdd complete`,\n"
        "`sdd qa record`, `sdd release generate`, `sdd decision replace` and the others listed\n"
        "in AGENTS.md) by any spelling, and any write to `memory/`, `changes/`, `.sdd/`,\n"
        "`.git/` or another agent's rule files. When it refuses, do not look for another route:\n"
        "tell the person the exact command, and she runs it.\n"
    )
