"""Her page: the person's journey in a browser, served on loopback by `sdd page` (the [page] extra).

Imported only by `sdd page`: nothing else in sdd imports starlette, uvicorn or jinja2.
"""

from __future__ import annotations

# Every module the page needs from its extra (import name, distribution). Checked before anything
# of them is imported, so that a missing one is one sentence, not a traceback from deep inside
# uvicorn or Starlette (python-multipart is only imported on the first form).
EXTRA_MODULES = (
    ("starlette", "starlette"),
    ("uvicorn", "uvicorn"),
    ("jinja2", "jinja2"),
    ("multipart", "python-multipart"),
)


def missing_extra() -> list[str]:
    """The distributions of the [page] extra that are not installed (empty when it is whole)."""
    from importlib.util import find_spec

    return [dist for module, dist in EXTRA_MODULES if find_spec(module) is None]
