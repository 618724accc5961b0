"""The person's record: specs, decisions, change packs, scenarios, QA results and releases."""
