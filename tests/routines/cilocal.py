"""An exported CI file's jobs, run here as the engine would run them: each `run:` step (or GitLab
script line) in a real bash with -e and pipefail, in a real git checkout of the product, with the
real `sdd` of this checkout on PATH. What the engine does itself is stood in for by exactly what
the file says: checkout is a `git clone`, upload-artifact and download-artifact copy folders into
and out of an artifact store (one folder per workflow run, immutable as v4's artifacts are), and
GitHub's API (`gh api`) is a small script that answers from recorded runs, piped through the
real `jq` as `gh --jq` does: a mock at the wire only."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import git

_EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
_STEP_IF = re.compile(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+) == '([^']*)'\Z")
SDD_BIN = Path(sys.executable).parent  # this checkout's venv: its `sdd` is what CI installs

_FAKE_GH = """\
import json, os, pathlib, re, subprocess, sys
args = sys.argv[1:]
assert args[0] == "api" and args[2] == "--jq", args
path, jq = args[1], args[3]
wire = json.loads(pathlib.Path(os.environ["FAKE_GH_WIRE"]).read_text())
store = pathlib.Path(wire["store"])
run = re.fullmatch(r"repos/([^/]+/[^/]+)/actions/runs/([0-9]+)", path)
named = re.fullmatch(r"repos/([^/]+/[^/]+)/actions/artifacts\\?name=(.+)", path)
pulls = re.fullmatch(r"repos/([^/]+/[^/]+)/commits/([0-9a-f]+)/pulls", path)
if run and run.group(2) in wire["runs"] and run.group(1) == wire["repo"]:
    body = wire["runs"][run.group(2)]
elif pulls and pulls.group(1) == wire["repo"]:
    body = [p for p in wire["pulls"].values() if pulls.group(2) in p["commits"]]
elif named and named.group(1) == wire["repo"]:
    body = {"total_count": len(list(store.glob("*/" + named.group(2))))}
else:
    print("gh: Not Found (HTTP 404)", file=sys.stderr)
    sys.exit(1)
done = subprocess.run(["jq", "-r", jq], input=json.dumps(body), text=True, capture_output=True)
sys.stdout.write(done.stdout)
sys.exit(done.returncode)
"""


@dataclass
class Engine:
    """One repository's CI: its artifact store, its runs as its API reports them, and `gh`."""

    tmp: Path
    product: Path  # the repository the checkouts clone
    repo: str = "acme/app"
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    pulls: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.store = self.tmp / "artifacts"
        self.store.mkdir(parents=True, exist_ok=True)
        self.bin = self.tmp / "engine-bin"
        self.bin.mkdir(exist_ok=True)
        gh = self.bin / "gh"
        gh.write_text(f"#!{sys.executable}\n{_FAKE_GH}")
        gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
        self.wire = self.tmp / "gh-wire.json"
        self._save()

    def _save(self) -> None:
        wire = {"store": str(self.store), "repo": self.repo, "runs": self.runs}
        wire["pulls"] = self.pulls
        self.wire.write_text(json.dumps(wire))

    def record_run(self, run_id: str, **fields: Any) -> None:
        """A workflow run as `GET /repos/R/actions/runs/ID` reports it."""
        self.runs[run_id] = {
            "workflow_id": 77,
            "head_repository": {"full_name": self.repo},
            "status": "completed",
            "event": "push",
            "head_branch": "main",
            "head_sha": "0" * 40,
            "pull_requests": [],
            **fields,
        }
        self._save()

    def record_pull(self, number: str, head: str, commits: list[str], merged: bool) -> None:
        """A pull request as `GET /repos/R/commits/SHA/pulls` lists it for each of its
        `commits`: its last commit `head`, merged or not."""
        self.pulls[number] = {
            "number": int(number),
            "head": {"sha": head},
            "merged_at": "2026-12-07T12:00:00Z" if merged else None,
            "commits": commits,
        }
        self._save()

    def checkout(self, where: Path) -> Path:
        git(self.tmp, "clone", "-q", str(self.product), str(where))
        return where

    def env(self, extra: Mapping[str, str]) -> dict[str, str]:
        return {
            **os.environ,
            "PATH": f"{self.bin}:{SDD_BIN}:{os.environ['PATH']}",
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "FAKE_GH_WIRE": str(self.wire),
            **extra,
        }


@dataclass
class JobRun:
    """What a job left: each step's outputs, and the steps that ran, by name."""

    outputs: dict[str, dict[str, str]]
    ran: list[str]
    failed: subprocess.CompletedProcess[str] | None = None
    logs: list[str] = field(default_factory=list)


def bash(script: str, env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # As GitHub and GitLab run a step: bash with -e and pipefail.
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_github_job(
    engine: Engine,
    job: Mapping[str, Any],
    *,
    run_id: str,
    workspace: Path,
    context: Mapping[str, str],
    env: Mapping[str, str] | None = None,
) -> JobRun:
    """Run `job`'s steps in order, as GitHub would in the run `run_id`; stops at the first
    step that fails, as GitHub does. `context` gives each expression's value
    (`inputs.stop`, `secrets.X`, `github.event...`); one the test did not give fails."""
    temp = engine.tmp / f"runner-{run_id}-{len(list(engine.tmp.glob('runner-*')))}"
    temp.mkdir()
    values = {
        "runner.temp": str(temp),
        "github.run_id": run_id,
        "github.repository": engine.repo,
        **context,
    }
    outputs: dict[str, dict[str, str]] = {}
    result = JobRun(outputs, [])
    workspace.mkdir(parents=True)  # GITHUB_WORKSPACE: there, empty, before any checkout
    for number, step in enumerate(job["steps"]):
        name = str(step.get("name", number))
        condition = step.get("if")
        if condition is not None:
            found = _STEP_IF.match(str(condition))
            assert found, f"a step condition this runner cannot read: {condition}"
            if outputs.get(found.group(1), {}).get(found.group(2)) != found.group(3):
                continue
        result.ran.append(name)
        uses = str(step.get("uses", ""))
        given = {k: _expand(str(v), values) for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout@"):
            engine.checkout(workspace)
        elif uses.startswith("actions/setup-python@"):
            pass  # the interpreter of this test run
        elif uses.startswith("actions/upload-artifact@"):
            source = Path(given["path"])
            target = engine.store / run_id / given["name"]
            assert not target.exists(), f"artifact {given['name']} exists in run {run_id}"
            assert source.exists(), f"nothing to upload at {source}"
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                target.mkdir()
                shutil.copyfile(source, target / source.name)
        elif uses.startswith("actions/download-artifact@"):
            source = engine.store / given["run-id"] / given["name"]
            if not source.is_dir():
                result.failed = subprocess.CompletedProcess([], 1, "", f"no artifact {source}")
                return result
            shutil.copytree(source, Path(given["path"]), dirs_exist_ok=True)
        elif name == "Install sdd":
            pass  # this checkout's sdd is on PATH: what the pinned install puts there
        else:
            assert "run" in step and not uses, f"a step this runner cannot stand in for: {step}"
            output = temp / f"output-{number}"
            output.touch()
            step_env = {k: _expand(str(v), values) for k, v in (step.get("env") or {}).items()}
            cwd = workspace / step.get("working-directory", ".")
            done = bash(
                str(step["run"]),
                engine.env(
                    {
                        **(env or {}),
                        **step_env,
                        "RUNNER_TEMP": str(temp),
                        "GITHUB_OUTPUT": str(output),
                        "GITHUB_RUN_ID": run_id,
                        "GITHUB_ACTOR": "reviewer",
                        "GITHUB_STEP_SUMMARY": str(temp / "summary.md"),
                    }
                ),
                cwd,
            )
            result.logs.append(done.stdout + done.stderr)
            outputs[str(step.get("id", number))] = dict(
                line.split("=", 1) for line in output.read_text().splitlines() if "=" in line
            )
            if done.returncode != 0:
                result.failed = done
                return result
    return result


def _expand(text: str, values: Mapping[str, str]) -> str:
    def one(found: re.Match[str]) -> str:
        key = found.group(1)
        assert key in values, f"the test gives no value for ${{{{ {key} }}}}"
        return values[key]

    return _EXPRESSION.sub(one, text)
