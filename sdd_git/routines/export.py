"""A routine as a CI definition: the file that runs it on a CI engine's own events.

`sdd routine export NAME --github-actions | --gitlab-ci | --jenkins` writes what this module
returns. The file installs `sdd` from the source her confirmed settings pin (`ci.install`,
see sdd_git.cipins; never by a bare name), takes the model's key from the engine's secret
store by the variable's name (never a value: nothing from this process's environment goes
into it), and runs `sdd routine fire NAME --event JSON`, the same command the git hooks and the
watcher reach.

Three rules hold every text the file carries:
- what comes from an event (branch names, titles, commit messages) reaches a script only through
  an environment variable, quoted where used: never pasted into the script (script injection);
- what comes from the product's files (a routine's glob, the main branch, the sdd root's folder)
  is checked and quoted for the language it lands in (YAML, Groovy);
- the event is built at run time by Python's json from those variables: no hand-made JSON.

In CI nobody answers a stop. `sdd routine fire` then ends with exit 3 and lists the stops in the
engine's summary; the job reports it as a warning (GitHub), allowed failure (GitLab) or unstable
(Jenkins), never as a success that hides it, and nothing consequential has run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sdd_git.cipins import CHECKOUT, CHECKOUT_TAG, SETUP_PYTHON, SETUP_PYTHON_TAG, InstallSource
from sdd_git.errors import UsageError
from sdd_git.root import Root
from sdd_git.routines.routine import NAME_PATTERN, Routine, main_branch
from sdd_git.routines.triggers import KINDS

ENGINES = ("github-actions", "gitlab-ci", "jenkins")
DEFAULT_WORKFLOWS = ("CI",)  # the GitHub workflows whose failure on main fires main-build-failed
PYTHON = "3.11"
FAILURE_LOG = "build-failure.log"  # the failed build's log, written beside .sdd/ in CI
STOPPED = 3  # `sdd routine fire` exit code: a stop is waiting for a person

_ROLE = re.compile(r"[a-z0-9][a-z0-9-]{0,39}\Z")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
_FOLDER = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/ -]{0,199}\Z")
_WORKFLOW = re.compile(r"[^\x00-\x1f\x7f]{1,200}\Z")
_ZERO_SHA = "0" * 40
_CRON_NAMES = frozenset(
    {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
    | {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
)

# The event for `sdd routine fire --event`: every ROUTINE_EVENT_* variable of the step, by its
# lower-case name (kind, ref, branch, routine, commit, url), and source ci. Quotes: single inside
# the script, none doubled, no backslash (Groovy's ''' strings would read it).
_EVENT_JSON = (
    "import json, os; p = 'ROUTINE_EVENT_'; "
    "print(json.dumps(dict({k[len(p):].lower(): v for k, v in os.environ.items() "
    "if k.startswith(p) and v}, source='ci'), sort_keys=True))"
)


@dataclass(frozen=True)
class _Plan:
    """What every engine's file needs, checked once."""

    name: str  # as `sdd routine fire` takes it: NAME, or ROLE/NAME when two roles share it
    routine: Routine
    main: str
    folder: str  # the sdd root, relative to the repository's top ("" at the top)
    secrets: tuple[str, ...]  # variable names, e.g. OPENAI_API_KEY
    version: str
    install: InstallSource


def default_path(routine: Routine, engine: str) -> str:
    """Where the file usually goes, relative to the repository's top."""
    _check_engine(engine)
    return {
        "github-actions": f".github/workflows/sdd-routine-{routine.name}.yml",
        "gitlab-ci": f".gitlab/sdd-routine-{routine.name}.gitlab-ci.yml",
        "jenkins": f"Jenkinsfile.sdd-routine-{routine.name}",
    }[engine]


def export_definition(
    root: Root,
    routine: Routine,
    engine: str,
    *,
    workflows: Sequence[str] = DEFAULT_WORKFLOWS,
) -> str:
    """The CI definition's text for `engine` (one of ENGINES). `workflows`: for GitHub's
    main-build-failed, the names of the workflows whose failure on main fires the routine."""
    _check_engine(engine)
    plan = _plan(root, routine)
    if engine == "github-actions":
        return _github(plan, _workflows(workflows))
    if engine == "gitlab-ci":
        return _gitlab(plan)
    return _jenkins(plan)


def secret_names(root: Root, routine: Routine) -> tuple[str, ...]:
    """The variables the routine's run reads its model key from, named by the product's files
    only: `provider.api_key_env` of .sdd/config.yaml (or the kind's standard variable when it
    names none) and the role's own `model.api_key_env`. `none` names nothing, and so does a
    local server nobody named a key for. The environment is never read: what a person has set
    in her shell must not decide what a file for everyone says."""
    from sdd_git.providers.select import DEFAULT_KEY_ENV, NO_KEY
    from sdd_git.roles.registry import find_role
    from sdd_git.yamlio import read_mapping

    config = read_mapping(root.config, root.path).get("provider") if root.config.is_file() else None
    person = config if isinstance(config, dict) else {}
    profile, _warnings = find_role(root, routine.role, use_cache=False)
    own = profile.model if isinstance(profile.model, dict) else {}
    names: list[str] = []
    for layer in (person, own) if own else (person,):
        kind = str(layer.get("kind") or person.get("kind") or "openai")
        named = layer.get("api_key_env")
        if named in (None, ""):
            if not layer.get("base_url") and kind in DEFAULT_KEY_ENV:
                names.append(DEFAULT_KEY_ENV[kind])
        elif str(named).strip().lower() != NO_KEY:
            names.append(str(named).strip())
    for name in names:
        if not _VARIABLE.match(name):
            raise UsageError(
                f"the key variable {name!r} is not a variable name a CI engine can hold",
                hint="name it with letters, digits and '_' in .sdd/config.yaml "
                "(provider: {api_key_env: OPENAI_API_KEY})",
            )
    return tuple(dict.fromkeys(names))


# --- what every engine shares -------------------------------------------------------------------


def _check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise UsageError(f"unknown CI engine '{engine}'", hint="one of: " + ", ".join(ENGINES))


def _plan(root: Root, routine: Routine) -> _Plan:
    from sdd_git import __version__
    from sdd_git.cipins import install_source
    from sdd_git.routines.routine import load_routines

    if not NAME_PATTERN.match(routine.name):
        raise UsageError(f"'{routine.name}' is not a routine name", hint="use a-z, 0-9 and '-'")
    if not _ROLE.match(routine.role):
        raise UsageError(
            f"'{routine.role}' is not a role name, so its routine cannot go into a CI file",
            hint="role names are lowercase letters, digits and '-'",
        )
    for given in (routine.argument, routine.schedule):
        # A YAML 1.1 reader (GitLab's) ends the header comment that shows the trigger at
        # U+2028, U+2029 or NEL, and reads what follows as YAML of its own: a job, say.
        if given is not None and _unprintable(given):
            raise UsageError(
                f"{routine.path}: the trigger's argument holds a control character or a line break",
                hint='write it on one line, e.g. on: file-changed "src/**"',
            )
    if routine.argument is not None and "$" in routine.argument:
        # GitHub evaluates `${{ }}` in any env value, GitLab expands `$VAR` in variables and
        # rules: the glob would read secrets or event text into the job.
        raise UsageError(
            f"{routine.path}: the glob {routine.argument!r} holds '$', which a CI engine reads "
            "as an expression or a variable, so it cannot go into a CI file",
            hint='write the glob without $, e.g. on: file-changed "src/**"',
        )
    others = [
        r for r in load_routines(root)[0] if r.name == routine.name and r.role != routine.role
    ]
    name = f"{routine.role}/{routine.name}" if others else routine.name
    return _Plan(
        name=name,
        routine=routine,
        main=main_branch(root),
        folder=_folder(root),
        secrets=secret_names(root, routine),
        version=__version__,
        install=install_source(root, f"writing a CI file for the routine {routine.name}"),
    )


def _unprintable(text: str) -> bool:
    """Control, format (bidi, zero-width) and line or paragraph separator characters."""
    import unicodedata

    return any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text)


def _folder(root: Root) -> str:
    """The sdd root's folder relative to the repository's top: CI starts at the top."""
    top = root.path.resolve()
    for candidate in (top, *top.parents):
        if (candidate / ".git").exists():
            relative = top.relative_to(candidate).as_posix()
            break
    else:
        return ""
    if relative in ("", "."):
        return ""
    if not _FOLDER.match(relative) or ".." in relative.split("/"):
        raise UsageError(
            f"the sdd root's folder {relative!r} holds characters a CI file would have to quote",
            hint="use a folder name of letters, digits, '.', '_', '-' and '/'",
        )
    return relative


def _workflows(workflows: Sequence[str]) -> tuple[str, ...]:
    names = tuple(str(w).strip() for w in workflows if str(w).strip())
    if not names:
        raise UsageError("name at least one workflow whose failure fires the routine")
    for name in names:
        if not _WORKFLOW.match(name):
            raise UsageError(f"{name!r} is not a workflow name", hint="e.g. CI")
    return names


def _plain_cron(plan: _Plan, engine: str) -> str:
    """The routine's schedule, refused when it uses what cronsim reads and GitHub's and
    Jenkins' cron do not: L (last), W (weekday nearest), # (nth weekday of the month)."""
    cron = str(plan.routine.schedule)
    parts = re.split(r"[\s,/-]+", cron.strip().upper())
    if not all(p == "*" or p.isdigit() or p in _CRON_NAMES for p in parts):
        raise UsageError(
            f"{engine}'s cron has no L, W, # or ?, so the schedule '{cron}' cannot be exported "
            "as it is",
            hint='write it with numbers, ranges, lists and steps, e.g. schedule: "0 9 * * 1-5"',
        )
    return cron


def _y(text: str) -> str:
    """A YAML scalar that reads back as exactly `text`: a JSON string is a YAML one."""
    return json.dumps(text, ensure_ascii=False)


def _groovy(text: str) -> str:
    """A Groovy single-quoted string (no interpolation), escaped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _what(plan: _Plan) -> str:
    routine = plan.routine
    return KINDS[routine.event_kind].exported.format(
        main=plan.main, argument=routine.argument, schedule=routine.schedule
    )


def _header(plan: _Plan, engine: str, comment: str, secrets_where: str) -> list[str]:
    routine = plan.routine
    c = comment
    lines = [
        f"{c} Written by `sdd routine export {plan.name} --{engine}` (sdd {plan.version}).",
        f"{c} Runs the routine {routine.name} of the role {routine.role} {_what(plan)}",
        f"{c} (.sdd/roles/{routine.role}/routines/{routine.name}.yaml).",
        f"{c} It installs sdd from {plan.install.shown()} (ci.install of .sdd/config.yaml).",
    ]
    if plan.secrets:
        lines.append(f"{c} Secrets, by name only: {', '.join(plan.secrets)}, {secrets_where}.")
    else:
        lines.append(f"{c} The provider in .sdd/config.yaml names no key variable: no secret.")
    lines += [
        f"{c} Nobody answers a stop in CI: the run ends stopped, its stops are listed for the",
        f"{c} person, and nothing consequential runs.",
    ]
    return lines


def _fire_lines(plan: _Plan, python: str, sdd: str, on_stop: str) -> list[str]:
    """The shell that builds the event and fires the routine; `on_stop` runs on exit 3."""
    return [
        f'event=$({python} -c "{_EVENT_JSON}")',
        "status=0",
        f'{sdd} routine fire {plan.name} --event "$event" || status=$?',
        f'if [ "$status" -eq {STOPPED} ]; then',
        f"  {on_stop}",
        "fi",
        'exit "$status"',
    ]


def _changed_path_lines(before: str, after: str) -> list[str]:
    """The first changed path matching the routine's glob (ROUTINE_GLOB), as the event's ref."""
    return [
        f'if [ "{before}" = "{_ZERO_SHA}" ] || [ -z "{before}" ]; then',
        f'  ROUTINE_EVENT_REF=$(git show --name-only --format= "{after}" -- '
        '":(glob)$ROUTINE_GLOB" | sed -n 1p) || true',
        "else",
        f'  ROUTINE_EVENT_REF=$(git diff --name-only "{before}" "{after}" -- '
        '":(glob)$ROUTINE_GLOB" | sed -n 1p) || true',
        "fi",
        "export ROUTINE_EVENT_REF",
    ]


# --- GitHub Actions -----------------------------------------------------------------------------


def _github_paths(glob: str) -> str:
    """A routine glob as a GitHub path filter: `*` and `**` mean the same; the filter's other
    special characters are escaped; `?` (any one character) has no equal there."""
    if "?" in glob:
        raise UsageError(
            f"GitHub's path filters have no single-character wildcard, so '{glob}' cannot be "
            "exported as it is",
            hint='use * instead of ?, e.g. file-changed "src/*.py"',
        )
    out = "".join("\\" + ch if ch in "+[]" else ch for ch in glob)
    return "\\" + out if out.startswith("!") else out


def _github(plan: _Plan, workflows: tuple[str, ...]) -> str:
    routine = plan.routine
    kind = routine.event_kind
    secrets = [f"{n}: ${{{{ secrets.{n} }}}}" for n in plan.secrets]
    for name in plan.secrets:
        if name.upper().startswith("GITHUB_"):
            raise UsageError(
                f"GitHub refuses secret names starting with GITHUB_; the key variable is {name}",
                hint="name the key variable otherwise in .sdd/config.yaml (provider.api_key_env)",
            )
    lines = _header(plan, "github-actions", "#", "from the repository's Actions secrets")
    lines += [f"name: {_y('sdd routine ' + routine.name)}", "on:"]
    condition: str | None = None
    checkout: list[str] = ["persist-credentials: false"]
    permissions = ["contents: read"]
    event: dict[str, str] = {"ROUTINE_EVENT_KIND": kind}
    fetch: list[str] = []
    changed: list[str] = []
    if kind == "main-build-failed":
        lines += [
            # zizmor flags every workflow_run; this one runs only a push build of this
            # repository's own main (the job's `if` below), never a fork's code.
            "  # Runs only for a failed push build of this repository (the job's if: below).",
            "  workflow_run: # zizmor: ignore[dangerous-triggers]",
            f"    workflows: [{', '.join(_y(w) for w in workflows)}]",
            "    types: [completed]",
            f"    branches: [{_y(plan.main)}]",
        ]
        # A run of a fork's pull request can carry a branch named main too: only a failed push
        # build of this repository fires the routine, which gets the secrets.
        condition = (
            "github.event.workflow_run.conclusion == 'failure' && "
            "github.event.workflow_run.event == 'push' && "
            "github.event.workflow_run.head_repository.full_name == github.repository"
        )
        checkout.append("ref: ${{ github.event.workflow_run.head_sha }}")
        permissions.append("actions: read")
        event.update(
            ROUTINE_EVENT_REF=FAILURE_LOG,
            ROUTINE_EVENT_BRANCH="${{ github.event.workflow_run.head_branch }}",
            ROUTINE_EVENT_COMMIT="${{ github.event.workflow_run.head_sha }}",
            ROUTINE_EVENT_URL="${{ github.event.workflow_run.html_url }}",
        )
        fetch = [
            "      - name: Fetch the failed build's log",
            *_working_directory(plan),
            "        env:",
            "          GH_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
            "          GH_REPO: ${{ github.repository }}",
            "          FAILED_RUN: ${{ github.event.workflow_run.id }}",
            "        run: |",
            f'          gh run view "$FAILED_RUN" --log-failed > {FAILURE_LOG} || true',
            f"          [ -s {FAILURE_LOG} ] || rm -f {FAILURE_LOG}",
        ]
    elif kind == "pr-merged":
        lines += [
            "  pull_request:",
            "    types: [closed]",
            f"    branches: [{_y(plan.main)}]",
        ]
        condition = "github.event.pull_request.merged == true"
        checkout.append("ref: ${{ github.event.pull_request.merge_commit_sha }}")
        event.update(
            ROUTINE_EVENT_REF="${{ github.event.pull_request.merge_commit_sha }}",
            ROUTINE_EVENT_BRANCH="${{ github.event.pull_request.base.ref }}",
            ROUTINE_EVENT_URL="${{ github.event.pull_request.html_url }}",
        )
    elif kind == "push":
        lines += ["  push:", f"    branches: [{_y(str(routine.argument))}]"]
        event.update(
            ROUTINE_EVENT_REF="${{ github.sha }}",
            ROUTINE_EVENT_BRANCH="${{ github.ref_name }}",
        )
    elif kind == "file-changed":
        glob = str(routine.argument)
        # Branches only: GitHub reads no path filter for a tag's push, and would fire on each.
        lines += ["  push:", '    branches: ["**"]', f"    paths: [{_y(_github_paths(glob))}]"]
        checkout.append("fetch-depth: 0")
        event.update(
            ROUTINE_EVENT_BRANCH="${{ github.ref_name }}",
            ROUTINE_EVENT_COMMIT="${{ github.sha }}",
            ROUTINE_GLOB=glob,
            BEFORE="${{ github.event.before }}",
            AFTER="${{ github.sha }}",
        )
        changed = _changed_path_lines("$BEFORE", "$AFTER")
    else:
        lines += ["  schedule:", f"    - cron: {_y(_plain_cron(plan, 'GitHub'))}"]
        event.update(ROUTINE_EVENT_ROUTINE=routine.name)
        changed = [
            "ROUTINE_EVENT_REF=$(date -u +%Y-%m-%dT%H:%M:00Z)",
            "export ROUTINE_EVENT_REF",
        ]
    lines += ["permissions:", *(f"  {p}" for p in permissions)]
    # No `concurrency:` group: GitHub cancels all but one waiting run of a group, and every
    # event must reach its routine.
    lines += [
        "jobs:",
        "  routine:",
        f"    name: {_y('routine ' + routine.name)}",
    ]
    if condition:
        lines.append(f"    if: {condition}")
    on_stop = (
        f'echo "::warning title=sdd routine {routine.name}::stopped: an action waits for a '
        'person; the job summary lists it, and nothing consequential ran"; exit 0'
    )
    lines += [
        "    runs-on: ubuntu-latest",
        "    timeout-minutes: 30",
        "    steps:",
        "      - name: Check out the product",
        f"        uses: {CHECKOUT} # {CHECKOUT_TAG}",
        "        with:",
        *(f"          {line}" for line in checkout),
        "      - name: Set up Python",
        f"        uses: {SETUP_PYTHON} # {SETUP_PYTHON_TAG}",
        "        with:",
        f"          python-version: {_y(PYTHON)}",
        "      - name: Install sdd",
        *_working_directory(plan),  # where her paths (ci.install) are relative to
        "        run: |",
        *(f"          {line}" for line in plan.install.shell("python")),
        *fetch,
        f"      - name: {_y('Run the routine ' + routine.name)}",
        *_working_directory(plan),
        "        env:",
        *(f"          {line}" for line in secrets),
        *(f"          {key}: {_gh_value(value)}" for key, value in event.items()),
        "        run: |",
        *(f"          {line}" for line in [*changed, *_fire_lines(plan, "python", "sdd", on_stop)]),
    ]
    return "\n".join(lines) + "\n"


def _gh_value(value: str) -> str:
    return value if value.startswith("${{") else _y(value)


def _working_directory(plan: _Plan) -> list[str]:
    return [f"        working-directory: {_y(plan.folder)}"] if plan.folder else []


# --- GitLab CI ----------------------------------------------------------------------------------

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


def _gitlab(plan: _Plan) -> str:
    routine = plan.routine
    kind = routine.event_kind
    job = f"sdd-routine-{routine.name}"
    lines = _header(plan, "gitlab-ci", "#", "as CI/CD variables (masked) of the project")
    lines += [
        "# Include it from .gitlab-ci.yml:",
        f"#   include: [{{local: {default_path(routine, 'gitlab-ci')}}}]",
    ]
    variables: dict[str, str] = {"ROUTINE_EVENT_KIND": kind}
    script = [f"cd {_y(plan.folder)}"] if plan.folder else []
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
            f"$CI_COMMIT_BRANCH == {_y(plan.main)}"
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
        rule = f'$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == {_y(branch)}'
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
        script.append("\n".join(_changed_path_lines("$CI_COMMIT_BEFORE_SHA", "$CI_COMMIT_SHA")))
    else:
        lines += [
            "# GitLab keeps schedules in the project, not in this file: add one under",
            f"# Build > Pipeline schedules with the cron {routine.schedule} and the variable",
            f"# SDD_ROUTINE = {routine.name}.",
        ]
        rule = f'$CI_PIPELINE_SOURCE == "schedule" && $SDD_ROUTINE == {_y(routine.name)}'
        when = "on_success"
        variables.update(ROUTINE_EVENT_ROUTINE=routine.name)
        script.append("ROUTINE_EVENT_REF=$(date -u +%Y-%m-%dT%H:%M:00Z); export ROUTINE_EVENT_REF")
    on_stop = (
        f'echo "sdd routine {routine.name} stopped: an action waits for a person, and nothing '
        'consequential ran"'
    )
    # The job token reaches no further than needed: the run's own commands never see it.
    script.append("unset CI_JOB_TOKEN\n" + "\n".join(_fire_lines(plan, "python", "sdd", on_stop)))
    lines += [f"{job}:", f"  image: {_y('python:' + PYTHON)}"]
    if stage:
        lines.append(f"  stage: {_y(stage)}")
    lines += ["  rules:", f"    - if: {_y(rule)}"]
    if changes is not None:
        lines += ["      changes:", f"        - {_y(changes)}"]
    lines += [
        f"      when: {when}",
        "  allow_failure:",
        f"    exit_codes: [{STOPPED}]",
        "  interruptible: false",
        "  timeout: 30m",
        "  variables:",
        *(f"    {key}: {_y(value)}" for key, value in variables.items()),
        "  script:",
    ]
    for entry in script:
        if "\n" in entry:
            lines.append("    - |")
            lines += [f"      {line}" if line else "" for line in entry.split("\n")]
        else:
            lines.append(f"    - {_y(entry)}")
    return "\n".join(lines) + "\n"


# --- Jenkins ------------------------------------------------------------------------------------


def _jenkins_credential(name: str) -> str:
    return "sdd-" + name.lower().replace("_", "-")


def _jenkins(plan: _Plan) -> str:
    routine = plan.routine
    kind = routine.event_kind
    lines = _header(
        plan,
        "jenkins",
        "//",
        "from Jenkins credentials (Secret text) with the ids "
        + ", ".join(_jenkins_credential(n) for n in plan.secrets),
    )
    on_stop = (
        f"echo 'sdd routine {routine.name} stopped: an action waits for a person, and nothing "
        "consequential ran'"
    )
    environment: dict[str, str] = {"ROUTINE_EVENT_KIND": kind}
    setup = [
        'venv="${WORKSPACE_TMP:-${TMPDIR:-/tmp}}/sdd-venv"',
        'python3 -m venv "$venv"',
        *plan.install.shell('"$venv/bin/python"'),
    ]
    prepare: list[str] = []
    needs_log = kind == "main-build-failed"
    if needs_log:
        environment.update(ROUTINE_EVENT_REF=FAILURE_LOG)
        prepare = [
            f'curl -fsS -u "$JENKINS_LOG_USER:$JENKINS_LOG_TOKEN" "${{BUILD_URL}}consoleText" '
            f"> {FAILURE_LOG} || true",
            f"[ -s {FAILURE_LOG} ] || rm -f {FAILURE_LOG}",
            "unset JENKINS_LOG_USER JENKINS_LOG_TOKEN",
        ]
    elif kind == "file-changed":
        environment.update(ROUTINE_GLOB=str(routine.argument))
        prepare = _changed_path_lines("${GIT_PREVIOUS_COMMIT:-}", "$GIT_COMMIT")
    elif kind == "schedule":
        environment.update(ROUTINE_EVENT_ROUTINE=routine.name)
        prepare = ["ROUTINE_EVENT_REF=$(date -u +%Y-%m-%dT%H:%M:00Z)", "export ROUTINE_EVENT_REF"]
    else:
        prepare = ['ROUTINE_EVENT_REF="$GIT_COMMIT"', "export ROUTINE_EVENT_REF"]
    shell = [
        *setup,
        *prepare,
        'ROUTINE_EVENT_BRANCH="${BRANCH_NAME:-${GIT_BRANCH#origin/}}"',
        'ROUTINE_EVENT_COMMIT="${GIT_COMMIT:-}"',
        'ROUTINE_EVENT_URL="${BUILD_URL:-}"',
        "export ROUTINE_EVENT_BRANCH ROUTINE_EVENT_COMMIT ROUTINE_EVENT_URL",
        *_fire_lines(plan, "python3", '"$venv/bin/sdd"', f"{on_stop}"),
    ]
    script = "\n".join(shell)
    if "'''" in script or "\\" in script:  # neither may reach a Groovy ''' string
        raise AssertionError("the Jenkins script must hold no ''' and no backslash")
    body = [
        "def status = sh(returnStatus: true, script: '''",
        *script.split("\n"),
        "''')",
        f"if (status == {STOPPED}) {{",
        f"    unstable('sdd routine {routine.name}: stopped, waiting for a person')",
        "} else if (status != 0) {",
        f'    error("sdd routine {routine.name} failed (exit ${{status}})")',
        "}",
    ]
    credentials = [
        f"string(credentialsId: {_groovy(_jenkins_credential(n))}, variable: {_groovy(n)})"
        for n in plan.secrets
    ]
    if needs_log:
        credentials.append(
            "usernamePassword(credentialsId: 'sdd-jenkins-log-reader', "
            "usernameVariable: 'JENKINS_LOG_USER', passwordVariable: 'JENKINS_LOG_TOKEN')"
        )
    wrapped = body
    if plan.folder:
        wrapped = [f"dir({_groovy(plan.folder)}) {{", *_indent(wrapped), "}"]
    if credentials:
        wrapped = [
            "withCredentials([",
            *(f"    {c}," for c in credentials[:-1]),
            f"    {credentials[-1]}",
            "]) {",
            *_indent(wrapped),
            "}",
        ]
    env_lines = [f"{key} = {_groovy(value)}" for key, value in environment.items()]
    main = _groovy(plan.main)
    out = [*lines]
    if needs_log:
        out += [
            "// The failed build's console log is read back through Jenkins' API with the",
            "// credential sdd-jenkins-log-reader (Username with password: a user and its API",
            "// token, allowed to read this job). Put your build's stages where 'Build' is.",
        ]
    out += ["pipeline {", "    agent any"]
    if kind == "schedule":
        cron = _groovy(_plain_cron(plan, "Jenkins"))
        out += ["    triggers {", f"        cron({cron})", "    }"]
    out += ["    options {", "        timeout(time: 30, unit: 'MINUTES')", "    }"]
    out += ["    environment {", *(f"        {line}" for line in env_lines), "    }"]
    out += ["    stages {"]
    if needs_log:
        out += [
            "        stage('Build') {",
            "            steps {",
            "                echo 'Your build and tests go here.'",
            "            }",
            "        }",
            "    }",
            "    post {",
            "        failure {",
            "            script {",
            f"                if (env.BRANCH_NAME == {main} || env.GIT_BRANCH == {main} ||",
            f"                        env.GIT_BRANCH == {_groovy('origin/' + plan.main)}) {{",
            *_indent(wrapped, 20),
            "                }",
            "            }",
            "        }",
            "    }",
            "}",
        ]
        return "\n".join(out) + "\n"
    if kind == "schedule":
        when = ["triggeredBy 'TimerTrigger'"]
    elif kind == "file-changed":
        when = [f"changeset {_groovy(str(routine.argument))}"]
    else:
        branch = plan.main if kind == "pr-merged" else str(routine.argument)
        when = [f"branch {_groovy(branch)}"]
    out += [
        f"        stage({_groovy('Routine ' + routine.name)}) {{",
        "            when {",
        *(f"                {w}" for w in when),
        "            }",
        "            steps {",
        "                script {",
        *_indent(wrapped, 20),
        "                }",
        "            }",
        "        }",
        "    }",
        "}",
    ]
    return "\n".join(out) + "\n"


def _indent(lines: list[str], width: int = 4) -> list[str]:
    pad = " " * width
    return [pad + line if line else line for line in lines]
