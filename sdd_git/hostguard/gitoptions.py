"""A git subcommand's words read as git reads them, and the options that make git run a program.

Git reads most subcommands' options with its parse-options: a long option may be shortened to
any prefix no other option shares (`--ext` is `--extcmd`), its value may follow `=` or be the next
word; short options may be bundled (`-yx CMD`), and the rest of the bundle after one that takes
a value is that value (`-xCMD`, `-O'sdd next'`). Read word by word, `--extcmd=` and `-x ` alone
miss all of that. `git send-email` reads its options with Perl's Getopt::Long: one dash or two,
any case, any unambiguous prefix.

The tables here name only what the git rule needs: the options that take a value (so a value is
not read as a path, and a bundle stops where git stops), and the options that run a program."""

from __future__ import annotations

from typing import NamedTuple

from sdd_git.hostguard.call import Answer, ask, deny


class Spec(NamedTuple):
    valued_short: str = ""  # short options whose value is the rest of the bundle or the next word
    optional_short: str = ""  # short options whose value, if any, is the rest of the bundle
    valued_long: frozenset[str] = frozenset()  # long options that take a value
    known_long: frozenset[str] = frozenset()  # other long options the rule looks for, exactly


def _spec(short: str = "", optional: str = "", valued: str = "", known: str = "") -> Spec:
    return Spec(short, optional, frozenset(valued.split()), frozenset(known.split()))


_STRATEGY = "--strategy --strategy-option"
SPECS: dict[str, Spec] = {
    "checkout": _spec(
        "bB", "", "--orphan --conflict --pathspec-from-file", "--pathspec-file-nul --force"
    ),
    "switch": _spec("cC", "", "--create --force-create --orphan", "--discard-changes --force"),
    "reset": _spec("", "", "--pathspec-from-file", "--hard --merge --keep --soft --mixed"),
    "restore": _spec("s", "", "--source --conflict --pathspec-from-file", "--pathspec-file-nul"),
    "rm": _spec("", "", "--pathspec-from-file", "--pathspec-file-nul --cached --dry-run"),
    "clean": _spec("e", "", "--exclude", "--dry-run"),
    "stash": _spec("m", "", "--message --pathspec-from-file", "--pathspec-file-nul"),
    "mv": _spec(),
    "clone": _spec(
        "obucj",
        "",
        "--origin --branch --upload-pack --reference --reference-if-able --separate-git-dir "
        "--depth --shallow-since --shallow-exclude --config --jobs --template --server-option "
        "--filter --bundle-uri --ref-format --revision --exec",
        "--bare --mirror",
    ),
    "init": _spec(
        "b", "", "--initial-branch --object-format --ref-format --template --separate-git-dir"
    ),
    "submodule": _spec("b", "", "--branch --name --reference --depth --ref-format"),
    "merge-file": _spec("L", "", "--marker-size --diff-algorithm", "--stdout --object-id"),
    "worktree": _spec("bB", "", "--reason"),
    "bundle": _spec("", "", "--version"),
    "archive": _spec(
        "o",
        "",
        "--output --format --prefix --remote --exec --add-file --add-virtual-file --mtime",
    ),
    "format-patch": _spec(
        "ov", "", "--output-directory --output --reroll-count --subject-prefix --in-reply-to"
    ),
    "fast-export": _spec("", "", "--export-marks --import-marks --import-marks-if-exists"),
    "apply": _spec("pC", "", "--directory --exclude --include --whitespace --build-fake-ancestor"),
    "am": _spec(
        "pC",
        "S",
        "--directory --exclude --include --whitespace --patch-format --resolvemsg",
        "--continue --skip --abort --quit --resolved --show-current-patch",
    ),
    "rebase": _spec("xsXC", "S", f"--exec --onto --whitespace {_STRATEGY}"),
    "commit": _spec(
        "mFCct", "uS", "--message --file --reuse-message --reedit-message --template", "--no-verify"
    ),
    "merge": _spec("mFsX", "S", f"--message --file --cleanup --into-name {_STRATEGY}"),
    "pull": _spec("sXoj", "S", f"--upload-pack --exec --depth --server-option {_STRATEGY}"),
    "cherry-pick": _spec("mX", "S", f"--mainline --cleanup {_STRATEGY}"),
    "revert": _spec("mX", "S", f"--mainline --cleanup {_STRATEGY}"),
    "fetch": _spec("oj", "", "--upload-pack --exec --depth --server-option"),
    "push": _spec("o", "", "--receive-pack --exec --repo --push-option"),
    "ls-remote": _spec("uo", "", "--upload-pack --exec --sort --server-option"),
    "difftool": _spec("xt", "", "--extcmd --tool"),
    "grep": _spec(
        "efABCm",
        "O",
        "--max-depth --threads --context --after-context --before-context --max-count",
        "--open-files-in-pager",
    ),
    "instaweb": _spec("dmpb", "", "--httpd --module-path --port --browser"),
}
_NO_SPEC = Spec()
# Subcommands whose options are not git's parse-options (so a bundle is not split there).
_OWN_PARSER = frozenset({"send-email", "mailsplit", "mailinfo", "bisect", "sparse-checkout"})


class Parsed(NamedTuple):
    options: list[tuple[str, str | None]]  # ("-x" or "--long" as git resolves it, its value)
    operands: list[str]  # the words that are no option nor an option's value, `--` left out
    after_dashdash: int  # how many of the operands came after `--`


# Every subcommand that has it writes the file `--output` names (the diff options' own).
_ALWAYS_VALUED = frozenset({"--output"})


def resolve(name: str, spec: Spec) -> str:
    """A long option as git reads it: itself when the rule knows it, else the one known option it
    abbreviates (git refuses an ambiguous prefix, so there is nothing to read then)."""
    known = spec.valued_long | spec.known_long | _ALWAYS_VALUED
    if name in known or len(name) < 3:
        return name
    found = [option for option in known if option.startswith(name)]
    return found[0] if len(found) == 1 else name


def parse(sub: str, words: list[str]) -> Parsed:
    spec = SPECS.get(sub, _NO_SPEC)
    valued = spec.valued_long | _ALWAYS_VALUED
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            rest = words[index:]
            return Parsed(options, operands + rest, len(rest))
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            name = resolve(name, spec)
            if not equals and name in valued and index < len(words):
                value, index = words[index], index + 1
            options.append((name, value if equals or name in valued else None))
        elif word.startswith("-") and word != "-" and sub not in _OWN_PARSER:
            for at, letter in enumerate(word[1:], start=2):
                if letter in spec.valued_short:
                    value = word[at:]
                    if not value and index < len(words):
                        value, index = words[index], index + 1
                    options.append(("-" + letter, value))
                    break
                if letter in spec.optional_short:
                    options.append(("-" + letter, word[at:] or None))
                    break
                options.append(("-" + letter, None))
        elif word.startswith("-") and word != "-":
            options.append((word, None))
        else:
            operands.append(word)
    return Parsed(options, operands, 0)


def named(parsed: Parsed, *names: str) -> list[str | None]:
    """The values of the options of these names (None for one given without a value)."""
    return [value for name, value in parsed.options if name in names]


# --- options that make git run a program -------------------------------------------------------

# (subcommand, option): each names a command git runs, through a shell, with words of git's own
# added to it: difftool's the two files it compares (one of them the file in the working tree),
# grep -O the files that match, the transports' the repository's path. So the command cannot be
# checked as a command of its own, as `rebase --exec` is: the option is refused.
_RUNS: dict[str, tuple[str, ...]] = {
    "difftool": ("-x", "--extcmd"),
    "grep": ("-O", "--open-files-in-pager"),  # without a value: her configured pager
    "instaweb": ("-d", "--httpd", "-m", "--module-path"),
    "fetch": ("--upload-pack", "--exec"),
    "pull": ("--upload-pack", "--exec"),
    "clone": ("-u", "--upload-pack", "--exec"),
    "ls-remote": ("-u", "--upload-pack", "--exec"),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
}
# What makes a new repository run hooks or read configuration of the caller's choosing.
_SETS_UP = {"clone": ("-c", "--config", "--template", "--separate-git-dir")}
# send-email (Getopt::Long): the commands it runs to find addresses and to send.
_MAIL_COMMANDS = ("to-cmd", "cc-cmd", "header-cmd", "sendmail-cmd")
_MAIL_KNOWN = (*_MAIL_COMMANDS, "to", "cc", "bcc", "smtp-server")
# Merge strategies git ships; any other `-s NAME` runs a program `git-merge-NAME` from the PATH.
_STRATEGIES = frozenset({"octopus", "ours", "recursive", "resolve", "subtree", "ort"})


def program_answer(sub: str, words: list[str]) -> Answer | None:
    """Deny an option that hands git a program to run; ask about one that may."""
    if sub == "send-email":
        return _mail_answer(words)
    parsed = parse(sub, words)
    for name, value in parsed.options:
        if name in _RUNS.get(sub, ()) and not (sub == "grep" and not value):
            return deny(
                f"`git {sub} {name}` runs a command of the caller's choosing (sdd guard cannot "
                "check it: git adds its own words to it); only the person runs git that way"
            )
        if name in _SETS_UP.get(sub, ()):
            return deny(
                f"`git {sub} {name}` sets the new repository's configuration or hooks, which "
                "can make git run any program; only the person sets them"
            )
        if sub == "instaweb" and name in ("-b", "--browser"):
            return ask(f"`git instaweb {name}` starts a program sdd guard cannot check")
        if name in ("-s", "--strategy") and sub in ("merge", "pull", "rebase"):
            return _strategy(sub, value)
        if name == "--strategy" and sub in ("cherry-pick", "revert"):
            return _strategy(sub, value)
    return None


def _strategy(sub: str, value: str | None) -> Answer | None:
    if value is not None and value in _STRATEGIES:
        return None
    return ask(
        f"`git {sub} --strategy={value}` is no strategy git ships: git runs a program named "
        f"git-merge-{value} from the PATH, which sdd guard cannot check"
    )


def _mail_answer(words: list[str]) -> Answer | None:
    for index, word in enumerate(words):
        if word == "--":
            break
        if not word.startswith("-"):
            continue
        name, equals, value = word.lstrip("-").partition("=")
        name = name.lower()  # Getopt::Long ignores case
        found = [known for known in _MAIL_KNOWN if known.startswith(name)] if name else []
        option = name if name in _MAIL_KNOWN else (found[0] if len(found) == 1 else name)
        if option in _MAIL_COMMANDS:
            return deny(
                f"`git send-email --{option}` runs a command of the caller's choosing; only the "
                "person runs git that way"
            )
        if option == "smtp-server":
            server = value if equals else (words[index + 1] if index + 1 < len(words) else "")
            if "/" in server:  # a host name holds no `/`: this names a program to send with
                return deny(
                    f"`git send-email --smtp-server={server}` runs that program to send mail; "
                    "only the person runs git that way"
                )
    return None


# --- options that skip the repository's hooks ----------------------------------------------------

_NO_VERIFY = frozenset({"commit", "merge", "push", "am", "rebase", "pull", "cherry-pick", "revert"})


def skips_hooks(sub: str, words: list[str]) -> bool:
    """`--no-verify` as git reads it (`--no-verif` too), and commit's `-n` (in `-anm` too)."""
    if sub not in _NO_VERIFY:
        return False
    parsed = parse(sub, words)
    for name, _value in parsed.options:
        if name.startswith("--no-v") and "--no-verify".startswith(name):
            return True
        if sub == "commit" and name == "-n":
            return True
    return False
