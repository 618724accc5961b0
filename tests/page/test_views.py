"""Each view and action of her page over HTTP (Starlette's TestClient, in-process), on the
scripted provider. The guard's own rules are tested in test_safety.py; here the page is served
unguarded (build_app), except where a test says it checks the guarded app."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

from starlette.testclient import TestClient

from sdd_git.demo import SCRIPTS, WORDS
from sdd_git.page.app import build_app, create_app
from sdd_git.records import acceptance, changes
from sdd_git.root import Root
from tests.page.forms import form_fields

READING = (  # the demo's reading: its recorded critique cites C1 and C2
    "Search expenses by month and merchant, from the expense list.\n\n"
    '- C1: Searching "hotel" for last month lists the charge.\n'
    "- C2: A month with no match says that no charge was found."
)


@pytest.fixture
def page(root: Root) -> TestClient:
    return TestClient(build_app(root))


def notice(response: Any) -> str:
    found = re.search(r'id="notice"><p>(.*?)</p>', response.text, re.S)
    return found.group(1) if found else ""


def next_link(response: Any) -> str:
    found = re.search(r'href="([^"]*)" id="next"', response.text)
    assert found, response.text
    return found.group(1)


def page_log(root: Root) -> list[dict[str, Any]]:
    path = root.local / "page.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_events(root: Root, event: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for log in (root.sdd / "role-runs").glob("*.jsonl")
        for line in log.read_text().splitlines()
        if json.loads(line).get("event") == event
    ]


def answered(page: TestClient, stop: str, choice: str) -> Any:
    """Her answer to a stop, then the job's page once the role has gone as far as it goes: the
    answer comes back as soon as it is logged, and the rest is followed like any run."""
    import time

    taken = page.post(stop, data={"choice": choice})
    if taken.status_code != 200 or not taken.url.path.startswith("/jobs/"):
        return taken
    assert 'id="answer-taken"' in taken.text, taken.text
    deadline = time.monotonic() + 20
    shown = taken
    while 'id="outcome-text"' not in shown.text:
        assert time.monotonic() < deadline, shown.text
        time.sleep(0.02)
        shown = page.get(taken.url.path)
    return shown


def accepted_change(root: Root) -> str:
    pack = changes.create(root, WORDS)
    acceptance.correct_reading(root, pack.id, READING)
    acceptance.accept_reading(root, pack.id)
    return pack.id


def builder_stopped(page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch) -> str:
    """A builder run (checked by the qa-author) up to its file-write stop; returns that stop."""
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'builder.yaml'}")
    change = accepted_change(root)
    made = page.post(
        f"/changes/{change}/run",
        data={"role": "builder", "critic": "qa-author", "task": "Implement SPEC-0001#S1."},
    )
    draft_stop = next_link(made)
    assert draft_stop.startswith("/stops/"), made.text
    after = answered(page, draft_stop, "allow_once")
    return next_link(after)


# The folder chooser ------------------------------------------------------------------------


def test_without_a_folder_the_page_starts_at_the_folder_chooser(tmp_path: Path) -> None:
    page = TestClient(build_app(None, tmp_path / "new"))
    shown = page.get("/")
    assert shown.url.path == "/folder"
    assert str(tmp_path / "new") in shown.text
    assert '<label for="folder">' in shown.text


def test_choosing_a_new_product_folder_runs_init_there(tmp_path: Path) -> None:
    page = TestClient(build_app(None, tmp_path))
    shown = page.post(
        "/folder", data={"folder": str(tmp_path / "expenses"), "kind": "new", "product": "Expenses"}
    )
    assert shown.url.path == "/"
    assert (tmp_path / "expenses" / ".sdd" / "config.yaml").is_file()
    assert (tmp_path / "expenses" / ".git").is_dir()
    assert "Expenses" not in ("",)
    logged = page_log(Root(tmp_path / "expenses"))
    assert logged[-1]["action"] == "init" and logged[-1]["origin"] == "page"


def test_a_new_product_needs_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine\n")
    page = TestClient(build_app(None, tmp_path))
    shown = page.post("/folder", data={"folder": str(tmp_path / "full"), "kind": "new"})
    assert shown.status_code == 400
    assert "is not empty" in shown.text
    assert not (tmp_path / "full" / ".sdd").exists()


def test_existing_code_is_made_an_sdd_root_and_keeps_its_files(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "app.py").write_text("print('hi')\n")
    page = TestClient(build_app(None, tmp_path))
    page.post("/folder", data={"folder": str(code), "kind": "existing"})
    assert (code / ".sdd" / "config.yaml").is_file()
    assert (code / "app.py").read_text() == "print('hi')\n"


# Her words and the reading ------------------------------------------------------------------


def test_her_words_start_a_change_and_stay_verbatim(page: TestClient, root: Root) -> None:
    shown = page.post("/changes", data={"words": WORDS})
    assert shown.url.path == "/changes/CH-0001"
    assert changes.load(root, "CH-0001").words == WORDS
    assert page_log(root)[-1] == {
        **page_log(root)[-1],
        "action": "change new",
        "args": {"words": WORDS, "change": "CH-0001"},
        "origin": "page",
    }


def test_empty_words_start_nothing(page: TestClient, root: Root) -> None:
    shown = page.post("/changes", data={"words": "  "})
    assert shown.status_code == 400
    assert 'role="alert"' in shown.text
    assert changes.list_all(root) == []
    assert page_log(root) == []


def test_a_bug_keeps_what_happened_and_what_she_expected(page: TestClient, root: Root) -> None:
    page.post(
        "/changes",
        data={"words": "Search broke", "bug": "yes", "happened": "blank", "expected": "a list"},
    )
    shown = page.get("/changes/CH-0001")
    assert "What happened" in shown.text and "blank" in shown.text and "a list" in shown.text


def test_the_spec_steward_drafts_the_reading_and_she_accepts_it(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    page.post("/changes", data={"words": WORDS})
    job = page.post("/changes/CH-0001/work")
    assert job.url.path.startswith("/jobs/")
    assert "A short reading is drafted" in job.text
    assert next_link(job) == "/changes/CH-0001"
    shown = page.get("/changes/CH-0001")
    assert "Search expenses by month and merchant" in shown.text
    assert 'id="accept-reading"' in shown.text
    accepted = page.post("/changes/CH-0001/reading", data=form_fields(shown.text, "accept-reading"))
    assert "You accepted the reading" in notice(accepted)
    assert 'id="reading-state">accepted' in accepted.text


def test_her_correction_replaces_the_draft_unaccepted(page: TestClient, root: Root) -> None:
    page.post("/changes", data={"words": WORDS})
    shown = page.post("/changes/CH-0001/reading", data={"choice": "correct", "words": READING})
    assert "not accepted until you accept it" in notice(shown)
    assert 'id="reading-state">draft' in shown.text
    assert [e["action"] for e in page_log(root)][-1] == "correct reading"


def test_not_yet_changes_nothing(page: TestClient, root: Root) -> None:
    page.post("/changes", data={"words": WORDS})
    page.post("/changes/CH-0001/reading", data={"choice": "correct", "words": READING})
    before = (root.memory / "decisions.yaml").read_bytes() if root.decisions.exists() else b""
    shown = page.post("/changes/CH-0001/reading", data={"choice": "not yet"})
    assert "the draft stays a draft" in notice(shown)
    after = (root.memory / "decisions.yaml").read_bytes() if root.decisions.exists() else b""
    assert before == after


def test_next_stage_says_which_gate_holds_it(page: TestClient, root: Root) -> None:
    page.post("/changes", data={"words": WORDS})
    shown = page.post("/changes/CH-0001/next")
    assert shown.status_code == 400
    assert "accept the reading first" in shown.text
    assert changes.load(root, "CH-0001").stage == "reading"


# Stops -------------------------------------------------------------------------------------


def test_a_stop_shows_the_action_the_sandbox_and_the_file_in_full(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    shown = page.get(stop)
    assert "def search(expenses, month, merchant):" in shown.text
    assert 'id="stop-sandbox"' in shown.text
    for choice in ("allow_once", "always_allow", "deny", "later"):
        assert f'id="choice-{choice}"' in shown.text


def test_allow_once_runs_that_action_only_and_logs_the_page(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    job = answered(page, stop, "allow_once")
    assert (root.path / "src" / "expenses" / "search.py").is_file()
    assert "Commit src/expenses/search.py" in job.text  # the commit is its own stop
    decisions = run_events(root, "decision")
    assert decisions and all(d["origin"] == "page" for d in decisions)
    assert [e["action"] for e in page_log(root)].count("allow once") == 2


def test_her_answer_comes_back_once_logged_while_the_role_goes_on(root: Root) -> None:
    """A real model can take minutes after her answer: the page says her answer is taken as
    soon as the run logs its decision, and follows the rest live."""
    import threading

    app = build_app(root)
    page = TestClient(app)
    release = threading.Event()

    def slow_answer(told: Any) -> str:
        told({"event": "decision", "stop": "stop-1", "choice": "allow_once"})
        release.wait(20)  # the model, still thinking
        return "done"

    job = app.state.site.jobs.start(
        "builder goes on after your answer",
        None,
        slow_answer,
        ready_on="decision",
        receipt="You chose Allow once.",
    )
    try:
        job.settle()
        assert job.answered and not job.done.is_set()
        shown = page.get(f"/jobs/{job.id}")
        assert "You chose Allow once." in shown.text and 'id="answer-taken"' in shown.text
        assert 'id="working"' in shown.text and 'id="outcome-text"' not in shown.text
    finally:
        release.set()
    assert job.done.wait(20)
    assert 'id="outcome-text"' in page.get(f"/jobs/{job.id}").text


def test_an_answer_that_fails_before_its_decision_says_why_and_claims_nothing(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git import lockfile
    from sdd_git.runner.runlog import role_lock

    stop = builder_stopped(page, root, monkeypatch)
    with lockfile.hold(role_lock(root, "builder")):  # another answer holds the role
        shown = page.post(stop, data={"choice": "allow_once"})
    assert 'id="answer-taken"' not in shown.text
    assert 'id="outcome-text"' in shown.text and "could not go on" in shown.text
    assert not (root.path / "src" / "expenses" / "search.py").exists()
    assert page.get(stop).status_code == 200  # still waiting for her


def test_deny_applies_nothing(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    answered(page, stop, "deny")
    assert not (root.path / "src" / "expenses" / "search.py").exists()
    assert run_events(root, "decision")[-1]["choice"] == "deny"


def test_later_leaves_the_stop_waiting(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    shown = page.post(stop, data={"choice": "later"})
    assert shown.url.path == "/"
    assert stop in shown.text  # listed under "Waiting for you"
    assert page.get(stop).status_code == 200


def test_an_answered_stop_is_gone(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    answered(page, stop, "deny")
    assert page.get(stop).status_code == 404
    assert page.post(stop, data={"choice": "allow_once"}).status_code == 404


# Scenarios, results, failures, the release -------------------------------------------------


def test_a_scenario_is_written_accepted_tried_and_its_result_recorded(
    page: TestClient, root: Root
) -> None:
    change = accepted_change(root)
    page.post(
        f"/changes/{change}/scenarios",
        data={"title": "Find it", "steps": "Open the list\nSearch hotel", "expected": "Listed."},
    )
    shown = page.get(f"/changes/{change}")
    accepted = page.post(
        f"/changes/{change}/scenarios/SC-1/accept", data=form_fields(shown.text, "accept-SC-1")
    )
    assert "as required" in notice(accepted)
    tried = page.get(f"/changes/{change}/scenarios/SC-1")
    assert "<li>Open the list</li>" in tried.text and "<li>Search hotel</li>" in tried.text
    recorded = page.post(
        f"/changes/{change}/scenarios/SC-1/result",
        data={"result": "pass", "words": "It was there."},
    )
    assert "pass" in notice(recorded)
    assert "It was there." in (root.change_dir(change) / "qa.yaml").read_text()


def test_a_failing_required_scenario_blocks_the_release_until_she_accepts_it(
    page: TestClient, root: Root
) -> None:
    change = accepted_change(root)
    acceptance.add_scenario(root, change, "Find it", "Search hotel", "Listed.")
    shown = page.get(f"/changes/{change}")
    page.post(
        f"/changes/{change}/scenarios/SC-1/accept", data=form_fields(shown.text, "accept-SC-1")
    )
    page.post(f"/changes/{change}/scenarios/SC-1/result", data={"result": "fail", "words": "No."})
    blocked = page.post(f"/changes/{change}/release")
    assert blocked.status_code == 400
    assert "SC-1" in blocked.text
    assert not list(root.releases.glob("R-*.md"))
    page.post(f"/changes/{change}/scenarios/SC-1/failure", data={"words": "Ship it anyway."})
    released = page.post(f"/changes/{change}/release")
    assert "Nothing was pushed or deployed" in notice(released)
    notes = (root.releases / "R-0001.md").read_text()
    assert f"> {WORDS}" in notes


def test_a_result_needs_pass_or_fail(page: TestClient, root: Root) -> None:
    change = accepted_change(root)
    acceptance.add_scenario(root, change, "Find it", "Search hotel", "Listed.")
    shown = page.post(f"/changes/{change}/scenarios/SC-1/result", data={"words": "hm"})
    assert shown.status_code == 400
    assert not (root.change_dir(change) / "qa.yaml").exists()


# Runs: live progress and the log -----------------------------------------------------------


def test_a_run_streams_its_progress_and_ends_with_the_outcome(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    page.post("/changes", data={"words": WORDS})
    job = page.post("/changes/CH-0001/work")
    with page.stream("GET", f"{job.url.path}/events") as events:
        body = "".join(events.iter_text())
    assert body.count("event: line") >= 3
    assert body.rstrip().splitlines()[-2] == "event: outcome"
    assert 'aria-live="polite"' in page.get(job.url.path).text


def test_the_log_of_any_run_is_readable(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    page.post("/changes", data={"words": WORDS})
    page.post("/changes/CH-0001/work")
    listed = page.get("/runs")
    run = re.search(r'href="/runs/(run-[^"]+)"', listed.text)
    assert run
    shown = page.get(f"/runs/{run.group(1)}")
    assert "started: spec-steward" in shown.text
    assert page.get("/runs/not..a-run").status_code == 404


# The page as served ------------------------------------------------------------------------


def test_the_served_page_is_behind_the_guard(root: Root) -> None:
    app = create_app(root, "one-time-token", port=8765)
    browser = TestClient(app, base_url="http://127.0.0.1:8765", client=("127.0.0.1", 50000))
    assert browser.get("/").status_code == 401
    signed_in = browser.get("/?token=one-time-token")
    assert signed_in.url.path == "/" and signed_in.status_code == 200
    refused = browser.post(
        "/changes", data={"words": WORDS}, headers={"Origin": "http://evil.example"}
    )
    assert refused.status_code == 403
    assert changes.list_all(root) == []


def test_sdd_page_prints_a_loopback_url_with_its_token(root: Root) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "page", "--no-browser"],
        cwd=root.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=15)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{40,}", url)


def test_sdd_page_refuses_inside_a_role_run(root: Root) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sdd_git", "page", "--no-browser"],
        cwd=root.path,
        env={**os.environ, "SDD_RUN_ID": "run-1"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: ")
    assert done.stdout == ""


@pytest.mark.parametrize("args", [["--help"], ["role", "list"]])
def test_hot_paths_import_no_web_stack(root: Root, args: list[str]) -> None:
    probe = (
        "import sys\n"
        "from sdd_git.cli.main import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "web = ('starlette', 'uvicorn', 'jinja2', 'sdd_git.page')\n"
        "heavy = [m for m in web if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root.path, capture_output=True, text=True, timeout=60
    )
    assert "HEAVY []" in done.stderr


# Roles, memory, routines -------------------------------------------------------------------


def test_a_roles_conversation_shows_her_message_and_its_reply(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    page.post("/changes", data={"words": WORDS})
    page.post("/changes/CH-0001/work")
    assert "spec-steward" in page.get("/roles").text
    shown = page.get("/roles/spec-steward")
    assert "The reading is drafted in SPEC-0001#S1" in shown.text
    assert 'id="send-reply-M1"' in shown.text
    assert 'id="stop-now"' in shown.text


def test_her_reply_to_one_message_runs_the_role_with_reply_to(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.runner.runindex import runs

    script = root.path.parent / "reply.yaml"
    script.write_text("calls:\n  - say: 'Noted.'\n")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    page.post("/roles/spec-steward/reply", data={"task": "Hello there."})
    job = page.post("/roles/spec-steward/reply", data={"task": "About that.", "reply_to": "M2"})
    assert "Noted." in job.text
    said = [m for m in _messages(root, "spec-steward") if m.get("from") == "person"]
    assert said[-1]["reply_to"] == "M2"
    assert len(runs(root, "spec-steward")) == 2
    assert page_log(root)[-1]["args"]["reply_to"] == "M2"


def test_a_run_she_starts_on_the_page_is_logged_as_asked_there(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = root.path.parent / "reply.yaml"
    script.write_text("calls:\n  - say: 'Noted.'\n")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    page.post("/roles/spec-steward/reply", data={"task": "Hello there."})
    [started] = run_events(root, "run_started")
    assert started["origin"] == "person" and started["via"] == "page"


def test_a_run_started_by_a_command_says_nothing_of_the_page(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import run_cli

    script = root.path.parent / "reply.yaml"
    script.write_text("calls:\n  - say: 'Noted.'\n")
    done = run_cli(
        "role", "run", "spec-steward", "--task", "Hello.", cwd=root.path,
        env={"SDD_PROVIDER": f"script:{script}"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [started] = run_events(root, "run_started")
    assert "via" not in started


def test_she_attaches_a_file_with_her_description(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    script = root.path.parent / "reply.yaml"
    script.write_text("calls:\n  - say: 'Seen the log.'\n")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    uploads_before = set(Path(tempfile.gettempdir()).glob("sdd-page-upload-*"))
    job = page.post(
        "/roles/spec-steward/reply",
        data={"task": "Why did March fail?", "attachment_what": "the March server log"},
        files={"attachment": ("../../march.log", b"ERROR hotel charge missing\n", "text/plain")},
    )
    assert "Seen the log." in job.text
    [said] = [m for m in _messages(root, "spec-steward") if m.get("from") == "person"]
    [attached] = said["attachments"]
    assert attached["name"] == "march.log" and attached["what"] == "the March server log"
    copy = root.path / attached["copy"]
    assert copy.read_text() == "ERROR hotel charge missing\n"
    assert copy.is_relative_to(root.local / "roles" / "spec-steward" / "attachments")
    assert len(run_events(root, "run_started")) == 1
    [sent] = [e for e in run_events(root, "message") if e.get("role") == "user" and e["content"]]
    assert "Attachment march.log (the March server log)" in sent["content"]
    assert "ERROR hotel charge missing" in sent["content"]
    shown = page.get("/roles/spec-steward").text
    assert "march.log" in shown and "the March server log" in shown
    assert set(Path(tempfile.gettempdir()).glob("sdd-page-upload-*")) == uploads_before
    assert page_log(root)[-1]["args"]["attachment_what"] == "the March server log"


def test_an_attachment_without_her_description_starts_nothing(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    uploads_before = set(Path(tempfile.gettempdir()).glob("sdd-page-upload-*"))
    shown = page.post(
        "/roles/spec-steward/reply",
        data={"task": "Look at this."},
        files={"attachment": ("march.log", b"ERROR\n", "text/plain")},
    )
    assert shown.status_code == 400
    assert "say what the attached file is" in shown.text
    assert run_events(root, "run_started") == []
    assert set(Path(tempfile.gettempdir()).glob("sdd-page-upload-*")) == uploads_before


def test_an_attachment_over_the_limit_is_refused_not_cut(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.page import views_more

    monkeypatch.setattr(views_more, "ATTACHMENT_LIMIT", 1000)
    shown = page.post(
        "/roles/spec-steward/reply",
        data={"task": "Look.", "attachment_what": "a big log"},
        files={"attachment": ("big.log", b"x" * 5000, "text/plain")},
    )
    assert shown.status_code == 400
    assert "big.log is larger than" in shown.text
    assert run_events(root, "run_started") == []


def test_she_talks_to_all_roles_of_a_change_in_its_group(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    page.post("/changes", data={"words": WORDS})
    page.post("/changes/CH-0001/work")
    assert 'id="no-group"' in page.get("/changes/CH-0001/group").text
    said = page.post("/changes/CH-0001/group", data={"words": "Keep it to March for now."})
    assert said.status_code == 200 and "Sent to spec-steward" in notice(said)
    assert "Keep it to March for now." in said.text and 'id="group-G1"' in said.text
    [mine] = [m for m in _messages(root, "spec-steward") if m.get("group") == "ch-0001"]
    assert mine["text"] == "Keep it to March for now." and mine["from"] == "person"
    assert [e["action"] for e in page_log(root)][-2:] == ["group create", "group say"]
    again = page.post("/changes/CH-0001/group", data={"words": "And keep the merchant."})
    assert 'id="group-G2"' in again.text
    assert [e["action"] for e in page_log(root)][-1] == "group say"


def test_an_empty_group_message_makes_no_group(page: TestClient, root: Root) -> None:
    from sdd_git.network.groups import group_path

    page.post("/changes", data={"words": WORDS})
    shown = page.post("/changes/CH-0001/group", data={"words": "  "})
    assert shown.status_code == 400 and "write your message first" in shown.text
    assert not group_path(root, "ch-0001").exists()


def test_the_group_of_an_unknown_change_is_missing(page: TestClient, root: Root) -> None:
    from sdd_git.network.groups import group_path

    assert page.get("/changes/CH-9999/group").status_code == 404
    shown = page.post("/changes/CH-9999/group", data={"words": "Hello all."})
    assert shown.status_code == 404
    assert not group_path(root, "ch-9999").exists()


def test_she_names_her_products_parts_on_the_page(page: TestClient, root: Root) -> None:
    from sdd_git.records import scopes

    assert 'id="no-parts"' in page.get("/parts").text
    added = page.post("/parts/module", data={"name": "money"})
    assert added.status_code == 200 and notice(added) == "Module money added."
    served = page.post(
        "/parts/service", data={"name": "expenses", "module": "money", "owner": "builder"}
    )
    assert notice(served) == "Service expenses added, owned by builder."
    assert 'id="service-expenses"' in served.text
    tree = scopes.load(root)
    assert [(m.name, [(s.name, s.owner) for s in m.services]) for m in tree.modules] == [
        ("money", [("expenses", "builder")])
    ]
    gone = page.post("/parts/remove", data={"name": "expenses"})
    assert notice(gone) == "Service expenses removed."
    assert [a["action"] for a in page_log(root)] == [
        "scope add module",
        "scope add service",
        "scope remove",
    ]


def test_a_part_the_command_would_refuse_is_refused_and_said(page: TestClient, root: Root) -> None:
    product = (root.path / "memory" / "product.yaml").read_bytes()
    for what, fields in [
        ("module", {"name": "Money Matters"}),
        ("service", {"name": "expenses", "module": "nowhere"}),
        ("remove", {"name": "nothing"}),
    ]:
        shown = page.post(f"/parts/{what}", data=fields)
        assert shown.status_code == 400 and 'id="error"' in shown.text, (what, shown.text)
    assert page.post("/parts/everything", data={"name": "x"}).status_code == 404
    assert (root.path / "memory" / "product.yaml").read_bytes() == product
    assert page_log(root) == []


def _messages(root: Root, role: str) -> list[dict[str, Any]]:
    from sdd_git.roles.conversation import messages

    return messages(root, role)


def test_stop_now_closes_the_roles_waiting_run(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    stop = builder_stopped(page, root, monkeypatch)
    shown = page.post("/roles/builder/stop")
    assert "to stop now" in notice(shown)
    assert run_events(root, "decision")[-1]["choice"] in ("stop_now", "allow_once")
    assert page.get(stop).status_code == 404


def test_she_corrects_a_roles_memory_by_forgetting_an_item(page: TestClient, root: Root) -> None:
    from sdd_git.runner.conversation import memory, memory_path

    path = memory_path(root, "builder")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("- {note: Hotels are under travel., at: '2026-11-30T10:00:00Z'}\n")
    shown = page.get("/roles/builder")
    assert "Hotels are under travel." in shown.text
    forgot = page.post("/roles/builder/forget", data={"number": "1"})
    assert "forgot: Hotels are under travel." in notice(forgot)
    assert memory(root, "builder") == []


def test_she_corrects_a_memory_item_in_her_words(page: TestClient, root: Root) -> None:
    from sdd_git.runner.conversation import memory, memory_path

    path = memory_path(root, "builder")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "- {note: Hotels are under travel., at: '2026-11-30T10:00:00Z'}\n"
        "- {note: Taxis are under travel., at: '2026-11-30T11:00:00Z'}\n"
    )
    shown = page.post(
        "/roles/builder/correct", data={"number": "1", "note": " Hotels are lodging. "}
    )
    assert "no longer remembers “Hotels are under travel.”" in notice(shown)
    assert memory(root, "builder") == [
        {"note": "Hotels are lodging.", "at": "2026-11-30T10:00:00Z"},
        {"note": "Taxis are under travel.", "at": "2026-11-30T11:00:00Z"},
    ]
    assert page_log(root)[-1]["action"] == "memory correct"


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"number": "1", "note": "  "}, "cannot be empty"),
        ({"number": "3", "note": "x"}, "has no memory item 3"),
        ({"number": "one", "note": "x"}, "choose an item"),
    ],
)
def test_a_correction_the_memory_cannot_take_changes_nothing(
    page: TestClient, root: Root, fields: dict[str, str], said: str
) -> None:
    from sdd_git.runner.conversation import memory_path

    path = memory_path(root, "builder")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("- {note: Hotels are under travel., at: '2026-11-30T10:00:00Z'}\n")
    before = path.read_bytes()
    shown = page.post("/roles/builder/correct", data=fields)
    assert shown.status_code == 400 and said in shown.text
    assert path.read_bytes() == before and page_log(root) == []


def test_a_correction_never_overwrites_her_unfinished_edit(page: TestClient, root: Root) -> None:
    from sdd_git.runner.conversation import memory_draft_path, memory_path

    path = memory_path(root, "builder")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("- {note: Hotels are under travel., at: '2026-11-30T10:00:00Z'}\n")
    memory_draft_path(root, "builder").write_text("- note: half written [\n")
    shown = page.post("/roles/builder/correct", data={"number": "1", "note": "Lodging."})
    assert shown.status_code == 400 and "unfinished edit" in shown.text
    assert memory_draft_path(root, "builder").read_text() == "- note: half written [\n"
    assert "Hotels are under travel." in path.read_text()


def watcher(root: Root) -> None:
    from sdd_git.roles import manage as roles

    roles.create(root, "watcher", "Summarise the day's changes", produces="review")


def test_routines_pause_resume_and_history(page: TestClient, root: Root) -> None:
    from sdd_git.routines import manage

    watcher(root)
    manage.create(
        root,
        manage.draft(
            root, "watcher", "nightly", on=None, schedule="0 9 * * 1-5", input="the day's "
            "changes", expected="a short summary",
        ),
    )  # fmt: skip
    listed = page.get("/routines")
    assert "watcher/nightly" in listed.text and 'id="pause-nightly"' in listed.text
    paused = page.post("/routines/watcher/nightly/pause")
    assert "is paused" in notice(paused)
    assert manage.show(root, "nightly").paused
    resumed = page.post("/routines/watcher/nightly/resume")
    assert "running again" in notice(resumed)
    assert not manage.show(root, "nightly").paused
    history = page.get("/routines/watcher/nightly/history")
    assert "No run yet." in history.text
    assert [e["action"] for e in page_log(root)][-2:] == ["routine pause", "routine resume"]


def test_routine_test_is_a_rehearsal(
    page: TestClient, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.routines import manage

    script = root.path.parent / "routine.yaml"
    script.write_text("calls:\n  - say: 'Nothing to report.'\n")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    watcher(root)
    manage.create(
        root,
        manage.draft(
            root, "watcher", "nightly", on=None, schedule="0 9 * * 1-5", input="the day",
            expected="a summary",
        ),
    )  # fmt: skip
    job = page.post("/routines/watcher/nightly/test")
    assert job.url.path.startswith("/jobs/")
    history = page.get("/routines/watcher/nightly/history")
    assert "(a test)" in history.text
