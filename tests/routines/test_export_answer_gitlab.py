"""A stop raised in GitLab CI, answered by its manual job (issue 26, item 4): the exported file's
fire job's script run here to its artifacts, stopped; the answer job's script against a fresh
checkout and those artifacts with the reviewer's SDD_STOP and SDD_CHOICE; and a retry of the
answer job, which GitLab's API (a real HTTP server on loopback) shows was already answered."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.routines.export import export_definition
from tests.conftest import commit_all, git
from tests.routines.cilocal import SDD_BIN, bash
from tests.routines.test_export import _load, _routine, pin
from tests.runner.scripted import accepted_change, add_role, script, transcript, write_call

PIPELINE = "9"


class GitLab:
    """The few API routes the answer job reads: the pipeline's jobs, and a job's artifact file."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.jobs: list[dict[str, Any]] = []
        self.seen_tokens: list[str] = []
        gitlab = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                gitlab.seen_tokens.append(self.headers.get("PRIVATE-TOKEN", ""))
                path = self.path.split("?", 1)[0]
                body: bytes | None = None
                if path == f"/api/v4/projects/1/pipelines/{PIPELINE}/jobs":
                    body = json.dumps(gitlab.jobs).encode()
                elif path.startswith("/api/v4/projects/1/jobs/"):
                    job, _, rest = path.removeprefix("/api/v4/projects/1/jobs/").partition("/")
                    file = gitlab.store / job / rest.removeprefix("artifacts/")
                    body = file.read_bytes() if file.is_file() else None
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(body or b'{"message": "404 Not Found"}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v4"


@pytest.fixture
def gitlab(tmp_path: Path) -> Iterator[GitLab]:
    api = GitLab(tmp_path / "gitlab-artifacts")
    thread = threading.Thread(target=api.server.serve_forever, daemon=True)
    thread.start()
    yield api
    api.server.shutdown()


def _run(job: dict[str, Any], project: Path, extra: dict[str, str]) -> Any:
    """The job's script as GitLab runs it (one shell, in the project's folder), its variables
    expanded as GitLab expands them; the pinned install is this checkout's sdd on PATH."""
    given = {"CI_COMMIT_SHA": git(project, "rev-parse", "HEAD").strip(), "CI_COMMIT_BRANCH": "main"}
    variables = {
        k: os.path.expandvars(str(v).replace("$CI_COMMIT_SHA", given["CI_COMMIT_SHA"])).replace(
            "$CI_COMMIT_BRANCH", "main"
        )
        for k, v in (job.get("variables") or {}).items()
    }
    script = [s for s in job["script"] if not s.startswith("python -m pip install")]
    env = {
        **os.environ,
        "PATH": f"{SDD_BIN}:{os.environ['PATH']}",
        "GITLAB_CI": "true",
        "CI": "true",
        "CI_PROJECT_DIR": str(project),
        "CI_PROJECT_ID": "1",
        "CI_PIPELINE_ID": PIPELINE,
        "CI_JOB_TOKEN": "job-token",
        "GITLAB_USER_LOGIN": "reviewer",
        "OPENAI_API_KEY": "sk-test-gitlab-0123456789",
        **given,
        **variables,
        **extra,
    }
    return bash("\n".join(script), env, project)


def _stopped(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    pin(root)
    add_role(root, "builder")
    found = _routine(root, "merged", "on: pr-merged")
    accepted_change(root)
    commit_all(root.path, "the product")
    script(
        tmp_path,
        monkeypatch,
        [{"tool_calls": [write_call("fix.py")]}, {"say": "Done, or told not to."}],
    )
    data = _load(export_definition(root, found, "gitlab-ci"))
    project = tmp_path / "project-1"
    git(tmp_path, "clone", "-q", str(root.path), str(project))
    fired = _run(data["sdd-routine-merged"], project, {"CI_JOB_ID": "1"})
    assert fired.returncode == 3, fired.stderr  # an allowed failure: the pipeline goes on
    assert data["sdd-routine-merged"]["artifacts"]["paths"] == ["sdd-stopped/"]
    (stop,) = (project / "sdd-stopped" / "stops").glob("stop-*.json")
    return {"data": data, "root": root, "kept": project / "sdd-stopped", "stop": stop.stem}


def _answer(
    p: dict[str, Any], gitlab: GitLab, tmp_path: Path, job_id: str, stop: str, choice: str
) -> Any:
    project = tmp_path / f"project-{job_id}"
    git(tmp_path, "clone", "-q", str(p["root"].path), str(project))
    shutil.copytree(p["kept"], project / "sdd-stopped")  # needs: artifacts: true
    done = _run(
        p["data"]["sdd-answer-merged"],
        project,
        {
            "CI_JOB_ID": job_id,
            "CI_JOB_NAME": "sdd-answer-merged",
            "CI_API_V4_URL": gitlab.url,
            "SDD_GITLAB_TOKEN": "glpat-read-api",
            "SDD_STOP": stop,
            "SDD_CHOICE": choice,
        },
    )
    # artifacts: when: always, as the job's paths name them
    if (project / "sdd-answered.txt").exists():
        (gitlab.store / job_id).mkdir(parents=True)
        shutil.copyfile(project / "sdd-answered.txt", gitlab.store / job_id / "sdd-answered.txt")
    status = "success" if done.returncode == 0 else "failed"
    gitlab.jobs.append({"id": int(job_id), "name": "sdd-answer-merged", "status": status})
    return done


def _log(project: Path) -> list[dict[str, Any]]:
    (path,) = (project / ".sdd" / "role-runs").glob("run-*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("choice", ["allow", "deny"])
def test_the_manual_job_answers_the_stop_and_the_run_goes_on(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gitlab: GitLab, choice: str
) -> None:
    p = _stopped(root, tmp_path, monkeypatch)
    job = p["data"]["sdd-answer-merged"]
    assert job["rules"][0]["when"] == "manual"
    assert job["environment"] == {"name": "sdd-approvals"}
    assert job["needs"] == [{"job": "sdd-routine-merged", "artifacts": True, "optional": True}]
    done = _answer(p, gitlab, tmp_path, "3", p["stop"], choice)
    assert done.returncode == 0, done.stderr
    project = tmp_path / "project-3"
    assert (project / "fix.py").exists() is (choice == "allow")
    log = _log(project)
    decided = [e["choice"] for e in log if e["event"] == "decision"]
    assert decided == ["allow_once" if choice == "allow" else "deny"]
    assert log[-1]["event"] == "run_ended" and log[-1]["status"] == "done"
    assert gitlab.seen_tokens and set(gitlab.seen_tokens) == {"glpat-read-api"}


def test_a_retried_answer_job_acts_on_nothing(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gitlab: GitLab
) -> None:
    p = _stopped(root, tmp_path, monkeypatch)
    assert _answer(p, gitlab, tmp_path, "3", p["stop"], "allow").returncode == 0
    calls = len(transcript(tmp_path))
    again = _answer(p, gitlab, tmp_path, "4", p["stop"], "allow")
    assert again.returncode == 1
    assert "already answered in job 3" in again.stderr
    assert not (tmp_path / "project-4" / "fix.py").exists()
    assert len(transcript(tmp_path)) == calls


def test_a_failed_answer_that_never_acted_can_be_retried(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gitlab: GitLab
) -> None:
    p = _stopped(root, tmp_path, monkeypatch)
    typo = _answer(p, gitlab, tmp_path, "3", p["stop"], "alow")
    assert typo.returncode == 2 and "the choice must be allow or deny" in typo.stderr
    done = _answer(p, gitlab, tmp_path, "4", p["stop"], "allow")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "project-4" / "fix.py").exists()


@pytest.mark.parametrize("stop", ["", "stop-abcdef; touch pwned", "$(touch pwned)", "stop-zz"])
def test_a_stop_variable_that_is_not_a_stop_of_the_artifact_is_refused(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gitlab: GitLab, stop: str
) -> None:
    p = _stopped(root, tmp_path, monkeypatch)
    refused = _answer(p, gitlab, tmp_path, "3", stop, "allow")
    assert refused.returncode == 2 and "the stop id must look like" in refused.stderr
    assert not list(tmp_path.rglob("pwned"))
    other = _answer(p, gitlab, tmp_path, "4", "stop-abcdef", "allow")  # well formed, not there
    assert other.returncode == 1 and "does not hold the stop stop-abcdef" in other.stderr
