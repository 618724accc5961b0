"""An error for a text that starts with `-` hints at `--` (issue 22, 3), for every command: it is
rendered once, where the CLI turns a usage error into its `error:` line."""

from __future__ import annotations

import json

from sdd_git.root import Root
from tests.conftest import SddRunner


def test_change_new_with_text_starting_with_a_dash_says_to_put_two_dashes_first(
    sdd: SddRunner, root: Root
) -> None:
    refused = sdd("change", "new", "-5 dollars for every lunch I forget")
    assert refused.code == 2
    assert refused.stderr.splitlines()[0] == (
        "error: No such option '-5'. (to pass text that starts with '-', put -- before it: "
        'sdd change new -- "-5 dollars for every lunch I forget")'
    )
    assert not list((root.path / "changes").glob("CH-*"))
    # The command it names works as written.
    done = sdd("change", "new", "--", "-5 dollars for every lunch I forget")
    assert done.code == 0, done.stderr
    shown = sdd("change", "list", "--json")
    assert "-5 dollars for every lunch I forget" in json.dumps(json.loads(shown.stdout))


def test_the_hint_comes_with_any_command_and_keeps_its_other_arguments(sdd: SddRunner) -> None:
    refused = sdd("role", "say", "builder", "-x marks the spot")
    assert refused.code == 2
    assert (
        'put -- before it: sdd role say builder -- "-x marks the spot")'
        in refused.stderr.splitlines()[0]
    )


def test_a_misspelt_option_gets_clicks_suggestion_not_the_dash_hint(sdd: SddRunner) -> None:
    refused = sdd("change", "new", "--bgu", "words")
    assert refused.code == 2
    assert "Did you mean '--bug'?" in refused.stderr and "put -- before it" not in refused.stderr
