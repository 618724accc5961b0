"""Her trust ledger: what she confirmed of the files that grant (CONTRACT §13).

A leaf: it imports nothing of sdd but the foundation. The layers above compute each file's
grant surface (a role's level and rules, a routine, a decision) and ask the ledger whether she
confirmed exactly that surface."""
