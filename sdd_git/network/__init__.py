"""The network of roles: routing, plans run as a tree of nodes, handoffs and groups."""
