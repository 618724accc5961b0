"""The guard's decision on one call, whoever the host: a command line, or the paths a file tool
writes. A call with neither (a read, a search) passes."""

from __future__ import annotations

import os

from sdd_git.hostguard.call import ALLOWED, Answer, HostCall, deny


def decide(call: HostCall) -> Answer:
    from sdd_git.hostguard.paths import prepare

    prepare(call.cwd, call.project, call.host_files)
    for path in call.writes:
        from sdd_git.hostguard.paths import write_problem

        # A file tool is given an absolute path; one that starts with `~` is read as the
        # person's home, as a shell would, so that it is checked where it would land.
        problem = write_problem(call.cwd, os.path.expanduser(path) if path[:2] == "~/" else path)
        if problem is not None:
            return deny(
                f"{call.tool} of {path} is refused: {problem}. Only the person changes it (her "
                "record, by her own sdd commands): say what should change, and she does it"
            )
    if call.command is not None:
        from sdd_git.hostguard.shell import shell_answer

        return shell_answer(call.command, call.cwd)
    return ALLOWED
