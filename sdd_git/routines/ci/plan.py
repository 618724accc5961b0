"""What every CI engine's file of a routine shares: the plan checked once (name, main branch,
folder, secrets, install source), the header, the shell that fires the routine, and quoting."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sdd_git.cipins import InstallSource
from sdd_git.errors import UsageError
from sdd_git.root import Root
from sdd_git.routines.routine import NAME_PATTERN, Routine, main_branch
from sdd_git.routines.triggers import KINDS

ENGINES = ("github-actions", "gitlab-ci", "jenkins")
DEFAULT_WORKFLOWS = ("CI",)  # the GitHub workflows whose failure on main fires main-build-failed
PYTHON = "3.11"
FAILURE_LOG = "build-failure.log"  # the failed build's log, written beside .sdd/ in CI
STOPPED = 3  # `sdd routine fire` exit code: a stop is waiting for a person
APPROVALS = "sdd-approvals"  # the GitHub or GitLab environment whose reviewers answer a stop
STOPPED_ARTIFACT = "sdd-stopped"  # what the stopped job keeps: its stops and their runs' logs

_ROLE = re.compile(r"[a-z0-9][a-z0-9-]{0,39}\Z")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
_FOLDER = re.compile(r"[A-Za-z0-9._][A-Za-z0-9._/ -]{0,199}\Z")
_WORKFLOW = re.compile(r"[^\x00-\x1f\x7f]{1,200}\Z")
ZERO_SHA = "0" * 40
_CRON_NAMES = frozenset(
    {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
    | {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
)

# The event for `sdd routine fire --event`: every ROUTINE_EVENT_* variable of the step, by its
# lower-case name (kind, ref, branch, routine, commit, url), and source ci. Quotes: single inside
# the script, none doubled, no backslash (Groovy's ''' strings would read it).
EVENT_JSON = (
    "import json, os; p = 'ROUTINE_EVENT_'; "
    "print(json.dumps(dict({k[len(p):].lower(): v for k, v in os.environ.items() "
    "if k.startswith(p) and v}, source='ci'), sort_keys=True))"
)


@dataclass(frozen=True)
class Plan:
    """What every engine's file needs, checked once."""

    name: str  # as `sdd routine fire` takes it: NAME, or ROLE/NAME when two roles share it
    routine: Routine
    main: str
    folder: str  # the sdd root, relative to the repository's top ("" at the top)
    secrets: tuple[str, ...]  # variable names, e.g. OPENAI_API_KEY
    version: str
    install: InstallSource
    ci_timeout: float = 86400.0  # seconds a stop raised in CI waits (approvals.ci_timeout)


def default_path(routine: Routine, engine: str) -> str:
    """Where the file usually goes, relative to the repository's top."""
    check_engine(engine)
    return {
        "github-actions": f".github/workflows/sdd-routine-{routine.name}.yml",
        "gitlab-ci": f".gitlab/sdd-routine-{routine.name}.gitlab-ci.yml",
        "jenkins": f"Jenkinsfile.sdd-routine-{routine.name}",
    }[engine]


def secret_names(root: Root, routine: Routine) -> tuple[str, ...]:
    """The variables the routine's run reads its model key from, named by the product's files
    only: `provider.api_key_env` of .sdd/config.yaml (or the kind's standard variable when it
    names none) and the role's own `model.api_key_env`. `none` names nothing, and so does a
    local server nobody named a key for. The environment is never read: what a person has set
    in her shell must not decide what a file for everyone says."""
    from sdd_git.providers.select import DEFAULT_KEY_ENV, NO_KEY
    from sdd_git.roles.registry import find_role
    from sdd_git.settings import REPO
    from sdd_git.settings import layer as settings_layer

    # The product's own settings only: a CI file is for everyone, and the engine has neither her
    # user file nor her local one.
    shared = settings_layer(root, REPO)
    config = shared.data.get("provider") if shared is not None else None
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


def check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise UsageError(f"unknown CI engine '{engine}'", hint="one of: " + ", ".join(ENGINES))


def plan_for(root: Root, routine: Routine) -> Plan:
    from sdd_git import __version__
    from sdd_git.cipins import install_source
    from sdd_git.routines.routine import load_routines
    from sdd_git.runner.state import approval_timeout

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
    return Plan(
        name=name,
        routine=routine,
        main=main_branch(root),
        folder=_folder(root),
        secrets=secret_names(root, routine),
        version=__version__,
        install=install_source(root, f"writing a CI file for the routine {routine.name}"),
        ci_timeout=approval_timeout(root, ci=True),
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


def workflow_names(workflows: Sequence[str]) -> tuple[str, ...]:
    names = tuple(str(w).strip() for w in workflows if str(w).strip())
    if not names:
        raise UsageError("name at least one workflow whose failure fires the routine")
    for name in names:
        if not _WORKFLOW.match(name):
            raise UsageError(f"{name!r} is not a workflow name", hint="e.g. CI")
    return names


def plain_cron(plan: Plan, engine: str) -> str:
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


def yaml_text(text: str) -> str:
    """A YAML scalar that reads back as exactly `text`: a JSON string is a YAML one."""
    return json.dumps(text, ensure_ascii=False)


def groovy_text(text: str) -> str:
    """A Groovy single-quoted string (no interpolation), escaped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def trigger_comment(plan: Plan) -> str:
    routine = plan.routine
    return KINDS[routine.event_kind].exported.format(
        main=plan.main, argument=routine.argument, schedule=routine.schedule
    )


def header(plan: Plan, engine: str, comment: str, secrets_where: str) -> list[str]:
    routine = plan.routine
    c = comment
    lines = [
        f"{c} Written by `sdd routine export {plan.name} --{engine}` (sdd {plan.version}).",
        f"{c} Runs the routine {routine.name} of the role {routine.role} {trigger_comment(plan)}",
        f"{c} (.sdd/roles/{routine.role}/routines/{routine.name}.yaml).",
        f"{c} It installs sdd from {plan.install.shown()} (ci.install of .sdd/config.yaml).",
    ]
    if plan.secrets:
        lines.append(f"{c} Secrets, by name only: {', '.join(plan.secrets)}, {secrets_where}.")
    else:
        lines.append(f"{c} The provider in .sdd/config.yaml names no key variable: no secret.")
    lines += [
        f"{c} A stop ends the run here: nothing consequential runs until a reviewer answers it",
        f"{c} (docs/export.md of sdd); it expires unanswered after approvals.ci_timeout.",
    ]
    return lines


def answer_lines(sdd: str, folder: str, claim: str = "") -> list[str]:
    """The shell that answers one stop from the kept folder: SDD_STOP and SDD_CHOICE come from
    the reviewer, through the environment, checked here before either reaches a command."""
    return [
        'case "$SDD_CHOICE" in allow|deny) ;; *) echo "the choice must be allow or deny, not '
        '$SDD_CHOICE" >&2; exit 2 ;; esac',
        # `case`, not grep: grep matches line by line, and a variable may hold a line break.
        'case "$SDD_STOP" in stop-????*) ;; *) SDD_STOP="" ;; esac',
        'case "${SDD_STOP#stop-}" in *[!0-9a-f]*) SDD_STOP="" ;; esac',
        'if [ -z "$SDD_STOP" ] || [ "${#SDD_STOP}" -gt 37 ]; then',
        '  echo "the stop id must look like stop-1a2b3c" >&2; exit 2',
        "fi",
        f'{sdd} routine unpack-stops "{folder}" "$SDD_STOP"',
        *([claim] if claim else []),  # where a second answer sees this one
        "status=0",
        f'{sdd} "$SDD_CHOICE" "$SDD_STOP" || status=$?',
    ]


def fire_lines(plan: Plan, python: str, sdd: str, on_stop: str) -> list[str]:
    """The shell that builds the event and fires the routine; `on_stop` runs on exit 3."""
    return [
        f'event=$({python} -c "{EVENT_JSON}")',
        "status=0",
        f'{sdd} routine fire {plan.name} --event "$event" || status=$?',
        f'if [ "$status" -eq {STOPPED} ]; then',
        f"  {on_stop}",
        "fi",
        'exit "$status"',
    ]


def changed_path_lines(before: str, after: str) -> list[str]:
    """The first changed path matching the routine's glob (ROUTINE_GLOB), as the event's ref."""
    return [
        f'if [ "{before}" = "{ZERO_SHA}" ] || [ -z "{before}" ]; then',
        f'  ROUTINE_EVENT_REF=$(git show --name-only --format= "{after}" -- '
        '":(glob)$ROUTINE_GLOB" | sed -n 1p) || true',
        "else",
        f'  ROUTINE_EVENT_REF=$(git diff --name-only "{before}" "{after}" -- '
        '":(glob)$ROUTINE_GLOB" | sed -n 1p) || true',
        "fi",
        "export ROUTINE_EVENT_REF",
    ]
