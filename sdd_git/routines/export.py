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

A stop in CI ends the fire with exit 3 and lists the stops in the engine's summary; the job
reports it as a warning (GitHub), allowed failure (GitLab) or unstable (Jenkins), never as a
success that hides it, and nothing consequential has run. The file then carries the answer path
(routines/ci/carry.py keeps the stopped run across jobs): GitHub's workflow_dispatch job behind
the `sdd-approvals` environment, GitLab's manual job, Jenkins' input step; each runs
`sdd allow|deny STOP` with the reviewer's choice, and the run goes on from its log.
"""

from __future__ import annotations

from collections.abc import Sequence

from sdd_git.root import Root
from sdd_git.routines.ci.github import github_file
from sdd_git.routines.ci.gitlab import gitlab_file
from sdd_git.routines.ci.jenkins import jenkins_file
from sdd_git.routines.ci.plan import (
    DEFAULT_WORKFLOWS,
    ENGINES,
    check_engine,
    default_path,
    plan_for,
    secret_names,
    workflow_names,
)
from sdd_git.routines.routine import Routine

__all__ = ["ENGINES", "default_path", "export_definition", "secret_names"]


def export_definition(
    root: Root,
    routine: Routine,
    engine: str,
    *,
    workflows: Sequence[str] = DEFAULT_WORKFLOWS,
) -> str:
    """The CI definition's text for `engine` (one of ENGINES). `workflows`: for GitHub's
    main-build-failed, the names of the workflows whose failure on main fires the routine."""
    check_engine(engine)
    plan = plan_for(root, routine)
    if engine == "github-actions":
        return github_file(plan, workflow_names(workflows))
    if engine == "gitlab-ci":
        return gitlab_file(plan)
    return jenkins_file(plan)
