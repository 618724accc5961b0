"""sdd: AI role agents inside a git repository, behind a person's record they cannot write."""

__version__ = "0.1.0"
