"""A routine as a GitLab CI file (sdd_git.routines.export says the rules it keeps)."""

from __future__ import annotations

from sdd_git.routines.ci.plan import (
    FAILURE_LOG,
    PYTHON,
    STOPPED,
    Plan,
    changed_path_lines,
    default_path,
    fire_lines,
    header,
    yaml_text,
)

_GITLAB_LOG_FETCH = f"""\
if [ -n "${{SDD_GITLAB_TOKEN:-}}" ]; then
  python - <<'PY' || true
import json, os, urllib.request
api = os.environ["CI_API_V4_URL"] + "/projects/" + os.environ["CI_PROJECT_ID"]
headers = {{"PRIVATE-TOKEN": os.environ["SDD_GITLAB_TOKEN"]}}
def get(path):
    request = urllib.request.Request(api + path, headers=headers)
    return urllib.request.urlopen(request, timeout=60).read()
pipeline = os.environ["CI_PIPELINE_ID"]
jobs = json.loads(get("/pipelines/" + pipeline + "/jobs?scope[]=failed&per_page=100"))
with open("{FAILURE_LOG}", "wb") as out:
    for job in jobs:
        out.write(("== job " + job["name"] + " " + job["web_url"] + "\\n").encode())
        out.write(get("/jobs/" + str(job["id"]) + "/trace"))
PY
fi
[ -s {FAILURE_LOG} ] || rm -f {FAILURE_LOG}
unset SDD_GITLAB_TOKEN"""


def gitlab_file(plan: Plan) -> str:
    routine = plan.routine
    kind = routine.event_kind
    job = f"sdd-routine-{routine.name}"
    lines = header(plan, "gitlab-ci", "#", "as CI/CD variables (masked) of the project")
    lines += [
        "# Include it from .gitlab-ci.yml:",
        f"#   include: [{{local: {default_path(routine, 'gitlab-ci')}}}]",
    ]
    variables: dict[str, str] = {"ROUTINE_EVENT_KIND": kind}
    script = [f"cd {yaml_text(plan.folder)}"] if plan.folder else []
    script.append("\n".join(plan.install.shell("python")))
    stage: str | None = None
    changes: str | None = None
    if kind == "main-build-failed":
        lines += [
            "# It runs after every other job, when one of them failed on the main branch, and",
            f"# hands the routine their logs ({FAILURE_LOG}). Reading them takes a project access",
            "# token with read_api in the masked CI/CD variable SDD_GITLAB_TOKEN; without it the",
            "# routine reports its source missing.",
        ]
        rule = (
            "$CI_PIPELINE_SOURCE =~ /^(push|pipeline|parent_pipeline|web)$/ && "
            f"$CI_COMMIT_BRANCH == {yaml_text(plan.main)}"
        )
        when = "on_failure"
        stage = ".post"
        variables.update(
            ROUTINE_EVENT_REF=FAILURE_LOG,
            ROUTINE_EVENT_BRANCH="$CI_COMMIT_BRANCH",
            ROUTINE_EVENT_COMMIT="$CI_COMMIT_SHA",
            ROUTINE_EVENT_URL="$CI_PIPELINE_URL",
        )
        script.append(_GITLAB_LOG_FETCH)
    elif kind in ("pr-merged", "push"):
        branch = plan.main if kind == "pr-merged" else str(routine.argument)
        rule = f'$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == {yaml_text(branch)}'
        when = "on_success"
        variables.update(
            ROUTINE_EVENT_REF="$CI_COMMIT_SHA", ROUTINE_EVENT_BRANCH="$CI_COMMIT_BRANCH"
        )
    elif kind == "file-changed":
        rule = '$CI_PIPELINE_SOURCE == "push"'
        when = "on_success"
        changes = str(routine.argument)
        variables.update(
            GIT_DEPTH="0",
            ROUTINE_GLOB=changes,
            ROUTINE_EVENT_BRANCH="$CI_COMMIT_BRANCH",
            ROUTINE_EVENT_COMMIT="$CI_COMMIT_SHA",
        )
        script.append("\n".join(changed_path_lines("$CI_COMMIT_BEFORE_SHA", "$CI_COMMIT_SHA")))
    else:
        lines += [
            "# GitLab keeps schedules in the project, not in this file: add one under",
            f"# Build > Pipeline schedules with the cron {routine.schedule} and the variable",
            f"# SDD_ROUTINE = {routine.name}.",
        ]
        rule = f'$CI_PIPELINE_SOURCE == "schedule" && $SDD_ROUTINE == {yaml_text(routine.name)}'
        when = "on_success"
        variables.update(ROUTINE_EVENT_ROUTINE=routine.name)
        script.append("ROUTINE_EVENT_REF=$(date -u +%Y-%m-%dT%H:%M:00Z); export ROUTINE_EVENT_REF")
    on_stop = (
        f'echo "sdd routine {routine.name} stopped: an action waits for a person, and nothing '
        'consequential ran"'
    )
    # The job token reaches no further than needed: the run's own commands never see it.
    script.append("unset CI_JOB_TOKEN\n" + "\n".join(fire_lines(plan, "python", "sdd", on_stop)))
    lines += [f"{job}:", f"  image: {yaml_text('python:' + PYTHON)}"]
    if stage:
        lines.append(f"  stage: {yaml_text(stage)}")
    lines += ["  rules:", f"    - if: {yaml_text(rule)}"]
    if changes is not None:
        lines += ["      changes:", f"        - {yaml_text(changes)}"]
    lines += [
        f"      when: {when}",
        "  allow_failure:",
        f"    exit_codes: [{STOPPED}]",
        "  interruptible: false",
        "  timeout: 30m",
        "  variables:",
        *(f"    {key}: {yaml_text(value)}" for key, value in variables.items()),
        "  script:",
    ]
    for entry in script:
        if "\n" in entry:
            lines.append("    - |")
            lines += [f"      {line}" if line else "" for line in entry.split("\n")]
        else:
            lines.append(f"    - {yaml_text(entry)}")
    return "\n".join(lines) + "\n"
