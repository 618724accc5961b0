"""sed scripts, read command by command: `e COMMAND` runs shell, `w FILE` writes, and `e` alone or
`s///e` run the text being edited."""

from __future__ import annotations

import re
from collections.abc import Callable

from sdd_git.shellpolicy.findings import ShellFinding, Words, Write
from sdd_git.shellpolicy.parse import short_flag
from sdd_git.shellpolicy.writers import touched

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.shellpolicy.findings import Follow


def sed_command(follow: Follow, args: Words, finding: ShellFinding, cwd: str, depth: int) -> None:
    scripts: Words = []
    operands: Words = []
    in_place = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-e", "--expression", "-f", "--file"):
            scripts.append(args[index + 1] if index + 1 < len(args) else None)
            if arg in ("-f", "--file"):
                scripts[-1] = None  # a script file: not read here
            index += 2
            continue
        if arg is not None and (arg.startswith("--in-place") or short_flag(arg, "i")):
            in_place = True
        elif arg is None or not arg.startswith("-"):
            operands.append(arg)
        index += 1
    if not scripts and operands:
        scripts.append(operands.pop(0))
    for script in scripts:
        if script is None or not _Script(script, follow, finding, cwd, depth).readable():
            finding.uncertain.append("the sed script writes files or runs commands")
            return
    if in_place:
        for arg in operands:
            if arg is None:
                finding.uncertain.append("sed -i edits a path that is not a fixed word")
            else:
                finding.writes.append(Write(cwd, arg))
    else:
        touched(operands, finding, cwd)


# A pattern, compiled by `re` on first use (and kept): only sed scripts need it.
_ADDRESS = (
    r"(?:[0-9]+(?:~[0-9]+)?|\$|/(?:\\.|[^/\\])*/[IM]*|\\(.)(?:\\.|(?!\1).)*\1[IM]*)"
    r"(?:\s*,\s*(?:[0-9]+|\$|[+~][0-9]+|/(?:\\.|[^/\\])*/[IM]*))?\s*!?\s*"
)
_QUIET_OUTPUTS = ("/dev/stdout", "/dev/stderr")


class _Script:
    """Walks a sed script command by command, after any address (`1e`, `$e`, `/re/w f`,
    `0~2e`, `1,3w f`): `e COMMAND` is classified as shell, `w FILE` is a write, and `e` alone or
    `s///e` (the text as a command) makes it uncertain."""

    def __init__(
        self, script: str, follow: Follow, finding: ShellFinding, cwd: str, depth: int
    ) -> None:
        self.script, self.follow, self.finding = script, follow, finding
        self.cwd, self.depth, self.index = cwd, depth, 0

    def readable(self) -> bool:
        """False when the script cannot be read, or runs the text it edits."""
        size = len(self.script)
        while self.index < size:
            char = self.script[self.index]
            if char in " \t\n;}":
                self.index += 1
                continue
            if char == "#":
                self._rest_of_line()
                continue
            address = re.compile(_ADDRESS).match(self.script, self.index)
            if address is not None:
                self.index = address.end()
            if self.index >= size:
                return False
            command = self.script[self.index]
            self.index += 1
            rule = _COMMANDS.get(command)
            if rule is None or not rule(self, command):
                return False
        return True

    def _rest_of_line(self) -> str:
        end = self.script.find("\n", self.index)
        end = len(self.script) if end < 0 else end
        text = self.script[self.index : end]
        self.index = end
        return text.strip()

    def _skip_while(self, keep: Callable[[str], bool]) -> None:
        while self.index < len(self.script) and keep(self.script[self.index]):
            self.index += 1

    def _written(self, path: str) -> None:
        if path not in _QUIET_OUTPUTS:
            self.finding.writes.append(Write(self.cwd, path))

    def block(self, command: str) -> bool:
        return True

    def text(self, command: str) -> bool:
        """a, i, c: text to the end of the line, and on while lines end in a backslash."""
        while True:
            line = self._rest_of_line()
            if not line.endswith("\\") or self.index >= len(self.script):
                return True
            self.index += 1

    def label(self, command: str) -> bool:
        self._skip_while(lambda c: c not in ";\n}")
        return True

    def read(self, command: str) -> bool:
        self._rest_of_line()
        return True

    def write(self, command: str) -> bool:
        self._written(self._rest_of_line())
        return True

    def shell_line(self, command: str) -> bool:
        line = self._rest_of_line()
        if not line:
            self.finding.runs_code.append("sed e runs the text it edits as a command")
            return False
        self.follow.script(line, self.finding, self.cwd, self.depth + 1)
        return True

    def replace(self, command: str) -> bool:
        """s and y: two delimited parts; s takes flags after, of which e runs and w writes."""
        script, size = self.script, len(self.script)
        if self.index >= size or script[self.index] in "\n\\":
            return False
        delimiter = script[self.index]
        self.index += 1
        for _part in (1, 2):
            while self.index < size and script[self.index] != delimiter:
                self.index += 2 if script[self.index] == "\\" else 1
            if self.index >= size:
                return False
            self.index += 1
        if command == "y":
            return True
        self._skip_while(lambda c: c in "gpiImM0123456789")
        if self.index < size and script[self.index] == "e":
            self.finding.runs_code.append("sed s///e runs the text it edits as a command")
            return False
        if self.index < size and script[self.index] == "w":
            self.index += 1
            self._written(self._rest_of_line())
        return True

    def plain(self, command: str) -> bool:
        self._skip_while(str.isdigit)
        return True


_COMMANDS: dict[str, Callable[[_Script, str], bool]] = {
    "{": _Script.block,
    **dict.fromkeys("aic", _Script.text),
    **dict.fromkeys(":btTv", _Script.label),
    **dict.fromkeys("rR", _Script.read),
    **dict.fromkeys("wW", _Script.write),
    "e": _Script.shell_line,
    **dict.fromkeys("sy", _Script.replace),
    **dict.fromkeys("=dDgGhHnNpPxzFlLqQ", _Script.plain),
}
