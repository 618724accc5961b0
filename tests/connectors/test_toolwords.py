"""A listed MCP tool is hers by its own words (sdd_git.connectors.toolwords), tested as data:
each name and description below as a server would list it, through `forbidden_tool`, the
check the guard and the connector both run on the server's listing."""

from __future__ import annotations

import pytest

from sdd_git.connectors.operations import forbidden_reason, forbidden_tool
from sdd_git.connectors.toolwords import word_forms

HERS = [
    # (name, description, what the refusal says it does)
    ("gh_pub", "Create a GitHub ReLease for the tag", "release"),
    ("gh_out", "Publish v2.0.0 to the GitHub Releases page", "release"),
    ("gh_tagpub", "Makes the tag v1.2 public as a GitHub Release", "release"),
    ("cut", "Cut a new version of the app", "release"),
    ("deliver", "Tag the commit and publish it", "release"),
    ("go_live", "Ships the build to customers", "release"),
    ("RELEASE_NOTES", "", "release"),
    ("getRelease", "", "release"),
    ("scen_mark", "Mark a scenario of the change as passing", "QA"),
    ("scen_set", "Set the outcome of a scenario to pass", "QA"),
    ("tc_fail", "Record that a test case failed", "QA"),
    ("qa_notes", "", "QA"),
    ("QAResult", "", "QA"),
    ("spec_ratify", "Ratify the drafted reading of a spec", "accepts"),
    ("endorse", "Endorses the plan of a change", "accepts"),
    ("ok_pr", "Confirm the pull request", "accepts"),
    ("signoff_section", "", "accepts"),
    ("chg_move", "Moves the change to the verify step", "stage"),
    ("col", "Set the column of a card", "stage"),
    ("flow", "Transition a ticket's status", "stage"),
    ("bring", "Bring a change to build", "stage"),
]
ORDINARY = [
    ("search_docs", "Search the team's docs."),
    ("get_page", "Read one page of the docs (no hints given)."),
    ("read_file", "The text of `path`."),
    ("list_issues", "List the issues of a repository, open or closed."),
    ("create_issue", "Create an issue in a repository with a title and a body."),
    ("post_comment", "Post a comment on an issue."),
    ("rename_page", "Rename a page (no hints given)."),
    ("run_job", "Start a CI job with parameters."),
    ("getPageViews", "Views of a page, by day."),
]


@pytest.mark.parametrize(("name", "description", "what"), HERS)
def test_a_tool_whose_words_make_it_hers_is_forbidden(
    name: str, description: str, what: str
) -> None:
    why = forbidden_tool(name, description)
    assert why is not None, (name, description)
    assert what.lower() in why.lower(), why


@pytest.mark.parametrize(("name", "description"), ORDINARY)
def test_an_ordinary_tool_is_not_forbidden_by_its_words(name: str, description: str) -> None:
    assert forbidden_tool(name, description) is None


def test_a_word_in_capitals_or_mixed_case_is_one_word_and_camel_case_splits() -> None:
    assert "release" in word_forms("ReLease")[0].split()
    assert "re lease" in " ".join(word_forms("ReLease"))
    assert any("release create" in form for form in word_forms("releaseCreate"))
    assert word_forms("Create a RELEASE") == ("create a release",)


def test_a_name_read_alone_by_every_connectors_rules_is_hers_by_any_release_word() -> None:
    # forbidden_reason reads only the operation's name (no listing): a release word is enough.
    assert forbidden_reason("get_release", {}) is not None
    assert forbidden_reason("ReLeasePublish", {}) is not None
    assert forbidden_reason("list_issues", {}) is None
