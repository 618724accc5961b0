"""The watcher's event sources, one module each: git refs (refs.py), build results (builds.py),
schedules (schedules.py) and saved files (files.py). Each writes its events through the
watcher's `Emitter` (emit.py); events/watcher.py joins them in one loop."""
