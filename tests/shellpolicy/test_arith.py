"""Where bash evaluates a value as code (sdd_git/shellpolicy/arith.py): arithmetic, a variable
named by a value, a prompt. Each uncertain spelling below ran `sdd next` in bash 5.2 when x held
`a[$(sdd next)]` (or, for @P, `$(sdd next)`); the certain ones hold only literal numbers and
operators, or nothing bash evaluates."""

from __future__ import annotations

import pytest

from sdd_git.shellpolicy.arith import literal, plain_name
from sdd_git.shellpolicy.walk import classify

# The value is built by concatenation, so no one string on the line shows `$(`.
VALUE = "x='a[$'\"(sdd next)]\"; "

EVALUATES = (
    "echo $((x))",
    "echo $(( $x + 1 ))",
    'echo "$((x))"',
    "((x))",
    "((x++))",
    "! ((x))",
    "time ((x))",
    "if ((x)); then :; fi",
    ": $((x))",
    "echo $[x]",
    "for ((i = x; 0; )); do :; done",
    "for ((i = 0; i < 3; i++)); do :; done",
    "[[ -v $x ]]",
    "[[ -v a[x] ]]",
    "[[ -v x && -v $x ]]",
    'test -v "$x"',
    '[ -v "$x" ]',
    '[ ! -v "$x" ]',
    'builtin test -v "$x"',
    "[[ x -eq 1 ]]",
    "[[ 1 -ne x ]]",
    "[[ $x -lt 1 ]]",
    "[[ x -le 1 ]]",
    "[[ x -gt 1 ]]",
    "[[ x -ge 1 ]]",
    "[[ ! x -eq 1 ]]",
    "[[ -n 1 && x -gt 1 ]]",
    "echo ${a[x]}",
    'echo "${a[$i]}"',
    "echo ${#a[x]}",
    "echo ${!a[x]}",
    "echo ${a[x]:-}",
    "echo ${x:x}",
    "echo ${x:0:x}",
    "echo ${x: $n}",
    "echo ${@:x}",
    "echo ${a[@]:x}",
    'echo "${x@P}"',
    "echo ${x[0]@P}",
    "echo ${!x}",
    "echo ${!x:-}",
    "echo ${!1}",
    "a[x]=1",
    "a[x]+=1",
    "a=([x]=1)",
    "a+=([$i]=1)",
    "echo {a[x]}>/dev/null",
    "exec {a[x]}>&-",
    "let x",
    "declare -i y; y=x",
    "typeset -i y=x",
    "declare -n r=x",
    "f() { local -i y=x; }; f",
    "f() { local -ri y=x; }; f",
    "f() { local -n r=$x; }; f",
    'f() { local "$x"=1; }; f',
    "f() { builtin local -i y=x; }; f",
    'export "$x"',
    "unset 'a[x]'",
    'unset "$x"',
    "command unset 'a[$i]'",
    "printf -v 'a[$x]' %s 1",
    "read 'a[x]' <<< 1",
    "read OPTIND <<< 1",
    'wait -n -p "$x"',
    "wait -p 'a[x]'",
    "OPTIND=$x",
    "RANDOM=x",
    "SRANDOM=$x",
    "HISTCMD=$x",
    "f() { local OPTIND=$x; }; f",
    "for OPTIND in 1; do :; done",
    "select RANDOM in 1; do :; done",
    "case 1 in $((x))) :;; esac",
    "echo $(( $(cat n.txt) ))",
    "cat <<E\n$((x))\nE",
    "cat <<E\n${a[x]}\nE",
    "cat <<E\n${x:x}\nE",
    "cat <<E\n${x@P}\nE",
    "i=$((i+1))",
)


@pytest.mark.parametrize("command", EVALUATES)
def test_a_value_bash_evaluates_makes_the_command_uncertain(command: str) -> None:
    for line in (command, VALUE + command):
        finding = classify(line)
        assert not finding.certain, line
        assert not finding.reaches_sdd, line  # what runs is not on the line


LITERAL = (
    "echo $((1+2))",
    "echo $(( (3 * 4) % 5 ))",
    "echo $((0x1f + 16#ff + 2#101))",
    "echo $[1+1]",
    "((1))",
    "! ((1))",
    "for ((;;)); do break; done",
    "echo ${x:1:2}",
    "echo ${x: -1}",
    "echo ${x:(-1)}",
    'echo "${x:0:3}"',
    "echo ${a[0]}",
    "echo ${a[@]} ${a[*]} ${#a[@]} ${!a[@]} ${!P*} ${!P@}",
    "echo ${#x} $(( ${#x} * 2 ))",
    "echo $(( $# + 1 ))",
    "[[ 3 -eq 3 ]]",
    '[[ "3" -gt 2 ]]',
    "[[ $# -gt 0 ]]",
    "[[ $? -ne 0 ]]",
    "[[ $((1)) -eq 1 ]]",
    "[[ -v x ]]",
    "[[ -v a[0] ]]",
    "test -v HOME",
    "[ -v x ]",
    "test x -eq 1",  # test and [ compare integers without evaluating them
    '[ "$x" -eq 1 ]',
    "[ $n -lt 3 ]",
    "[[ $x == y ]]",
    "[[ -n $x && -f $y ]]",
    "echo ${x@Q} ${x@A} ${x@E} ${x@K} ${x@a} ${x@U} ${x@u} ${x@L}",
    "echo ${x/a/b} ${x%.py} ${x#*/} ${x:-d} ${x:=d} ${x:+y} ${x:?} ${x,,}",
    "a[0]=1",
    "a=([0]=1 [1]=2)",
    "a=(1 2 3)",
    "OPTIND=1",
    "exec {fd}>out.txt",
    "local x",
    "local -r x=1",
    "local -a arr",
    "export FOO=bar",
    "export -n FOO",
    "readonly X=1",
    "unset x",
    "unset -v x y",
    "unset -f f",
    "unset 'a[0]'",
    "wait",
    "wait $pid",
    "wait -n -p v $pid",
    "for i in 1 2; do echo $i; done",
    "cat <<'E'\n$((x)) ${x@P} ${a[x]}\nE",
    "cat <<E\nhello $x\nE",
    "echo $( (ls) )",
)


@pytest.mark.parametrize("command", LITERAL)
def test_literal_arithmetic_and_what_bash_does_not_evaluate_stay_certain(command: str) -> None:
    finding = classify(command)
    assert finding.certain, finding.uncertain


def test_the_reason_names_the_variable_in_plain_words() -> None:
    assert classify("echo $((x))").uncertain == [
        "bash evaluates the value of x as arithmetic, where a value can run a command"
    ]
    (reason,) = classify('echo "${x@P}"').uncertain
    assert "prompt" in reason and "runs the commands" in reason
    (reason,) = classify("[[ -v $x ]]").uncertain
    assert "subscript" in reason


@pytest.mark.parametrize(
    ("expression", "is_literal"),
    [
        ("1+2", True),
        (" 3 ? 4 : 5 ", True),
        ("0x1F", True),
        ("64#@_", True),
        ("$# - 1", True),
        ("${#name[@]}", True),
        ("x", False),
        ("$x", False),
        ("a[0]", False),
        ("0x1G", False),
        ('"1"', False),
        ("$(echo 1)", False),
    ],
)
def test_literal_is_numbers_and_operators_only(expression: str, is_literal: bool) -> None:
    assert literal(expression) is is_literal


@pytest.mark.parametrize(
    ("name", "plain"),
    [("x", True), ("a[0]", True), ("a[@]", True), ("a[x]", False), ("a[]", False),
     ("$x", False), ("1x", False)],
)  # fmt: skip
def test_a_plain_name_has_at_most_a_literal_subscript(name: str, plain: bool) -> None:
    assert plain_name(name) is plain
