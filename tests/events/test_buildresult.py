"""Build result files: JUnit reports and exit-code files read defensively, and the watcher's
`watch.build_results` setting checked with file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.errors import RecordError
from sdd_git.events.sources.builds import (
    build_result_globs,
    is_build_result,
    read_result,
)
from sdd_git.root import Root

PASSING = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="1" tests="3">
<testcase classname="t" name="a"/><testcase classname="t" name="b"/>
<testcase classname="t" name="c"><skipped message="later"/></testcase>
</testsuite></testsuites>
"""
FAILING = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" tests="2">
<testcase classname="t" name="a"/>
<testcase classname="t" name="b"><failure message="assert 1 == 2">trace</failure></testcase>
</testsuite></testsuites>
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_junit_report_with_a_failing_case_is_a_failed_build(tmp_path: Path) -> None:
    result = read_result(write(tmp_path, "junit.xml", FAILING))
    assert (result.kind, result.status, result.failed) == ("junit", "failed", True)
    assert result.detail == "1 test fails of 2"


def test_a_junit_report_with_an_error_case_and_no_counts_is_a_failed_build(tmp_path: Path) -> None:
    text = '<testsuite><testcase name="a"><error message="boom"/></testcase></testsuite>'
    assert read_result(write(tmp_path, "r.xml", text)).status == "failed"


def test_a_junit_report_whose_counts_alone_say_failed_is_a_failed_build(tmp_path: Path) -> None:
    text = '<testsuites tests="9" failures="0" errors="2"></testsuites>'
    assert read_result(write(tmp_path, "r.xml", text)).status == "failed"


def test_a_namespaced_report_is_read_too(tmp_path: Path) -> None:
    text = (
        '<ns:testsuite xmlns:ns="urn:x" tests="1"><ns:testcase name="a">'
        "<ns:failure/></ns:testcase></ns:testsuite>"
    )
    assert read_result(write(tmp_path, "r.xml", text)).status == "failed"


def test_a_passing_junit_report_is_a_pass_with_skips_counted_as_tests(tmp_path: Path) -> None:
    result = read_result(write(tmp_path, "junit.xml", PASSING))
    assert (result.status, result.failed, result.detail) == ("passed", False, "3 tests pass")


def test_malformed_xml_is_not_a_pass_and_names_its_line(tmp_path: Path) -> None:
    result = read_result(write(tmp_path, "junit.xml", FAILING[:-40]))
    assert (result.status, result.failed) == ("unreadable", True)
    assert result.line is not None and result.line > 1
    assert result.problem().startswith(f"{tmp_path / 'junit.xml'}:{result.line}: not valid XML")


def test_xml_that_is_not_a_junit_report_is_unreadable(tmp_path: Path) -> None:
    result = read_result(write(tmp_path, "pom.xml", "<project><version>1</version></project>"))
    assert result.status == "unreadable"
    assert "the top element is <project>" in result.detail


def test_a_report_with_a_doctype_is_refused_before_parsing(tmp_path: Path) -> None:
    text = '<!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite tests="1">&a;</testsuite>'
    result = read_result(write(tmp_path, "r.xml", text))
    assert (result.status, result.detail) == ("unreadable", "holds a DOCTYPE: not a JUnit report")


def test_a_count_that_is_not_a_number_is_unreadable(tmp_path: Path) -> None:
    text = '<testsuite tests="1" failures="many"><testcase name="a"/></testsuite>'
    result = read_result(write(tmp_path, "r.xml", text))
    assert result.status == "unreadable" and "failures='many'" in result.detail


@pytest.mark.parametrize(
    ("text", "status", "detail"),
    [
        ("0\n", "passed", "exit code 0"),
        ("1\n", "failed", "exit code 1"),
        (" 137 ", "failed", "exit code 137"),
        ("-1", "failed", "exit code -1"),
        ("fail", "unreadable", "not an exit code: 'fail' (expected a number)"),
        ("", "empty", "empty"),
        ("\n", "empty", "empty"),
    ],
)
def test_an_exit_code_file_is_read_as_a_number(
    tmp_path: Path, text: str, status: str, detail: str
) -> None:
    result = read_result(write(tmp_path, "exit-code", text))
    assert (result.kind, result.status, result.detail) == ("exit-code", status, detail)
    assert result.failed is (status in ("failed", "unreadable"))


def test_a_huge_exit_code_file_is_unreadable_without_reading_it_all(tmp_path: Path) -> None:
    assert read_result(write(tmp_path, "exit-code", "0" * 10_000)).status == "unreadable"


def test_a_result_file_gone_is_unreadable(tmp_path: Path) -> None:
    assert read_result(tmp_path / "missing.xml").status == "unreadable"


def test_no_watch_setting_means_no_build_results(root: Root) -> None:
    assert build_result_globs(root) == ()


def test_the_build_results_setting_is_read_and_matches_paths(root: Root) -> None:
    with root.config.open("a", encoding="utf-8") as handle:
        handle.write('watch: {build_results: ["build/*.xml", "build/exit-code", "out/**/*.xml"]}\n')
    globs = build_result_globs(root)
    assert globs == ("build/*.xml", "build/exit-code", "out/**/*.xml")
    assert is_build_result(globs, "build/junit.xml")
    assert is_build_result(globs, "out/a/b/r.xml")
    assert not is_build_result(globs, "build/sub/junit.xml")
    assert not is_build_result(globs, "src/exit-code")


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ("watch: [build]\n", "key 'watch' must be a mapping"),
        ("watch:\n  build_results: 3\n", "key 'watch.build_results' must be a list of globs"),
        ("watch:\n  build_results: [/tmp/x.xml]\n", "'/tmp/x.xml' must be a path inside"),
        ("watch:\n  build_results: [../x.xml]\n", "'../x.xml' must be a path inside"),
        ("watch:\n  results: [x.xml]\n", "key 'watch.results' is not a setting of the watcher"),
    ],
)
def test_a_wrong_build_results_setting_names_the_file_line_and_key(
    root: Root, setting: str, words: str
) -> None:
    lines_before = root.config.read_text(encoding="utf-8").count("\n")
    with root.config.open("a", encoding="utf-8") as handle:
        handle.write(setting)
    with pytest.raises(RecordError) as caught:
        build_result_globs(root)
    message = caught.value.message
    assert words in message
    assert f"config.yaml:{lines_before + setting.count(chr(10))}:" in message or (
        f"config.yaml:{lines_before + 1}:" in message
    )
    assert caught.value.hint and "build_results" in caught.value.hint
