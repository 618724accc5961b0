"""A stop raised in CI, answered from CI (issue 26, item 4): the exported GitHub workflow's fire
job run here to an artifact that holds the stopped run, then its answer job against a fresh
checkout and that artifact with the reviewer's choice; and the attacks on that path: a forged
artifact (a fork's run, another workflow's), a stop answered twice, a stop of another run, a
choice that is not one of the stop's, inputs that try to be shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.root import Root
from sdd_git.routines.export import export_definition
from tests.conftest import commit_all, git
from tests.routines.cilocal import Engine, JobRun, bash, run_github_job
from tests.routines.test_export import _load, _routine, pin
from tests.runner.scripted import accepted_change, add_role, script, transcript, write_call

KEY = "sk-test-ci-answer-0123456789abcdef"  # the model key the engine's secret store holds


@pytest.fixture
def product(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    return github_product(root, tmp_path, monkeypatch)


def github_product(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A product whose merge routine stops once in CI (a write), then says it is done."""
    pin(root)
    add_role(root, "builder")
    found = _routine(root, "merged", "on: pr-merged")
    accepted_change(root)
    commit_all(root.path, "the product, with its routine")
    script(
        tmp_path,
        monkeypatch,
        [{"tool_calls": [write_call("fix.py")]}, {"say": "Wrote fix.py, or was told not to."}],
    )
    workflow = _load(export_definition(root, found, "github-actions"))
    engine = Engine(tmp_path / "ci", root.path)
    return {"root": root, "jobs": workflow["jobs"], "engine": engine, "tmp": tmp_path}


def _fire(p: dict[str, Any]) -> tuple[JobRun, str]:
    """The fire job, run 101 of the workflow: it stops and keeps the stopped run."""
    engine: Engine = p["engine"]
    head = git(p["root"].path, "rev-parse", "HEAD").strip()
    fired = run_github_job(
        engine,
        p["jobs"]["routine"],
        run_id="101",
        workspace=p["tmp"] / "ws-101",
        context={
            "secrets.OPENAI_API_KEY": KEY,
            "github.event.pull_request.merge_commit_sha": head,
            "github.event.pull_request.base.ref": "main",
            "github.event.pull_request.html_url": "https://github.com/acme/app/pull/7",
        },
    )
    assert fired.failed is None, fired.failed and fired.failed.stderr
    engine.record_run("101")
    (stop,) = (engine.store / "101" / "sdd-stopped" / "stops").glob("stop-*.json")
    return fired, stop.stem


def _answer(
    p: dict[str, Any], stop: str, choice: str, run_id: str = "202", source: str = "101"
) -> JobRun:
    """A dispatch of the answer path: the `show` job, then (once its reviewers approve, which
    GitHub enforces) the `answer` job with the digest `show` passed on. The first job that
    fails is what the test reads, as on the run's page."""
    engine: Engine = p["engine"]
    engine.record_run(run_id, status="in_progress")
    context = {
        "inputs.stop": stop,
        "inputs.choice": choice,
        "inputs.run": source,
        "secrets.GITHUB_TOKEN": "ghs-token-of-the-job",
        "secrets.OPENAI_API_KEY": KEY,
    }
    shown = run_github_job(
        engine,
        p["jobs"]["show"],
        run_id=run_id,
        workspace=_fresh(p["tmp"] / f"ws-{run_id}-show"),
        context=context,
    )
    if shown.failed is not None:
        return shown
    p["shown"] = shown
    digest = shown.outputs["show"]["digest"]
    return run_github_job(
        engine,
        p["jobs"]["answer"],
        run_id=run_id,
        workspace=_fresh(p["tmp"] / f"ws-{run_id}"),
        context={**context, "needs.show.outputs.digest": p.pop("digest", digest)},
    )


def _fresh(workspace: Path) -> Path:
    """A job's workspace; a re-run gets the same run, on a fresh runner."""
    base, n = workspace, 1
    while workspace.exists():
        n += 1
        workspace = base.with_name(f"{base.name}-attempt{n}")
    return workspace


def _log(workspace: Path) -> list[dict[str, Any]]:
    (path,) = (workspace / ".sdd" / "role-runs").glob("run-*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_fire_job_keeps_exactly_the_stopped_run_and_no_secret(product: dict[str, Any]) -> None:
    fired, stop = _fire(product)
    assert fired.outputs["fire"] == {"stopped": "true"}
    assert "Keep the stopped run for its answer" in fired.ran
    kept = product["engine"].store / "101" / "sdd-stopped"
    files = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    assert (
        len(files) == 2
        and files[0].startswith("role-runs/run-")
        and files[1] == f"stops/{stop}.json"
    )
    assert all(KEY not in (kept / f).read_text() for f in files)
    # In CI no saved rule counts, so "always allow" is never offered; it waits a day.
    data = json.loads((kept / "stops" / f"{stop}.json").read_text())
    assert data["choices"] == ["allow once", "deny"]
    assert data["expires_at"] - data["created_at"] == 86400
    assert not (product["tmp"] / "ws-101" / "fix.py").exists()


def test_allow_from_ci_runs_the_action_and_the_run_ends_done(product: dict[str, Any]) -> None:
    _, stop = _fire(product)
    answered = _answer(product, stop, "allow")
    assert answered.failed is None, answered.failed and answered.failed.stderr
    workspace = product["tmp"] / "ws-202"
    assert (workspace / "fix.py").read_text() == "x\n"
    log = _log(workspace)
    assert [e["choice"] for e in log if e["event"] == "decision"] == ["allow_once"]
    assert log[-1]["event"] == "run_ended" and log[-1]["status"] == "done"
    assert "Keep the stopped run for its answer" not in answered.ran  # nothing waits any more
    claim = product["engine"].store / "202" / f"sdd-answered-{stop}" / "answer.txt"
    assert claim.read_text() == f"{stop} allow by reviewer\n"


def test_deny_from_ci_runs_nothing_and_the_run_goes_on_with_the_denial(
    product: dict[str, Any],
) -> None:
    _, stop = _fire(product)
    answered = _answer(product, stop, "deny")
    assert answered.failed is None, answered.failed and answered.failed.stderr
    workspace = product["tmp"] / "ws-202"
    assert not (workspace / "fix.py").exists()
    log = _log(workspace)
    assert [e["choice"] for e in log if e["event"] == "decision"] == ["deny"]
    denied = [e for e in log if e["event"] == "tool_result"]
    assert "denied" in json.dumps(denied[-1])
    assert log[-1]["status"] == "done"


def test_a_stop_answered_twice_acts_once(product: dict[str, Any]) -> None:
    _, stop = _fire(product)
    assert _answer(product, stop, "allow").failed is None
    calls = len(transcript(product["tmp"]))
    # The same answer job run again (a re-run re-downloads the same artifact) ...
    again = _answer(product, stop, "allow")
    assert again.failed is not None and "already answered" in again.failed.stdout
    # ... and a second dispatch, from another run.
    other = _answer(product, stop, "deny", run_id="203")
    assert other.failed is not None and "already answered" in other.failed.stdout
    assert "Answer the stop and continue the run" not in again.ran + other.ran
    assert len(transcript(product["tmp"])) == calls  # no model call, nothing ran again


def test_sdd_allow_refuses_a_stop_whose_log_already_holds_its_decision(
    product: dict[str, Any],
) -> None:
    _, stop = _fire(product)
    assert _answer(product, stop, "deny").failed is None
    workspace = product["tmp"] / "ws-202"
    kept = product["engine"].store / "101" / "sdd-stopped" / "stops" / f"{stop}.json"
    (workspace / ".sdd" / "local" / "stops" / f"{stop}.json").write_text(kept.read_text())
    calls = len(transcript(product["tmp"]))
    done = bash(f"sdd allow {stop}", product["engine"].env({}), workspace)
    assert done.returncode == 1
    assert f"stop {stop} was already answered (deny)" in done.stderr
    assert not (workspace / "fix.py").exists()
    assert len(transcript(product["tmp"])) == calls
    assert not (workspace / ".sdd" / "local" / "stops" / f"{stop}.json").exists()


@pytest.mark.parametrize(
    ("how", "fields"),
    [
        ("a fork's pull request", {"head_repository": {"full_name": "mallory/app"}}),
        ("another workflow", {"workflow_id": 99}),
        ("a run still going", {"status": "in_progress"}),
    ],
)
def test_an_artifact_from_a_run_that_is_not_this_workflow_s_own_is_refused(
    product: dict[str, Any], how: str, fields: dict[str, Any]
) -> None:
    _, stop = _fire(product)
    engine: Engine = product["engine"]
    # The forger's run uploaded an artifact of the same name, whose log says "allow".
    forged = engine.store / "150" / "sdd-stopped"
    forged.parent.mkdir()
    (engine.store / "101" / "sdd-stopped").rename(forged)
    engine.record_run("150", **fields)
    refused = _answer(product, stop, "allow", source="150")
    assert refused.failed is not None, how
    assert "is not a finished run of this workflow" in refused.failed.stdout
    assert refused.ran == ["Check the answer"]
    assert not (engine.store / "202").exists()  # not even claimed


def test_the_reviewer_reads_the_action_before_she_approves_and_only_that_action_runs(
    product: dict[str, Any],
) -> None:
    """GitHub asks a job's reviewers before the job runs: the `show` job, with no secret and no
    approval, reads the kept stop with the main branch's sdd and puts its action in the run's
    summary; what `answer` then downloads must have the digest `show` saw."""
    _, stop = _fire(product)
    engine: Engine = product["engine"]
    engine.record_run("202", status="in_progress")
    context = {
        "inputs.stop": stop,
        "inputs.choice": "allow",
        "inputs.run": "101",
        "secrets.GITHUB_TOKEN": "ghs-token-of-the-job",
        "secrets.OPENAI_API_KEY": KEY,
    }
    shown = run_github_job(
        engine, product["jobs"]["show"], run_id="202",
        workspace=product["tmp"] / "ws-show", context=context,
    )  # fmt: skip
    assert shown.failed is None, shown.failed and shown.failed.stderr
    (summary,) = engine.tmp.glob("runner-202-*/summary.md")
    words = summary.read_text()
    assert f"### Stop {stop} of run run-" in words
    assert "Create the file fix.py (1 line, 2 bytes)" in words
    # Between her approval and the answer, the kept files are not the ones she read (a forger
    # who can write the artifact store): the answer refuses, claims nothing and runs nothing.
    (log,) = (engine.store / "101" / "sdd-stopped" / "role-runs").glob("run-*.jsonl")
    log.write_text(log.read_text().replace("fix.py", "evil.py"))
    calls = len(transcript(product["tmp"]))
    answered = run_github_job(
        engine, product["jobs"]["answer"], run_id="202", workspace=product["tmp"] / "ws-202",
        context={**context, "needs.show.outputs.digest": shown.outputs["show"]["digest"]},
    )  # fmt: skip
    assert answered.failed is not None
    assert "is not the one the reviewer was shown" in answered.failed.stderr
    assert "Claim the stop (a second answer sees it)" not in answered.ran
    assert not (product["tmp"] / "ws-202" / "evil.py").exists()
    assert len(transcript(product["tmp"])) == calls


def test_an_empty_digest_is_no_digest_at_all(product: dict[str, Any]) -> None:
    _, stop = _fire(product)
    product["digest"] = ""  # `show` passed nothing on: the answer never runs unchecked
    refused = _answer(product, stop, "allow")
    assert refused.failed is not None
    assert "is not the one the reviewer was shown" in refused.failed.stderr
    assert not (product["tmp"] / "ws-202" / "fix.py").exists()


def test_a_stop_of_another_run_is_refused_and_nothing_runs(product: dict[str, Any]) -> None:
    _fire(product)
    calls = len(transcript(product["tmp"]))
    refused = _answer(product, "stop-abcdef", "allow")
    assert refused.failed is not None
    assert "does not hold the stop stop-abcdef" in refused.failed.stderr
    assert len(transcript(product["tmp"])) == calls
    assert not (product["engine"].store / "202").exists()  # refused before it was claimed


def test_a_mistyped_run_claims_nothing_and_the_right_one_then_answers(
    product: dict[str, Any],
) -> None:
    _, stop = _fire(product)
    product["engine"].record_run("150")  # a finished run of this workflow that kept nothing
    wrong = _answer(product, stop, "allow", run_id="202", source="150")
    assert wrong.failed is not None and "Claim the stop (a second answer sees it)" not in wrong.ran
    right = _answer(product, stop, "allow", run_id="203")
    assert right.failed is None, right.failed and right.failed.stderr
    assert (product["tmp"] / "ws-203" / "fix.py").exists()


@pytest.mark.parametrize(
    ("stop", "choice", "says"),
    [
        ("STOP", "always", "the choice must be allow or deny"),
        ("STOP", "allow; touch pwned", "the choice must be allow or deny"),
        ('stop-abcdef"; touch pwned; echo "', "allow", "the stop id must look like"),
        ("$(touch pwned)", "allow", "the stop id must look like"),
        ("STOP\nstop-abcdef", "allow", "the stop id must look like"),
    ],
)
def test_inputs_that_are_not_a_stop_and_a_choice_are_refused_before_anything(
    product: dict[str, Any], stop: str, choice: str, says: str
) -> None:
    _, real = _fire(product)
    refused = _answer(product, stop.replace("STOP", real), choice)
    assert refused.failed is not None and says in refused.failed.stdout
    assert refused.failed.returncode == 2 and refused.ran == ["Check the answer"]
    assert not list(product["tmp"].rglob("pwned"))


def test_a_source_run_that_is_not_a_run_number_is_refused(product: dict[str, Any]) -> None:
    _, stop = _fire(product)
    refused = _answer(product, stop, "allow", source="101 --repo mallory/app")
    assert refused.failed is not None and "the run must be the number" in refused.failed.stdout


def test_the_answer_job_waits_behind_the_environment_and_runs_only_from_main(
    product: dict[str, Any],
) -> None:
    answer, show = product["jobs"]["answer"], product["jobs"]["show"]
    assert answer["environment"] == "sdd-approvals"
    assert answer["needs"] == "show" and "environment" not in show
    assert "secrets.OPENAI_API_KEY" not in yaml.safe_dump(show)  # it reads; it never acts
    assert show["if"] == answer["if"]
    assert (
        answer["if"]
        == "github.event_name == 'workflow_dispatch' && github.ref == 'refs/heads/main'"
    )
    assert answer["permissions"] == {"contents": "read", "actions": "read"}
    assert product["jobs"]["routine"]["if"].startswith("github.event_name != 'workflow_dispatch'")
    text = yaml.safe_dump(answer)
    assert "inputs." not in "".join(str(s.get("run", "")) for s in answer["steps"])
    assert "${{ inputs.stop }}" in text  # only in env and with:, never in a script


def test_a_stop_raised_again_after_the_answer_is_kept_for_the_next_answer(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pin(root)
    add_role(root, "builder")
    found = _routine(root, "merged", "on: pr-merged")
    accepted_change(root)
    commit_all(root.path, "the product")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [write_call("a.py")]},
            {"tool_calls": [write_call("b.py")]},
            {"say": "Both written."},
        ],
    )
    p = {
        "root": root,
        "jobs": _load(export_definition(root, found, "github-actions"))["jobs"],
        "engine": Engine(tmp_path / "ci", root.path),
        "tmp": tmp_path,
    }
    _, first = _fire(p)
    again = _answer(p, first, "allow")
    assert again.failed is None, again.failed and again.failed.stderr
    assert again.outputs["answer"] == {"stopped": "true"}
    (second,) = (p["engine"].store / "202" / "sdd-stopped" / "stops").glob("stop-*.json")
    p["engine"].record_run("202")
    last = _answer(p, second.stem, "allow", run_id="303", source="202")
    assert last.failed is None, last.failed and last.failed.stderr
    # Each job's runner is its own: the first write was made on 202's, the second on 303's.
    assert (tmp_path / "ws-202" / "a.py").exists() and (tmp_path / "ws-303" / "b.py").exists()
    assert _log(tmp_path / "ws-303")[-1]["status"] == "done"


def test_jenkins_asks_its_reviewers_with_an_input_step_and_answers_in_the_same_workspace(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from sdd_git.routines.fire import fire
    from sdd_git.routines.routine import Event

    pin(root)
    add_role(root, "builder")
    data = yaml.safe_load(root.config.read_text())
    data["approvals"]["ci_timeout"] = "2h"
    root.config.write_text(yaml.safe_dump(data, sort_keys=False))
    from tests.trusthelp import confirm

    confirm(root, ".sdd/config.yaml")
    found = _routine(root, "merged", "on: pr-merged")
    accepted_change(root)
    commit_all(root.path, "the product")
    text = export_definition(root, found, "jenkins")
    assert "options {" not in text  # no pipeline-wide timeout cuts the reviewer's wait short
    assert "timeout(time: 7200, unit: 'SECONDS')" in text  # approvals.ci_timeout
    assert "def SDD_APPROVERS = 'sdd-approvers'" in text and "submitter: SDD_APPROVERS," in text
    assert "choice(name: 'SDD_CHOICE', choices: ['deny', 'allow']," in text
    scripts = [part.split("'''", 1)[0] for part in text.split("script: '''")[1:]]
    assert len(scripts) == 3 and all("\\" not in s for s in scripts)
    _, find_stop, answer = scripts
    # The fire, as its first script runs it, raised one stop in this workspace.
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("fix.py")]}, {"say": "done"}])
    head = git(root.path, "rev-parse", "HEAD").strip()
    in_ci = Event("ev-j", "pr-merged", head, "2026-11-30T09:00:00Z", "ci")
    assert fire(root, found, in_ci).status == "stopped"
    (tmp_path / "wstmp").mkdir()
    (tmp_path / "wstmp" / "sdd-venv").symlink_to(Path(sys.executable).parent.parent)
    env = {**Engine(tmp_path / "ci", root.path).env({}), "WORKSPACE_TMP": str(tmp_path / "wstmp")}
    env.pop("GITHUB_ACTIONS")
    env["JENKINS_URL"], env["BUILD_ID"] = "https://jenkins.example", "7"
    found_stop = bash(find_stop, env, root.path)
    assert found_stop.returncode == 0, found_stop.stderr
    stop = found_stop.stdout.strip()
    assert stop.startswith("stop-")
    refused = bash(answer, {**env, "SDD_STOP": stop, "SDD_CHOICE": "always"}, root.path)
    assert refused.returncode == 2 and not (root.path / "fix.py").exists()
    done = bash(answer, {**env, "SDD_STOP": stop, "SDD_CHOICE": "allow"}, root.path)
    assert done.returncode == 0, done.stderr
    assert (root.path / "fix.py").read_text() == "x\n"
    assert bash(find_stop, env, root.path).stdout.strip() == ""  # nothing waits: the loop ends
