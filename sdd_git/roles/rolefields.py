"""The checks of a ROLE.md's fields, one per key: each reads its key from the front matter,
reports what is wrong to the findings (key, message, hint; lines are resolved later), and
returns the value the profile gets. Kept apart from the parser so it reads as the list of
checks it runs; nothing here imports above roles (this is on the path of `sdd role list`)."""

from __future__ import annotations

import contextlib
import math
import re
from typing import Any, Protocol

from sdd_git.roles.profile import DELEGATION, NAME_PATTERN, PRODUCES

_SCOPE = re.compile(r"^(product|module:[a-z0-9-]+|service:[a-z0-9-]+)$")


class Findings(Protocol):
    def error(self, key: str | None, message: str, hint: str) -> None: ...

    def warn(self, key: str | None, message: str, hint: str = "") -> None: ...


def shown_value(value: Any) -> str:
    """A value as the hint shows it after the right key: short, on one line."""
    text = " ".join(str(value).split()) if not isinstance(value, dict | list) else "..."
    return text if len(text) <= 40 else text[:37] + "..."


def role_name(data: dict[str, Any], folder_name: str | None, checker: Findings) -> str:
    name = data.get("role")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        checker.error(
            "role",
            f"the name must be lowercase letters, digits and '-', 1-40 characters, not {name!r}"
            if name is not None
            else "is missing",
            "add 'role: builder' (the role's name, as its folder is named)",
        )
        return folder_name or "unnamed"
    if folder_name is not None and name != folder_name:
        checker.error(
            "role",
            f"the name '{name}' does not match its folder '{folder_name}'",
            f"rename the folder or write role: {folder_name}",
        )
    return name


def job(data: dict[str, Any], checker: Findings) -> str:
    job = data.get("job")
    if job is None:
        checker.error(
            "job" if "job" in data else None,
            "key 'job' is missing: a role has one job",
            "add a line like 'job: Implement accepted spec sections for the expenses service'",
        )
        return ""
    if not isinstance(job, str) or not job.strip():
        checker.error(
            "job", "is blank: a role has one job", "write the role's one job after 'job:'"
        )
        return ""
    return job.strip()


def level(data: dict[str, Any], flat: bool, checker: Findings) -> float:
    level_raw = data.get("level")
    if level_raw is None:
        checker.error(None, "key 'level' is missing", "add 'level: 0' (higher is more privileged)")
        return 0.0
    if flat and isinstance(level_raw, str):
        with contextlib.suppress(ValueError):
            level_raw = float(level_raw)
    if isinstance(level_raw, bool) or not isinstance(level_raw, int | float):
        checker.error(
            "level", f"must be a number, not {level_raw!r}", "write a number, e.g. level: 10"
        )
        return 0.0
    if not math.isfinite(level_raw):
        checker.error("level", "must be a finite number", "write a number, e.g. level: 10")
        return 0.0
    return float(level_raw)


def delegation(data: dict[str, Any], checker: Findings) -> str:
    delegation = data.get("toolPolicy.delegation")
    nested = data.get("toolPolicy")
    if delegation is None and isinstance(nested, dict):
        delegation = nested.get("delegation")
    if delegation is None:
        checker.error(
            None,
            "key 'toolPolicy.delegation' is missing",
            "add 'toolPolicy.delegation: deny' (or allow, to let the role delegate)",
        )
        return "deny"
    if delegation not in DELEGATION:
        checker.error(
            "toolPolicy.delegation",
            f"must be allow or deny, not {delegation!r}",
            "write toolPolicy.delegation: deny",
        )
        return "deny"
    return str(delegation)


def produces(
    data: dict[str, Any], shape: str, host_tools: list[str] | None, checker: Findings
) -> str | None:
    # A role that does not say what it produces is offered read and draft tools only (None):
    # never every tool. `produces: other` says so on purpose. Another host's agent file that
    # lists its `tools:` has said what it may use; that list is its allowlist.
    produces: str | None = data.get("produces")
    if produces is None and shape == "host" and host_tools is not None and "*" not in host_tools:
        # A `*` names no tool: it is every tool, as no `tools:` at all is to both hosts, and
        # grants no more than a file that lists none.
        produces = "other"
    if produces is not None and produces not in PRODUCES:
        checker.error(
            "produces", f"{produces!r} is not known", "use one of: " + ", ".join(PRODUCES)
        )
        return None
    return produces


def scope(data: dict[str, Any], checker: Findings) -> str | None:
    scope = data.get("scope")
    if scope is not None and (not isinstance(scope, str) or not _SCOPE.match(scope)):
        checker.error(
            "scope", f"{scope!r} is not a scope", "use product, module:NAME or service:NAME"
        )
        return None
    return scope


def label(data: dict[str, Any], name: str, checker: Findings) -> str:
    label = data.get("label", name)
    if not isinstance(label, str) or not label.strip():
        checker.error("label", "must be text", "write label: Builder")
        return name.strip()
    return label.strip()


ALIAS_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
INHERIT = "inherit"  # Claude Code's word for "the model the session uses": sdd's own settings


def model(data: dict[str, Any], checker: Findings) -> dict[str, Any] | str | None:
    """The role's provider settings (a mapping), or a model alias (`model: sonnet`), resolved
    through her settings' `models:` when the role runs."""
    model = data.get("model")
    if isinstance(model, str):
        name = model.strip()
        if name == INHERIT:
            return None
        if ALIAS_PATTERN.match(name):
            return name
        checker.error(
            "model",
            f"{model!r} is not a model alias (letters, digits, '.', '-' and '_')",
            "write model: sonnet (an alias of your settings' models:) or "
            "model: {kind: anthropic, model: ...}",
        )
        return None
    if model is not None and not isinstance(model, dict):
        checker.error(
            "model",
            "must be a model alias, a mapping or null",
            "write model: sonnet, or model: {kind: anthropic, model: ...}",
        )
        return None
    return model


def deferred(data: dict[str, Any], checker: Findings) -> bool | None:
    deferred = data.get("deferredTools")
    if deferred is not None and not isinstance(deferred, bool):
        checker.error("deferredTools", "must be true or false", "write deferredTools: true")
        return None
    return deferred


def unknown_keys(data: dict[str, Any], known: frozenset[str], checker: Findings) -> None:
    from sdd_git.config import did_you_mean

    for key in sorted(set(data) - known, key=str):
        close = did_you_mean(str(key), sorted(known))
        if close is None:  # another tool's own key (colour, icon): harmless, said once
            checker.warn(str(key), f"unknown key '{key}' is ignored", "check its spelling")
            continue
        # A misspelt key of sdd's is never ignored: the role would load without what she
        # wrote (`prodcues: code`, `spawnableRole: []`), and be another role than hers.
        checker.error(
            str(key),
            f"unknown key '{key}': did you mean '{close}'?",
            f"rename it: {close}: {shown_value(data[key])}",
        )
