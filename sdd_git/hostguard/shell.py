"""A shell command line another agent asks to run, classified as the runner classifies a role's.

In order: a route to sdd (refused when it runs a person command by any spelling, or when its
words are not all fixed, or when the classifier only suspects it; an sdd read passes); a write,
copy or move into a protected path; a git command the git rule refuses; code given on the line
that names one. Then what the classifier could not be certain of is asked about."""

from __future__ import annotations

import os

from sdd_git.hostguard.call import ALLOWED, Answer, ask, deny, strictest

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.shellpolicy.findings import SddCall, ShellFinding

# Programs that run none of their words as a command, or whose command text the classifier
# parses itself (a shell's -c; git's own routes are the git rule's).
_RUN_NO_WORD = frozenset(
    {"sdd", "sdd_git", "git", "echo", "printf", "bash", "sh", "dash", "zsh", "ksh"}
)
MAX_FOLDERS = 32  # folders a line's `cd`s may reach, followed at most
MAX_NESTED = 4  # commands git runs (`rebase --exec`), checked as commands of their own


def shell_answer(command: str, cwd: str, depth: int = 0) -> Answer:
    from sdd_git.shellpolicy.walk import classify

    if "\x00" in command:
        return deny("the command holds a NUL byte, which no command line may")
    finding = classify(command)
    if len(finding.cwds) > MAX_FOLDERS:
        # Every write is checked from every folder a `cd` may have left the line in: past this
        # many, the check would outlast the host's hook timeout, and a timed-out hook lets the
        # call run.
        return deny(
            f"the command changes folder {len(finding.cwds)} times, more than sdd guard follows "
            f"({MAX_FOLDERS}); split it into shorter commands"
        )
    for call in finding.sdd_calls:
        refused = sdd_call_answer(call)
        if refused is not None:
            return refused
    from sdd_git.hostguard.paths import shell_problem

    found = shell_problem(cwd, finding)
    if found is not None and not found.allowed and found.decision == "deny":
        return found
    answers = [found or ALLOWED, *_commands(finding, cwd, depth)]
    if finding.uncertain:
        answers.append(
            ask(f"sdd guard cannot check this command with certainty: {finding.uncertain[0]}")
        )
    if finding.runs_code:
        # What code does is decided by files anyone could have written (a test, a Makefile, a
        # script the same line writes), and no sandbox of sdd's holds the host's commands: only
        # the person can vouch for it. Read code that names the record is refused above.
        answers.append(
            ask(
                f"this runs code sdd guard cannot read ({finding.runs_code[0]}), and nothing "
                "keeps that code from writing the person's record: run it if you trust it"
            )
        )
    return strictest(answers)


def _commands(finding: ShellFinding, cwd: str, depth: int) -> list[Answer]:
    from sdd_git.hostguard.code import code_answer
    from sdd_git.hostguard.gitrule import git_answer

    answers: list[Answer] = []
    for ran in finding.commands:
        where = os.path.join(os.path.realpath(cwd), ran.cwd)
        head = ran.words[0]
        name = os.path.basename(head) if head is not None else ""
        found: Answer | None = None
        if name not in _RUN_NO_WORD and _hands_on_sdd(ran.words[1:]):
            # `uv run sdd next`, `npx -c 'sdd next'`, `tox -- sdd next`: a runner the
            # classifier does not know runs sdd with words it cannot see as sdd's.
            answers.append(
                ask(f"{name or 'this command'} is given sdd to run, and sdd guard cannot tell "
                    "which sdd command it runs; run sdd directly, with plain words")
            )  # fmt: skip
        if name == "git" or name.startswith("git-"):
            found = git_answer(ran.words, where, lambda text, at: _nested(text, at, depth))
        if found is None or found.allowed:
            found = code_answer(ran.words, where, ran.stdin)
        if found is not None and not found.allowed:
            if found.decision == "deny":
                return [found]
            answers.append(found)
    return answers


def _hands_on_sdd(words: list[str | None]) -> bool:
    import re

    sdd = re.compile(r"(?:^|[\s;&|(`'\"=])(?:\S*/)?(?:sdd|sdd_git)(?:[\s;&|)`'\".]|$)")
    return any(word is not None and sdd.search(word) is not None for word in words)


def _nested(command: str, cwd: str, depth: int) -> Answer:
    if depth >= MAX_NESTED:
        return ask("git runs commands nested too deep for sdd guard to follow")
    return shell_answer(command, cwd, depth + 1)


def sdd_call_answer(call: SddCall) -> Answer | None:
    """None for an sdd command another agent may run (a read, a task for a role); else the
    refusal, in words that name what she runs herself."""
    from sdd_git.personcommands import UNKNOWN_OPTION, person_command

    if call.program not in ("sdd", "sdd_git"):
        return deny(
            f"{call.why}: {call.program} is not sdd's own command line, and sdd guard "
            "refuses every other route into sdd"
        )
    if not call.sure:
        return deny(
            f"this reaches sdd in a way sdd guard cannot follow ({call.why}); run sdd "
            "directly, with plain words, if the command is one you may run"
        )
    words = [word for word in call.words if word is not None]
    if len(words) != len(call.words):
        return deny(
            f"sdd is given words that are not fixed ({call.why}), so sdd guard cannot "
            "tell which command runs; run it with plain words"
        )
    command = person_command(words)
    if command == UNKNOWN_OPTION:
        return deny(f"sdd is given {UNKNOWN_OPTION} ({' '.join(words[:3])}...)")
    if command is not None:
        return deny(
            f"`sdd {command}` is the person's own command: only she runs it, from her "
            f"terminal. Tell her the exact command instead (sdd {' '.join(words)})"
        )
    return None
