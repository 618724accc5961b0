from sdd_git.cli.main import main

main()
