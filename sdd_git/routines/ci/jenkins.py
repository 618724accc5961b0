"""A routine as a Jenkinsfile (sdd_git.routines.export says the rules it keeps)."""

from __future__ import annotations

from sdd_git.routines.ci.plan import (
    FAILURE_LOG,
    STOPPED,
    Plan,
    changed_path_lines,
    fire_lines,
    groovy_text,
    header,
    plain_cron,
)

# What ends the step's script, its step or stage, the stages or post, and the pipeline.
_CLOSING = ("                }", "            }", "        }", "    }", "}")


def _jenkins_credential(name: str) -> str:
    return "sdd-" + name.lower().replace("_", "-")


def jenkins_file(plan: Plan) -> str:
    routine = plan.routine
    kind = routine.event_kind
    lines = header(
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
        prepare = changed_path_lines("${GIT_PREVIOUS_COMMIT:-}", "$GIT_COMMIT")
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
        *fire_lines(plan, "python3", '"$venv/bin/sdd"', f"{on_stop}"),
    ]
    script = "\n".join(shell)
    if "'''" in script or "\\" in script:  # neither may reach a Groovy ''' string
        raise AssertionError("the Jenkins script must hold no ''' and no backslash")
    answer = "\n".join(
        [
            *setup[:1],
            'case "$SDD_CHOICE" in allow|deny) ;; *) exit 2 ;; esac',
            "status=0",
            '"$venv/bin/sdd" "$SDD_CHOICE" "$SDD_STOP" || status=$?',
            'exit "$status"',
        ]
    )
    first = "\n".join(
        [
            *setup[:1],
            '"$venv/bin/sdd" stops --json | "$venv/bin/python" -c "import json, sys; '
            "s = [x['id'] for x in json.load(sys.stdin) if x.get('kind') in "
            "('approval', 'draft') and not x.get('expired')]; print(s[0] if s else '')\"",
        ]
    )
    for text in (answer, first):
        if "'''" in text or "\\" in text:
            raise AssertionError("the Jenkins script must hold no ''' and no backslash")
    seconds = max(60, int(plan.ci_timeout))
    body = [
        "def status = 0",
        "timeout(time: 30, unit: 'MINUTES') {",
        "    status = sh(returnStatus: true, script: '''",
        *script.split("\n"),
        "''')",
        "}",
        f"if (status == {STOPPED}) {{",
        "    // A reviewer answers each stop here; approvals.ci_timeout bounds the wait.",
        "    try {",
        f"        timeout(time: {seconds}, unit: 'SECONDS') {{",
        f"            while (status == {STOPPED}) {{",
        "                def stop = sh(returnStdout: true, script: '''",
        *first.split("\n"),
        "''').trim()",
        "                if (!(stop ==~ /stop-[0-9a-f]{4,32}/)) {",
        "                    break",
        "                }",
        "                def answered = input(",
        f"                    message: {groovy_text('sdd routine ' + routine.name + ' stopped: ')}"
        " + stop + ' (its action is in the log above). Allow it?',",
        "                    ok: 'Answer',",
        "                    submitter: SDD_APPROVERS,",
        "                    parameters: [choice(name: 'SDD_CHOICE', choices: ['deny', 'allow'],",
        "                        description: 'allow runs the action once; deny runs nothing')]",
        "                )",
        "                withEnv(['SDD_STOP=' + stop, 'SDD_CHOICE=' + answered]) {",
        "                    timeout(time: 30, unit: 'MINUTES') {",
        "                        status = sh(returnStatus: true, script: '''",
        *answer.split("\n"),
        "''')",
        "                    }",
        "                }",
        "            }",
        "        }",
        "    } catch (err) {",
        "        echo 'Nobody answered in time (or the answer was aborted): nothing ran.'",
        "    }",
        "}",
        f"if (status == {STOPPED}) {{",
        f"    unstable('sdd routine {routine.name}: stopped, waiting for a person')",
        "} else if (status != 0) {",
        f'    error("sdd routine {routine.name} failed (exit ${{status}})")',
        "}",
    ]
    credentials = [
        f"string(credentialsId: {groovy_text(_jenkins_credential(n))}, variable: {groovy_text(n)})"
        for n in plan.secrets
    ]
    if needs_log:
        credentials.append(
            "usernamePassword(credentialsId: 'sdd-jenkins-log-reader', "
            "usernameVariable: 'JENKINS_LOG_USER', passwordVariable: 'JENKINS_LOG_TOKEN')"
        )
    wrapped = body
    if plan.folder:
        wrapped = [f"dir({groovy_text(plan.folder)}) {{", *_indent(wrapped), "}"]
    if credentials:
        wrapped = [
            "withCredentials([",
            *(f"    {c}," for c in credentials[:-1]),
            f"    {credentials[-1]}",
            "]) {",
            *_indent(wrapped),
            "}",
        ]
    env_lines = [f"{key} = {groovy_text(value)}" for key, value in environment.items()]
    main = groovy_text(plan.main)
    out = [*lines]
    if needs_log:
        out += [
            "// The failed build's console log is read back through Jenkins' API with the",
            "// credential sdd-jenkins-log-reader (Username with password: a user and its API",
            "// token, allowed to read this job). Put your build's stages where 'Build' is.",
        ]
    out += [
        "// Who may answer a stop (the input step's submitter): Jenkins user ids or groups,",
        "// comma-separated. Set it to your reviewers.",
        "def SDD_APPROVERS = 'sdd-approvers'",
        "",
        "pipeline {",
        "    agent any",
    ]
    if kind == "schedule":
        cron = groovy_text(plain_cron(plan, "Jenkins"))
        out += ["    triggers {", f"        cron({cron})", "    }"]
    # No pipeline-wide timeout: a stop waits for its reviewer up to approvals.ci_timeout; each
    # shell step has its own 30 minutes.
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
            f"                        env.GIT_BRANCH == {groovy_text('origin/' + plan.main)}) {{",
            *_indent(wrapped, 20),
            *_CLOSING,
        ]
        return "\n".join(out) + "\n"
    if kind == "schedule":
        when = ["triggeredBy 'TimerTrigger'"]
    elif kind == "file-changed":
        when = [f"changeset {groovy_text(str(routine.argument))}"]
    else:
        branch = plan.main if kind == "pr-merged" else str(routine.argument)
        when = [f"branch {groovy_text(branch)}"]
    out += [
        f"        stage({groovy_text('Routine ' + routine.name)}) {{",
        "            when {",
        *(f"                {w}" for w in when),
        "            }",
        "            steps {",
        "                script {",
        *_indent(wrapped, 20),
        *_CLOSING,
    ]
    return "\n".join(out) + "\n"


def _indent(lines: list[str], width: int = 4) -> list[str]:
    pad = " " * width
    return [pad + line if line else line for line in lines]
