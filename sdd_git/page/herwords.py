"""The page's words for what the core says in a terminal's: no command to type, no internal id,
no record's field name. The core's messages stay as they are (the CLI prints them); the page
passes each one through here before she reads it.

- `for_her`: a message with its terminal commands and stop ids taken out;
- `hint_for_her`: a hint, or None when all it said was a command to type;
- `missing_first`: why a gate does not hold, said as what to do first;
- `on_day`, `decision_words`: her decisions as sentences ("You accepted the reading on 1
  December"), never "D-0001 accept-section";
- `role_words`: "the builder", "the QA author";
- `stop_line`: one line for a stop in a list.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# "(sdd accept reading CH-0001)", "(`sdd stops` lists them)": a parenthesis holding a command.
_COMMAND_IN_PARENS = re.compile(r"\s*\([^()]*(?<![\w./-])sdd\s+[a-z][^()]*\)")
# "`sdd stops`", "sdd accept reading CH-0001": a command at the end of a clause.
_COMMAND = re.compile(r"`?(?<![\w./-])sdd\s+[a-z][^;`]*`?")
_STOP_ID = re.compile(r"\s*\(?\bstop-[0-9a-f]{4,}\)?")
_RUN_ID = re.compile(r"\s*\(?\brun-\d{8}-\d{6}-[0-9a-f]+\)?")
_FLAG = re.compile(r"(?:^|\s)--[a-z]")  # "--change CH-0001": a terminal's option
_CLAUSES = re.compile(r"(?:;\s+|\.\s+(?=[A-Z]))")


def for_her(text: object) -> str:
    """`text` without the terminal commands and the internal ids it names."""
    said = str(text or "")
    said = _COMMAND_IN_PARENS.sub("", said)
    said = _STOP_ID.sub("", said)
    said = _RUN_ID.sub("", said)
    if not _COMMAND.search(said):
        return said
    kept = [c for c in _CLAUSES.split(said) if not _COMMAND.search(c)]
    joined = "; ".join(part.strip().rstrip(".;:") for part in kept if part.strip())
    if not joined:
        return ""
    return joined + ("." if said.rstrip().endswith(".") else "")


def hint_for_her(hint: object) -> str | None:
    """A hint without its commands, or None when nothing but a command was in it."""
    if not hint:
        return None
    said = for_her(hint)
    kept = [c for c in re.split(r";\s+", said) if not _FLAG.search(c)]
    said = "; ".join(kept)
    if not said or said.lower().startswith(("run ", "use ", "with ")):
        return None
    return said


def missing_first(problem: str | None) -> str | None:
    """Why a stage's gate does not hold (stages.gate_problem), said as what she does first:
    "Accept the reading first." None when the gate holds."""
    if not problem:
        return None
    said = for_her(problem)
    scenario = re.search(r"required scenario (\S+) has no QA result yet", said)
    if scenario:
        return f"Try {scenario.group(1)} and record what you saw first."
    scenario = re.search(r"required scenario (\S+) failed and its failure is not accepted", said)
    if scenario:
        return (
            f"{scenario.group(1)} failed: record a pass once it works, or accept the failure "
            "in your words first."
        )
    if "accept the reading first" in said:
        return "Accept the reading first."
    what = said.split(": ", 1)[-1].strip().rstrip(".")
    return what[:1].upper() + what[1:] + "."


def on_day(iso: object, now: datetime | None = None) -> str:
    """ "on 1 December" (and the year, when it is not this one), in her local time; "" when
    the record holds no readable time."""
    try:
        at = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return ""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    local = at.astimezone()
    this_year = (now or datetime.now().astimezone()).year
    year = "" if local.year == this_year else f" {local.year}"
    return f"on {local.day} {local:%B}{year}"


def when(iso: object) -> str:
    """ "on 2 December at 14:05" for a record's UTC time, in her local time; the text as it is
    when it is not a time."""
    try:
        at = datetime.fromisoformat(str(iso).replace("Z", "+00:00"))
    except ValueError:
        return str(iso or "")
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    local = at.astimezone()
    return f"{on_day(local.isoformat())} at {local:%H:%M}"


def at_time(epoch: float) -> str:
    """ "at 14:05 on 2 December", in her local time."""
    local = datetime.fromtimestamp(epoch).astimezone()
    return f"at {local:%H:%M} {on_day(local.isoformat())}"


def decision_words(row: dict[str, Any]) -> str:
    """One decision of hers, as she made it: "You accepted the reading on 1 December"."""
    kind = row.get("kind")
    day = on_day(row.get("at"))
    section = str(row.get("section") or "")
    scenario = row.get("scenario") or "a scenario"
    if kind == "accept-section":
        what = "the reading" if section.endswith("#S1") or not section else "a part of the spec"
        said = f"You accepted {what}"
    elif kind == "accept-plan":
        said = "You accepted the plan"
    elif kind == "accept-scenario":
        how = "as required" if row.get("required", True) else "as optional"
        said = f"You accepted {scenario} {how}"
    elif kind == "accept-failure":
        return f"You accepted {day} that {scenario} fails, for now".replace("  ", " ")
    elif kind == "release":
        said = f"You chose the release {row.get('release') or ''}".rstrip()
    elif kind == "replace":
        said = "You replaced an earlier decision"
    else:
        said = "You decided"
    return f"{said} {day}".strip()


def accepted_on(rows: list[dict[str, Any]], decision_id: object) -> str:
    """ "you accepted it on 1 December", for the decision `decision_id` among `rows`."""
    row = next((r for r in rows if r.get("id") == decision_id), None)
    day = on_day(row.get("at")) if row else ""
    return f"you accepted it {day}".strip()


def role_words(name: str, label: str | None = None) -> str:
    """How a role is named in a sentence: "the builder", "the QA author", or its own name
    when it has no label of its own."""
    shown = (label or "").strip()
    if not shown or shown == name:
        return name
    first, _, rest = shown.partition(" ")
    if not first.isupper():
        first = first[:1].lower() + first[1:]
    return f"the {first}{' ' + rest if rest else ''}"


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def stop_line(stop: Any, root: Path | None, role: str | None = None) -> str:
    """One line for a stop in a list (her home page, a change's page)."""
    from sdd_git.runner.words import heading

    who = capital(role or stop.role)
    if stop.kind == "reading":
        return f"{who} drafted the reading of {stop.change}: read it, then accept or correct it"
    if stop.kind == "plan":
        return f"The plan of {stop.change} waits for you: read it, then accept it"
    if stop.kind == "draft":
        return f"{who} drafted its plan for the work: go on with it, or not"
    return f"{who} asks: {heading(stop.tool, dict(stop.args), root)}"
