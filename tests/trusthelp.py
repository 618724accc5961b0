"""For tests that write by hand what a person would write with a command (a role file, a rule,
settings, a routine, a decision): she confirms it, as she would with `sdd trust accept`."""

from __future__ import annotations

from sdd_git.root import Root


def confirm(root: Root, *paths: str) -> None:
    """Confirm the files named (none: everything `sdd trust review` lists)."""
    from sdd_git.events.confirm import unconfirmed
    from sdd_git.trust import ledger

    items = unconfirmed(root)
    if paths:
        items = [i for i in items if i.key in paths or i.key.split("#", 1)[0] in paths]
    ledger.record(root, [(i.key, i.surface) for i in items if i.surface is not None], "test")
