"""`handoff {to, task, cites}`: one role hands a task to another (CONTRACT §9).

A handoff is consequential: the runner's boundary stopped it for the person (or a rule she saved
matched) before `run` is called. What it does then, with `messaging: on` (the default): the
handoff, with the records it cites, goes into both roles' conversations, and the receiver wakes
as a new run of its own with origin `role`, in the background. That run has the receiver's own
boundary, and its stops expire after `approvals.timeout`: an approval never travels with a
handoff. With `messaging: off`, nothing is written or started, and the sender is told so.

The tool checks what a peer says before anything is written: the receiver is a known role other
than the sender, and each cite names a record that exists."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.config import messaging_on
from sdd_git.records import decisions, ids
from sdd_git.records.spec import read_spec
from sdd_git.roles.conversation import add_message
from sdd_git.roles.profile import NAME_PATTERN
from sdd_git.sink import RUN_ID_ENV
from sdd_git.tools.act import ActTool
from sdd_git.tools.actionwords import plain, quoted
from sdd_git.tools.base import Args, ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.schema import ID_CHARS, NAME_CHARS, bounded, make_schema, text_property

CITE_SHAPES = "SPEC-0001#S1, SPEC-0001, D-0001, CH-0001, CH-0001/SC-1 or R-0001"

HANDOFF_SCHEMA = make_schema(
    "handoff",
    "Hand a task to another role: it wakes with the task and the records you cite.",
    {
        "to": bounded(NAME_CHARS, "the role's name"),
        "task": text_property("the task, in plain words"),
        "cites": {
            "type": "array",
            "items": bounded(ID_CHARS, f"a record id: {CITE_SHAPES}"),
            "description": "the spec sections, decisions, changes or scenarios the task rests on",
        },
    },
    ("to", "task"),
)


def handoffs_folder(context: ToolContext) -> Path:
    """Where each woken run's own output goes (gitignored local state)."""
    return context.root.local / "handoffs"


class Handoff(ActTool):
    schema = HANDOFF_SCHEMA

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        to = args.text("to").strip()
        task = context.mask(args.text("task").strip())
        if task == "-":
            raise ToolFailed("handoff: say the task in words")
        cited = args.text_list("cites", empty_ok=True) if args.raw.get("cites") is not None else []
        receiver = _receiver(to, context)
        cites: list[str] = []
        for cite in (c.strip() for c in cited):
            _check_cite(cite, context)
            if cite not in cites:
                cites.append(cite)
        if not messaging_on(context.root):
            return _handed(
                f"Not sent: messaging between roles is off (messaging: off in .sdd/config.yaml). "
                f"Nothing was written to {receiver}, and it was not woken.",
                {"to": receiver, "cites": cites, "sent": False},
            )
        words = f"Handoff from {context.role} to {receiver}: {task}"
        if cites:
            words += f"\nCites: {', '.join(cites)}"
        fields: dict[str, Any] = {"run": context.run_id, "kind": "handoff"}
        fields.update({"from": context.role, "to": receiver, "task": task, "cites": cites})
        fields["text"] = words
        add_message(context.root, context.role, context.mask, **fields)
        received = add_message(context.root, receiver, context.mask, **fields)
        output = _wake(context, receiver, task, str(received["id"]))
        shown = output.relative_to(context.root.path).as_posix()
        return _handed(
            f"Handed off to {receiver}: it wakes now in a run of its own (origin role), under its "
            "own boundary; nothing you were allowed travels with it. Both conversations show the "
            f"handoff ({received['id']} in the conversation of {receiver}).",
            {
                "to": receiver,
                "cites": cites,
                "sent": True,
                "message": received["id"],
                "output": shown,
            },
        )

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        return f"Hand the task {quoted(args.get('task'))} to the role {plain(args.get('to'))}"


def _handed(text: str, handoff: dict[str, Any]) -> ToolOutcome:
    return ToolOutcome(text, {"handoff": handoff}, handoff=handoff)


def _receiver(to: str, context: ToolContext) -> str:
    from sdd_git.roles.registry import find_role

    if not NAME_PATTERN.match(to) or to.startswith("-"):
        raise ToolFailed(f"handoff: {to!r} is not a role name; `to` names a role, e.g. builder")
    if to == context.role:
        raise ToolFailed(f"handoff: you are {to}; hand the task to another role")
    profile, _ = find_role(context.root, to, use_cache=False)  # no role: RecordError, said
    return profile.name


def _check_cite(cite: str, context: ToolContext) -> None:
    """Nothing, or ToolFailed naming the cite that names no record."""
    root = context.root
    section = ids.SECTION_ID.match(cite)
    if section:
        path = root.spec_file(section.group(1))
        if not path.is_file():
            raise ToolFailed(f"handoff: cites {cite}, and there is no spec {section.group(1)}")
        if not any(s.id == section.group(2) for s in read_spec(path).sections):
            raise ToolFailed(
                f"handoff: cites {cite}, and {section.group(1)} has no section {section.group(2)}"
            )
        return
    if ids.SPEC_ID.match(cite):
        if not root.spec_file(cite).is_file():
            raise ToolFailed(f"handoff: cites {cite}, and there is no spec {cite}")
        return
    if ids.DECISION_ID.match(cite):
        if not any(d.id == cite for d in decisions.load(root).entries):
            raise ToolFailed(f"handoff: cites {cite}, and there is no decision {cite}")
        return
    if ids.CHANGE_ID.match(cite):
        if not (root.change_dir(cite) / "change.yaml").is_file():
            raise ToolFailed(f"handoff: cites {cite}, and there is no change {cite}")
        return
    scenario = ids.SCENARIO_ID.match(cite)
    if scenario:
        from sdd_git.records.scenarios import load_scenarios

        folder = root.change_dir(scenario.group(1))
        if not (folder / "change.yaml").is_file():
            raise ToolFailed(f"handoff: cites {cite}, and there is no change {scenario.group(1)}")
        if not any(s.id == scenario.group(2) for s in load_scenarios(folder)):
            raise ToolFailed(
                f"handoff: cites {cite}, and {scenario.group(1)} has no scenario "
                f"{scenario.group(2)}"
            )
        return
    if ids.RELEASE_ID.match(cite):
        if not (root.releases / f"{cite}.md").is_file():
            raise ToolFailed(f"handoff: cites {cite}, and there is no release {cite}")
        return
    raise ToolFailed(f"handoff: {cite!r} is not a record id; cite {CITE_SHAPES}")


def _wake(context: ToolContext, receiver: str, task: str, message_id: str) -> Path:
    """Start the receiver's own run, detached: `sdd role run RECEIVER --origin role`, replying
    to the handoff in its conversation. Its output goes to a file under .sdd/local/handoffs/.

    This is sdd starting sdd, not a command a role wrote: it gets the person's environment (the
    receiver's provider needs its key) without SDD_RUN_ID, which would make `sdd role run`
    refuse as a person command. The receiver's run masks and guards everything it does."""
    folder = handoffs_folder(context)
    statefolders.make_folder(folder)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    output = folder / f"{stamp}-{context.role}-to-{receiver}-{secrets.token_hex(3)}.log"
    # -P: `python -m` would put the product folder first on the import path, and a module a
    # role wrote there (yaml.py, sdd_git/...) would run outside the sandbox.
    argv = [sys.executable, "-P", "-m", "sdd_git", "role", "run", f"--task={task}"]
    # --from: the receiver applies its saved rules only when the sender could have started it
    # (canSpawn); a handoff never carries privilege up the lattice (CONTRACT §13).
    argv += ["--origin", "role", "--from", context.role, "--reply-to", message_id, "--json"]
    if context.change:
        argv += ["--change", context.change]
    argv += ["--", receiver]
    env = {k: v for k, v in os.environ.items() if k != RUN_ID_ENV}
    try:
        with open(output, "wb") as sink:
            subprocess.Popen(  # our own CLI: argv only, no shell
                argv,
                cwd=context.root.path,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # it outlives this run, and the terminal's Ctrl-C
                close_fds=True,
            )
    except OSError as exc:
        raise ToolFailed(
            f"handoff: both conversations show it, but {receiver} could not be woken ({exc}); "
            f'the person can start it: sdd role run {receiver} --reply-to {message_id} --task "..."'
        ) from None
    return output
