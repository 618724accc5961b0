"""A routine as a GitLab CI file (sdd_git.routines.export says the rules it keeps)."""

from __future__ import annotations

from sdd_git.routines.ci.plan import (
    APPROVALS,
    FAILURE_LOG,
    PYTHON,
    STOPPED,
    STOPPED_ARTIFACT,
    Plan,
    answer_lines,
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
        f'echo "sdd routine {routine.name} stopped: an action waits for a reviewer (the job '
        f'{_answer_job_name(plan)}), and nothing consequential ran"; {_PACK}'
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
        "  artifacts:  # the stopped run, for the answer job",
        "    when: always",
        f"    expire_in: {yaml_text(_days(plan))}",
        "    paths:",
        f"      - {STOPPED_ARTIFACT}/",
        "  allow_failure:",
        f"    exit_codes: [{STOPPED}]",
        "  interruptible: false",
        "  timeout: 30m",
        "  variables:",
        *(f"    {key}: {yaml_text(value)}" for key, value in variables.items()),
        "  script:",
    ]
    lines += _script(script)
    lines += _answer_job(plan, job, stage, rule, changes)
    return "\n".join(lines) + "\n"


# The pending stops, packed where the job's artifacts are taken from (the project's folder).
_PACK = f'sdd routine pack-stops "$CI_PROJECT_DIR/{STOPPED_ARTIFACT}" || true'


def _answer_job_name(plan: Plan) -> str:
    return f"sdd-answer-{plan.routine.name}"


def _days(plan: Plan) -> str:
    days = max(1, -(-int(plan.ci_timeout) // 86400))
    return f"{days} day" if days == 1 else f"{days} days"


def _script(entries: list[str]) -> list[str]:
    lines = []
    for entry in entries:
        if "\n" in entry:
            lines.append("    - |")
            lines += [f"      {line}" if line else "" for line in entry.split("\n")]
        else:
            lines.append(f"    - {yaml_text(entry)}")
    return lines


# A retried answer job downloads the same artifact as the first. Each answer job keeps
# sdd-answered.txt among its artifacts once it is about to act; before acting, a job asks GitLab
# (with the read_api token in SDD_GITLAB_TOKEN) whether an earlier run of it in this pipeline
# kept one, and then does nothing. `resource_group` keeps two from running side by side.
_ANSWERED_BEFORE = """\
if [ -z "${SDD_GITLAB_TOKEN:-}" ]; then
  echo "the answer job needs SDD_GITLAB_TOKEN (a project access token with read_api)" \\
    "to see that this stop was not answered already" >&2
  exit 1
fi
python - <<'PY'
import json, os, sys, urllib.error, urllib.request
api = os.environ["CI_API_V4_URL"] + "/projects/" + os.environ["CI_PROJECT_ID"]
headers = {"PRIVATE-TOKEN": os.environ["SDD_GITLAB_TOKEN"]}
def get(path):
    request = urllib.request.Request(api + path, headers=headers)
    return urllib.request.urlopen(request, timeout=60).read()
pipeline = os.environ["CI_PIPELINE_ID"]
jobs, page = [], 1
while True:  # every page: in a big pipeline the earlier answer is past the first hundred
    batch = json.loads(get("/pipelines/" + pipeline + "/jobs?include_retried=true"
                           "&per_page=100&page=" + str(page)))
    jobs += batch
    if len(batch) < 100:
        break
    page += 1
for job in jobs:
    if job["name"] != os.environ["CI_JOB_NAME"] or str(job["id"]) == os.environ["CI_JOB_ID"]:
        continue
    try:
        said = get("/jobs/" + str(job["id"]) + "/artifacts/sdd-answered.txt").decode()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            continue
        raise
    sys.exit("already answered in job " + str(job["id"]) + " (" + said.strip() + ");"
             " nothing was done again")
PY
unset SDD_GITLAB_TOKEN"""
# Kept among the job's artifacts once the stop is unpacked, before the answer acts.
_CLAIM = (
    'printf "%s %s by %s\\n" "$SDD_STOP" "$SDD_CHOICE" "$GITLAB_USER_LOGIN" '
    '> "$CI_PROJECT_DIR/sdd-answered.txt"'
)


def _answer_job(
    plan: Plan, fire_job: str, stage: str | None, rule: str, changes: str | None
) -> list[str]:
    """The manual job a reviewer runs with SDD_STOP and SDD_CHOICE set, in the protected
    environment whose allowed deployers are the people who may answer."""
    script = [f"cd {yaml_text(plan.folder)}"] if plan.folder else []
    script += [
        "\n".join(plan.install.shell("python")),
        _ANSWERED_BEFORE,
        "unset CI_JOB_TOKEN\n"
        + "\n".join(
            [
                *answer_lines("sdd", f"$CI_PROJECT_DIR/{STOPPED_ARTIFACT}", _CLAIM),
                f'if [ "$status" -eq {STOPPED} ]; then',
                f'  echo "stopped again: the new stop is kept in {STOPPED_ARTIFACT}-again (see '
                'docs/export.md of sdd)"; '
                f'sdd routine pack-stops "$CI_PROJECT_DIR/{STOPPED_ARTIFACT}-again" || true',
                "fi",
                'exit "$status"',
            ]
        ),
    ]
    lines = [
        f"{_answer_job_name(plan)}:",
        f"  image: {yaml_text('python:' + PYTHON)}",
    ]
    if stage:
        lines.append(f"  stage: {yaml_text(stage)}")
    lines += [
        "  needs:",
        f"    - job: {yaml_text(fire_job)}",
        "      artifacts: true",
        "      optional: true",
        "  rules:",
        f"    - if: {yaml_text(rule)}",
    ]
    if changes is not None:
        lines += ["      changes:", f"        - {yaml_text(changes)}"]
    lines += [
        "      when: manual",
        "  allow_failure: true  # a stop nobody answers does not hold the pipeline",
        "  environment:",
        f"    name: {APPROVALS}  # protect it: its allowed deployers are who may answer",
        "  resource_group: sdd-approvals  # one answer at a time",
        "  interruptible: false",
        "  timeout: 30m",
        "  variables:",
        '    SDD_STOP: ""  # set when running the job: the stop id, stop-...',
        '    SDD_CHOICE: ""  # set when running the job: allow or deny',
        "  artifacts:",
        "    when: always",
        f"    expire_in: {yaml_text(_days(plan))}",
        "    paths:",
        f"      - {STOPPED_ARTIFACT}-again/",
        "      - sdd-answered.txt",
        "  script:",
        *_script(script),
    ]
    return lines
