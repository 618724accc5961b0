"""Model wire protocols behind one small Protocol: openai-compatible, anthropic, script."""
