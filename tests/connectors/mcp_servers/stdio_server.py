"""The test MCP server over stdio: `python stdio_server.py [--pid-file PATH]`.

It writes its pid first (so a test can check the process is gone after a call), then serves the
tools of toolset.py on stdin/stdout until its stdin closes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toolset import build

if __name__ == "__main__":
    if "--pid-file" in sys.argv:
        pid_file = Path(sys.argv[sys.argv.index("--pid-file") + 1])
        pid_file.write_text(str(os.getpid()), encoding="utf-8")
    build().run("stdio")
