"""Classifying a shell command with a real parser (tree-sitter-bash), before it may run.

A leaf: it imports nothing else of sdd, and tree-sitter only on the first command classified.

Every simple command in the tree is found, wherever it sits: lists, pipes, subshells, brace
groups, loops, functions, command and process substitution. Wrappers (`env`, `timeout`, `xargs`,
`find -exec`, ...) are unwrapped, and `bash -c STRING` and here-documents fed to a shell are
parsed in turn. The result says whether the command reaches `sdd`, which paths it writes, which
paths it hands to programs nobody can vouch for, whether it runs code (an interpreter, a build
or test runner, an extractor, a program of the product's: see `runs_code`), and whether it
could be classified with certainty at all.

The stance is strict: a word is known only when it is fully static (no expansion, glob, brace or
tilde), a wrapper option is known only when it is in the table, and anything else where it
matters makes the command uncertain. An uncertain command always stops for the person and no
saved rule allows it; the sink (SDD_RUN_ID) and the sandbox still hold after that.

Modules: `parse` (the tree and its static words), `walk` (the tree walk and the one rule per
program), `wrappers` (commands that run another: env, timeout, xargs, sudo, flock, ...),
`shells` (what runs text as shell: bash -c, watch, sg, capsh, code with a shell call in it),
`programs` (git, find, cd, sed), `writers` (what writes files), `runs_code` (what runs code),
`arith` (where bash evaluates a variable's value as arithmetic or as a name: `$((x))`, a
subscript, `[[ -v $x ]]`, `${x@P}`),
`findings` (the records found), `decision` (allow < ask < forbid).

The package itself imports nothing, so that a table (`runs_code.BASH_BUILTINS`) stays cheap to
import; the classifier is `sdd_git.shellpolicy.walk.classify`.
"""
