"""A routine as a GitHub Actions workflow (sdd_git.routines.export says the rules it keeps)."""

from __future__ import annotations

from sdd_git.cipins import (
    CHECKOUT,
    CHECKOUT_TAG,
    DOWNLOAD_ARTIFACT,
    DOWNLOAD_ARTIFACT_TAG,
    SETUP_PYTHON,
    SETUP_PYTHON_TAG,
    UPLOAD_ARTIFACT,
    UPLOAD_ARTIFACT_TAG,
)
from sdd_git.errors import UsageError
from sdd_git.routines.ci.plan import (
    APPROVALS,
    FAILURE_LOG,
    PYTHON,
    STOPPED,
    STOPPED_ARTIFACT,
    Plan,
    answer_lines,
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
    lines += _DISPATCH
    lines += ["permissions:", "  contents: read"]
    # No `concurrency:` group: GitHub cancels all but one waiting run of a group, and every
    # event must reach its routine.
    lines += [
        "jobs:",
        "  routine:",
        f"    name: {yaml_text('routine ' + routine.name)}",
        # The answer path is the same workflow's workflow_dispatch: it never fires the routine.
        "    if: github.event_name != 'workflow_dispatch'"
        + (f" && {condition}" if condition else ""),
        "    permissions:",
        *(f"      {p}" for p in permissions),
    ]
    on_stop = (
        f'echo "::warning title=sdd routine {routine.name}::stopped: an action waits for a '
        'reviewer; the job summary lists it, and nothing consequential ran"; '
        f"{_PACK}; exit 0"
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
        "        id: fire",
        *_working_directory(plan),
        "        env:",
        *(f"          {line}" for line in secrets),
        *(f"          {key}: {_gh_value(value)}" for key, value in event.items()),
        "        run: |",
        *(f"          {line}" for line in [*changed, *fire_lines(plan, "python", "sdd", on_stop)]),
        *_keep_stopped(plan, "fire"),
        *_answer_job(plan, secrets),
    ]
    return "\n".join(lines) + "\n"


# The answer path: a reviewer runs this workflow by hand (Actions > the workflow > Run workflow)
# with the stop, her choice and the run that stopped. Every input is untrusted text: it
# reaches a script only through the environment, and is checked there.
_DISPATCH = [
    "  workflow_dispatch:",
    "    inputs:",
    "      stop:",
    '        description: "The stop to answer (stop-...), as the stopped run\'s summary lists it"',
    "        required: true",
    "        type: string",
    "      choice:",
    '        description: "Run the action (allow) or not (deny)"',
    "        required: true",
    "        type: choice",
    "        options: [deny, allow]",
    "      run:",
    '        description: "The id of the workflow run that stopped (the number its URL ends with)"',
    "        required: true",
    "        type: string",
]


# The checks before anything is downloaded: the inputs' shapes; the run that stopped is a run
# of this workflow in this repository, of this repository's own code (a fork's pull request
# runs in this repository too, and could upload an artifact of the same name), and of the copy
# of this file on main or in a merged pull request's last commit (a push or a pull request from
# another branch of this repository runs that branch's copy, whose author need not be a
# reviewer, and could forge the kept run: its log's earlier answers stand in the resumed run);
# and no earlier answer claimed the stop (a re-run of this job, or a second dispatch, acts on
# nothing).
def _check(main: str) -> list[str]:
    import shlex

    return [
        'case "$SDD_CHOICE" in allow|deny) ;; *) echo "::error::the choice must be allow or deny"; '
        "exit 2 ;; esac",
        # `case`, not grep: grep matches line by line, and an input may hold a line break.
        'case "$SDD_STOP" in stop-????*) ;; *) SDD_STOP="" ;; esac',
        'case "${SDD_STOP#stop-}" in *[!0-9a-f]*) SDD_STOP="" ;; esac',
        'if [ -z "$SDD_STOP" ] || [ "${#SDD_STOP}" -gt 37 ]; then',
        '  echo "::error::the stop id must look like stop-1a2b3c"; exit 2',
        "fi",
        'case "$SOURCE_RUN" in ""|*[!0-9]*)',
        '  echo "::error::the run must be the number a workflow run\'s URL ends with"; exit 2 ;;',
        "esac",
        'this=$(gh api "repos/$GH_REPO/actions/runs/$GITHUB_RUN_ID" --jq ".workflow_id")',
        'source=$(gh api "repos/$GH_REPO/actions/runs/$SOURCE_RUN" '
        "--jq '[.workflow_id, .head_repository.full_name, .status, .event, .head_branch, "
        '.head_sha] | map(tostring) | join(" ")\')',
        'read -r src_workflow src_repo src_status src_event src_branch src_sha <<< "$source"',
        'if [ "$src_workflow $src_repo $src_status" != "$this $GH_REPO completed" ]; then',
        '  echo "::error::run $SOURCE_RUN is not a finished run of this workflow on this '
        "repository's own code; nothing was answered\"",
        "  exit 1",
        "fi",
        # Another branch's run counts only as a merged pull request's last commit: asked by the
        # commit, which still names its pull request once the branch is deleted.
        f'if [ "$src_branch" != {shlex.quote(main)} ]; then',
        "  merged=0",
        '  case "$src_event:$src_sha" in pull_request:*[!0-9a-f]*|pull_request:) ;;',
        '    pull_request:*) merged=$(gh api "repos/$GH_REPO/commits/$src_sha/pulls" '
        '--jq "[.[] | select(.merged_at != null and .head.sha == \\"$src_sha\\")] | length") ;;',
        "  esac",
        '  if [ "$merged" = "0" ] || [ -z "$merged" ]; then',
        "    echo \"::error::run $SOURCE_RUN ran another branch's copy of this workflow, not "
        "main's or a merged pull request's; nothing was answered\"",
        "    exit 1",
        "  fi",
        "fi",
        'claimed=$(gh api "repos/$GH_REPO/actions/artifacts?name=sdd-answered-$SDD_STOP" '
        "--jq '.total_count')",
        'if [ "$claimed" != "0" ]; then',
        '  echo "::error::$SDD_STOP was already answered; nothing was done again"',
        "  exit 1",
        "fi",
    ]


# What the claim artifact holds: who answered what.
_CLAIM_FILE = [
    'mkdir -p "$RUNNER_TEMP/sdd-answer"',
    'printf "%s %s by %s\\n" "$SDD_STOP" "$SDD_CHOICE" "$GITHUB_ACTOR" '
    '> "$RUNNER_TEMP/sdd-answer/answer.txt"',
]


# Packs the pending stops where the next step uploads them from, and says so to that step.
_PACK = (
    f'if sdd routine pack-stops "$RUNNER_TEMP/{STOPPED_ARTIFACT}"; then '
    'echo "stopped=true" >> "$GITHUB_OUTPUT"; fi'
)


def _keep_stopped(plan: Plan, step: str) -> list[str]:
    """The stopped run's stops and logs, kept as an artifact for the answer job."""
    days = _days(plan)
    return [
        "      - name: Keep the stopped run for its answer",
        f"        if: steps.{step}.outputs.stopped == 'true'",
        f"        uses: {UPLOAD_ARTIFACT} # {UPLOAD_ARTIFACT_TAG}",
        "        with:",
        f"          name: {STOPPED_ARTIFACT}",
        f"          path: ${{{{ runner.temp }}}}/{STOPPED_ARTIFACT}",
        "          if-no-files-found: error",
        f"          retention-days: {days}",
    ]


def _days(plan: Plan) -> int:
    """Whole days the artifact outlives the stop's expiry by at least (GitHub keeps 1 to 90)."""
    return max(1, min(90, -(-int(plan.ci_timeout) // 86400)))


def _answer_job(plan: Plan, secrets: list[str]) -> list[str]:
    """Two jobs: `show` (no secret, no approval) reads the kept stop with the main branch's sdd
    and shows its action in the run's summary; `answer` waits behind the environment, where
    the reviewer approves what `show` showed, and acts only on files with the digest it saw."""
    routine = plan.routine
    on_stop = (
        f'echo "::warning title=sdd routine {routine.name}::stopped again: answer the new stop '
        "the same way, with this run's id\"; "
        f"{_PACK}; status=0"
    )
    folder = f"$RUNNER_TEMP/{STOPPED_ARTIFACT}-in"
    lines = answer_lines("sdd", folder)
    at = next(n for n, line in enumerate(lines) if "routine unpack-stops" in line)
    # The stop is put back (and refused when the artifact does not hold it, or holds other
    # files than the reviewer was shown) before it is claimed: a mistyped run claims nothing.
    put_back = [*lines[:at], lines[at] + ' --digest "$SHOWN_DIGEST"']
    shown = [
        *(line for line in lines[:at] if "SDD_CHOICE" not in line),  # the stop id's checks
        f'sdd routine show-stop "{folder}" "$SDD_STOP" >> "$GITHUB_STEP_SUMMARY"',
        f'digest=$(sdd routine show-stop --digest "{folder}" "$SDD_STOP")',
        'echo "digest=$digest" >> "$GITHUB_OUTPUT"',
    ]
    answer = [
        *lines[:at],
        *lines[at + 1 :],
        f'if [ "$status" -eq {STOPPED} ]; then',
        f"  {on_stop}",
        "fi",
        'exit "$status"',
    ]
    # Run by hand from the main branch only: a dispatch from another branch runs that branch's
    # copy of this file, which need not hold these checks.
    condition = "github.event_name == 'workflow_dispatch' && github.ref == " + _gh_string(
        "refs/heads/" + plan.main
    )
    check = [
        "      - name: Check the answer",
        "        env:",
        "          GH_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
        "          GH_REPO: ${{ github.repository }}",
        "          SDD_STOP: ${{ inputs.stop }}",
        "          SDD_CHOICE: ${{ inputs.choice }}",
        "          SOURCE_RUN: ${{ inputs.run }}",
        "        run: |",
    ]
    return [
        "  show:",
        f"    name: {yaml_text('the stop to answer, in words')}",
        f"    if: {condition}",
        "    runs-on: ubuntu-latest",
        "    timeout-minutes: 30",
        "    permissions:",
        "      contents: read",
        "      actions: read  # the stopped run's artifact, and earlier answers",
        "    outputs:",
        "      digest: ${{ steps.show.outputs.digest }}",
        "    steps:",
        *check,
        *(f"          {line}" for line in _check(plan.main)),
        *_set_up(plan),
        "      - name: Show the stop to its reviewers",
        "        id: show",
        *_working_directory(plan),
        "        env:",
        "          SDD_STOP: ${{ inputs.stop }}",
        "        run: |",
        *(f"          {line}" for line in shown),
        "  answer:",
        f"    name: {yaml_text('answer a stop of ' + routine.name)}",
        "    needs: show",
        f"    if: {condition}",
        f"    environment: {APPROVALS}  # its required reviewers approve what `show` showed",
        "    runs-on: ubuntu-latest",
        "    timeout-minutes: 30",
        "    permissions:",
        "      contents: read",
        "      actions: read  # the stopped run's artifact, and earlier answers",
        "    concurrency:  # two answers to one stop never run side by side",
        "      group: sdd-answer-${{ github.workflow }}",
        "      cancel-in-progress: false",
        "    steps:",
        # Checked again: a re-run of this job alone does not run `show` again.
        *check,
        *(f"          {line}" for line in [*_check(plan.main), *_CLAIM_FILE]),
        *_set_up(plan),
        "      - name: Put back the stop",
        *_working_directory(plan),
        "        env:",
        "          SDD_STOP: ${{ inputs.stop }}",
        "          SDD_CHOICE: ${{ inputs.choice }}",
        "          SHOWN_DIGEST: ${{ needs.show.outputs.digest }}",
        "        run: |",
        *(f"          {line}" for line in put_back),
        "      - name: Claim the stop (a second answer sees it)",
        f"        uses: {UPLOAD_ARTIFACT} # {UPLOAD_ARTIFACT_TAG}",
        "        with:",
        "          name: sdd-answered-${{ inputs.stop }}",
        "          path: ${{ runner.temp }}/sdd-answer/answer.txt",
        "          if-no-files-found: error",
        "          retention-days: 90",
        f"      - name: {yaml_text('Answer the stop and continue the run')}",
        *_working_directory(plan),
        "        env:",
        *(f"          {line}" for line in secrets),
        "          SDD_STOP: ${{ inputs.stop }}",
        "          SDD_CHOICE: ${{ inputs.choice }}",
        "        id: answer",
        "        run: |",
        *(f"          {line}" for line in answer),
        *_keep_stopped(plan, "answer"),
    ]


def _set_up(plan: Plan) -> list[str]:
    """Check out, Python, the pinned sdd, and the stopped run's artifact."""
    return [
        "      - name: Check out the product",
        f"        uses: {CHECKOUT} # {CHECKOUT_TAG}",
        "        with:",
        "          persist-credentials: false",
        "      - name: Set up Python",
        f"        uses: {SETUP_PYTHON} # {SETUP_PYTHON_TAG}",
        "        with:",
        f"          python-version: {yaml_text(PYTHON)}",
        "      - name: Install sdd",
        *_working_directory(plan),
        "        run: |",
        *(f"          {line}" for line in plan.install.shell("python")),
        "      - name: Download the stopped run",
        f"        uses: {DOWNLOAD_ARTIFACT} # {DOWNLOAD_ARTIFACT_TAG}",
        "        with:",
        f"          name: {STOPPED_ARTIFACT}",
        f"          path: ${{{{ runner.temp }}}}/{STOPPED_ARTIFACT}-in",
        "          run-id: ${{ inputs.run }}",
        "          github-token: ${{ secrets.GITHUB_TOKEN }}",
    ]


def _gh_string(text: str) -> str:
    """A GitHub expression's string literal: single quotes, doubled inside."""
    return "'" + text.replace("'", "''") + "'"


def _gh_value(value: str) -> str:
    return value if value.startswith("${{") else yaml_text(value)


def _working_directory(plan: Plan) -> list[str]:
    return [f"        working-directory: {yaml_text(plan.folder)}"] if plan.folder else []
