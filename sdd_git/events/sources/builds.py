"""Build result files the watcher reads: JUnit XML reports and plain exit-code files.

Where they are is the person's setting, `.sdd/config.yaml`:

    watch: {build_results: ["build/*.xml", "build/exit-code"]}

A file ending in `.xml` is read as a JUnit report (failures or errors above zero: failed); any
other file holds an exit code (not zero: failed). A file that cannot be read as either is not a
pass: it is reported as unreadable and counts as a failed build. An empty file is a result not
written yet (a build truncates before it writes) and counts as nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.events.sources.emit import Emitter, stamp
from sdd_git.paths import display
from sdd_git.root import Root
from sdd_git.routines.routine import glob_matches

MAX_REPORT_BYTES = 64 * 1024 * 1024  # a bigger "report" is not one a build wrote for us
MAX_EXIT_CODE_BYTES = 64
PASSED, FAILED, UNREADABLE, EMPTY = "passed", "failed", "unreadable", "empty"


@dataclass(frozen=True)
class BuildResult:
    path: Path
    kind: str  # "junit" or "exit-code"
    status: str  # passed, failed, unreadable, empty
    detail: str  # in plain words: "2 failures, 1 error in 30 tests", "exit code 1", the problem
    line: int | None = None  # where an unreadable file went wrong, when known

    @property
    def failed(self) -> bool:
        """A failed build, or a result that cannot be read: neither is a pass."""
        return self.status in (FAILED, UNREADABLE)

    def problem(self) -> str:
        """`path:LINE: ...` for an unreadable result, as the watcher prints it."""
        where = display(self.path) + (f":{self.line}" if self.line is not None else "")
        return f"{where}: {self.detail}"


def result_kind(path: Path) -> str:
    return "junit" if path.suffix.lower() == ".xml" else "exit-code"


def read_result(path: Path, root: Path | None = None) -> BuildResult:
    """Read one build result file; never raises for what the file holds.

    With `root` (the watcher's product folder), the file is read the way file tools read: a
    link is followed only while it stays inside the product, and only a regular file is read.
    A role can make links in the product, and can read .sdd/local; a result linked to a file
    in the person's home would otherwise carry its first bytes into an event and a log."""
    kind = result_kind(path)
    limit = MAX_REPORT_BYTES if kind == "junit" else MAX_EXIT_CODE_BYTES
    try:
        if root is None:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)
        else:
            from sdd_git.tools import beneath
            from sdd_git.tools.base import ToolFailed

            try:
                data = beneath.read_bytes(root, path.relative_to(root), limit + 1).data
            except (ToolFailed, ValueError) as exc:
                return BuildResult(path, kind, UNREADABLE, f"not read: {exc}")
    except OSError as exc:
        return BuildResult(path, kind, UNREADABLE, f"cannot be read ({exc.strerror})")
    if len(data) > limit:
        return BuildResult(path, kind, UNREADABLE, f"larger than {limit} bytes: not a {kind} file")
    if not data.strip():
        return BuildResult(path, kind, EMPTY, "empty")
    if kind == "junit":
        return read_junit(path, data)
    return read_exit_code(path, data)


def read_exit_code(path: Path, data: bytes) -> BuildResult:
    text = data.decode("utf-8", errors="replace").strip()
    if not re.fullmatch(r"[+-]?\d{1,10}", text):
        shown = text if len(text) <= 20 else text[:20] + "..."
        return BuildResult(
            path, "exit-code", UNREADABLE, f"not an exit code: {shown!r} (expected a number)", 1
        )
    code = int(text)
    return BuildResult(path, "exit-code", FAILED if code else PASSED, f"exit code {code}")


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _count(element: Any, name: str) -> int | None:
    """An attribute holding a count; None when absent, -1 when not a number."""
    value = element.get(name)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return -1
    return int(number) if number >= 0 else -1


def read_junit(path: Path, data: bytes) -> BuildResult:
    """A JUnit XML report (the shape pytest, Maven Surefire, Gradle and Jest write): failed when
    a test case holds a <failure> or <error>, or a suite's counts say so."""
    from xml.etree import ElementTree

    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        # A report never needs a DTD; refusing one keeps entity tricks out of the parser.
        return BuildResult(path, "junit", UNREADABLE, "holds a DOCTYPE: not a JUnit report", 1)
    try:
        top = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        line = exc.position[0] if exc.position else None
        return BuildResult(path, "junit", UNREADABLE, f"not valid XML ({exc})", line)
    tag = _local(top.tag)
    if tag not in ("testsuites", "testsuite"):
        return BuildResult(
            path, "junit", UNREADABLE, f"not a JUnit report: the top element is <{tag}>", 1
        )
    suites = [s for s in top.iter() if _local(s.tag) == "testsuite"]
    cases = [c for c in top.iter() if _local(c.tag) == "testcase"]
    failed_cases = sum(
        1 for c in cases if any(_local(child.tag) in ("failure", "error") for child in c)
    )
    counted = 0
    for holder in [top] if tag == "testsuites" and top.get("failures") is not None else suites:
        for name in ("failures", "errors"):
            value = _count(holder, name)
            if value == -1:
                return BuildResult(
                    path, "junit", UNREADABLE,
                    f"<{_local(holder.tag)}> has {name}={holder.get(name)!r}, not a count", None,
                )  # fmt: skip
            counted += value or 0
    failures = max(failed_cases, counted)
    tests = len(cases) or sum(max(_count(s, "tests") or 0, 0) for s in suites)
    if failures:
        word = "test fails" if failures == 1 else "tests fail"
        return BuildResult(path, "junit", FAILED, f"{failures} {word} of {tests}")
    return BuildResult(path, "junit", PASSED, f"{tests} tests pass")


def build_result_globs(root: Root) -> tuple[str, ...]:
    """`watch.build_results` from `.sdd/config.yaml`: globs relative to the root. None set: ()."""
    from sdd_git.settings import settings

    found = settings(root)
    section = found.get("watch")
    if section is None:
        return ()
    hint = 'write watch: {build_results: ["build/*.xml", "build/exit-code"]}'

    def fail(key: str, message: str) -> RecordError:
        keys = ("watch",) if key == "watch" else ("watch", key)
        return RecordError(f"{found.where(*keys)}: {message}", hint=hint)

    if not isinstance(section, dict):
        raise fail("watch", "key 'watch' must be a mapping")
    unknown = sorted(str(k) for k in section if k != "build_results")
    if unknown:
        raise fail(unknown[0], f"key 'watch.{unknown[0]}' is not a setting of the watcher")
    globs = section.get("build_results") or []
    if isinstance(globs, str):
        globs = [globs]
    if not isinstance(globs, list):
        raise fail("build_results", "key 'watch.build_results' must be a list of globs")
    for glob in globs:
        if not isinstance(glob, str) or not glob.strip():
            raise fail("build_results", f"key 'watch.build_results': {glob!r} is not a glob")
        if glob.startswith("/") or ".." in glob.split("/"):
            raise fail(
                "build_results",
                f"key 'watch.build_results': '{glob}' must be a path inside the root",
            )
    return tuple(g.strip() for g in globs)


def is_build_result(globs: tuple[str, ...], relative: str) -> bool:
    return any(glob_matches(glob, relative) for glob in globs)


def check_build_result(
    emit: Emitter, path: Path, rel: str, checked_out: Callable[[], str | None], main: str
) -> int:
    """Say what the build result holds; a failed one while `main` is checked out writes
    `main-build-failed`. How many events were written."""
    result = read_result(path, emit.root.path)
    if result.status == EMPTY:
        return 0
    if result.status == UNREADABLE:
        emit.problem(
            result.problem(), "a build result that cannot be read counts as a failed build"
        )
    branch = checked_out()
    shown = branch or "a detached HEAD"
    emit.say(f"{stamp()} build result {rel}: {result.status}, {result.detail} (on {shown})")
    if not result.failed or branch != main:
        return 0
    return emit.write(
        "main-build-failed", rel, main, {"result": result.status, "detail": result.detail}
    )
