"""A build log cut to what a role needs, for the CI connectors (GitHub Actions, GitLab, Jenkins,
Azure DevOps).

A log excerpt is facts only: the lines that say something failed (an `##[error]`, an exception,
`FAILED`, an exit code), each with a few lines of context, and the tail of the log, every line
with its number, and what was left out said as left out."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from sdd_git.connectors.base import Missing, Result
from sdd_git.connectors.builtin.hostkit import Listed
from sdd_git.connectors.http import MAX_BODY, Answer

LOGS_SHOWN = 2  # failing jobs whose log a run's read includes

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_SECTION = re.compile(r"section_(?:start|end):[0-9]+:[A-Za-z0-9_.-]+(?:\[[^\]]*\])?")  # GitLab
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")  # GitHub Actions
_FAILING = re.compile(
    r"##\[error\]|\berror\b|\berrors?:|\bfail(?:ed|ures?|ing|s)?\b|\bexception\b|traceback|"
    r"exit (?:code|status) [1-9]|\bfatal\b|\bpanic\b|\bnot ok\b|"
    r"(?-i:[a-z0-9](?:Error|Exception)\b)",  # AssertionError, NullPointerException
    re.IGNORECASE,
)
# Lines that name failure but report none ("0 failed", "errors: 0", "continue-on-error").
_NOT_FAILING = re.compile(
    r"\b0 (?:failed|failures|errors?)\b|\b(?:failures|errors?): 0\b|continue-on-error|"
    r"fail-fast|--fail|\bon.?error\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Excerpt:
    text: str
    lines: int  # in the whole log
    failing: int  # lines that say something failed
    cut: bool  # the log was longer than what was read (MAX_BODY)


def clean_lines(log: str) -> list[str]:
    out = []
    for raw in log.replace("\r\n", "\n").split("\n"):
        line = _SECTION.sub("", _ANSI.sub("", raw))
        if "\r" in line:  # a progress line redrawn in place: its last drawing
            drawn = [part for part in line.split("\r") if part.strip()]
            line = drawn[-1] if drawn else ""
        out.append(_STAMP.sub("", line).rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def is_failing(line: str) -> bool:
    return bool(_FAILING.search(line)) and not _NOT_FAILING.search(line)


def log_excerpt(
    log: str,
    *,
    before: int = 3,
    after: int = 2,
    budget: int = 60,
    tail: int = 15,
    width: int = 300,
    cut: bool = False,
) -> Excerpt:
    """The failing lines with `before`/`after` lines of context (at most `budget` lines, the
    earliest failures first: the first error is most often the cause), then the last `tail`
    lines. Each line is numbered; a gap says how many lines it leaves out."""
    lines = clean_lines(log)
    total = len(lines)
    failing = [i for i, line in enumerate(lines) if is_failing(line)]
    picked: set[int] = set()
    for index in failing:
        window = range(max(0, index - before), min(total, index + after + 1))
        if len(picked | set(window)) > budget:
            break
        picked.update(window)
    picked.update(range(max(0, total - (tail if failing else tail * 2)), total))
    shown: list[str] = []
    previous = -1
    for index in sorted(picked):
        if index > previous + 1:
            shown.append(f"      ... ({index - previous - 1} lines not shown)")
        line = lines[index]
        if len(line) > width:
            line = line[:width] + " [...]"
        shown.append(f"{index + 1:>6} | {line}")
        previous = index
    if not lines:
        shown = ["      (the log is empty)"]
    return Excerpt("\n".join(shown), total, len(failing), cut)


def excerpt_of(answer: Answer) -> Excerpt:
    return log_excerpt(answer.text(), cut=len(answer.body) >= MAX_BODY)


def describe_excerpt(what: str, excerpt: Excerpt) -> str:
    found = (
        f"{excerpt.failing} lines say something failed; shown with context, then the tail"
        if excerpt.failing
        else "no line says what failed; its tail"
    )
    head = f"{what}: {excerpt.lines} lines; {found}"
    if excerpt.cut:
        head += f" (the log was cut at {MAX_BODY // (1024 * 1024)} MB: its end is not shown)"
    return head + ":\n" + excerpt.text


def add_excerpt(
    lines: list[str], entry: MutableMapping[str, Any], what: str, read: Callable[[], Answer]
) -> None:
    """A failing job's log in the read of its run: said in `lines`, its excerpt kept in `entry`.
    A log that is not there is said as missing, and the read goes on without it."""
    try:
        excerpt = excerpt_of(read())
    except Missing as exc:
        lines.append(f"{what}: missing ({exc.why or 'not there'})")
        return
    lines.append(describe_excerpt(what, excerpt))
    entry["log_excerpt"] = excerpt.text


def add_failing_jobs(
    lines: list[str],
    jobs: Listed,
    failing: list[tuple[Mapping[str, Any], MutableMapping[str, Any]]],
    *,
    said_as: str,
    line: Callable[[Mapping[str, Any]], str],
    log: str,
    read: Callable[[int], Answer],
) -> None:
    """The failing jobs of a run (`said_as` "failing jobs"), each with its entry of the data:
    one line each, then the excerpts of the first LOGS_SHOWN `log`s as `read` by job id, and
    where the others are read."""
    counted = f"{len(failing)} of {len(jobs.items)}{'+' if jobs.more else ''}"
    lines.append(f"{said_as} ({counted}):" if failing else f"{said_as}: none listed")
    lines.extend(f"- {line(job)}" for job, _ in failing)
    for job, entry in failing[:LOGS_SHOWN]:
        job_id = int(job.get("id") or 0)
        what = f"{log} of job {job.get('name')} ({job_id})"
        add_excerpt(lines, entry, what, functools.partial(read, job_id))
    if len(failing) > LOGS_SHOWN:
        lines.append(f"({log}s of the other {len(failing) - LOGS_SHOWN} {said_as}: get_job_log)")


def excerpt_result(what: str, answer: Answer, **names: Any) -> Result:
    """A log read on its own: its excerpt, and as data the log's `names` and its counts."""
    excerpt = excerpt_of(answer)
    return Result(
        describe_excerpt(what, excerpt),
        {**names, "lines": excerpt.lines, "failing_lines": excerpt.failing,
         "excerpt": excerpt.text, "cut": excerpt.cut},
    )  # fmt: skip
