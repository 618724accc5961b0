"""What another agent's git command may do in a product of sdd's.

Her host's approval is her own: an agent may commit, push, tag, branch, merge, rebase and pull.
Options are read as git reads them (`sdd_git.hostguard.gitoptions`: bundles, attached values,
shortened long options). What an agent may not do, by the guard's rule:

- change git's configuration or what git runs: `git config` (but its reads), `git -c`,
  `--config-env`, `--exec-path=...`, `git init`/`clone` `--template` or `--separate-git-dir`,
  `clone -c`, `git lfs install`/`update`;
- hand git a program of its own to run: `difftool -x`, `grep -O<pager>`, `instaweb --httpd`,
  send-email's `--to-cmd`/`--cc-cmd`/`--header-cmd`/`--sendmail-cmd` or an `--smtp-server`
  path, `--upload-pack`/`--receive-pack`/`--exec` of the transports and `archive --remote`
  (git adds words of its own to these, so they cannot be checked as commands);
- skip the repository's hooks: `--no-verify` (shortened too) and `git commit -n` (in `-anm`);
- write into a protected path by git: what `checkout`, `restore`, `rm`, `clean` and
  `stash push` are given as pathspecs (patterns and magic matched against the protected paths,
  `sdd_git.hostguard.gitpaths`; `--pathspec-from-file` read), `mv`, the folder `init`, `clone`,
  `submodule add` and `worktree add`/`move` make (a clone's or submodule's default one too),
  `--output`, `archive -o`, `format-patch -o`, `bundle create`, `merge-file` without `-p`,
  `mailsplit -o`, `mailinfo`, `fast-export --export-marks`, `apply --build-fake-ancestor`,
  `lfs track` (`.gitattributes`), and `apply` / `am` of a patch that touches one (the patch
  files are read whole, past `-p` and `--directory`);
- `git clean -x` or `-X`, which deletes ignored files: sdd's own state in `.sdd/local` among
  them; `git rm` of the whole tree.

Asked about (the person decides): what sets aside or discards uncommitted work across the whole
tree, hers in `memory/` included (`reset --hard`, `checkout -f`, `checkout .`, `restore .`,
`stash`, `clean` of the whole tree, a pathspec of exclusions alone, `switch --discard-changes`),
`stash clear`/`drop`, `sparse-checkout` (but `list`), `maintenance`, `lfs migrate`;
`--git-dir` and `--work-tree`; plumbing that forges the index, objects or refs, or deletes what
could restore them (`update-index`, `update-ref`, `commit-tree`, `gc`, `prune`, ...); a merge
strategy git does not ship (a `git-merge-NAME` program); and a subcommand git does not ship (an
alias or an external program). A pathspec or patch file the guard cannot read is asked about.
The commands `rebase --exec`, `bisect run` and `submodule foreach` run are checked as commands
of their own."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from sdd_git.hostguard.call import Answer, ask, deny

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.hostguard.gitoptions import Parsed

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
_PATHSPEC_FLAGS = frozenset(
    {"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs"}
)
# Subcommands that write the working tree's files their pathspecs name.
_PATHSPECS = frozenset({"checkout", "restore", "rm", "clean", "stash"})
_STASH_VERBS = frozenset(
    {"push", "save", "list", "show", "pop", "apply", "branch", "clear", "drop", "create", "store"}
)


def git_answer(words: Words, cwd: str, script: Script) -> Answer | None:
    """The guard's word on one git command (`git ...` or `git-SUB ...`), or None."""
    if any(word is None for word in words):
        return ask("git is given a word that is not fixed, so sdd guard cannot tell what it does")
    fixed = [word for word in words if word is not None]
    name = os.path.basename(fixed[0])
    if name != "git":
        return _subcommand(name[4:], fixed[1:], cwd, script, frozenset())
    flags: set[str] = set()
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
            if word in _PATHSPEC_FLAGS:
                flags.add(word)
            index += 1
            continue
        if word.startswith("-"):
            return ask(f"`git {word}` is an option sdd guard does not know")
        return _subcommand(word, fixed[index + 1 :], cwd, script, frozenset(flags))
    return None


def _subcommand(
    sub: str, rest: list[str], cwd: str, script: Script, flags: frozenset[str]
) -> Answer | None:
    from sdd_git.hostguard.gitoptions import program_answer
    from sdd_git.hostguard.gitrepo import repository_answer

    found = _refused(sub, rest) or program_answer(sub, rest)
    found = found or repository_answer(sub, rest, cwd)
    if found is None and sub in ("rebase", "bisect", "submodule"):
        found = _runs(sub, rest, cwd, script)
    if found is not None:
        return found
    if sub in ("apply", "am"):
        return _patches(sub, rest, cwd)
    found = _discards(sub, rest)
    if found is not None:
        return found
    if sub in _PATHSPECS:
        return _pathspecs(sub, rest, cwd, flags)
    return _paths(sub, _outputs(sub, rest), cwd)


def _refused(sub: str, rest: list[str]) -> Answer | None:
    """What the subcommand is refused or asked about for, whatever its paths."""
    from sdd_git.hostguard.gitoptions import named, parse, skips_hooks

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
    if skips_hooks(sub, rest):
        return deny(
            f"`git {sub} --no-verify` skips the repository's hooks, where the person's "
            "checks run; run it without --no-verify"
        )
    if sub == "init" and named(parse(sub, rest), "--template", "--separate-git-dir"):
        return deny(
            "`git init --template` or `--separate-git-dir` writes git's hooks or folder "
            "from elsewhere; only the person sets them"
        )
    verb = next((word for word in rest if not word.startswith("-")), "")
    if sub == "sparse-checkout" and verb not in ("list", "check-rules"):
        return ask(
            f"`git sparse-checkout {verb}` takes files off the disk or puts them back across "
            "the whole tree, the person's record among them; sdd guard asks her first"
        )
    if sub == "maintenance":
        return ask(
            "`git maintenance` changes her git configuration and her system's schedule, or "
            "prunes what could restore lost work; sdd guard asks the person first"
        )
    if sub == "stash" and verb in ("clear", "drop"):
        return ask(
            f"`git stash {verb}` deletes work set aside, perhaps the person's own; sdd guard "
            "asks her first"
        )
    if sub == "lfs":
        return _lfs(verb, rest)
    return None


def _lfs(verb: str, rest: list[str]) -> Answer | None:
    if verb in ("install", "uninstall", "update"):
        return deny(
            f"`git lfs {verb}` changes git's configuration and the repository's hooks; only "
            "the person changes them"
        )
    after = rest[rest.index(verb) + 1 :] if verb else []
    if verb in ("track", "untrack") and any(not word.startswith("-") for word in after):
        return deny(
            f"`git lfs {verb}` writes .gitattributes, which tells git what to run on which "
            "files; only the person changes it"
        )
    if verb == "migrate":
        return ask("`git lfs migrate` rewrites the history, the person's record's included")
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
    from sdd_git.hostguard.gitoptions import named, parse

    parsed = parse(sub, rest)
    names = {name for name, _value in parsed.options}
    if sub == "clean":
        if names & {"-n", "--dry-run"}:
            return None
        if names & {"-x", "-X"}:
            return deny(
                "`git clean -x` deletes the files git ignores, sdd's own state in "
                ".sdd/local among them; leave out -x and -X"
            )
        whole = not parsed.operands
    elif sub == "reset":
        whole = bool(names & {"--hard", "--merge", "--keep"})
    elif sub in ("checkout", "switch"):
        whole = bool(names & {"-f", "--force", "--discard-changes"}) and not (
            sub == "checkout" and "--" in rest
        )
    elif sub == "stash":
        verb, specs = _stash_specs(parsed)
        whole = verb == "save" or (verb == "push" and not specs)
        whole = whole and not named(parsed, "--pathspec-from-file")
    else:
        whole = False
    if not whole:
        return None
    shown = " ".join(["git", sub, *rest])
    return ask(
        f"`{shown}` throws away or sets aside uncommitted changes across the whole tree, the "
        "person's own in memory/ and changes/ among them"
    )


def _stash_specs(parsed: Parsed) -> tuple[str, list[str]]:
    """`git stash`'s verb (push when none is given) and the pathspecs of a push."""
    before = len(parsed.operands) - parsed.after_dashdash
    first = parsed.operands[0] if before else ""
    if first in _STASH_VERBS:
        return first, parsed.operands[1:]
    return "push", parsed.operands


def _pathspecs(sub: str, rest: list[str], cwd: str, flags: frozenset[str]) -> Answer | None:
    """checkout, restore, rm, clean and stash push: the files their pathspecs name."""
    from sdd_git.hostguard.gitoptions import named, parse
    from sdd_git.hostguard.gitpaths import pathspecs_answer, specs_from_file

    parsed = parse(sub, rest)
    if sub == "rm" and named(parsed, "--cached"):
        return None  # the index only: the file stays on the disk
    words = parsed.operands
    # checkout [<commit>] [--] <pathspec>...: the first word before `--` may be a commit.
    revision = sub == "checkout" and len(words) > parsed.after_dashdash
    if sub == "stash":
        verb, words = _stash_specs(parsed)
        if verb != "push":
            return None
    nul = bool(named(parsed, "--pathspec-file-nul"))
    for name in named(parsed, "--pathspec-from-file"):
        found = specs_from_file(name or "-", nul, cwd)
        if isinstance(found, Answer):
            return found
        words = [*words, *found]
    # A pathspec that takes the whole tree: rm deletes the record with it; the others rewrite
    # or set aside her uncommitted work there, which she may mean.
    whole = "deny" if sub == "rm" else "ask"
    return pathspecs_answer(sub, words, cwd, flags, whole, revision)


def _paths(sub: str, written: list[str], cwd: str) -> Answer | None:
    from sdd_git.hostguard.paths import write_problem

    for path in written:
        if path == "-":
            continue
        problem = write_problem(cwd, path or ".")
        if problem is not None:
            return deny(f"`git {sub}` would write {problem}")
    return None


def _outputs(sub: str, rest: list[str]) -> list[str]:
    """The paths a subcommand other than those of pathspecs writes: files it is told to write
    (`--output`, archive and format-patch `-o`, `bundle create`, fast-export's marks, mailsplit's
    and mailinfo's), the folder a repository or work tree is made in, what merge-file and mv
    write."""
    from sdd_git.hostguard.gitoptions import named, parse

    parsed = parse(sub, rest)
    found = [value for value in named(parsed, "--output") if value]
    operands = parsed.operands
    if sub in ("archive", "format-patch"):
        found += [value for value in named(parsed, "-o", "--output-directory") if value]
    elif sub == "fast-export":
        found += [value for value in named(parsed, "--export-marks") if value]
    elif sub == "mailsplit":
        for index, word in enumerate(rest):
            if word.startswith("-o"):
                found += [word[2:] or _at(rest, index + 1) or "."]
    elif sub == "mailinfo":
        found += operands[:2]
    elif sub == "worktree" and operands[:1] == ["add"]:
        found += operands[1:]  # its folder (and the commit, harmless to check as a path)
    elif sub == "worktree" and operands[:1] == ["move"]:
        found += operands[2:3]
    elif sub == "bundle" and operands[:1] == ["create"]:
        found += operands[1:2]
    elif sub == "merge-file" and not named(parsed, "-p", "--stdout", "--object-id"):
        found += operands[:1]  # without -p, the result is written over the first file
    elif sub == "init":
        found += operands[:1] or ["."]
    elif sub == "clone" and operands:
        bare = bool(named(parsed, "--bare", "--mirror"))
        found += operands[1:2] or _humanish(operands[0], bare)
    elif sub == "submodule" and "add" in operands:
        after = operands[operands.index("add") + 1 :]
        found += after[1:2] or (_humanish(after[0], False) if after else [])
    elif sub == "mv":
        found += operands  # what is moved away, and where to
    return found


def _humanish(url: str, bare: bool) -> list[str]:
    """The folder git makes for a repository when none is given: the URL's last part."""
    name = url.rstrip("/")
    for tail in ("/.git", ".git", ".bundle"):
        name = name.removesuffix(tail)
    name = name.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "."
    return [name, name + ".git"] if bare else [name]


_PATCHED = re.compile(r"^(\+\+\+ |--- |rename from |rename to |copy to |diff --git )(.*)$", re.M)


def _patches(sub: str, rest: list[str], cwd: str) -> Answer | None:
    """`git apply` / `git am`: the patches are read, and every path they touch is checked where
    git would write it (past `-p` and `--directory`, from the command's folder or the top)."""
    from sdd_git.hostguard.gitoptions import named, parse
    from sdd_git.hostguard.gitpaths import git_top, read_small

    parsed = parse(sub, rest)
    found = _paths(sub, [v for v in named(parsed, "--build-fake-ancestor") if v], cwd)
    if found is not None:
        return found
    names = {name for name, _value in parsed.options}
    reading = {"--check", "--stat", "--numstat", "--summary"}
    if names & reading and not names & {"--apply", "--index", "--cached", "--3way", "-3"}:
        return None
    # An am session goes on with the patches it split when it started (checked then), in
    # git's own folder, where no agent writes.
    going_on = {"--continue", "--skip", "--abort", "--quit", "--resolved", "-r"}
    if sub == "am" and names & (going_on | {"--show-current-patch"}):
        return None
    files = parsed.operands
    if not files or "-" in files:
        return ask(f"`git {sub}` applies a patch from its input, which sdd guard cannot read")
    levels = [value for value in named(parsed, "-p") if value is not None]
    if not all(level.isdigit() for level in levels):
        return ask(f"`git {sub} -p` is given a level sdd guard cannot read")
    strip = int(levels[-1]) if levels else 1
    folders = named(parsed, "--directory")
    folder = folders[-1] if folders else None
    top = git_top(cwd)
    for name in files:
        text = read_small(os.path.join(cwd, name))
        if text is None:
            return ask(f"`git {sub} {name}`: sdd guard cannot read the patch to check it")
        for kind, line in _PATCHED.findall(text):
            level = strip - 1 if kind.startswith(("rename", "copy")) else strip
            for path in _patch_paths(kind, line, level):
                written = os.path.join(folder, path) if folder else path
                for where in (written, os.path.join(top, written) if top else written):
                    problem = _patched_problem(cwd, where)
                    if problem is not None:
                        return deny(f"`git {sub} {name}` patches {problem}")
    return None


def _patched_problem(cwd: str, path: str) -> str | None:
    from sdd_git.hostguard.paths import write_problem

    return None if path in ("/dev/null", "") else write_problem(cwd, path)


def _patch_paths(kind: str, line: str, level: int) -> list[str]:
    """The paths a patch's header line could name, as written, past `a/` or `b/`, and past
    `level` folders: each of its words (a C-quoted one unquoted, as git reads it), and for a
    `---`/`+++` line the whole name up to a tab (it may hold spaces)."""
    words = _header_words(line)
    if kind in ("--- ", "+++ "):
        words.append(line.split("\t", 1)[0].strip())
    found: list[str] = []
    for word in words:
        parts = word.split("/")
        for path in (
            word,
            word[2:] if word.startswith(("a/", "b/")) else word,
            "/".join(parts[level:]) if 0 < level < len(parts) else word,
        ):
            if path not in found:
                found.append(path)
    return found


def _header_words(line: str) -> list[str]:
    import codecs

    words: list[str] = []
    index = 0
    while index < len(line):
        if line[index].isspace():
            index += 1
        elif line[index] == '"':
            end = index + 1
            while end < len(line) and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            raw = codecs.escape_decode(line[index + 1 : end].encode("utf-8"))[0]
            words.append(bytes(raw).decode("utf-8", errors="replace"))
            index = end + 1
        else:
            end = index
            while end < len(line) and not line[end].isspace():
                end += 1
            words.append(line[index:end])
            index = end
    return words


def _runs(sub: str, rest: list[str], cwd: str, script: Script) -> Answer | None:
    """rebase --exec CMD, bisect run CMD..., submodule foreach CMD...: the command is checked."""
    from sdd_git.hostguard.gitoptions import named, parse

    commands: list[str] = []
    if sub == "rebase":
        commands += [value or "" for value in named(parse(sub, rest), "-x", "--exec")]
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
