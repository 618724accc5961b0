"""Where bash evaluates a variable's value as code, which the line cannot show.

bash evaluates arithmetic by expanding each variable it names and evaluating *that* text as
arithmetic in turn, and an array subscript in the text is expanded: `x='a[$(sdd next)]'` and
then `echo $((x))` runs `sdd next`, and no string on the line holds `$(` when the value is built
by concatenation. The places bash does this (each checked in bash 5.2):

- arithmetic: `$((x))`, `$[x]`, `((x))`, `for ((...))`, an array subscript (`${a[x]}`,
  `a[x]=1`, `a=([x]=1)`, `{a[x]}>file`), a substring's offset and length (`${x:x}`), the operands
  of `[[ x -eq 1 ]]` (and -ne -lt -le -gt -ge; `test` and `[` do not evaluate them), a value given
  to a variable of the integer attribute (`local -i`, and bash's own OPTIND, RANDOM, SRANDOM,
  HISTCMD), and `$((x))` in an unquoted here-document;
- a variable named by a value, whose subscript is evaluated: `[[ -v $x ]]`, `test -v "$x"`,
  `${!x}`, `local -n`, `local "$x"=1`, `unset "$x"`, `read "$x"`, `printf -v "$x"`,
  `wait -p "$x"`;
- a value expanded as a prompt, which runs its command substitutions: `${x@P}` (no other `@`
  operator runs anything).

So each of these whose expression holds more than literal numbers and operators makes the
command uncertain; literal arithmetic (`$((1+2))`, `${x:1:2}`, `${a[0]}`, `[[ 3 -eq 3 ]]`) stays
certain, and so do the expansions whose value is always a number (`$#`, `$?`, `$$`, `$!`,
`${#x}`). `let` is uncertain in walk's table already, and so are `declare` and `typeset` run
as words (`builtin declare`); as bash parses them they are checked here, as `local` is.

The checks run on the nodes the walk visits anyway, one look each: no pass of their own.
"""

from __future__ import annotations

import re

from sdd_git.shellpolicy.findings import ShellFinding, Words
from sdd_git.shellpolicy.parse import short_flag, text_of

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# The patterns are strings, compiled by `re` when first used: compiling them all on import would
# cost every call of `sdd guard` several milliseconds, and most command lines use none of them.
# What literal arithmetic may hold: numbers (decimal, 0x hex, base#digits), operators, parens,
# blanks, and the expansions whose value is always a number.
_LITERAL = (
    r"(?:\s|[-+*/%<>=!&|^~?:,()]|[0-9]+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|[0-9]+"
    r"|\$[#?$!]|\$\{[#?$!]\}|\$\{#[A-Za-z_][A-Za-z0-9_]*(?:\[(?:[@*]|[0-9]+)\])?\})*"
)
# A variable's name, perhaps with a subscript (checked on its own).
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?"
# A name in an expression, not a digit of a number (`0x1f`, `16#ff`).
_NAME_IN = r"(?<![0-9A-Za-z_#@])[A-Za-z_][A-Za-z0-9_]*"
# `${!x*}`, `${!x@}` (names with a prefix), `${!a[@]}` (an array's keys), `${!#}` (the last
# argument): the `!` forms that name no variable by a value.
_NAMES_ONLY = r"\$\{!(?:[A-Za-z_][A-Za-z0-9_]*(?:[*@]|\[[@*]\])|#)\}"
_SUBSTITUTION = r"\$\((?!\()|`"
_FD_VARIABLE = r"\{[A-Za-z_][A-Za-z0-9_]*\[(.*)\]\}"
_ARRAY_KEY = r"\[(.*?)\]\+?="

# bash's own variables that evaluate a value assigned to them as arithmetic.
INTEGER_VARIABLES = frozenset({"OPTIND", "RANDOM", "SRANDOM", "HISTCMD"})
# Builtins whose words name variables: walk hands them here when they run as words (`builtin
# local`, `command unset`); `declare` and `typeset` are uncertain whatever they get.
NAMING_BUILTINS = frozenset({"local", "export", "readonly", "unset", "wait"})
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def literal(expression: str) -> bool:
    """True when bash's arithmetic on EXPRESSION can only see numbers and operators."""
    return re.fullmatch(_LITERAL, expression) is not None


def plain_name(text: str) -> bool:
    """A variable's name, with at most a literal subscript (`x`, `a[0]`, `a[@]`)."""
    match = re.fullmatch(_NAME, text, re.S)
    if match is None:
        return False
    index = match.group(2)
    return index is None or index in ("@", "*") or (index != "" and literal(index))


def _arithmetic_reason(expression: str) -> str:
    expression = " ".join(expression.split())
    shown = f" (in `{expression[:60]}`)"
    if re.search(_SUBSTITUTION, expression):
        return f"bash evaluates a command's output as arithmetic{shown}, where it can run another"
    names = list(dict.fromkeys(re.findall(_NAME_IN, expression)))
    if not names:
        return (
            f"bash evaluates `{expression[:60]}` as arithmetic after expanding it, "
            "where a value can run a command"
        )
    which = f"value of {names[0]}" if len(names) == 1 else f"values of {', '.join(names[:4])}"
    shown = "" if names[0] == expression else shown
    return f"bash evaluates the {which} as arithmetic{shown}, where a value can run a command"


def _check(expression: str, finding: ShellFinding) -> None:
    if not literal(expression):
        finding.uncertain.append(_arithmetic_reason(expression))


def _inner(node: Any, first: Any, last: Any) -> str:
    """The source between two children of NODE."""
    start = node.start_byte
    raw: bytes = node.text[first.end_byte - start : last.start_byte - start]
    return raw.decode("utf-8", "replace")


def _arithmetic(node: Any, finding: ShellFinding) -> None:
    """`$((...))`, `$[...]`, `((...))`."""
    children = node.children
    if len(children) < 2 or children[0].type not in ("$((", "$[", "(("):
        return  # `{ ...; }` is a compound_statement too
    _check(_inner(node, children[0], children[-1]), finding)


def _c_for(node: Any, finding: ShellFinding) -> None:
    """`for ((init; test; step))`."""
    children = node.children
    opening = next((c for c in children if c.type == "(("), None)
    closing = next((c for c in children if c.type == "))"), None)
    if opening is not None and closing is not None:
        expression = _inner(node, opening, closing)
        if not all(literal(part) for part in expression.split(";")):
            finding.uncertain.append(_arithmetic_reason(expression))
    else:
        finding.uncertain.append("bash evaluates a `for ((...))` loop's text as arithmetic")


def misread_arithmetic(node: Any, finding: ShellFinding) -> None:
    """A subshell or command substitution that is arithmetic to bash: tree-sitter-bash reads
    `$((x))` in an unquoted here-document as a command substitution of a subshell, and `((x))`
    after `!` or `time` as a subshell in a subshell."""
    raw: str = node.text.decode("utf-8", "replace")
    opening = 3 if raw.startswith("$((") else 2 if raw.startswith("((") else 0
    if opening:
        _check(raw[opening:-2] if raw.endswith("))") else raw[opening:], finding)


def _expansion(node: Any, finding: ShellFinding) -> None:
    """`${...}`: indirection, a prompt, a substring (its subscript is a node of its own)."""
    raw: str = node.text.decode("utf-8", "replace")
    if raw.startswith("${!") and re.fullmatch(_NAMES_ONLY, raw) is None:
        finding.uncertain.append(
            f"`{raw[:60]}` reads the variable a value names, and bash evaluates a subscript in "
            "that name, which can run a command"
        )
    if raw.endswith("@P}"):
        finding.uncertain.append(
            f"`{raw[:60]}` expands a value as a prompt, which runs the commands in it"
        )
    children = node.children
    for child in children:
        if child.type == ":":  # `${x:offset:length}`; `:-` `:=` `:+` `:?` are other tokens
            closing = children[-1] if children[-1].type == "}" else None
            rest = _inner(node, child, closing) if closing is not None else raw
            _check(rest, finding)
            return


def _subscript(node: Any, finding: ShellFinding) -> None:
    """`${a[i]}`, `a[i]=1`, `$((a[i]))`: an indexed array's subscript is arithmetic (an
    associative array's is not, but which one it is is not on the line)."""
    index = node.child_by_field_name("index")
    if index is None:
        return
    text: str = index.text.decode("utf-8", "replace")
    if text in ("@", "*") or literal(text):
        return
    name = node.child_by_field_name("name")
    array = name.text.decode("utf-8", "replace") if name is not None else "an array"
    finding.uncertain.append(
        f"bash evaluates the subscript `{text[:60]}` of {array} as arithmetic, "
        "where a value can run a command"
    )


def _operand_is_literal(operand: Any) -> bool:
    if operand.type == "arithmetic_expansion":
        return True  # checked as a node of its own
    raw: str = operand.text.decode("utf-8", "replace")
    if len(raw) > 1 and raw[0] == raw[-1] == '"':
        raw = raw[1:-1]
    if literal(raw):
        return True
    text = text_of(operand)
    return text is not None and literal(text)


def _test_operator(node: Any, finding: ShellFinding) -> None:
    """`[[ x -eq 1 ]]` evaluates both operands as arithmetic (`[ x -eq 1 ]` does not);
    `[[ -v name ]]` and `[ -v name ]` evaluate a subscript in the name."""
    operator: str = node.text.decode("utf-8", "replace")
    if operator == "-v":
        operand = node.next_named_sibling
        raw = operand.text.decode("utf-8", "replace") if operand is not None else ""
        text = text_of(operand) if operand is not None else None
        if not plain_name(raw) and (text is None or not plain_name(text)):
            finding.uncertain.append(
                f"`-v {raw[:60]}` tests a variable named by a value, and bash evaluates a "
                "subscript in that name, which can run a command"
            )
        return
    if operator not in _ARITHMETIC_TESTS:
        return
    test = node.parent
    while test is not None and test.type != "test_command":
        test = test.parent
    if test is None or test.child_count == 0 or test.children[0].type != "[[":
        return
    expression = node.parent
    for operand in expression.named_children if expression is not None else ():
        if operand != node and not _operand_is_literal(operand):
            finding.uncertain.append(
                _arithmetic_reason(operand.text.decode("utf-8", "replace"))
                + f" (`[[ {operator} ]]` compares as arithmetic)"
            )
            return


def _declaration(node: Any, finding: ShellFinding) -> None:
    """`declare`, `typeset`, `local`, `export`, `readonly` as bash parses them: an integer (-i)
    or nameref (-n) attribute, or a name that is not a fixed word. What is assigned is an
    assignment node of its own."""
    keyword = node.children[0].type if node.child_count else ""
    for child in node.named_children:
        if child.type in ("variable_assignment", "variable_name"):
            continue
        raw: str = child.text.decode("utf-8", "replace")
        if raw[:1] in ("-", "+") and child.type == "word":
            _attributes(keyword, raw, finding)
            continue
        _declared_name(keyword, raw, text_of(child), finding)


def _attributes(keyword: str, option: str, finding: ShellFinding) -> None:
    # export's -n takes the export off; readonly has neither letter.
    if keyword not in ("declare", "typeset", "local"):
        return
    if "i" in option:
        finding.uncertain.append(
            f"`{keyword} {option}` makes bash evaluate each value given to the variable as "
            "arithmetic, where a value can run a command"
        )
    if "n" in option:
        finding.uncertain.append(
            f"`{keyword} {option}` makes the variable a reference to the variable its value "
            "names, and bash evaluates a subscript in that name, which can run a command"
        )


def _declared_name(keyword: str, raw: str | None, text: str | None, finding: ShellFinding) -> None:
    """One name KEYWORD is given, as written (RAW, None when it is not shown) and as a fixed
    word (TEXT, None when it is not one)."""
    for candidate in (raw, text):
        name, equals, value = (candidate or "").partition("=")
        if candidate is not None and plain_name(name):
            if equals:
                assigned(name, value, finding)
            return
    given = f"the variable name `{raw[:60]}`" if raw is not None else "a variable name"
    finding.uncertain.append(
        f"`{keyword}` is given {given} that is not a fixed word; bash evaluates a subscript in "
        "it, which can run a command"
    )


def _unset(node: Any, finding: ShellFinding) -> None:
    for child in node.named_children:
        raw: str = child.text.decode("utf-8", "replace")
        if raw[:1] == "-" and child.type == "word":
            continue
        _declared_name("unset", raw, text_of(child), finding)


def _for(node: Any, finding: ShellFinding) -> None:
    """`for OPTIND in ...` and `select RANDOM in ...` assign each value to the variable."""
    variable = node.child_by_field_name("variable")
    name = variable.text.decode("utf-8", "replace") if variable is not None else ""
    if name in INTEGER_VARIABLES:
        finding.uncertain.append(
            f"bash evaluates each value the loop gives {name} as arithmetic, "
            "where a value can run a command"
        )


def _fd_variable(node: Any, finding: ShellFinding) -> None:
    """`{a[x]}>file` stores the new descriptor in an array element: the subscript is evaluated.
    (Not before a redirection, the word is a glob, uncertain too.)"""
    raw: bytes = node.text
    if raw[:1] != b"{" or raw[-2:] != b"]}":
        return
    match = re.fullmatch(_FD_VARIABLE, raw.decode("utf-8", "replace"), re.S)
    if match is not None:
        _check(match.group(1), finding)


def assigned(name: str, value: str | None, finding: ShellFinding) -> None:
    """`NAME=value`: bash evaluates the value of its own integer variables as arithmetic."""
    if name in INTEGER_VARIABLES and (value is None or not literal(value)):
        finding.uncertain.append(
            f"bash evaluates the value given to {name} as arithmetic, "
            "where a value can run a command"
        )


def array_keys(value: Any, finding: ShellFinding) -> None:
    """`a=([i]=x)`: an indexed array's keys are arithmetic."""
    for element in value.named_children:
        raw: str = element.text.decode("utf-8", "replace")
        match = re.match(_ARRAY_KEY, raw, re.S) if raw[:1] == "[" else None
        if match is not None:
            _check(match.group(1), finding)


def named_words(name: str, args: Words, finding: ShellFinding) -> None:
    """`builtin local`, `command unset`, `wait -p`: the same as the parsed forms, on words."""
    if name == "wait":
        _wait_name(args, finding)
        return
    for arg in args:
        if arg is not None and arg[:1] in ("-", "+"):
            if name == "local":
                _attributes(name, arg, finding)
            continue
        _declared_name(name, arg, arg, finding)


def _wait_name(args: Words, finding: ShellFinding) -> None:
    """`wait -p NAME` (or `-npNAME`) names a variable; its other words are jobs."""
    for index, arg in enumerate(args):
        if arg == "--":
            return
        if short_flag(arg, "p") and arg is not None:
            attached = arg[arg.index("p", 1) + 1 :]
            name = attached or (args[index + 1] if index + 1 < len(args) else "")
            if name != "":  # bash refuses `wait -p` with no name
                _declared_name("wait -p", name, name, finding)
            return


def tests_a_name(args: Words, finding: ShellFinding) -> None:
    """`test -v NAME`, `[ -v NAME ]` run as words (`builtin test`, `command [`)."""
    for index, arg in enumerate(args):
        if arg == "-v":
            name = args[index + 1] if index + 1 < len(args) else None
            if name is None or not plain_name(name):
                finding.uncertain.append(
                    "`test -v` tests a variable named by a value, and bash evaluates a subscript "
                    "in that name, which can run a command"
                )
                return


_BY_KIND: dict[str, Callable[[Any, ShellFinding], None]] = {
    "arithmetic_expansion": _arithmetic,
    "compound_statement": _arithmetic,
    "c_style_for_statement": _c_for,
    "expansion": _expansion,
    "subscript": _subscript,
    "test_operator": _test_operator,
    "declaration_command": _declaration,
    "unset_command": _unset,
    "for_statement": _for,
    "concatenation": _fd_variable,
}
# The node kinds the walk hands to `evaluated`.
EVALUATES = frozenset(_BY_KIND)


def evaluated(node: Any, finding: ShellFinding) -> None:
    """The node's check, for a node of one of the kinds in EVALUATES."""
    _BY_KIND[node.type](node, finding)
