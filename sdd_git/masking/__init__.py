"""Secrets: the masker that hides every form of them (`masker`), the names that say a variable
holds one (`names`), the files and variables they come from (`files`, `reach`), and the
credentials in what a service gives back (`returned`). Foundation code: every layer masks.
Every connector's token joins them in `sdd_git.connectors.tokens.masker_for`."""
