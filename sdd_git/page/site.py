"""What every view of the page shares: the sdd root in use, the jobs, the templates, and the
log of her actions (`.sdd/local/page.jsonl`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from sdd_git import statefolders
from sdd_git.page.jobs import Jobs
from sdd_git.root import Root
from sdd_git.shown_text import visible

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
PAGE_LOG = "page.jsonl"
LABELS_SECONDS = 2.0


class Site:
    """One page server's state. `root` is None until she has chosen a folder."""

    def __init__(self, root: Root | None, start_folder: Path | None = None) -> None:
        self.root = root
        self.start_folder = start_folder
        self.jobs = Jobs(lambda: self.root.path if self.root else None)
        self._labels_read: tuple[float, dict[str, str]] | None = None
        self.templates = Environment(
            loader=FileSystemLoader(str(TEMPLATES)),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
            finalize=shown,
        )
        self.templates.globals["static_version"] = static_version()
        from sdd_git.page import herwords

        self.templates.globals.update(
            called=self.called,
            stop_line=lambda stop: herwords.stop_line(stop, self._path(), self.called(stop.role)),
            decision_words=herwords.decision_words,
            accepted_on=herwords.accepted_on,
        )
        self.templates.filters["when"] = herwords.when

    def render(self, request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        from sdd_git.page.herwords import for_her, hint_for_her

        # The core's messages are written for a terminal: on her page they name no command.
        if values.get("error"):  # never emptied: a message that was all command stays whole
            values["error"] = for_her(values["error"]) or values["error"]
        else:
            values["error"] = None
        values["hint"] = hint_for_her(values.get("hint"))
        if values.get("notice"):
            values["notice"] = for_her(values["notice"])
        values.setdefault("product", self.product())
        html = self.templates.get_template(name).render(request=request, root=self.root, **values)
        return HTMLResponse(html, status_code=status)

    def _path(self) -> Path | None:
        return self.root.path if self.root else None

    def called(self, role: str) -> str:
        """A role as a sentence names it: "The builder", "The QA author"."""
        from sdd_git.page.herwords import capital, role_words

        return capital(role_words(role, self._labels().get(role)))

    def _labels(self) -> dict[str, str]:
        """Each role's label, read at most every LABELS_SECONDS: reading every role costs a few
        milliseconds, and a page names roles many times; a label edited just now shows on the
        next page but one."""
        now = time.monotonic()
        if self.root is None:
            return {}
        if self._labels_read is None or now - self._labels_read[0] > LABELS_SECONDS:
            from sdd_git.errors import SddError
            from sdd_git.roles.registry import load_registry

            try:
                labels = {r.name: r.label for r in load_registry(self.root).roles}
            except (SddError, OSError):  # roles that cannot be read are named by their names
                labels = {}
            self._labels_read = (now, labels)
        return self._labels_read[1]

    def product(self) -> str | None:
        """Her product's name: `product:` (or `name:`) in memory/product.yaml, as `sdd init
        --product` wrote it; the folder's name only when the file names none."""
        if self.root is None:
            return None
        from sdd_git.page.shortcut import product_name

        return product_name(self.root)

    def missing(
        self, request: Request, what: str, exc: Any = None, status: int = 404
    ) -> HTMLResponse:
        """The page for something that is not there (or could not be read), with why."""
        return self.render(
            request,
            "missing.html",
            status=status,
            what=what,
            error=getattr(exc, "message", None),
            hint=getattr(exc, "hint", None),
        )

    def logged(self, action: str, **args: Any) -> None:
        """Her action, as the page made it: one line in `.sdd/local/page.jsonl`, masked as a
        run log is (a secret she pasted into her words stays out of it)."""
        from sdd_git.connectors.tokens import masker_for

        assert self.root is not None
        line = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "action": action,
            "args": args,
            "origin": "page",
        }
        text = masker_for(self.root.path)(json.dumps(line, ensure_ascii=False)) + "\n"
        statefolders.append(self.root.local / PAGE_LOG, text.encode("utf-8"), sync=False)


def shown(value: Any) -> Any:
    """Every value a template prints, as text: its control, bidirectional and zero-width
    characters written out (`\\u202e`) before it is HTML-escaped, newlines kept (a reading has
    many lines). A role's words, a file name or a command reach her page the same way."""
    if isinstance(value, Markup):  # already HTML (a macro's output): its text made visible too
        return Markup(visible(str(value), keep_newlines=True))
    if isinstance(value, str):
        return visible(value, keep_newlines=True)
    if value is None or isinstance(value, int | float):
        return value
    if hasattr(value, "__html__"):
        return Markup(visible(str(value.__html__()), keep_newlines=True))
    return visible(str(value), keep_newlines=True)


def static_version() -> str:
    """A short hash of the page's style sheet and script, put in their addresses: the browser
    keeps them (see the guard) and fetches them again only when they change."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(STATIC.iterdir()):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def site_of(request: Request) -> Site:
    site = request.app.state.site
    assert isinstance(site, Site)
    return site


def root_of(request: Request) -> Root:
    root = site_of(request).root
    if root is None:
        from sdd_git.errors import UsageError

        raise UsageError("no folder is chosen yet", hint="choose one on the first page")
    return root


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def form_of(request: Request) -> dict[str, str]:
    """Her form's fields. A browser sends every line break of a text box as CRLF: her words keep
    the line breaks she typed, as the terminal would have them (LF), not a control character."""
    form = await request.form()
    return {k: v.replace("\r\n", "\n") for k, v in form.items() if isinstance(v, str)}
