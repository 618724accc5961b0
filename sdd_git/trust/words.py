"""What a change of grant surface means, said in her words: a diff of meaning, not of bytes.

"builder: always-allow gains `run_command` with command "make deploy"; its model's address
becomes `http://10.1.2.3/v1`". Surfaces are plain JSON values (see the layers that make them);
this module knows only how to say their keys."""

from __future__ import annotations

import json
from typing import Any

# Text on one line, every control written out (a newline as \n): a value from a merged file can
# neither move her cursor nor reorder what she reads. Callers of this module import it from here.
from sdd_git.shown_text import visible as visible

# Keys whose change is said in words of what it does, wherever they appear.
_SAID = {
    "base_url": "its address becomes",
    "api_key_env": "reads its key from the variable",
    "token_env": "reads its token from the variable",
    "command": "runs the program",
    "url": "talks to",
    "headers": "sends the headers",
    "sandbox": "its sandbox becomes",
    "model": "its model becomes",
    "install": "installs sdd in CI from",
}
_ROLE_KEYS = {
    "level": "its level",
    "delegation": "delegation",
    "spawnable_roles": "the roles it may start",
    "produces": "what it produces",
    "scope": "its scope",
    "skills": "its skills",
    "hidden": "hidden from `sdd role list`",
    "tools": "the tools it is offered",
}


def shown(value: Any) -> str:
    """A value as she reads it, whole (what she confirms is never cut short): text in
    backticks, anything else as compact JSON."""
    if isinstance(value, str):
        return f"`{visible(value)}`"
    if value is None:
        return "nothing"
    if value is True or value is False:
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`"
    return f"`{visible(json.dumps(value, ensure_ascii=False, sort_keys=True))}`"


def _clip(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def rule(rule: Any) -> str:
    """A boundary rule in words: `run_command` with command "curl ...", or every call."""
    if not isinstance(rule, dict):
        return shown(rule)
    tool = f"`{visible(str(rule.get('tool')))}`"
    inputs = rule.get("inputs")
    prefix = rule.get("prefix")
    if isinstance(prefix, list):
        words = " ".join(str(w) for w in prefix)
        return f"{tool} with any plain command beginning with {shown(words)}, in a working sandbox"
    if inputs is None:
        return f"{tool}, whatever its inputs"
    if isinstance(inputs, dict) and inputs:
        said = ", ".join(f"{k} {json.dumps(v, ensure_ascii=False)}" for k, v in inputs.items())
        return f"{tool} with {visible(said)}"
    return f"{tool} with no inputs"


def role_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """What a role may do differently: each text one change."""
    return [visible(line) for line in _role_changes(before, after)]


def _role_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    if after is None:
        return ["its file is gone"]
    old = before or {}
    said: list[str] = []
    if before is None:
        said.append(
            f"new to you: level {_num(after.get('level'))}, delegation {after.get('delegation')}, "
            f"produces {after.get('produces') or 'nothing said (read and draft tools only)'}"
        )
    boundary_now = after.get("boundary") or {}
    boundary_then = old.get("boundary") or {}
    for part, words in (("always_allow", "always-allow"), ("ask_first", "ask-first")):
        now_rules = {canonical_rule(r): r for r in boundary_now.get(part) or []}
        then_rules = {canonical_rule(r): r for r in boundary_then.get(part) or []}
        for key, item in now_rules.items():
            if key not in then_rules:
                extra = ": it may run without asking" if part == "always_allow" else ""
                said.append(f"{words} gains {rule(item)}{extra}")
        for key, item in then_rules.items():
            if key not in now_rules:
                said.append(f"{words} loses {rule(item)}")
    model_then = old.get("model") or {}
    model_now = after.get("model") or {}
    if model_now != model_then and (isinstance(model_now, str) or isinstance(model_then, str)):
        # a model alias (`model: sonnet`): her settings' `models:` say what it stands for
        said.append(
            f"its model becomes {shown(model_now or None)} (was {shown(model_then or None)})"
        )
    elif model_now != model_then:
        said += [f"its model: {t}" for t in mapping_changes(model_then, model_now)]
    for key, words in _ROLE_KEYS.items():
        if before is None and key in ("level", "delegation", "produces"):
            continue
        if after.get(key) != old.get(key) and not (before is None and not after.get(key)):
            said.append(f"{words}: {shown(old.get(key))} becomes {shown(after.get(key))}")
    return said


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def canonical_rule(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def mapping_changes(before: Any, after: Any, prefix: str = "") -> list[str]:
    """Each changed leaf of two settings mappings, said: `provider.base_url`: its address
    becomes `http://...`."""
    return [visible(line) for line in _mapping_changes(before, after, prefix)]


def _mapping_changes(before: Any, after: Any, prefix: str = "") -> list[str]:
    if isinstance(before, dict) and isinstance(after, dict):
        said: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            place = f"{prefix}.{key}" if prefix else str(key)
            if key not in after:
                said.append(f"`{place}` is removed (it was {shown(before[key])})")
            elif key not in before:
                said += _added(place, str(key), after[key])
            elif before[key] != after[key]:
                said += _mapping_changes(before[key], after[key], place)
        return said
    name = prefix.rsplit(".", 1)[-1]
    was = address(before) if name in _ADDRESSES else shown(before)
    return [f"{_said(prefix, name, after, 'becomes')} (was {was})"]


def _added(place: str, name: str, value: Any) -> list[str]:
    if isinstance(value, dict) and value:
        out: list[str] = []
        for key in sorted(value, key=str):
            out += _added(f"{place}.{key}", str(key), value[key])
        return out
    return [_said(place, name, value, "is set to")]


def _said(place: str, name: str, value: Any, plain: str) -> str:
    """One setting in words: its own verb where it has one, else `plain` (becomes, is set to)."""
    verb = _SAID.get(name)
    if name in _ADDRESSES:
        return f"`{place}`: {verb} {address(value)}"
    if verb is not None:
        return f"`{place}`: {verb} {shown(value)}"
    return f"`{place}` {plain} {shown(value)}"


_ADDRESSES = ("base_url", "url")


def address(value: Any) -> str:
    """An address as she must read it: where her key goes. A letter that only looks like an
    ASCII one (a Cyrillic a in a provider's name) is written out, and the host is given as DNS
    spells it, so a look-alike never reads as her provider."""
    if not isinstance(value, str) or value.isascii():
        return shown(value)
    from urllib.parse import urlsplit

    spelt = "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in value)
    host = urlsplit(value).hostname or ""
    try:
        dns = host.encode("idna").decode("ascii")
    except UnicodeError:
        dns = "a name DNS cannot spell"
    return (
        f"`{visible(spelt)}` (its address has letters that only look like plain ones: the host "
        f"is {dns})"
    )


def entry_words(entry: dict[str, Any]) -> str:
    """A decision entry as one line: D-0003 accept-section SPEC-0001#S1, "her words"."""
    subject = entry.get("section") or entry.get("scenario") or entry.get("change") or ""
    words = entry.get("words")
    said = f"{entry.get('id')}: {entry.get('kind')} {subject}".rstrip()
    said = f'{said}, words "{_clip(str(words), 100)}"' if words else said
    return visible(said)
