"""What writes files: redirections, cp/mv/ln/rm and friends, sort -o, dd of=, perl -i, and the
operands handed to programs nobody vouches for."""

from __future__ import annotations

import posixpath

from sdd_git.shellpolicy.findings import ShellFinding, Source, Touch, Words, Write
from sdd_git.shellpolicy.parse import (
    base_name,
    home_path,
    matching_option,
    short_flag,
    text_of,
    word_at,
)

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WRITE_REDIRECTS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")


# Programs that only read their operands (unless an option below says otherwise).
READERS = frozenset(
    {
        "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack", "wc",
        "diff", "cmp", "ls", "stat", "file", "jq", "yq", "md5sum", "sha1sum", "sha256sum",
        "sha512sum", "du", "tree", "nl", "od", "xxd", "hexdump", "strings", "cut", "comm", "join",
        "paste", "fold", "fmt", "basename", "dirname", "realpath", "readlink", "test", "[",
        "echo", "pwd", "true", "false", "column", "zcat", "bat", "which", "type", "whereis",
        "printenv", "date", "sleep", "expr", "seq", "yes", "id", "whoami", "uname", "locale",
    }
)  # fmt: skip


WRITERS_ALL = frozenset(
    {
        "touch", "rm", "rmdir", "mkdir", "truncate", "chmod", "chown", "chgrp", "shred", "unlink",
        "mkfifo", "mknod", "setfacl", "chattr", "tee", "sponge", "link", "gzip", "gunzip",
        "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd",
    }
)  # fmt: skip


WRITERS_LAST = frozenset({"cp", "install", "rsync", "scp"})


TREE_WRITERS = frozenset({"rm", "rmdir", "chmod", "chown", "chgrp", "shred", "setfacl", "chattr"})


def write_command(name: str, args: Words, finding: ShellFinding, cwd: str) -> None:
    def written(path: str | None, whole_tree: bool = False) -> None:
        if path is None:
            finding.uncertain.append(f"{name} writes to a path that is not a fixed word")
        else:
            finding.writes.append(Write(cwd, path, whole_tree, False))

    words = _copy_words(name, args)
    for folder in words.folders:
        written(folder)
    if name == "rsync":
        _rsync_writes(args, words.operands, finding, cwd)
    if name in ("gzip", "gunzip") and _restores_name(name, args):
        finding.uncertain.append(f"{name} -N writes a file named by the archive itself")
    operands, target_dir = words.operands, bool(words.folders)
    if name == "ln":
        _link(operands, finding, cwd, target_dir, _symbolic(args))
        return
    if name in ("cp", "mv", "install", "rsync", "scp", "link"):
        destination = words.folders[-1] if target_dir else (operands[-1] if operands else None)
        for arg in operands if target_dir else operands[:-1]:
            if arg is not None:
                finding.sources.append(Source(cwd, arg, destination, name == "mv"))
    if words.hard_link or name == "mv" or name in WRITERS_ALL:
        for arg in operands:  # moved and hard-linked sources leave or share the record
            written(arg, name in TREE_WRITERS)
    elif not target_dir:
        written(operands[-1] if operands else None)


# rsync options that write a file or folder of their own: a log, a batch, the folder replaced
# files are moved to, and where partial and temporary files go (relative ones to the
# destination; both readings are checked).
_RSYNC_WRITES = frozenset({"--log-file", "--write-batch", "--only-write-batch"})
_RSYNC_DIRS = frozenset({"--backup-dir", "--partial-dir", "--temp-dir", "-T"})


def _rsync_writes(args: Words, operands: Words, finding: ShellFinding, cwd: str) -> None:
    destination = operands[-1] if len(operands) > 1 else None
    for index, arg in enumerate(args):
        if arg is None or not arg.startswith("-"):
            continue
        match = matching_option(arg, _RSYNC_WRITES | _RSYNC_DIRS)
        if match is None:
            continue
        value = match[1] if match[1] is not None else word_at(args, index + 1)
        if value is None:
            finding.uncertain.append(f"rsync {match[0]} writes to a path that is not a fixed word")
            continue
        finding.writes.append(Write(cwd, value))
        if match[0] in _RSYNC_DIRS and not value.startswith("/"):
            if destination is None:
                finding.uncertain.append(f"rsync {match[0]} writes where its destination is")
            elif ":" not in destination.split("/", 1)[0]:  # not host:path
                finding.writes.append(Write(cwd, posixpath.join(destination, value)))


def _restores_name(name: str, args: Words) -> bool:
    """`gunzip -N x.gz` (`gzip -dN`) names what it writes after the name stored in the archive:
    `CLAUDE.md`, `.mcp.json`, next to the archive."""
    decompress = name == "gunzip"
    restore = False
    for arg in args:
        if arg is None:
            return True
        if arg in ("--decompress", "--uncompress"):
            decompress = True
        elif arg == "--name":
            restore = True
        elif arg.startswith("-") and not arg.startswith("--"):
            decompress = decompress or "d" in arg[1:]
            restore = restore or "N" in arg[1:]
    return decompress and restore


class _CopyWords:
    def __init__(self, hard_link: bool = False) -> None:
        self.operands: Words = []
        self.folders: Words = []  # each -t FOLDER, in order
        self.hard_link = hard_link


def _copy_words(name: str, args: Words) -> _CopyWords:
    """The operands of cp, mv, ln, rm and friends, their `-t` folders, and whether they link."""
    words = _CopyWords(hard_link=name == "link")
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            words.operands.append(None)
        elif arg == "--":
            words.operands.extend(args[index + 1 :])
            break
        elif arg.startswith("--target-directory"):
            attached = "=" in arg
            words.folders.append(arg.split("=", 1)[1] if attached else word_at(args, index + 1))
            index += 1 if attached else 2
            continue
        elif arg in ("--link", "--hard-link"):
            words.hard_link = True
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            flags = arg[1:]
            words.hard_link = words.hard_link or ("l" in flags and name == "cp")
            if "t" in flags and name in ("cp", "mv", "install", "ln"):
                attached_value = flags.split("t", 1)[1]
                words.folders.append(attached_value or word_at(args, index + 1))
                index += 1 if attached_value else 2
                continue
        elif not arg.startswith("-"):
            words.operands.append(arg)
        index += 1
    return words


def _symbolic(args: Words) -> bool:
    for arg in args:
        if arg is None or arg == "--":
            return False
        if arg == "--symbolic" or (arg[:1] == "-" and arg[1:2] != "-" and "s" in arg):
            return True
    return False


def _link(
    operands: Words, finding: ShellFinding, cwd: str, target_dir: bool, symbolic: bool
) -> None:
    """`ln [-s] TARGET LINK`: the link is written, and the target must not be the record: a
    link into it made now would be written through later in the same command, and a hard link
    shares the record's file itself. A symbolic link's target is read from the link's folder, a
    hard link's from where the command runs."""
    if not operands or any(o is None for o in operands):
        finding.uncertain.append("ln gets an operand that is not a fixed word")
        return
    names = [o for o in operands if o is not None]
    link = names[-1] if len(names) > 1 and not target_dir else "."
    targets = names[:-1] if len(names) > 1 and not target_dir else names
    finding.writes.append(Write(cwd, link))
    link_dir = posixpath.dirname(posixpath.join(cwd, link)) if link != "." else cwd
    link_path = posixpath.normpath(posixpath.join(cwd, link))
    for target in targets:
        seen_from = target if target.startswith("/") else posixpath.join(link_dir, target)
        if not symbolic:
            seen_from = posixpath.join(cwd, target)
        finding.writes.append(Write(".", posixpath.normpath(seen_from), True, False))
        finding.sources.append(Source(".", posixpath.normpath(seen_from), link_path, False))


def touched(args: Words, finding: ShellFinding, cwd: str) -> None:
    """Operands of a program nobody can vouch for: one inside the record makes it uncertain."""
    for arg in args:
        if arg is None:
            continue
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if arg.startswith("-o") and len(arg) > 2:
            value = arg[2:]
        if value and not value.startswith("-"):
            finding.touches.append(Touch(cwd, value))


def reader_writes(name: str, args: Words, finding: ShellFinding, cwd: str) -> bool:
    """A reader told to write: `yq -i` edits its files in place, and `xxd IN OUT` (or `xxd -r
    IN OUT`) writes its second operand. True when the command was one of these."""
    if name == "yq" and any(
        a is not None and (a in ("--inplace", "--in-place") or short_flag(a, "i")) for a in args
    ):
        operands = [a for a in args if a is None or not a.startswith("-")]
        for operand in operands[1:]:  # the first is the expression
            if operand is None:
                finding.uncertain.append("yq -i edits a path that is not a fixed word")
            else:
                finding.writes.append(Write(cwd, operand))
        return True
    if name == "yq" and any(
        a is not None
        and (a == "--split-exp" or a.startswith("--split-exp=") or (short_flag(a, "s")))
        for a in args
    ):
        # mikefarah's yq: `-s EXPR` writes each document to the file EXPR names.
        finding.uncertain.append("yq -s writes files named by an expression")
        return True
    if name == "file" and any(a == "--compile" or short_flag(a, "C") for a in args):
        _file_compile(args, finding, cwd)
        return True
    if name == "xxd":
        operands = [a for a in args if a is None or not a.startswith("-") or a == "-"]
        if len(operands) > 1:
            out = operands[1]
            if out is None:
                finding.uncertain.append("xxd writes to a path that is not a fixed word")
            elif out != "-":
                finding.writes.append(Write(cwd, out))
            return True
    return False


def _file_compile(args: Words, finding: ShellFinding, cwd: str) -> None:
    """`file -C -m NAME` writes NAME's last part with `.mgc` added, in the current folder
    (`magic.mgc` with no -m)."""
    magic: list[str | None] = []
    for index, arg in enumerate(args):
        match = matching_option(arg, frozenset({"-m", "--magic-file"})) if arg else None
        if match is not None:
            magic.append(match[1] if match[1] is not None else word_at(args, index + 1))
    for value in magic or ["magic"]:
        if value is None:
            finding.uncertain.append("file -C writes a file named after a word that is not fixed")
            continue
        for part in value.split(":"):
            finding.writes.append(Write(cwd, posixpath.basename(part.rstrip("/")) + ".mgc"))


def perl_in_place(args: Words, finding: ShellFinding, cwd: str) -> None:
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg is not None and arg.startswith("-") and arg[-1:] in ("e", "E"):
            skip_next = True  # the next word is the program
            continue
        if arg is None:
            finding.uncertain.append("perl -i edits a path that is not a fixed word")
        elif not arg.startswith("-"):
            finding.writes.append(Write(cwd, arg))


def sort_command(args: Words, finding: ShellFinding, cwd: str) -> None:
    """`sort -o FILE` writes FILE; its other operands are only read."""
    index = 0
    operands: Words = []
    while index < len(args):
        arg = args[index]
        match = (
            matching_option(arg, frozenset({"-o", "--output", "-T", "--temporary-directory"}))
            if arg
            else None
        )
        if match is not None:
            value = match[1]
            if value is None:
                value = args[index + 1] if index + 1 < len(args) else None
                index += 1
            if value is None:
                finding.uncertain.append("sort writes to a path that is not a fixed word")
            elif match[0] in ("-o", "--output"):
                finding.writes.append(Write(cwd, value))
            index += 1
            continue
        if arg is None or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        index += 1
    touched(operands, finding, cwd)


def writes_operands(inner: Words) -> bool:
    name = base_name(inner[0] or "")
    return (
        name in WRITERS_ALL
        or name in ("mv", "ln", "dd")
        or (name in ("sed", "perl") and any(short_flag(a, "i") for a in inner))
    )


def file_redirect(node: Any, finding: ShellFinding, cwd: str) -> None:
    operator = next((c.type for c in node.children if not c.is_named), "")
    if operator not in WRITE_REDIRECTS:
        return
    destination = node.child_by_field_name("destination")
    if destination is None:
        return
    target = text_of(destination)
    if target is None:
        finding.uncertain.append("output is redirected to a path that is not a fixed word")
        home = home_path(destination)  # `> ~/x` writes the person's home outside a sandbox
        if home is not None:
            finding.writes.append(Write(cwd, home))
        return
    if operator == ">&" and (target.isdigit() or target == "-"):
        return  # 2>&1 and friends duplicate a descriptor; they write no file
    if target in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"):
        return
    finding.writes.append(Write(cwd, target))


def dd_command(args: Words, finding: ShellFinding, cwd: str) -> None:
    for arg in args:
        if arg is None:
            finding.uncertain.append("dd gets an operand that is not a fixed word")
        elif arg.startswith("of="):
            finding.writes.append(Write(cwd, arg[3:]))
