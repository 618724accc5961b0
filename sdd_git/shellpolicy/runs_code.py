"""Which simple commands run code: an interpreter given code or a script, a build or test runner,
an archive extractor, `patch` and editing scripts, and a program that lives outside the system's
folders.

Such a command does whatever the code it runs says, and a role can write that code (a
`conftest.py`, a `Makefile`, a `package.json` script, a file in an archive) before it asks. So it
is never allowed by a saved rule unless a working sandbox holds it: the words on the stop say
what runs, not what it will do. Only the words are read here; `guard` adds what needs the product
folder (a program inside it named by an absolute path, or one in its `node_modules/.bin`).

The stance is the same as the shell classifier's: a tool is quiet (runs nothing of the
product's) only when its words say so plainly; anything else runs code.
"""

from __future__ import annotations

import posixpath
import re

# Asking a program only for its version or its help runs nothing of the product's.
INFO_FLAGS = frozenset(
    {"--version", "-version", "-V", "-VV", "--help", "-help", "-h", "-?", "--help-all"}
)
# Programs where `-v` alone is the version too (for python or pytest it is "verbose").
VERSION_V = frozenset(
    {
        "node", "nodejs", "perl", "ruby", "php", "lua", "luajit", "npm", "npx", "yarn", "pnpm",
        "bun", "deno", "gradle", "gradlew", "mvn", "mvnw", "make", "gmake", "java",
    }
)  # fmt: skip
# Languages: every use but the version or help runs code (code on the command line, a script,
# or code read from the input when nothing else is named).
INTERPRETERS = frozenset(
    {
        "perl", "ruby", "irb", "jruby", "node", "nodejs", "deno", "bun", "tsx", "ts-node", "php",
        "lua", "luajit", "Rscript", "R", "julia", "tclsh", "wish", "expect", "guile", "racket",
        "swift", "groovy", "java", "jshell", "kotlin", "scala", "clojure", "clj", "bb", "elixir",
        "iex", "erl", "escript", "ocaml", "runghc", "runhaskell", "ghci", "crystal", "osascript",
        "pwsh", "powershell", "jython", "ipython", "octave", "sbcl", "clisp", "gst", "qjs", "dc",
        "m4", "gdb", "lldb", "jjs", "rhino", "csh", "tcsh", "xonsh", "nu", "elvish", "rc", "yash",
    }
)  # fmt: skip
# Interpreters with a version in their name: python3.12, perl5.36, lua5.4, ruby3.3, php8.2.
_VERSIONED = re.compile(r"(python|pypy|perl|ruby|php|lua|luajit|tclsh|wish|guile|node)[0-9.]*")
# Clients whose input may hold a shell escape (`.shell`, `\!`, `system`).
SHELL_ESCAPES = frozenset({"sqlite3", "psql", "mysql", "mariadb", "duckdb"})
# Programs that run a command given in their arguments, which is not followed here (unlike
# `env` or `timeout`): what they run is not known, so it counts as code.
RUNS_ITS_ARGUMENTS = frozenset(
    {
        "valgrind", "perf", "hyperfine", "nodemon", "watchexec", "caffeinate", "arch",
        "xvfb-run", "dbus-run-session", "fakeroot", "faketime", "proot", "catchsegv",
        "torsocks", "proxychains", "proxychains4", "nix-shell", "direnv", "conda", "mamba",
        "micromamba", "scl", "devbox", "asdf", "mise", "pyenv", "rbenv", "nvm", "newgrp",
        "gtimeout", "systemd-inhibit", "tmux", "screen", "nix",
    }
)  # fmt: skip
# Builtins bash runs itself, whatever programs of that name the product holds.
BASH_BUILTINS = frozenset(
    {
        "echo", "printf", "cd", "pwd", "test", "[", "true", "false", ":", "read", "export",
        "set", "unset", "shift", "exit", "return", "local", "type", "command", "builtin", "wait",
        "kill", "umask", "ulimit", "times", "getopts", "jobs", "fg", "bg", "disown", "suspend",
        "dirs", "pushd", "popd", "help", "history", "logout", "break", "continue", "readonly",
    }
)  # fmt: skip
# Editors that take a script of editing commands: they write any file and run shell commands.
EDITORS = frozenset({"ed", "red", "ex", "vi", "vim", "nvim", "view", "vimdiff", "emacs"})
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "original-awk"})
# In an awk program these run commands, write files, read the network or load code.
_AWK_ACTS = re.compile(r"system|getline|[|>@]")
# awk options a plain filter uses; any other may name a program file or a file to write.
_AWK_PLAIN = frozenset(
    {"-b", "--characters-as-bytes", "-c", "--traditional", "-P", "--posix", "-r",
     "--re-interval", "-S", "--sandbox", "-N", "--use-lc-numeric", "-n", "--non-decimal-data"}
)  # fmt: skip
# Build and test runners (and tools that load code from the product's config): every use but
# the version or help runs the product's build files, tests, hooks or plugins.
BUILD_RUNNERS = frozenset(
    {
        "make", "gmake", "bmake", "pmake", "cmake", "ctest", "ninja", "samu", "meson", "muon",
        "bazel", "bazelisk", "buck", "buck2", "pants", "scons", "waf", "ant", "mvn", "mvnw",
        "gradle", "gradlew", "sbt", "mill", "lein", "rake", "just", "task", "go-task",
        "pre-commit", "tox", "nox", "pytest", "py.test", "nosetests", "nose2", "trial", "behave",
        "coverage", "mypy", "pylint", "flake8", "sphinx-build", "mkdocs", "uvx", "npx", "pnpx",
        "bunx", "jest", "vitest", "mocha", "ava", "karma", "playwright", "cypress", "gulp",
        "grunt", "lerna", "nx", "turbo", "webpack", "vite", "rollup", "parcel", "eslint",
        "prettier", "babel", "rspec", "cucumber", "rails", "rubocop", "jekyll", "phpunit",
        "pest", "phpstan", "mix", "rebar3", "gleam", "dune", "cabal", "stack", "nimble", "conan",
        "xcodebuild", "autoreconf", "autoconf", "automake", "qmake", "premake5", "xmake",
        "ansible-playbook", "terraform", "tofu", "vagrant", "earthly",
    }
)  # fmt: skip
# Tools with subcommands, and the subcommands that only report: any other (and, for most, none
# at all) runs the build, the tests or a package's install scripts. The subcommand must come
# first; an option before it could hide which one runs, so that counts as running code.
QUIET_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "npm": frozenset(
        {
            "view", "info", "show", "v", "ls", "list", "la", "ll", "outdated", "search", "s",
            "se", "find", "help", "root", "prefix", "bin", "whoami", "ping", "docs", "repo",
            "bugs", "home", "explain", "why", "query", "fund",
        }
    ),
    "yarn": frozenset({"info", "list", "why", "outdated", "help", "licenses"}),
    "pnpm": frozenset({"list", "ls", "ll", "la", "why", "outdated", "view", "info", "help"}),
    "pip": frozenset(
        {"list", "show", "freeze", "check", "help", "cache", "debug", "hash", "inspect", "index"}
    ),
    "uv": frozenset({"version", "help", "cache", "python", "self"}),
    "pipx": frozenset({"list", "environment", "help"}),
    "poetry": frozenset({"show", "check", "version", "help", "about", "list", "search"}),
    "pipenv": frozenset({"graph", "--where", "--venv", "--py", "requirements", "scripts"}),
    "hatch": frozenset({"version", "status", "help"}),
    "pdm": frozenset({"list", "show", "info", "help", "search", "outdated"}),
    "cargo": frozenset(
        {
            "version", "help", "search", "metadata", "tree", "locate-project", "pkgid",
            "verify-project", "fetch", "owner", "yank", "new", "init",
        }
    ),
    "dotnet": frozenset({"help", "--info", "--list-sdks", "--list-runtimes", "sln"}),
    "gem": frozenset(
        {
            "list", "search", "info", "specification", "contents", "environment", "env", "help",
            "which", "query", "dependency", "outdated", "sources",
        }
    ),
    "bundle": frozenset({"list", "show", "info", "outdated", "help", "version", "platform"}),
    "composer": frozenset(
        {
            "show", "info", "list", "outdated", "licenses", "depends", "why", "why-not",
            "search", "help", "validate", "diagnose", "fund", "suggests", "about",
        }
    ),
    "docker": frozenset(
        {"ps", "images", "version", "info", "inspect", "logs", "stats", "top", "search",
         "history", "port", "diff", "help"}
    ),
}  # fmt: skip
for _alias, _same in (("pip3", "pip"), ("podman", "docker"), ("nerdctl", "docker")):
    QUIET_SUBCOMMANDS[_alias] = QUIET_SUBCOMMANDS[_same]
# Of those, the ones that only print their usage when given nothing at all.
BARE_IS_HELP = frozenset(
    {"npm", "pnpm", "pip", "pip3", "uv", "pipx", "poetry", "pipenv", "hatch", "pdm", "cargo",
     "dotnet", "gem", "composer", "docker", "podman", "nerdctl"}
)  # fmt: skip
# Tools where only some subcommands run code, wherever they sit among the words.
CODE_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "go": frozenset({"build", "run", "test", "generate", "install", "vet", "tool", "get"}),
}
TARS = frozenset({"tar", "gtar", "bsdtar"})
# tar options that make it run a program, whatever it does with the archive.
_TAR_RUNS = (
    "--to-command", "--checkpoint-action", "--use-compress-program", "--info-script",
    "--new-volume-script", "--rsh-command", "--rmt-command",
)  # fmt: skip
# Archive tools: name -> the first words (their "command") that extract.
_EXTRACT_COMMANDS = {
    "7z": "xe", "7za": "xe", "7zr": "xe", "7zz": "xe", "unrar": "xe", "ar": "x", "jar": "x"
}  # fmt: skip
# Extractors whatever their arguments (bar listing options).
ALWAYS_EXTRACT = frozenset({"unar", "unsquashfs", "aunpack", "rpm2cpio", "cabextract"})
# Where the system keeps its programs: an absolute path elsewhere is a program someone wrote.
SYSTEM_FOLDERS = (
    "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/", "/libexec/", "/opt/homebrew/",
    "/opt/local/", "/nix/store/", "/run/current-system/sw/", "/snap/bin/", "/System/",
)  # fmt: skip
# Folders of a product where its own programs live (installed packages, the venv, scripts).
PRODUCT_PROGRAM_FOLDERS = ("node_modules/.bin", ".venv/bin", "bin")


def runs_code(head: str, args: list[str | None]) -> list[str]:
    """Why the simple command `head args...` runs code, in plain words; empty when it does not.

    `args` are the static words (None: not a fixed word), after wrappers were taken off."""
    name = posixpath.basename(head)
    reasons: list[str] = []
    where = program_outside_system(head)
    if where:
        reasons.append(where)
    known = [a for a in args if a is not None]
    info_only = bool(args) and len(known) == len(args) and all(_is_info(name, a) for a in known)
    if info_only:
        return reasons
    if name in INTERPRETERS or _VERSIONED.fullmatch(name):
        reasons.append(_interpreter(name, args))
    elif name in AWKS:
        reasons.extend(_awk(name, args))
    elif name in SHELL_ESCAPES:
        reasons.append(f"{name} can run shell commands its input or arguments hold")
    elif name in RUNS_ITS_ARGUMENTS:
        reasons.append(f"{name} runs a command given in its arguments, which is not followed")
    elif name in EDITORS:
        reasons.append(f"{name} runs an editing script, which can write any file and run commands")
    elif name in BUILD_RUNNERS:
        reasons.append(f"{name} runs the product's build, tests or the code its config names")
    elif name in QUIET_SUBCOMMANDS:
        reasons.extend(_subcommand(name, args))
    elif name in CODE_SUBCOMMANDS:
        sub = next((a for a in args if a is None or a in CODE_SUBCOMMANDS[name]), "")
        if sub != "":
            reasons.append(f"{name} {sub or '...'} builds and runs the product's code")
    elif name in ("patch", "quilt"):
        reasons.append(f"{name} applies a patch, which can write any file in the product")
    elif name in ("source", "."):
        script = args[0] if args else None
        reasons.append(f"{name} runs the script {script or '(not a fixed word)'} in the shell")
    else:
        reasons.extend(_extractor(name, args))
    return reasons


def program_outside_system(head: str) -> str | None:
    """A command named by a path: relative ones live in the product, absolute ones outside the
    system's folders were put there by someone (perhaps a role)."""
    if "/" not in head:
        return None
    if not head.startswith("/"):
        return f"{head} is a program in the product folder"
    normal = posixpath.normpath(head)
    if normal.startswith(SYSTEM_FOLDERS):
        return None
    return f"{head} is a program outside the system's folders"


def _is_info(name: str, arg: str) -> bool:
    return arg in INFO_FLAGS or (arg == "-v" and name in VERSION_V)


_CODE_FLAGS = frozenset({"-c", "-e", "-E", "-r", "-p", "--eval", "--print"})


def _interpreter(name: str, args: list[str | None]) -> str:
    first = next((a for a in args if a is None or not a.startswith("-") or a == "-"), "")
    if any(a in _CODE_FLAGS for a in args):
        return f"{name} runs code given on the command line"
    if name.startswith(("python", "pypy")) and any(
        a is not None and a.startswith("-") and not a.startswith("--") and "m" in a for a in args
    ):
        # The product folder is on sys.path, so any module name may be the product's own file.
        return f"{name} -m runs a module, which may be one in the product folder"
    if first is None:
        return f"{name} runs a script that is not a fixed word"
    if first and first != "-":
        return f"{name} runs {first}"
    return f"{name} runs a script or code from its input"


def _awk(name: str, args: list[str | None]) -> list[str]:
    """awk given a program that runs commands, writes files or loads code; a plain filter
    (`awk '{print $1}'`) only reads and prints. Options outside the few a filter uses (a
    program file, an extension, a profile or dump written somewhere) count as running code."""
    program: str | None = ""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            return [f"{name} gets a word that is not fixed, which may be its program"]
        if arg in ("-e", "--source"):
            program = args[index + 1] if index + 1 < len(args) else None
            break
        if arg in ("-v", "--assign", "-F", "--field-separator"):
            index += 2
            continue
        if arg == "--":
            program = args[index + 1] if index + 1 < len(args) else ""
            break
        if arg.startswith(("-v", "-F", "--assign=", "--field-separator=")) or arg in _AWK_PLAIN:
            index += 1
            continue
        if arg.startswith("-") and arg != "-":
            return [f"{name} {arg}: an option that may run a program file or write files"]
        program = arg
        break
    if program is None:
        return [f"{name} runs a program that is not a fixed word"]
    if _AWK_ACTS.search(program):
        return [f"the {name} program can run commands, write files or load code"]
    return []


def _subcommand(name: str, args: list[str | None]) -> list[str]:
    quiet = QUIET_SUBCOMMANDS[name]
    if not args:
        return [] if name in BARE_IS_HELP else [f"{name} runs the product's scripts"]
    first = args[0]
    if name == "uv" and first == "pip" and len(args) > 1:
        return _subcommand("pip", args[1:])
    if first is not None and first in quiet:
        return []
    return [f"{name} {first or '...'} runs the product's build, tests or package scripts"]


def _extractor(name: str, args: list[str | None]) -> list[str]:
    clusters = [a[1:] for a in args if a is not None and a.startswith("-") and a[1:2] != "-"]
    first = args[0] if args else None
    if name in TARS:
        if any(a is not None and a.startswith(_TAR_RUNS) for a in args) or any(
            c[:1] in ("I", "F") for c in clusters
        ):
            return [f"{name} is told to run a program"]
        old_style = first is not None and not first.startswith("-") and "x" in first
        if (
            old_style
            or any("x" in c for c in clusters)
            or any(a is not None and a.startswith(("--extract", "--get")) for a in args)
        ):
            return [f"{name} extracts an archive, which can write any file in the product"]
        return []
    if name == "unzip":
        listing = any(set(c) & set("lvtZpc") for c in clusters)
        if args and not listing:
            return ["unzip extracts an archive, which can write any file in the product"]
        return []
    if name in _EXTRACT_COMMANDS:
        letters = _EXTRACT_COMMANDS[name]
        if name.startswith(("7z", "unrar")):
            # `7z x a.7z`, `unrar e a.rar`: the first word that is not a switch is the command.
            word = next((a for a in args if a is None or not a.startswith("-")), "")
            extracting = word is None or (word[:1] in letters and len(word) == 1)
        else:  # `ar x lib.a`, `jar xf a.jar`, with or without a dash
            extracting = first is None or letters in (first or "").lstrip("-")
        if extracting or "--extract" in args:
            return [f"{name} extracts an archive, which can write any file in the product"]
        return []
    if name in ("cpio", "bsdcpio"):
        passing = any(a in ("--extract", "--pass-through") for a in args)
        if passing or any(("i" in c and "t" not in c) or "p" in c for c in clusters):
            return [f"{name} extracts or copies files in, which can write any file"]
        return []
    if name == "pax" and any("r" in c for c in clusters):
        return ["pax extracts an archive, which can write any file in the product"]
    if name in ("dpkg", "dpkg-deb") and any(
        a in ("-x", "-X", "-R", "--extract", "--vextract", "--raw-extract") for a in args
    ):
        return [f"{name} extracts a package, which can write any file in the product"]
    if name in ALWAYS_EXTRACT and not any(a in ("-l", "--list", "-t", "--test") for a in args):
        return [f"{name} extracts an archive, which can write any file in the product"]
    return []
