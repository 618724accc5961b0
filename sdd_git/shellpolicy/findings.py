"""What the classifier found in one command line: the records it keeps while it walks."""

from __future__ import annotations

from dataclasses import dataclass, field

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False

# A command's words: None where a word is not fixed (bash would expand it).
Words = list[str | None]


@dataclass(frozen=True)
class Write:
    """A path the command writes, as written, relative to the folder it ran in."""

    cwd: str
    path: str
    whole_tree: bool = False  # everything under the path may go (rm -r, find -delete)
    # The path only *holds* protected folders (the product itself): it stops rather than fails.
    soft: bool = False


@dataclass(frozen=True)
class Touch:
    """An operand handed to a program nobody can vouch for."""

    cwd: str
    path: str


@dataclass(frozen=True)
class Source:
    """A path copied, moved or linked *from*: a role or skill file there (or in a folder copied
    whole) makes a new one where it lands, under a name no check of the destination can see."""

    cwd: str
    path: str
    destination: str | None  # None: not a fixed word
    moved: bool


@dataclass(frozen=True)
class SddCall:
    """One route to sdd and the words it hands on, for a caller that lets some of sdd's commands
    run (another agent may read the record; a role may run no sdd command at all)."""

    program: str  # "sdd" (any path to it), "sdd_git" (python -m sdd_git), or the name as written
    words: Words  # the words after the program; a None word is not fixed, or not shown at all
    why: str
    # False: a route the classifier only suspects (a wrapper's option it does not know, a string
    # in code): the words are a guess, or there are none.
    sure: bool = True


@dataclass(frozen=True)
class Ran:
    """One simple command as it runs: its wrappers taken off, in the folder a `cd` left it."""

    cwd: str
    words: Words
    stdin: str | None = None  # the text a here-document or here-string feeds it


@dataclass
class ShellFinding:
    reaches_sdd: list[str] = field(default_factory=list)  # why, for each route found
    sdd_calls: list[SddCall] = field(default_factory=list)  # one for each of `reaches_sdd`
    writes: list[Write] = field(default_factory=list)
    touches: list[Touch] = field(default_factory=list)
    git_writes: list[str] = field(default_factory=list)  # git subcommands that change the repo
    uncertain: list[str] = field(default_factory=list)  # why it cannot be classified
    cwds: set[str] = field(default_factory=lambda: {"."})  # every folder a `cd` reached
    # Why it runs code, in plain words: such a command is never allowed by a saved rule unless
    # a sandbox holds it, since what it does is decided by files a role can write.
    runs_code: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)  # every command name run, as written
    sources: list[Source] = field(default_factory=list)
    # Files this command line writes with text it shows (`printf '...' > x.sh`), by path from
    # the product folder: a later command of the same line that runs one runs that text.
    scripts: dict[str, str | None] = field(default_factory=dict)
    commands: list[Ran] = field(default_factory=list)  # every simple command, as it runs
    # Above zero while a command is handed words the line does not show (`find -exec CMD {}`).
    handing: int = 0

    @property
    def certain(self) -> bool:
        return not self.uncertain

    def reach_sdd(
        self, why: str, program: str = "", words: Words | None = None, sure: bool = True
    ) -> None:
        """A route to sdd: why (in words), and the words it runs sdd with. With no words, the
        route is one the classifier only suspects."""
        if words is None:
            words, sure = [None], False
        if self.handing:
            words = [*words, None]  # find -exec appends what it finds
        self.reaches_sdd.append(why)
        self.sdd_calls.append(SddCall(program or "?", list(words), why, sure))

    def reach_sdd_through(self, probe: ShellFinding, why: str, sure: bool = True) -> None:
        """Every route a probe found (a command line held in a value, a guessed command), kept
        under `why`, which names the reason with `{}`."""
        for call in probe.sdd_calls:
            self.reach_sdd(why.format(call.why), call.program, call.words, sure and call.sure)

    def ran_code(self, reasons: list[str]) -> None:
        self.runs_code.extend(r for r in reasons if r not in self.runs_code)


if TYPE_CHECKING:
    from typing import Protocol

    class Follow(Protocol):
        """How a program rule hands on what its command runs in turn: a command line (`bash -c`,
        `sed e`, `git -c core.pager=...`) or the words of a command (a wrapper's)."""

        def script(self, source: str, finding: ShellFinding, cwd: str, depth: int) -> None: ...

        def argv(
            self,
            words: Words,
            finding: ShellFinding,
            cwd: list[str],
            depth: int,
            stdin_script: str | None = None,
        ) -> None: ...
