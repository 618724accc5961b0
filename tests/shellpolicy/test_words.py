"""The words of a command as bash reads them, where tree-sitter-bash files them elsewhere:
after a here-document's start (sdd_git/shellpolicy/parse.py)."""

from __future__ import annotations

import pytest

from sdd_git.shellpolicy.walk import classify

# ===== Words after a here-document's start ======================================================
# tree-sitter-bash files them under the here-document; bash gives `<<X` one word (its delimiter)
# and the words after it are the command's.

AFTER_A_HEREDOC = (
    "sdd <<X next\nX",
    "sdd <<-X next\n\tX",
    "sdd <<'X' next\nX",
    'sdd <<"X" next\nX',
    "sdd <<X 2>/dev/null next\nX",
    "sdd 2>/dev/null <<X next\nX",
    "sdd <<<yes next",
    "sdd <<<'yes' next",
    "env X=1 sdd <<X next\nX",
    "bash -c 'sdd <<X next\nX'",
)


@pytest.mark.parametrize("command", AFTER_A_HEREDOC)
def test_the_words_after_a_here_document_start_are_the_command_s(command: str) -> None:
    finding = classify(command)
    assert [call.words for call in finding.sdd_calls] == [["next"]], finding.sdd_calls
    assert finding.certain, finding.uncertain


def test_the_here_document_body_is_still_the_command_s_input() -> None:
    finding = classify("cat <<X -n\nhello\nX")
    assert finding.commands[0].words == ["cat", "-n"]
    assert finding.commands[0].stdin == "hello\n"
    finding = classify("bash <<X -s\nsdd next\nX")
    assert finding.commands[0].words == ["bash", "-s"]
    assert [call.words for call in finding.sdd_calls] == [["next"]]


def test_words_split_by_a_redirection_inside_a_here_document_start_keep_their_order() -> None:
    finding = classify("sdd <<X 2>/dev/null accept reading CH-0001\nX")
    assert [call.words for call in finding.sdd_calls] == [["accept", "reading", "CH-0001"]]
    # tree-sitter-bash does not parse a redirection after the start's first word: the line is
    # uncertain, and the words it can read are still the command's.
    finding = classify("sdd <<X accept 2>/dev/null reading CH-0001\nX")
    assert [call.words for call in finding.sdd_calls] == [["accept", None, "reading", "CH-0001"]]
    assert not finding.certain
