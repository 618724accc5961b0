"""Per-program rules that do more than write: git (what reads, what runs programs), find
(-exec, -delete), cd, and sed scripts (`e`, `w`)."""

from __future__ import annotations

import posixpath

from sdd_git.shellpolicy.findings import ShellFinding, Words, Write
from sdd_git.shellpolicy.parse import matching_option, word_at
from sdd_git.shellpolicy.wrappers import handed_words
from sdd_git.shellpolicy.writers import writes_operands

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.shellpolicy.findings import Follow

# git options whose value is a program git runs through a shell, and the subcommands where the
# short `-u` is one of them (elsewhere it means "update" or "set upstream").
GIT_PROGRAM_OPTIONS = frozenset({"--upload-pack", "--receive-pack", "--exec"})


GIT_SHORT_UPLOAD_PACK = frozenset({"clone", "ls-remote"})


# git subcommands that only read; a few read only with some first arguments.
GIT_READS = frozenset(
    {
        "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
        "rev-list", "describe", "shortlog", "cat-file", "whatchanged", "version", "merge-base",
        "name-rev", "for-each-ref", "show-ref", "check-ignore", "count-objects", "check-attr",
        "ls-remote", "var", "cherry", "range-diff",
    }
)  # fmt: skip


GIT_READ_FIRST_ARGS: dict[str, frozenset[str]] = {
    "stash": frozenset({"list", "show"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "tag": frozenset({"-l", "--list"}),
    "reflog": frozenset({"show"}),
    "worktree": frozenset({"list"}),
    "notes": frozenset({"list", "show"}),
    "submodule": frozenset({"status"}),
}


GIT_RUNS_PROGRAMS = ("-O", "--open-files-in-pager", "--ext-diff", "--textconv")


def find_command(
    follow: Follow, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> None:
    starts: list[str] = []
    for arg in args:
        if arg is None:
            finding.uncertain.append("find starts at a path that is not a fixed word")
            return
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    starts = starts or ["."]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            inner = args[index + 1 : end]
            if not inner or inner[0] in (None, "{}"):
                finding.uncertain.append("find -exec runs a command named by what it finds")
                finding.runs_code.append("find runs the programs it finds")
            elif "{}" in inner[1:]:
                # What it finds becomes the operands: the start paths stand for them.
                probe = [inner[0], *("" if w == "{}" else w for w in inner[1:])]
                before = (len(finding.writes), len(finding.touches), len(finding.uncertain))
                finding.handing += 1  # sdd reached here gets the paths found as words too
                follow.argv([w for w in probe if w != ""], finding, cwd, depth)
                finding.handing -= 1
                if inner[0] is not None:
                    handed_words(inner[0], [w for w in inner[1:] if w != "{}"], finding)
                if (len(finding.writes), len(finding.touches)) != before[:2] or writes_operands(
                    inner
                ):
                    finding.writes.extend(Write(cwd[-1], s, True, True) for s in starts)
            else:
                follow.argv(inner, finding, cwd, depth)
            index = end
        elif arg == "-delete":
            finding.writes.extend(Write(cwd[-1], s, True, True) for s in starts)
        elif arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            target = args[index + 1] if index + 1 < len(args) else None
            if target is None:
                finding.uncertain.append("find writes to a path that is not a fixed word")
            else:
                finding.writes.append(Write(cwd[-1], target))
        index += 1


def cd_command(name: str, args: Words, finding: ShellFinding, cwd: list[str]) -> None:
    operands = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if arg is not None and arg.startswith("-") and arg not in ("-",):
            index += 1
            continue
        operands.append(arg)
        index += 1
    if not operands or operands[0] in (None, "-"):
        finding.uncertain.append(f"`{name}` to a folder that is not a fixed word")
        return
    target = operands[0]
    assert target is not None
    cwd[-1] = posixpath.normpath(posixpath.join(cwd[-1], target))
    finding.cwds.add(cwd[-1])


def git_command(follow: Follow, args: Words, finding: ShellFinding, cwd: str, depth: int) -> None:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append("git gets an argument that is not a fixed word")
            return
        if arg in ("-c", "--config-env", "--exec-path") or arg.startswith(
            ("--config-env=", "--exec-path=")
        ):
            finding.uncertain.append(f"git {arg} can make git run any program")
            setting = word_at(args, index + 1) if arg == "-c" else None
            if setting is not None and "=" in setting:
                # core.sshCommand, core.pager, alias.x=!cmd, credential.helper=!cmd: a value
                # git may run through a shell.
                probe = ShellFinding()
                follow.script(setting.split("=", 1)[1].lstrip("!"), probe, cwd, depth + 1)
                finding.reach_sdd_through(probe, "git -c {}")
            return
        if arg in ("-C", "--git-dir", "--work-tree", "--namespace"):
            index += 2
            continue
        if arg.startswith("-"):
            index += 1
            continue
        sub = arg
        rest = args[index + 1 :]
        _git_programs(follow, sub, rest, finding, cwd, depth)
        for word in rest:
            if word is None:
                continue
            if word.split("=", 1)[0] in GIT_RUNS_PROGRAMS:
                finding.uncertain.append(f"git {sub} {word} runs another program")
                return
            if word.startswith("--output"):
                target = word.split("=", 1)[1] if "=" in word else None
                if target is None:
                    finding.uncertain.append("git --output writes a file")
                else:
                    finding.writes.append(Write(cwd, target))
        if not _git_reads(sub, rest):
            finding.git_writes.append(sub)
        return


def _git_programs(
    follow: Follow, sub: str, rest: Words, finding: ShellFinding, cwd: str, depth: int
) -> None:
    """`git ls-remote --upload-pack=CMD`, `git push --receive-pack CMD`, `git clone -u CMD`,
    `git archive --remote R --exec CMD`: git runs CMD through a shell, so it is shell too."""
    options = GIT_PROGRAM_OPTIONS | ({"-u"} if sub in GIT_SHORT_UPLOAD_PACK else set())
    for index, word in enumerate(rest):
        if word is None:
            continue
        match = matching_option(word, frozenset(options))
        if match is None or (match[0] == "-u" and word != "-u" and not word.startswith("-u")):
            continue
        value = match[1] if match[1] is not None else word_at(rest, index + 1)
        if value is None:
            finding.uncertain.append(f"git {sub} {word} runs a program that is not a fixed word")
        else:
            follow.script(value, finding, cwd, depth + 1)


def _git_reads(sub: str, rest: Words) -> bool:
    if sub in GIT_READS:
        return True
    first = next((w for w in rest if w is not None), None)
    if sub in GIT_READ_FIRST_ARGS:
        if first is None:
            return sub in ("remote", "tag", "reflog", "notes", "submodule")  # `git stash` pushes
        return first in GIT_READ_FIRST_ARGS[sub]
    if sub == "branch":
        changing = {
            "-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy",
            "--force", "--set-upstream-to", "--unset-upstream", "--edit-description",
        }  # fmt: skip
        return all(w is not None and w.startswith("-") and w not in changing for w in rest)
    if sub == "config":
        operands = [w for w in rest if w is not None and not w.startswith("-")]
        reading = any(w in ("--get", "--get-all", "--get-regexp", "--list", "-l") for w in rest)
        return reading or len(operands) == 1
    return False
