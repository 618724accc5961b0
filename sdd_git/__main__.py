import sys

from sdd_git.cli.entry import refuse_unsupported_platform

refuse_unsupported_platform(sys.platform)  # before anything else, as the console script

from sdd_git.cli.spawned import SPAWNED, run  # noqa: E402

if sys.argv[1:2] and sys.argv[1] in SPAWNED:
    sys.exit(run(sys.argv[1], sys.argv[2:]))
if sys.argv[1:2] == ["guard"]:  # a host's pre-tool-use hook: before click, as the console script
    from sdd_git.hostguard.main import main as guard

    sys.exit(guard(sys.argv[2:]))

from sdd_git.cli.main import main  # noqa: E402

main()
