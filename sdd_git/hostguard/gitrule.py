"""What another agent's git command may do in a product of sdd's.

Her host's approval is her own: an agent may commit, push, tag, branch, merge, rebase and pull.
What it may not do, by the guard's rule:

- change git's configuration or what git runs: `git config` (but its reads), `git -c`,
  `--config-env`, `--exec-path=...`, `git init --template` or `--separate-git-dir`;
- skip the repository's hooks: `--no-verify` (and `git commit -n`);
- write into a protected path by git: `checkout`, `restore`, `rm`, `mv`, `clean`, `stash`,
  `clone`, `worktree add`, `init`, `archive -o`, `format-patch -o`, and `apply` / `am` of a
  patch that touches one (the patch files are read);
- `git clean -x` or `-X`, which deletes ignored files: sdd's own state in `.sdd/local` among them.

Asked about (the person decides): what sets aside or discards uncommitted work across the whole
tree, hers in `memory/` included (`reset --hard`, `checkout -f`, `checkout .`, `restore .`,
`stash`, `clean` of the whole tree, `switch --discard-changes`); `--git-dir` and `--work-tree`;
plumbing that forges the index, objects or refs, or deletes what could restore them
(`update-index`, `update-ref`, `commit-tree`, `gc`, `prune`, `reflog expire`, ...); and a
subcommand git does not ship (an alias or an external program). The commands `rebase --exec`,
`bisect run` and `submodule foreach` run are checked as commands of their own."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from sdd_git.hostguard.call import Answer, ask, deny
from sdd_git.hostguard.paths import write_problem

Words = list[str | None]
Script = Callable[[str, str], Answer | None]  # (command line, cwd) -> its answer

_GLOBAL_VALUE = frozenset({"-C", "--namespace", "--super-prefix", "--list-cmds", "--attr-source"})
_GLOBAL_FLAGS = frozenset(
    {
        "-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects",
        "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs",
        "--no-optional-locks", "--no-advice", "--html-path", "--man-path", "--info-path",
        "--version", "--help", "-v", "-h", "--exec-path",
    }
)  # fmt: skip
# Subcommands that only read, or change the repository in the ordinary ways her host approves.
_PLAIN = frozenset(
    {
        "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
        "rev-list", "describe", "shortlog", "cat-file", "whatchanged", "version", "merge-base",
        "name-rev", "for-each-ref", "show-ref", "check-ignore", "count-objects", "check-attr",
        "ls-remote", "var", "cherry", "range-diff", "help", "add", "commit", "push", "pull",
        "fetch", "merge", "rebase", "cherry-pick", "revert", "tag", "branch", "switch",
        "checkout", "restore", "rm", "mv", "stash", "reset", "clean", "remote", "worktree",
        "submodule", "notes", "bisect", "reflog", "init", "clone", "format-patch", "am",
        "apply", "archive", "bundle", "difftool", "mergetool", "sparse-checkout", "fsck",
        "maintenance", "request-pull", "send-email", "citool", "gui", "gitk", "instaweb", "lfs",
        "mailinfo", "mailsplit", "interpret-trailers", "verify-commit", "verify-tag",
        "show-branch", "diff-tree", "diff-index", "diff-files", "fmt-merge-msg",
        "get-tar-commit-id", "patch-id", "stripspace", "column", "check-ref-format",
        "check-mailmap", "merge-file", "merge-tree", "rerere", "write-tree", "annotate",
        "config", "backfill", "last-modified", "replay", "fast-export",
    }
)  # fmt: skip
# Plumbing that forges the index, objects or refs, or deletes what would bring them back.
_FORGING = frozenset(
    {
        "update-index", "update-ref", "symbolic-ref", "commit-tree", "mktree", "mktag",
        "hash-object", "read-tree", "checkout-index", "replace", "filter-branch", "filter-repo",
        "fast-import", "gc", "prune", "repack", "pack-refs", "prune-packed", "receive-pack",
        "upload-pack", "hook", "credential", "credential-store", "credential-cache",
        "unpack-objects", "index-pack", "pack-objects", "http-backend", "daemon", "shell", "p4",
        "svn", "cvsimport", "cvsserver", "archimport", "quiltimport",
    }
)  # fmt: skip
_NO_VERIFY = frozenset({"commit", "merge", "push", "am", "rebase", "pull", "cherry-pick", "revert"})
# Subcommands whose operands may be paths they write in the working tree.
_WRITE_PATHS = frozenset({"checkout", "restore", "rm", "mv", "clean", "stash", "clone", "init"})


def git_answer(words: Words, cwd: str, script: Script) -> Answer | None:
    """The guard's word on one git command (`git ...` or `git-SUB ...`), or None."""
    if any(word is None for word in words):
        return ask("git is given a word that is not fixed, so sdd guard cannot tell what it does")
    fixed = [word for word in words if word is not None]
    name = os.path.basename(fixed[0])
    if name != "git":
        return _subcommand(name[4:], fixed[1:], cwd, script)
    index = 1
    while index < len(fixed):
        word = fixed[index]
        option = word.split("=", 1)[0]
        if option in ("-c", "--config-env") or word.startswith("--exec-path="):
            return deny(
                f"`git {word}` changes git's configuration, which can make git run any "
                "program; only the person changes it"
            )
        if option in ("--git-dir", "--work-tree"):
            return ask(
                f"`git {word}` points git at another repository or work tree, and sdd "
                "guard cannot tell what it writes there"
            )
        if option in _GLOBAL_VALUE:
            value = word.split("=", 1)[1] if "=" in word else _at(fixed, index + 1)
            if option == "-C" and value is not None:
                cwd = os.path.join(cwd, value)
            index += 1 if "=" in word else 2
            continue
        if word in _GLOBAL_FLAGS:
            index += 1
            continue
        if word.startswith("-"):
            return ask(f"`git {word}` is an option sdd guard does not know")
        return _subcommand(word, fixed[index + 1 :], cwd, script)
    return None


def _subcommand(sub: str, rest: list[str], cwd: str, script: Script) -> Answer | None:
    refused = _refused(sub, rest)
    if refused is not None:
        return refused
    if sub in ("rebase", "bisect", "submodule"):
        return _runs(sub, rest, cwd, script)
    if sub in ("apply", "am"):
        return _patches(sub, rest, cwd)
    if sub in ("archive", "format-patch", "worktree"):
        return _paths(sub, _outputs(sub, rest), cwd, whole=False)
    found = _discards(sub, rest)
    if found is not None or sub not in _WRITE_PATHS or (sub == "rm" and "--cached" in rest):
        return found
    operands = [w for w in rest if not w.startswith("-") or w == "-"]
    return _paths(sub, operands, cwd, whole=sub in ("checkout", "restore", "clean", "stash"))


def _refused(sub: str, rest: list[str]) -> Answer | None:
    """What the subcommand is refused or asked about for, whatever its paths."""
    if sub == "config" and not _config_reads(rest):
        return deny(
            "`git config` changes git's configuration (hooks, filters, aliases, what git "
            "runs); only the person changes it"
        )
    if sub in _FORGING:
        return ask(
            f"`git {sub}` writes git's index, objects or refs directly (or deletes what "
            "would restore them); sdd guard asks the person first"
        )
    if sub not in _PLAIN:
        return ask(
            f"`git {sub}` is not a command git ships: an alias or a program of that "
            "name, which sdd guard cannot check"
        )
    if sub in _NO_VERIFY and ("--no-verify" in rest or (sub == "commit" and "-n" in rest)):
        return deny(
            f"`git {sub} --no-verify` skips the repository's hooks, where the person's "
            "checks run; run it without --no-verify"
        )
    if sub == "init" and any(w.startswith(("--template", "--separate-git-dir")) for w in rest):
        return deny(
            "`git init --template` or `--separate-git-dir` writes git's hooks or folder "
            "from elsewhere; only the person sets them"
        )
    return None


def _config_reads(rest: list[str]) -> bool:
    operands = [w for w in rest if not w.startswith("-")]
    reading = ("--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch")
    if any(w in reading for w in rest) or (operands[:1] in (["get"], ["list"])):
        return True
    writing = (
        "--unset",
        "--unset-all",
        "--add",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "-e",
    )
    return len(operands) == 1 and not any(w in writing for w in rest)


def _discards(sub: str, rest: list[str]) -> Answer | None:
    """Commands that set aside or throw away uncommitted work across the whole tree."""
    flags = {w for w in rest if w.startswith("-")}
    short = "".join(w[1:] for w in flags if not w.startswith("--"))
    operands = [w for w in rest if not w.startswith("-")]
    if sub == "clean":
        if "n" in short or "--dry-run" in flags:
            return None
        if "x" in short or "X" in short:
            return deny(
                "`git clean -x` deletes the files git ignores, sdd's own state in "
                ".sdd/local among them; leave out -x and -X"
            )
        whole = not operands
    elif sub == "reset":
        whole = bool(flags & {"--hard", "--merge", "--keep"})
    elif sub in ("checkout", "switch"):
        whole = bool(flags & {"-f", "--force", "--discard-changes"}) and not (
            sub == "checkout" and "--" in rest
        )
    elif sub == "stash":
        whole = (not operands or operands[0] in ("push", "save")) and "--" not in rest
        if operands[:1] and operands[0] not in ("push", "save"):
            whole = False
    else:
        whole = False
    if not whole:
        return None
    shown = " ".join(["git", sub, *rest])
    return ask(
        f"`{shown}` throws away or sets aside uncommitted changes across the whole tree, the "
        "person's own in memory/ and changes/ among them"
    )


def _paths(sub: str, operands: list[str], cwd: str, whole: bool) -> Answer | None:
    for operand in operands:
        if operand in ("--", "-") or operand.startswith(":(") or operand.startswith(":!"):
            continue
        path = operand[2:] if operand.startswith(":/") else operand
        problem = write_problem(cwd, path or ".")
        if problem is not None:
            return deny(f"`git {sub}` would write {problem}")
        if whole and write_problem(cwd, path or ".", whole_tree=True) is not None:
            return ask(
                f"`git {sub} {operand}` rewrites files across a folder that holds the "
                "person's record, and would throw away her uncommitted changes there"
            )
    return None


def _outputs(sub: str, rest: list[str]) -> list[str]:
    """The paths archive, format-patch and worktree write."""
    found: list[str] = []
    for index, word in enumerate(rest):
        if word in ("-o", "--output", "--output-directory") and index + 1 < len(rest):
            found.append(rest[index + 1])
        elif word.startswith(("--output=", "--output-directory=")):
            found.append(word.split("=", 1)[1])
    if sub == "worktree" and rest[:1] == ["add"]:
        operands = [w for w in rest[1:] if not w.startswith("-")]
        found += operands[:1]
    return found


_PATCHED = re.compile(r"^(?:\+\+\+ |--- |rename to |copy to |diff --git )(.*)$", re.M)


def _patches(sub: str, rest: list[str], cwd: str) -> Answer | None:
    """`git apply` / `git am`: the patches are read, and every path they touch is checked."""
    only_reads = any(w in ("--check", "--stat", "--numstat", "--summary") for w in rest)
    if only_reads and not any(
        w in ("--apply", "--index", "--cached", "--3way", "-3") for w in rest
    ):
        return None
    files = [w for w in rest if not w.startswith("-")]
    if not files:
        return ask(f"`git {sub}` applies a patch from its input, which sdd guard cannot read")
    for name in files:
        try:
            with open(os.path.join(cwd, name), encoding="utf-8", errors="replace") as handle:
                text = handle.read(4_000_000)
        except OSError:
            return ask(f"`git {sub} {name}`: sdd guard cannot read the patch to check it")
        for line in _PATCHED.findall(text):
            for path in line.split():
                path = path[2:] if path.startswith(("a/", "b/")) else path
                if path == "/dev/null":
                    continue
                problem = write_problem(cwd, path)
                if problem is not None:
                    return deny(f"`git {sub} {name}` patches {problem}")
    return None


def _runs(sub: str, rest: list[str], cwd: str, script: Script) -> Answer | None:
    """rebase --exec CMD, bisect run CMD..., submodule foreach CMD...: the command is checked."""
    commands: list[str] = []
    if sub == "rebase":
        for index, word in enumerate(rest):
            if word in ("-x", "--exec") and index + 1 < len(rest):
                commands.append(rest[index + 1])
            elif word.startswith("--exec="):
                commands.append(word.split("=", 1)[1])
    elif sub == "bisect" and rest[:1] == ["run"]:
        commands.append(" ".join(_quoted(w) for w in rest[1:]))
    elif sub == "submodule" and "foreach" in rest:
        after = rest[rest.index("foreach") + 1 :]
        commands.append(" ".join(w for w in after if w not in ("--recursive", "-q", "--quiet")))
    for command in commands:
        found = script(command, cwd)
        if found is not None and not found.allowed:
            return found
    return None


def _quoted(word: str) -> str:
    import shlex

    return shlex.quote(word)


def _at(words: list[str], index: int) -> str | None:
    return words[index] if index < len(words) else None
