"""The guard's decision on one call, whoever the host: a command line, or the paths a file tool
writes. A call with neither (a read, a search) passes."""

from __future__ import annotations

from sdd_git.hostguard.call import ALLOWED, Answer, HostCall, deny


def decide(call: HostCall) -> Answer:
    from sdd_git.hostguard.paths import prepare

    prepare(call.cwd, call.project, call.host_files)
    for path in call.writes:
        from sdd_git.hostguard.paths import write_problem

        problem = write_problem(call.cwd, path)
        if problem is not None:
            return deny(
                f"{call.tool} of {path} is refused: {problem}. The record changes only by the "
                "person's own sdd commands; say what should change, and she runs them"
            )
    if call.command is not None:
        from sdd_git.hostguard.shell import shell_answer

        return shell_answer(call.command, call.cwd)
    return ALLOWED
