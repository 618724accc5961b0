"""The model-facing tools, each declaring its class (read, draft, loop, consequential)."""
