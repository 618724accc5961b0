"""`sdd guard`: the check another agent's host runs before each of its tool calls (CONTRACT §14).

Claude Code (and any host with a pre-tool-use hook) starts `sdd guard --host NAME` before a tool
runs, with the call on stdin. The guard refuses what only the person may do, by any spelling: a
person command of sdd, and a write into her record (`memory/`, `changes/`), sdd's files
(`.sdd/`), git's folder or the files that grant roles and other agents their rules. A command it
cannot classify with certainty is asked about, never allowed. It uses the runner's own pieces:
the shell classifier (`sdd_git.shellpolicy`) and the protected paths (`sdd_git.protected`).

Modules: `call` (what a host asked, and the answer, in the host's terms), `hosts` (the plug
point: one small module a host, `claude` the first), `check` (the decision), `paths` (which sdd
root a path is in, and what may not be written there), `shell` (a command line), `gitrule` (what
a git command may do), `code` (code an interpreter is given on the line, and scripts it runs),
`main` (the command itself).

It runs before every tool call, so it imports nothing but these, the classifier and the path
rules: never click, and tree-sitter only for a shell command.
"""
