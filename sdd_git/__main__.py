import sys

from sdd_git.cli.spawned import SPAWNED, run

if sys.argv[1:2] and sys.argv[1] in SPAWNED:
    sys.exit(run(sys.argv[1], sys.argv[2:]))
if sys.argv[1:2] == ["guard"]:  # a host's pre-tool-use hook: before click, as the console script
    from sdd_git.hostguard.main import main as guard

    sys.exit(guard(sys.argv[2:]))

from sdd_git.cli.main import main

main()
