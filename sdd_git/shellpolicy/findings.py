"""What the classifier found in one command line: the records it keeps while it walks.

The records are NamedTuples, frozen as the rest of sdd's records are, not dataclasses: the
classifier runs on the hot path of `sdd guard`, before each tool call of another agent, and
importing `dataclasses` (and the `inspect` it brings) and building each class costs more than
the whole check of a command."""

from __future__ import annotations

from typing import NamedTuple

# The rest of `typing` is read by mypy only (it reads this block as true).
TYPE_CHECKING = False

# A command's words: None where a word is not fixed (bash would expand it).
Words = list[str | None]


class Write(NamedTuple):
    """A path the command writes, as written, relative to the folder it ran in."""

    cwd: str
    path: str
    whole_tree: bool = False  # everything under the path may go (rm -r, find -delete)
    # The path only *holds* protected folders (the product itself): it stops rather than fails.
    soft: bool = False


class Touch(NamedTuple):
    """An operand handed to a program nobody can vouch for."""

    cwd: str
    path: str


class Source(NamedTuple):
    """A path copied, moved or linked *from*: a role or skill file there (or in a folder copied
    whole) makes a new one where it lands, under a name no check of the destination can see."""

    cwd: str
    path: str
    destination: str | None  # None: not a fixed word
    moved: bool


class SddCall(NamedTuple):
    """One route to sdd and the words it hands on, for a caller that lets some of sdd's commands
    run (another agent may read the record; a role may run no sdd command at all)."""

    program: str  # "sdd" (any path to it), "sdd_git" (python -m sdd_git), or the name as written
    words: Words  # the words after the program; a None word is not fixed, or not shown at all
    why: str
    # False: a route the classifier only suspects (a wrapper's option it does not know, a string
    # in code): the words are a guess, or there are none.
    sure: bool = True


class Ran(NamedTuple):
    """One simple command as it runs: its wrappers taken off, in the folder a `cd` left it."""

    cwd: str
    words: Words
    stdin: str | None = None  # the text a here-document or here-string feeds it


class ShellFinding:
    """The findings, filled while the classifier walks (one per command line, and one per probe
    of a value that may be a command line)."""

    def __init__(self) -> None:
        self.reaches_sdd: list[str] = []  # why, for each route found
        self.sdd_calls: list[SddCall] = []  # one for each of `reaches_sdd`
        self.writes: list[Write] = []
        self.touches: list[Touch] = []
        self.git_writes: list[str] = []  # git subcommands that change the repo
        self.uncertain: list[str] = []  # why it cannot be classified
        self.cwds: set[str] = {"."}  # every folder a `cd` reached
        # Why it runs code, in plain words: such a command is never allowed by a saved rule
        # unless a sandbox holds it, since what it does is decided by files a role can write.
        self.runs_code: list[str] = []
        self.programs: list[str] = []  # every command name run, as written
        self.sources: list[Source] = []
        # Files this command line writes with text it shows (`printf '...' > x.sh`), by path
        # from the product folder: a later command of the same line that runs one runs that text.
        self.scripts: dict[str, str | None] = {}
        self.commands: list[Ran] = []  # every simple command, as it runs
        # Above zero while a command is handed words the line does not show (`find -exec CMD {}`).
        self.handing = 0

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
