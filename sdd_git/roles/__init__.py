"""Roles as files: profiles, validation, the registry, the lattice, templates and sharing."""
