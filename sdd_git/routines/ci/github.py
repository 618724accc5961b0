"""A routine as a GitHub Actions workflow (sdd_git.routines.export says the rules it keeps)."""

from __future__ import annotations

from sdd_git.cipins import CHECKOUT, CHECKOUT_TAG, SETUP_PYTHON, SETUP_PYTHON_TAG
from sdd_git.errors import UsageError
from sdd_git.routines.ci.plan import (
    FAILURE_LOG,
    PYTHON,
    Plan,
    changed_path_lines,
    fire_lines,
    header,
    plain_cron,
    yaml_text,
)


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


def github_file(plan: Plan, workflows: tuple[str, ...]) -> str:
    routine = plan.routine
    kind = routine.event_kind
    secrets = [f"{n}: ${{{{ secrets.{n} }}}}" for n in plan.secrets]
    for name in plan.secrets:
        if name.upper().startswith("GITHUB_"):
            raise UsageError(
                f"GitHub refuses secret names starting with GITHUB_; the key variable is {name}",
                hint="name the key variable otherwise in .sdd/config.yaml (provider.api_key_env)",
            )
    lines = header(plan, "github-actions", "#", "from the repository's Actions secrets")
    lines += [f"name: {yaml_text('sdd routine ' + routine.name)}", "on:"]
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
            f"    workflows: [{', '.join(yaml_text(w) for w in workflows)}]",
            "    types: [completed]",
            f"    branches: [{yaml_text(plan.main)}]",
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
            f"    branches: [{yaml_text(plan.main)}]",
        ]
        condition = "github.event.pull_request.merged == true"
        checkout.append("ref: ${{ github.event.pull_request.merge_commit_sha }}")
        event.update(
            ROUTINE_EVENT_REF="${{ github.event.pull_request.merge_commit_sha }}",
            ROUTINE_EVENT_BRANCH="${{ github.event.pull_request.base.ref }}",
            ROUTINE_EVENT_URL="${{ github.event.pull_request.html_url }}",
        )
    elif kind == "push":
        lines += ["  push:", f"    branches: [{yaml_text(str(routine.argument))}]"]
        event.update(
            ROUTINE_EVENT_REF="${{ github.sha }}",
            ROUTINE_EVENT_BRANCH="${{ github.ref_name }}",
        )
    elif kind == "file-changed":
        glob = str(routine.argument)
        # Branches only: GitHub reads no path filter for a tag's push, and would fire on each.
        lines += [
            "  push:",
            '    branches: ["**"]',
            f"    paths: [{yaml_text(_github_paths(glob))}]",
        ]
        checkout.append("fetch-depth: 0")
        event.update(
            ROUTINE_EVENT_BRANCH="${{ github.ref_name }}",
            ROUTINE_EVENT_COMMIT="${{ github.sha }}",
            ROUTINE_GLOB=glob,
            BEFORE="${{ github.event.before }}",
            AFTER="${{ github.sha }}",
        )
        changed = changed_path_lines("$BEFORE", "$AFTER")
    else:
        lines += ["  schedule:", f"    - cron: {yaml_text(plain_cron(plan, 'GitHub'))}"]
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
        f"    name: {yaml_text('routine ' + routine.name)}",
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
        f"          python-version: {yaml_text(PYTHON)}",
        "      - name: Install sdd",
        *_working_directory(plan),  # where her paths (ci.install) are relative to
        "        run: |",
        *(f"          {line}" for line in plan.install.shell("python")),
        *fetch,
        f"      - name: {yaml_text('Run the routine ' + routine.name)}",
        *_working_directory(plan),
        "        env:",
        *(f"          {line}" for line in secrets),
        *(f"          {key}: {_gh_value(value)}" for key, value in event.items()),
        "        run: |",
        *(f"          {line}" for line in [*changed, *fire_lines(plan, "python", "sdd", on_stop)]),
    ]
    return "\n".join(lines) + "\n"


def _gh_value(value: str) -> str:
    return value if value.startswith("${{") else yaml_text(value)


def _working_directory(plan: Plan) -> list[str]:
    return [f"        working-directory: {yaml_text(plan.folder)}"] if plan.folder else []
