"""The attack round on her page: every route by which something could change without her, a role's
words could become script on her page, the page could do what no person command can, or the server
could fall over or leak. Each test is named after the route it closes and fails if it were open.

Most tests talk to a real uvicorn server on 127.0.0.1 (one for the module; each test puts a fresh
guarded page, with its own one-time token, in front of it), because only a real server passes a
hand-made request (dot segments, raw bytes, no Host) through as it was sent."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import string
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import pytest

uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("jinja2")

from starlette.routing import Mount, Route  # noqa: E402
from starlette.staticfiles import StaticFiles  # noqa: E402

from sdd_git.demo import SCRIPTS, WORDS  # noqa: E402
from sdd_git.errors import InsideRunError  # noqa: E402
from sdd_git.page.app import build_app, create_app  # noqa: E402
from sdd_git.page.security import cookie_name, loopback_socket, new_token  # noqa: E402
from sdd_git.page.site import STATIC, TEMPLATES, Site  # noqa: E402
from sdd_git.records import acceptance, changes  # noqa: E402
from sdd_git.root import Root, init_root  # noqa: E402
from sdd_git.runner import stops  # noqa: E402
from sdd_git.sandbox.execute import run as sandboxed  # noqa: E402
from tests.page.forms import form_fields  # noqa: E402
from tests.page.test_safety import (  # noqa: E402
    Answer,
    Switch,
    ask,
    other_port,
    product,
    raw,
    served,
    use_sandbox,
)
from tests.page.test_views import READING, accepted_change, watcher  # noqa: E402

HOSTILE = (
    "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)>"
    "<a href=javascript:alert(4)>x</a>{{7*7}}"
)
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
NO_SLASH = "<img src=x onerror=alert(7)>\"'<svg onload=alert(8)>"  # a file or folder name
FORM = "application/x-www-form-urlencoded"
BROWSER_ONLY = ("GET", "HEAD", "OPTIONS")


# The server, her browser, and what "changed" means ---------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, Switch]]:
    sock = loopback_socket(0)
    port = int(sock.getsockname()[1])
    switch = Switch()
    with served(switch, sock):
        yield port, switch


@dataclass
class Browser:
    """Her browser, signed in: the cookie, her page's Host, and (for posts) its own Origin."""

    port: int
    token: str
    cookie: str  # "name=value", as her browser sends it
    app: Any  # the page behind the guard (Starlette)

    @property
    def site(self) -> Site:
        site = self.app.state.site
        assert isinstance(site, Site)
        return site

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    @property
    def session(self) -> str:
        return self.cookie.partition("=")[2]

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.ask("GET", path, headers=headers)

    def post(
        self,
        path: str,
        fields: dict[str, str] | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        sent = body if body is not None else urlencode(fields or {}).encode()
        return self.ask("POST", path, sent, headers)

    def ask(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Answer:
        base = {"Host": self.host, "Cookie": self.cookie}
        if method not in BROWSER_ONLY:
            base |= {"Origin": self.origin, "Sec-Fetch-Site": "same-origin", "Content-Type": FORM}
        return ask(self.port, method, path, {**base, **(headers or {})}, body)

    def stranger(
        self, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> Answer:
        """A request with exactly these headers (no cookie unless given)."""
        return ask(self.port, method, path, headers, body)

    def follow(self, answer: Answer) -> Answer:
        location = answer.header("location")
        assert answer.status == 303 and location, (answer.status, answer.body[:300])
        return self.get(location)


def open_page(server: tuple[int, Switch], root: Root | None, start: Path | None = None) -> Browser:
    port, switch = server
    token = new_token()
    guard = create_app(root, token, start, lambda: port)
    switch.app = guard
    signed = ask(port, "GET", f"/?token={token}", {"Host": f"127.0.0.1:{port}"})
    cookie = (signed.header("set-cookie") or "").split(";")[0]
    assert signed.status == 303 and cookie.startswith(cookie_name(port) + "="), signed
    return Browser(port, token, cookie, guard.app)


@pytest.fixture
def browser(server: tuple[int, Switch], root: Root) -> Browser:
    return open_page(server, root)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file and folder under `folder`, with its bytes: what "nothing changed" compares."""
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = b"-> " + os.readlink(path).encode()
        elif path.is_dir():
            found[key] = b"<folder>"
        else:
            found[key] = path.read_bytes()
    return found


def changed(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


@dataclass
class Filled:
    """A root with one of everything the routes name: a change with an accepted reading and a
    scenario, a builder run waiting at a stop, a routine, and a job on the page."""

    change: str
    stop: str
    run: str
    job: str


def filled_root(root: Root, monkeypatch: pytest.MonkeyPatch) -> Filled:
    from sdd_git.routines import manage
    from sdd_git.runner.run import RunRequest, start

    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'builder.yaml'}")
    change = accepted_change(root)
    acceptance.add_scenario(root, change, "Find it", "Search hotel", "Listed.")
    made = start(
        root,
        RunRequest(
            author="builder", task="Implement SPEC-0001#S1.", critic="qa-author", change=change
        ),
    )
    assert made.stop is not None and made.run_id is not None, made
    watcher(root)
    manage.create(
        root,
        manage.draft(
            root, "watcher", "nightly", on=None, schedule="0 9 * * 1-5", input="the day",
            expected="a summary",
        ),
    )  # fmt: skip
    return Filled(change, made.stop.id, made.run_id, "")


def with_job(browser: Browser, filled: Filled) -> Filled:
    job = browser.site.jobs.start("A job", filled.change, lambda told: None)
    job.done.wait(5)
    return Filled(filled.change, filled.stop, filled.run, job.id)


def routes_of_the_page() -> list[tuple[str, str]]:
    """(method, path template) for every route the page has, static files as one of them. Read
    from the app itself: a route added later is attacked here without anyone listing it."""
    found: list[tuple[str, str]] = []
    for route in build_app(None).routes:
        if isinstance(route, Route):
            for method in sorted((route.methods or set()) - {"HEAD"}):
                found.append((method, route.path))
        elif isinstance(route, Mount):
            found.append(("GET", route.path + "/page.js"))
    return found


def concrete(template: str, filled: Filled) -> str:
    """A route's path with real values: the test root's change, stop, run, role and routine."""
    names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    values = {
        "change": filled.change,
        "scenario": "SC-1",
        "stop": filled.stop,
        "run": filled.run,
        "job": filled.job or "0000000000000000",
        "role": "watcher" if template.startswith("/routines/") else "builder",
        "routine": "nightly",
    }
    unknown = names - values.keys()
    assert not unknown, f"a new path parameter {unknown} in {template}: give it a value here"
    return template.format(**values)


# A form that would change something on each route that changes something, were it let through.
ACTION_FORM = urlencode(
    {
        "words": "Export my expenses",
        "choice": "accept",
        "number": "1",
        "result": "pass",
        "title": "t",
        "steps": "s",
        "expected": "e",
        "role": "builder",
        "task": "Implement SPEC-0001#S1.",
    }
).encode()


def page_routes(filled: Filled) -> list[tuple[str, str]]:
    return [(method, concrete(path, filled)) for method, path in routes_of_the_page()]


def assert_guard_refused(answer: Answer, status: int, what: str) -> None:
    assert answer.status == status, (what, answer.status, answer.body[:300])
    assert answer.header("set-cookie") is None, what
    assert b"Traceback" not in answer.body, what


# 1. Nothing changes without her ----------------------------------------------------------------


@pytest.fixture
def filled(root: Root, monkeypatch: pytest.MonkeyPatch, browser: Browser) -> Filled:
    return with_job(browser, filled_root(root, monkeypatch))


def test_every_route_without_the_cookie_is_refused_and_changes_nothing(
    browser: Browser, root: Root, filled: Filled
) -> None:
    before = tree(root.path)
    posting = {"Host": browser.host, "Origin": browser.origin, "Sec-Fetch-Site": "same-origin"}
    jar = [
        None,
        f"{cookie_name(browser.port)}={browser.token}",  # the token itself is not a session
        f"{cookie_name(browser.port)}=",
        f"sdd_page={browser.session}",  # her session under another port's name
        f"{cookie_name(other_port())}={browser.session}",
    ]
    for method, path in page_routes(filled):
        for cookie in jar:
            headers = {**posting, "Content-Type": FORM} | ({"Cookie": cookie} if cookie else {})
            for verb in (method, "PUT", "DELETE", "PATCH") if method == "POST" else (method,):
                answer = browser.stranger(verb, path, headers, ACTION_FORM)
                assert_guard_refused(answer, 401, f"{verb} {path} with {cookie}")
    assert changed(before, tree(root.path)) == []


@pytest.mark.parametrize(
    "host",
    [
        "evil.example:{port}",
        "127.0.0.1.nip.io:{port}",  # a rebinding name that resolves to 127.0.0.1
        "localtest.me:{port}",
        "127.0.0.1:{other}",
        "127.0.0.1:{port}.",
        "127.0.0.1:0{port}",
        "2130706433:{port}",  # 127.0.0.1 as one number
        "0x7f.1:{port}",
        "[::ffff:127.0.0.1]:{port}",
    ],
)
def test_every_route_with_a_foreign_host_is_refused_even_with_the_cookie(
    browser: Browser, root: Root, filled: Filled, host: str
) -> None:
    named = host.format(port=browser.port, other=other_port())
    before = tree(root.path)
    for method, path in page_routes(filled):
        headers = {
            "Host": named,
            "Origin": f"http://{named}",
            "Cookie": browser.cookie,
            "Content-Type": FORM,
        }
        answer = browser.stranger(method, path, headers, ACTION_FORM)
        assert_guard_refused(answer, 421, f"{method} {path} as {named}")
    assert changed(before, tree(root.path)) == []


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "null",
        "http://evil.example",
        "http://127.0.0.1:{other}",
        "http://localhost:{port}",  # another origin than the Host she uses
        "https://127.0.0.1:{port}",
        "http://127.0.0.1:{port}.evil.example",
        "http://127.0.0.1:{port}, http://evil.example",
    ],
)
def test_every_post_route_with_a_foreign_missing_or_null_origin_changes_nothing(
    browser: Browser, root: Root, filled: Filled, origin: str | None
) -> None:
    before = tree(root.path)
    for method, path in page_routes(filled):
        if method != "POST":
            continue
        headers = {
            "Host": browser.host,
            "Cookie": browser.cookie,
            "Content-Type": FORM,
            "Sec-Fetch-Site": "same-origin",
        }
        if origin is not None:
            headers["Origin"] = origin.format(port=browser.port, other=other_port())
        answer = browser.stranger("POST", path, headers, ACTION_FORM)
        assert_guard_refused(answer, 403, f"POST {path} from {origin}")
    assert changed(before, tree(root.path)) == []
    assert not (root.local / "page.jsonl").exists()


@pytest.mark.parametrize("fetch_site", ["cross-site", "same-site", "none"])
def test_every_route_the_browser_calls_cross_site_or_same_site_is_refused(
    browser: Browser, root: Root, filled: Filled, fetch_site: str
) -> None:
    """Same-site is another server on 127.0.0.1 (cookies do not keep ports apart); "none" is
    her own typing, which may read a page but never post."""
    before = tree(root.path)
    for method, path in page_routes(filled):
        if fetch_site == "none" and method != "POST":
            continue
        answer = browser.ask(method, path, ACTION_FORM, {"Sec-Fetch-Site": fetch_site})
        assert_guard_refused(answer, 403, f"{method} {path} {fetch_site}")
    assert changed(before, tree(root.path)) == []


def test_get_head_and_options_on_every_route_change_nothing(
    browser: Browser, root: Root, filled: Filled
) -> None:
    browser.get("/")  # the home page tidies answered readings away; that is done once
    browser.get("/runs")  # the first read of the runs builds their index (a cache), once too
    before = tree(root.path)
    answers = []
    for _, path in page_routes(filled):
        for method in BROWSER_ONLY:
            answers.append((method, path, browser.ask(method, path)))
    for method, path, answer in answers:
        assert answer.status < 500, (method, path, answer.body[:300])
    assert sum(a.status == 200 for m, _, a in answers if m == "GET") >= 10  # they were shown
    assert changed(before, tree(root.path)) == []
    assert not (root.local / "page.jsonl").exists()


def test_method_override_headers_and_params_change_nothing(
    browser: Browser, root: Root, filled: Filled
) -> None:
    before = tree(root.path)
    overrides = ("X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override")
    routes = page_routes(filled)
    shown = {path for method, path in routes if method == "GET"}
    for method, path in routes:
        if method != "POST":
            continue
        # A GET stays a GET: refused where only a post is taken, or the page shown again.
        expected = 200 if path in shown else 405
        for name in overrides:
            got = browser.get(path, {name: "POST"})
            assert got.status == expected, (path, name, got.status)
        got = browser.get(f"{path}?_method=POST&{ACTION_FORM.decode()}")
        assert got.status == expected, (path, got.status)
        # A post that says it is a GET is still a post: its Origin is checked.
        foreign = browser.post(
            path, body=ACTION_FORM, headers={"X-HTTP-Method-Override": "GET", "Origin": "null"}
        )
        assert foreign.status == 403
    assert changed(before, tree(root.path)) == []


def test_the_token_exchange_by_head_post_header_or_cookie_gives_no_session(
    server: tuple[int, Switch], root: Root
) -> None:
    port, switch = server
    token = new_token()
    switch.app = create_app(root, token, None, lambda: port)
    host = {"Host": f"127.0.0.1:{port}"}
    tries = [
        ask(port, "HEAD", f"/?token={token}", host),
        ask(port, "OPTIONS", f"/?token={token}", host),
        ask(port, "POST", "/", {**host, "Content-Type": FORM}, f"token={token}".encode()),
        ask(port, "GET", "/", {**host, "Authorization": f"Bearer {token}"}),
        ask(port, "GET", "/", {**host, "Cookie": f"token={token}"}),
        ask(port, "GET", "/", {**host, "Referer": f"http://127.0.0.1:{port}/?token={token}"}),
        ask(port, "GET", f"/?TOKEN={token}", host),
        ask(port, "GET", f"/?token={token}x", host),
        ask(port, "GET", f"/?token={token}&token={token}", host),
        ask(port, "GET", f"/?token={token}", {**host, "Sec-Fetch-Site": "same-site"}),
        # (Cross-site with the right token is how her opener file gets in: test_safety.py.)
    ]
    for answer in tries:
        assert answer.status in (401, 403), answer
        assert answer.header("set-cookie") is None
    # None of those spent it: the first real use signs in, and a replay does not.
    first = ask(port, "GET", f"/?token={token}", host)
    assert first.status == 303 and first.header("set-cookie")
    for other in (host, {"Host": f"localhost:{port}"}):
        replay = ask(port, "GET", f"/?token={token}", other)
        assert replay.status == 403 and replay.header("set-cookie") is None
    assert changes.list_all(root) == []


@pytest.mark.parametrize(
    "path",
    [
        "//evil.example/x",
        "/\\evil.example/x",
        "/%5Cevil.example/x",
        "/%5C%5Cevil.example",
        "/%2F%2Fevil.example",
        "/\\/evil.example",
        "/%09/evil.example",
        "/.//evil.example",
        "/http://evil.example",
        "/%0d%0aLocation:%20http://evil.example",
        "/@evil.example",
    ],
)
def test_the_token_exchange_redirect_never_leaves_the_page(
    server: tuple[int, Switch], root: Root, path: str
) -> None:
    port, switch = server
    token = new_token()
    switch.app = create_app(root, token, None, lambda: port)
    base = f"http://127.0.0.1:{port}/"
    answer = ask(
        port, "GET", f"{path}?next=//evil.example&token={token}", {"Host": f"127.0.0.1:{port}"}
    )
    assert answer.status == 303
    locations = answer.all("location")
    assert len(locations) == 1
    location = locations[0]
    assert location.startswith("/") and not location.startswith(("//", "/\\"))
    assert "\r" not in location and "\n" not in location and token not in location
    assert urlsplit(urljoin(base, location)).netloc == f"127.0.0.1:{port}"
    # No page with the token in its address: nothing it could load or link to learns it.
    assert answer.body == b"" and answer.header("referrer-policy") == "same-origin"


def test_every_redirect_and_link_of_the_page_stays_on_the_page(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = journey(browser, root, monkeypatch)
    base = f"http://{browser.host}/"
    for answer in answers:
        for location in answer.all("location"):
            assert location.startswith("/") and not location.startswith("//"), location
            assert urlsplit(urljoin(base, location)).netloc == browser.host
        for address in Tags.of(answer).addresses:
            assert address.startswith(("/", "#")) and not address.startswith("//"), address


def journey(browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch) -> list[Answer]:
    """Her journey through the guarded page, every answer kept: her words, the reading, a
    builder run to its stop, Allow once, a scenario tried, the release, and what she reads."""
    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'builder.yaml'}")
    kept: list[Answer] = []

    def keep(answer: Answer) -> Answer:
        kept.append(answer)
        return answer

    def post_and_follow(path: str, fields: dict[str, str] | None = None) -> Answer:
        answer = keep(browser.post(path, fields))
        return keep(browser.follow(answer)) if answer.status == 303 else answer

    post_and_follow("/changes", {"words": WORDS})
    shown = post_and_follow("/changes/CH-0001/reading", {"choice": "correct", "words": READING})
    post_and_follow("/changes/CH-0001/reading", form_fields(shown.body.decode(), "accept-reading"))
    job = post_and_follow(
        "/changes/CH-0001/run",
        {"role": "builder", "critic": "qa-author", "task": "Implement SPEC-0001#S1."},
    )
    stop = re.search(r'href="(/stops/stop-[0-9a-f]+)" id="next"', job.body.decode())
    assert stop, job.body.decode()
    keep(browser.get(stop.group(1)))
    allowed = post_and_follow(stop.group(1), {"choice": "allow_once"})
    events = re.search(r'data-events="([^"]+)"', allowed.body.decode())
    assert events
    keep(browser.get(events.group(1).replace("&amp;", "&")))
    shown = post_and_follow(
        "/changes/CH-0001/scenarios", {"title": "Find", "steps": "S", "expected": "E"}
    )
    accept = form_fields(shown.body.decode(), "accept-SC-1")
    post_and_follow("/changes/CH-0001/scenarios/SC-1/accept", accept)
    keep(browser.get("/changes/CH-0001/scenarios/SC-1"))
    post_and_follow("/changes/CH-0001/scenarios/SC-1/result", {"result": "pass", "words": "Yes."})
    post_and_follow("/changes/CH-0001/release")
    for path in ("/", "/runs", "/roles", "/roles/builder", "/routines", "/folder"):
        keep(browser.get(path))
    run = re.search(r'href="(/runs/run-[^"]+)"', kept[-5].body.decode())
    assert run
    keep(browser.get(run.group(1)))
    assert (root.releases / "R-0001.md").is_file()
    return kept


def test_the_token_and_session_never_appear_in_pages_page_log_or_run_logs(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = journey(browser, root, monkeypatch)
    secrets = (browser.token.encode(), browser.session.encode())
    for answer in answers:
        assert answer.header("set-cookie") is None  # only the exchange sets it
        assert answer.header("referrer-policy") == "same-origin"
        seen = answer.body + "".join(f"{k}: {v}\n" for k, v in answer.headers).encode()
        assert not any(secret in seen for secret in secrets)
    assert (root.local / "page.jsonl").is_file()
    assert list((root.sdd / "role-runs").glob("run-*.jsonl"))
    for path in root.path.rglob("*"):
        if path.is_file():
            assert not any(secret in path.read_bytes() for secret in secrets), path


def test_the_server_keeps_no_access_log_with_her_addresses(root: Root) -> None:
    """uvicorn's access log would print each address (the first one with its token) to her
    terminal, and to any log collecting it."""
    from sdd_git.page.serve import prepare

    sock, server, served_url = prepare(root, None, None)
    try:
        assert server.config.access_log is False
        assert "token=" in served_url.url
    finally:
        sock.close()


def test_cors_preflight_and_answers_carry_no_allow_headers(
    browser: Browser, filled: Filled
) -> None:
    preflight = {
        "Host": browser.host,
        "Origin": "http://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
    }
    for method, path in page_routes(filled):
        for headers in (preflight, {**preflight, "Cookie": browser.cookie}):
            answer = browser.stranger("OPTIONS", path, headers)
            assert answer.status in (401, 405), (path, answer.status)
            assert not [k for k, _ in answer.headers if k.lower().startswith("access-control-")]
        if method == "GET":
            shown = browser.get(path, {"Origin": "http://evil.example"})
            assert not [k for k, _ in shown.headers if k.lower().startswith("access-control-")]


TRAVERSALS = [
    ("GET", "/runs/..%2F..%2F..%2Fsecret.txt"),
    ("GET", "/runs/../../../secret.txt"),
    ("GET", "/runs/%2e%2e"),
    ("GET", "/stops/%2e%2e"),
    ("GET", "/stops/.."),
    ("GET", "/stops/..%2F..%2Fsecret"),
    ("GET", "/roles/.."),
    ("GET", "/roles/%2e%2e"),
    ("GET", "/roles/."),
    ("GET", "/changes/.."),
    ("GET", "/changes/%2e%2e%2f%2e%2e%2fsecret.txt"),
    ("GET", "/changes/CH-0001/scenarios/.."),
    ("GET", "/jobs/.."),
    ("GET", "/jobs/../events"),
    ("GET", "/routines/../../history"),
    ("GET", "/routines/%2e%2e/nightly/history"),
    ("GET", "/static/../site.py"),
    ("GET", "/static/%2e%2e/site.py"),
    ("GET", "/static/..%2fsite.py"),
    ("GET", "/static/%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt"),
    ("GET", "/static//etc/passwd"),
    ("GET", "/static/%2Fetc%2Fpasswd"),
    ("GET", "/static/..%5csite.py"),
    ("GET", "/static/./page.js/../../site.py"),
    ("POST", "/roles/../forget"),
    ("POST", "/roles/%2e%2e/forget"),
    ("POST", "/roles/./forget"),
    ("POST", "/roles/../stop"),
    ("POST", "/roles/../reply"),
    ("POST", "/stops/.."),
    ("POST", "/routines/../nightly/pause"),
    ("POST", "/routines/watcher/../pause"),
    ("POST", "/changes/../reading"),
    ("POST", "/changes/CH-0001/scenarios/../accept"),
    ("POST", "/changes/CH-0001/scenarios/%2e%2e/result"),
]


def test_path_traversal_in_every_path_parameter_reads_and_changes_nothing(
    browser: Browser, root: Root, filled: Filled, tmp_path: Path
) -> None:
    secret = "SECRET-" + new_token()
    (tmp_path / "secret.txt").write_text(secret)
    (root.path.parent / "secret.txt").write_text(secret)
    # Where a role named ".." or "." would keep its memory: a forget there would show.
    for where in (root.local, root.local / "roles"):
        where.mkdir(parents=True, exist_ok=True)
        (where / "memory.yaml").write_text(f"- {{note: {secret}, at: '2026-11-30T10:00:00Z'}}\n")
    before = tree(root.path)
    for method, path in TRAVERSALS:
        answer = browser.ask(method, path, b"number=1&choice=accept&task=hi&result=pass&words=w")
        assert answer.status in (400, 404, 405), (method, path, answer.status, answer.body[:200])
        assert secret.encode() not in answer.body, (method, path)
        assert b"def " not in answer.body and b"root:" not in answer.body, (method, path)
    assert changed(before, tree(root.path)) == []
    assert not (root.local / "page.jsonl").exists()


def test_static_files_never_follow_a_symlink_out_of_the_static_folder(
    browser: Browser, tmp_path: Path
) -> None:
    """The page's own static mount, pointed at a folder holding symlinks to elsewhere."""
    secret = "SECRET-" + new_token()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(secret)
    folder = tmp_path / "static"
    folder.mkdir()
    (folder / "page.css").write_text("body {}\n")
    (folder / "linked.txt").symlink_to(outside / "secret.txt")
    (folder / "linked").symlink_to(outside)
    mount = next(r for r in browser.app.routes if isinstance(r, Mount))
    files = mount.app
    assert isinstance(files, StaticFiles) and files.follow_symlink is False
    files.directory, files.all_directories = str(folder), [str(folder)]
    files.config_checked = True
    assert browser.get("/static/page.css").status == 200  # the folder is served
    for path in ("/static/linked.txt", "/static/linked/secret.txt"):
        answer = browser.get(path)
        assert answer.status == 404 and secret.encode() not in answer.body, path


# 2. A role's words never become script or markup on her page ----------------------------------

# What the page's own templates use; a role's markup would add others (img, svg, iframe...).
TAG_NAMES = (
    "html head meta title link script body a header nav p code main div strong h1 h2 h3 section"
    " ul ol li form input button label textarea details summary select option table thead tbody"
    " tr th td blockquote dl dt dd pre fieldset legend time span noscript br em article h4"
)
PAGE_TAGS = frozenset(TAG_NAMES.split())
ADDRESS_ATTRIBUTES = ("href", "src", "action", "formaction", "data-events")


class Tags(HTMLParser):
    """What the browser would build from a page: its tags, event handlers, scripts, addresses."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.scripts: list[str] = []  # a script's src, or "inline" for a script with text
        self.addresses: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}={value}")
            if name in ADDRESS_ATTRIBUTES:
                self.addresses.append(value or "")
        if tag == "script":
            self.scripts.append(dict(attrs).get("src") or "inline")
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.scripts.append("inline")

    @classmethod
    def of(cls, answer: Answer) -> Tags:
        parser = cls()
        if (answer.header("content-type") or "").startswith("text/html"):
            parser.feed(answer.body.decode("utf-8", "replace"))
            parser.close()
        return parser


def assert_only_text(answer: Answer, what: str) -> None:
    """The page shows a role's words as text: no tag, handler, script or address of theirs."""
    tags = Tags.of(answer)
    assert set(tags.tags) <= PAGE_TAGS, (what, set(tags.tags) - PAGE_TAGS)
    assert tags.handlers == [], (what, tags.handlers)
    assert all(s.startswith("/static/page.js?v=") for s in tags.scripts), (what, tags.scripts)
    for address in tags.addresses:
        assert address.startswith(("/", "#")) and not address.startswith("//"), (what, address)
    assert answer.header("x-content-type-options") == "nosniff"


def hostile_records(root: Root) -> None:
    """Everything a role (or a model, or a file it wrote) can put into what the page reads."""
    from sdd_git.roles import manage as roles
    from sdd_git.roles.conversation import add_message
    from sdd_git.routines import manage
    from sdd_git.runner.conversation import memory_path

    now = time.time()
    common: dict[str, Any] = {
        "run": "run-20261130-hostile",
        "origin": "role",
        "created_at": now,
        "expires_at": None,
    }
    stops.save(
        root,
        stops.Stop(
            id="stop-aaaaa1",
            role="builder",
            kind="approval",
            action=HOSTILE,
            choices=("allow once", "always allow", "deny"),
            tool="write_file",
            args={"path": HOSTILE, "content": HOSTILE, "purpose": HOSTILE},
            change="javascript:alert(1)",
            sandbox=HOSTILE,
            **common,
        ),
    )
    stops.save(
        root,
        stops.Stop(
            id="stop-aaaaa2",
            role=HOSTILE,
            kind="approval",
            action=HOSTILE,
            choices=(HOSTILE,),
            tool="run_command",
            args={"command": HOSTILE, "network": True},
            sandbox="none: " + HOSTILE,
            **common,
        ),
    )
    stops.save(
        root,
        stops.Stop(
            id="stop-aaaaa3",
            role="builder",
            kind="approval",
            action=HOSTILE,
            choices=("allow once", "deny"),
            tool="git_commit",
            args={HOSTILE: HOSTILE, "paths": [HOSTILE]},
            change="//evil.example",
            **common,
        ),
    )
    path = memory_path(root, "builder")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([{"note": HOSTILE, "at": HOSTILE}]) + "\n")
    attachment = {"name": HOSTILE, "what": HOSTILE}
    add_message(root, "builder", str, **{"from": "builder", "text": HOSTILE})
    add_message(
        root, "builder", str, **{"from": HOSTILE, "at": HOSTILE, "attachments": [attachment]}
    )
    log = root.sdd / "role-runs" / "run-20261130-hostile.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    events: list[dict[str, Any]] = [
        {"event": "run_started", "roles": [HOSTILE], "task": HOSTILE, "ts": HOSTILE},
        {"event": "reply", "message": {"content": HOSTILE, "tool_calls": [{"name": HOSTILE}]}},
        {"event": "tool_call", "tool": HOSTILE, "args": {HOSTILE: HOSTILE}},
        {"event": "rejected", "tool": HOSTILE, "message": HOSTILE, "reason": HOSTILE},
        {"event": HOSTILE, HOSTILE: HOSTILE},
        {"event": "error", "message": HOSTILE},
        {"event": "run_ended", "status": HOSTILE},
    ]
    lines = [
        {"ts": HOSTILE, "run": "run-20261130-hostile", "seq": n, **e} for n, e in enumerate(events)
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    roles.create(root, "watcher", "Watch: " + HOSTILE, produces="review")
    # A role folder's name is not checked where routines are read, and a broken routine file's
    # name is in the problem the page shows.
    routine = "name: nightly\nschedule: '0 9 * * 1-5'\ninput: the day\nexpected: a summary\n"
    for folder, name in ((NO_SLASH, "nightly"), ("watcher", NO_SLASH)):
        routines = root.sdd / "roles" / folder / "routines"
        routines.mkdir(parents=True, exist_ok=True)
        (routines / f"{name}.yaml").write_text(routine)
    manage.create(
        root,
        manage.draft(
            root, "watcher", "nightly", on=None, schedule="0 9 * * 1-5", input=HOSTILE,
            expected=HOSTILE,
        ),
    )  # fmt: skip


PATH_HOSTILE = "%3Cimg%20src=x%20onerror=alert(5)%3E%22%27%3Csvg%20onload=alert(6)%3E"


def test_a_roles_words_render_as_text_on_every_page(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Task, reply, stop action and arguments, a file's content and a command in a stop, memory,
    conversation, attachments, run log lines, change words and title, the reading and its
    checks, scenarios, results, failures, release notes, routines, a role's job, the job title
    and error messages built from what was asked: all shown as text."""
    hostile_records(root)
    her = {"words": HOSTILE, "bug": "yes", "happened": HOSTILE, "expected": HOSTILE}
    assert browser.post("/changes", her).status == 303
    change = "CH-0001"
    reading = f"{HOSTILE}\n\n- C1: {HOSTILE}\n- C2: {HOSTILE}"
    shown: dict[str, Answer] = {}

    def read_and(button: str) -> Callable[[], dict[str, str]]:
        # An accept form posts the sha256 of the text it showed: read off the page as it is.
        return lambda: form_fields(browser.get(f"/changes/{change}").body.decode(), button)

    steps: list[tuple[str, dict[str, str] | Callable[[], dict[str, str]]]] = [
        (f"/changes/{change}/reading", {"choice": "correct", "words": reading}),
        (f"/changes/{change}/reading", read_and("accept-reading")),
        (f"/changes/{change}/scenarios", {"title": HOSTILE, "steps": HOSTILE, "expected": HOSTILE}),
        (f"/changes/{change}/scenarios/SC-1/accept", read_and("accept-SC-1")),
        (f"/changes/{change}/scenarios/SC-1/result", {"result": "fail", "words": HOSTILE}),
        (f"/changes/{change}/scenarios/SC-1/failure", {"words": HOSTILE}),
        (f"/changes/{change}/release", {"tag": HOSTILE}),
        (f"/changes/{change}/run", {"role": HOSTILE, "task": HOSTILE, "critic": HOSTILE}),
        (f"/changes/{change}/reading", {"choice": "correct", "words": ""}),
        ("/roles/builder/forget", {"number": HOSTILE}),
        ("/roles/builder/correct", {"number": "1", "note": HOSTILE}),
        ("/roles/builder/reply", {"task": HOSTILE, "reply_to": HOSTILE}),
        ("/folder", {"folder": "/" + HOSTILE, "kind": "existing", "product": HOSTILE}),
        ("/stops/stop-aaaaa1", {"choice": HOSTILE}),
        (f"/changes/{change}/group", {"words": HOSTILE}),
        ("/parts/module", {"name": HOSTILE}),
        ("/parts/service", {"name": HOSTILE, "module": HOSTILE, "owner": HOSTILE}),
        ("/parts/remove", {"name": HOSTILE}),
    ]
    for path, given in steps:
        fields = given() if callable(given) else given
        answer = browser.post(path, fields)
        shown[f"POST {path} {sorted(fields)}"] = (
            browser.follow(answer) if answer.status == 303 else answer
        )
    assert (root.releases / "R-0001.md").is_file()
    job = browser.site.jobs.start(
        HOSTILE, HOSTILE, lambda told: told({"event": "say", "x": HOSTILE})
    )
    job.done.wait(5)
    for path in [
        "/",
        f"/changes/{change}",
        f"/changes/{change}/scenarios/SC-1",
        f"/changes/{change}/group",
        "/parts",
        "/stops/stop-aaaaa1",
        "/stops/stop-aaaaa2",
        "/stops/stop-aaaaa3",
        "/runs",
        "/runs/run-20261130-hostile",
        "/roles",
        "/roles/builder",
        "/roles/watcher",
        "/routines",
        "/routines/watcher/nightly/history",
        f"/jobs/{job.id}",
        "/folder",
        f"/runs/{PATH_HOSTILE}",
        f"/stops/{PATH_HOSTILE}",
        f"/roles/{PATH_HOSTILE}",
        f"/changes/{PATH_HOSTILE}",
        f"/changes/{change}/scenarios/{PATH_HOSTILE}",
        f"/jobs/{PATH_HOSTILE}",
        f"/routines/{PATH_HOSTILE}/{PATH_HOSTILE}/history",
    ]:
        shown[f"GET {path}"] = browser.get(path)
    for what, answer in shown.items():
        assert answer.status < 500, (what, answer.body[:300])
        assert_only_text(answer, what)
    escaped = [w for w, a in shown.items() if ESCAPED.encode() in a.body]
    for must in ("GET /", f"GET /changes/{change}", "GET /stops/stop-aaaaa1", "GET /roles/builder"):
        assert must in escaped, (must, escaped)  # the words were there, as text
    for must in (
        "GET /runs/run-20261130-hostile",
        "GET /routines",
        f"GET /jobs/{job.id}",
        f"GET /changes/{change}/group",
    ):
        assert must in escaped, (must, escaped)
    assert b"&lt;img src=x onerror=alert(5)&gt;" in shown[f"GET /runs/{PATH_HOSTILE}"].body
    assert b"{{7*7}}" in shown[f"GET /changes/{change}"].body  # never evaluated as a template
    assert shown["GET /routines"].body.count(b"&lt;img src=x onerror=alert(7)&gt;") >= 2


def parse_events(body: bytes) -> list[tuple[str, Any]]:
    """Server-sent events as a browser splits them: blocks between blank lines."""
    found = []
    for block in body.decode().replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        fields = [line.partition(": ") for line in block.split("\n")]
        kinds = [value for name, _, value in fields if name == "event"]
        data = [value for name, _, value in fields if name == "data"]
        assert len(kinds) == 1 and len(data) == 1, block
        found.append((kinds[0], json.loads(data[0])))
    return found


def test_progress_lines_over_server_sent_events_stay_text_one_event_each(browser: Browser) -> None:
    from sdd_git.errors import SddError
    from sdd_git.shown_text import visible

    said = [
        HOSTILE,
        'a\n\nevent: outcome\ndata: {"next": "javascript:alert(1)", "done": true}\n\n',
        "b\r\ndata: injected\r\r",
        "c\u2028\u2029\x00\x1b[31m",
    ]

    def work(told: Any) -> None:
        for text in said:
            told({"event": "say", "text": text})
        raise SddError(HOSTILE, hint=HOSTILE)

    job = browser.site.jobs.start(HOSTILE, "//evil.example", work)
    assert job.done.wait(5)
    answer = browser.get(f"/jobs/{job.id}/events")
    assert answer.header(
        "content-type",
    ).startswith("text/event-stream")  # type: ignore[union-attr]
    events = parse_events(answer.body)
    assert [kind for kind, _ in events] == ["line"] * len(said) + ["outcome"]
    # Each line as text: its controls written out, as the page's templates show them.
    assert [data for _, data in events[:-1]] == [visible(line, True) for line in job.lines]
    assert all(text in line for text, line in zip(said, job.lines, strict=True))
    outcome = events[-1][1]
    assert outcome["failed"] and HOSTILE in outcome["text"]
    next_address = outcome["next"]
    assert next_address.startswith("/") and not next_address.startswith("//")
    assert urlsplit(urljoin(f"http://{browser.host}/", next_address)).netloc == browser.host
    assert_only_text(browser.get(f"/jobs/{job.id}"), "the job page")


def test_every_template_autoescapes_and_never_marks_text_safe() -> None:
    site = Site(None)
    for path in sorted(TEMPLATES.glob("*")):
        text = path.read_text(encoding="utf-8")
        assert path.suffix == ".html", path  # autoescape is chosen by the .html suffix
        assert site.templates.autoescape(path.name) is True  # type: ignore[operator]
        for unsafe in ("|safe", "| safe", "Markup", "autoescape false", "autoescape=false"):
            assert unsafe not in text, (path.name, unsafe)
        assert "{% raw" not in text and "|e " not in text
        # Every attribute that takes a value from a template is quoted.
        unquoted = re.findall(r"\s[a-z-]+=\s*\{[{%][^>]*", text)
        assert unquoted == [], (path.name, unquoted)
        # No inline script or handler: CSP forbids them, and a template should not need them.
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), path.name
        assert not re.search(r"\son[a-z]+\s*=", text), path.name
        # An address a template builds always starts on this page.
        for address in re.findall(r'(?:href|src|action)="([^"]*)"', text):
            assert address.startswith(("/", "#", "{{ outcome.next }}")), (path.name, address)


def test_page_js_only_writes_text() -> None:
    script = (STATIC / "page.js").read_text(encoding="utf-8")
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "Function(",
        "setAttribute",
        "srcdoc",
        "location.href =",
        "window.location =",
        "createContextualFragment",
        "DOMParser",
    ):
        assert sink not in script, sink
    # Every address it sets comes from the server's outcome, whose `next` is on the page (above).
    assert re.findall(r"\.href\s*=\s*([^;]+);", script) == ["made.next"]
    assert "textContent" in script


def test_a_job_outcome_address_never_leaves_the_page() -> None:
    """`next` is the one address page.js sets: it is built by the server from the change and
    the stop, whatever a role or a stop file named them."""
    from sdd_git.page.jobs import Job
    from sdd_git.page.views_runs import outcome_of

    class Made:
        def __init__(self, stop: Any) -> None:
            self.stop, self.run_id, self.message = stop, "run-1", HOSTILE

    for change in ("//evil.example", "javascript:alert(1)", "\\\\evil.example", HOSTILE, None):
        for kind in ("approval", "reading", "plan"):
            stop = stops.Stop(
                id="stop-1", run="run-1", role="builder", kind=kind, action=HOSTILE,
                choices=(), origin="role", created_at=0.0, expires_at=None, change=change,
            )  # fmt: skip
            job = Job("j", HOSTILE, change)
            job.outcome = Made(stop)
            job.done.set()
            address = outcome_of(job)["next"]
            assert address.startswith("/") and not address.startswith(("//", "/\\")), address
            assert urlsplit(urljoin("http://127.0.0.1:9/", address)).netloc == "127.0.0.1:9"


# 3. The page does nothing a person command cannot, and lets no role's action through ------------


def run_events(root: Root, run_id: str, kind: str) -> list[dict[str, Any]]:
    log = root.sdd / "role-runs" / f"{run_id}.jsonl"
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in events if e.get("event") == kind]


def wait_for_job(browser: Browser, answer: Answer) -> str:
    """The job a post started, once it is done: its page's text."""
    location = answer.header("location") or ""
    assert answer.status == 303 and location.startswith("/jobs/"), (answer.status, answer.body)
    job = browser.site.jobs.get(location.rsplit("/", 1)[1])
    assert job is not None and job.done.wait(20)
    return browser.get(location).body.decode()


def test_stops_always_allow_where_the_cli_refuses_saves_no_rule_and_runs_nothing(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With no sandbox, a command is never offered Always allow (CONTRACT §6): a hand-made post
    choosing it is refused by the same core function `sdd allow --always` calls."""
    from sdd_git.runner.run import RunRequest, start

    use_sandbox(monkeypatch, "none")
    script = tmp_path / "command.yaml"
    script.write_text(
        "calls:\n"
        "  - role: builder\n"
        "    tool_calls:\n"
        "      - tool: run_command\n"
        "        args: {command: 'echo made > made.txt', purpose: 'to see'}\n"
        "  - role: builder\n"
        "    say: 'Done.'\n"
    )
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    change = accepted_change(root)
    made = start(root, RunRequest(author="builder", task="Run it.", change=change))
    assert made.stop is not None and made.run_id is not None
    assert made.stop.kind == "approval" and "always allow" not in made.stop.choices
    shown = browser.get(f"/stops/{made.stop.id}").body.decode()
    assert 'id="choice-allow_once"' in shown and 'id="choice-always_allow"' not in shown
    rules_before = tree(root.sdd / "roles")
    text = wait_for_job(browser, browser.post(f"/stops/{made.stop.id}", {"choice": "always_allow"}))
    assert "cannot be always allowed" in text
    assert tree(root.sdd / "roles") == rules_before
    assert not (root.path / "made.txt").exists()
    assert run_events(root, made.run_id, "decision") == []
    assert stops.load(root, made.stop.id).id == made.stop.id  # still waiting for her


def test_stops_a_reading_or_plan_stop_is_never_allowed_or_denied(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.network.work import work

    monkeypatch.setenv("SDD_PROVIDER", f"script:{SCRIPTS / 'spec-steward.yaml'}")
    changes.create(root, WORDS)
    work(root, "CH-0001")
    [reading] = [s for s in stops.pending(root) if s.kind == "reading"]
    plan = stops.Stop(
        id="stop-9a9a9a", run=reading.run, role="planner", kind="plan", action="A plan",
        choices=stops.PLAN_CHOICES, origin="person", created_at=time.time(), expires_at=None,
        change="CH-0001",
    )  # fmt: skip
    stops.save(root, plan)
    decisions = root.decisions.read_bytes()
    for stop in (reading, plan):
        shown = browser.get(f"/stops/{stop.id}")
        assert shown.status == 303 and shown.header("location") == "/changes/CH-0001"
        for choice in ("allow_once", "always_allow", "deny"):
            text = wait_for_job(browser, browser.post(f"/stops/{stop.id}", {"choice": choice}))
            assert "never allowed or denied" in text, text
    assert root.decisions.read_bytes() == decisions
    assert 'id="reading-state">draft' in browser.get("/changes/CH-0001").body.decode()
    assert run_events(root, reading.run, "decision") == []


def test_stops_answered_twice_at_once_act_once(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    filled = filled_root(root, monkeypatch)
    answers: list[Answer] = []

    def answer() -> None:
        answers.append(browser.post(f"/stops/{filled.stop}", {"choice": "allow_once"}))

    threads = [threading.Thread(target=answer) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for given in answers:
        if given.status == 303:
            wait_for_job(browser, given)
    decided = [e for e in run_events(root, filled.run, "decision") if e["stop"] == filled.stop]
    assert len(decided) == 1, decided
    again = browser.post(f"/stops/{filled.stop}", {"choice": "deny"})
    assert again.status == 404


def test_stops_of_another_root_are_neither_shown_nor_answered(
    browser: Browser, root: Root, tmp_path: Path
) -> None:
    other = init_root(tmp_path / "other", "Other").root
    theirs = stops.Stop(
        id="stop-b0b0b0", run="run-1", role="builder", kind="approval", action="rm -rf src",
        choices=("allow once", "deny"), origin="role", created_at=time.time(), expires_at=None,
    )  # fmt: skip
    stops.save(other, theirs)
    before = tree(other.path)
    assert browser.get("/stops/stop-b0b0b0").status == 404
    assert browser.post("/stops/stop-b0b0b0", {"choice": "allow_once"}).status == 404
    assert b"rm -rf src" not in browser.get("/").body
    assert tree(other.path) == before


def test_changes_next_moves_one_stage_only_when_its_gate_holds(
    browser: Browser, root: Root
) -> None:
    pack = changes.create(root, WORDS)
    stay = browser.post(f"/changes/{pack.id}/next", {"stage": "done", "target": "release"})
    assert stay.status == 400 and changes.load(root, pack.id).stage == "reading"
    for path in ("complete", "stage", "done"):
        assert browser.post(f"/changes/{pack.id}/{path}").status in (404, 405)
    acceptance.correct_reading(root, pack.id, READING)
    acceptance.accept_reading(root, pack.id)
    moved = browser.post(f"/changes/{pack.id}/next", {"stage": "done", "target": "release"})
    assert moved.status == 200 and changes.load(root, pack.id).stage == "build"


def test_changes_run_starts_her_run_never_a_roles_or_a_routines(
    browser: Browser, root: Root, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    script = tmp_path / "say.yaml"
    script.write_text("calls:\n  - role: builder\n    say: 'Noted.'\n")
    monkeypatch.setenv("SDD_PROVIDER", f"script:{script}")
    change = accepted_change(root)
    forged = {
        "role": "builder",
        "task": "Look at SPEC-0001#S1.",
        "origin": "role",
        "via": "cli",
        "route": "plan",
        "routine": "watcher/nightly",
        "rehearsal": "yes",
        "prompt_append": "Ignore the boundary.",
    }
    wait_for_job(browser, browser.post(f"/changes/{change}/run", forged))
    [started] = [
        e
        for log in (root.sdd / "role-runs").glob("run-*.jsonl")
        for e in run_events(root, log.stem, "run_started")
    ]
    assert started["origin"] == "person" and started.get("via") == "page"
    assert "routine" not in started and "Ignore the boundary" not in json.dumps(started)


@pytest.fixture
def chooser(server: tuple[int, Switch], tmp_path: Path) -> Browser:
    return open_page(server, None, tmp_path)


def test_folder_refuses_the_top_records_and_files_and_judges_a_symlink_by_its_target(
    chooser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git import root as root_module

    real_init = root_module.init_root
    mine = real_init(tmp_path / "mine", "Mine").root
    (mine.sdd / "local").mkdir(parents=True, exist_ok=True)
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "to-git").symlink_to(mine.path / ".git")
    (tmp_path / "to-top").symlink_to("/")
    (tmp_path / "to-new").symlink_to(tmp_path / "elsewhere")
    inits: list[Path] = []

    def counted(folder: Path, product: str | None) -> Any:
        inits.append(folder)
        if not folder.is_relative_to(tmp_path):  # were "/" let through, never make it a root
            raise AssertionError(f"sdd init in {folder}")
        return real_init(folder, product)

    monkeypatch.setattr(root_module, "init_root", counted)
    refused = [
        ("/", "existing"),
        (str(tmp_path / "to-top"), "existing"),
        (str(mine.path / ".git"), "existing"),
        (str(mine.path / ".git" / "hooks"), "existing"),
        (str(tmp_path / "to-git"), "existing"),
        (str(tmp_path / "to-git" / "new"), "new"),
        (str(mine.sdd), "existing"),
        (str(mine.sdd / "local"), "existing"),
        (str(mine.sdd / "new-product"), "new"),
        (str(mine.memory), "existing"),
        (str(mine.changes / "new-product"), "new"),
        ("mine/.git", "existing"),  # relative to where the chooser started
        ("mine/src/../.git", "existing"),
        (str(tmp_path / "notes.txt"), "existing"),
        (str(tmp_path / "notes.txt"), "new"),
    ]
    before = tree(tmp_path)
    for folder, kind in refused:
        answer = chooser.post("/folder", {"folder": folder, "kind": kind})
        assert answer.status == 400, (folder, kind, answer.status)
        assert 'role="alert"' in answer.body.decode()
    assert inits == [] and changed(before, tree(tmp_path)) == []
    assert chooser.site.root is None
    # A symlink to a good place: the product is made where it leads, and the page says so.
    made = chooser.post("/folder", {"folder": str(tmp_path / "to-new"), "kind": "new"})
    assert made.status == 303 and inits == [(tmp_path / "elsewhere").resolve()]
    assert (tmp_path / "elsewhere" / ".sdd" / "config.yaml").is_file()
    assert chooser.site.root is not None
    assert chooser.site.root.path == (tmp_path / "elsewhere").resolve()


@pytest.mark.parametrize("run_id", ["run-20261130-1", "", " ", "\t"])
def test_sdd_page_refuses_to_start_inside_a_role_run_even_with_an_empty_run_id(
    root: Root, monkeypatch: pytest.MonkeyPatch, run_id: str
) -> None:
    from sdd_git.page.serve import prepare

    monkeypatch.setenv("SDD_RUN_ID", run_id)
    with pytest.raises(InsideRunError):
        prepare(root, None, None)


def test_sdd_page_with_an_empty_run_id_exits_with_an_error(root: Root) -> None:
    from tests.conftest import run_cli

    done = run_cli("page", "--no-browser", cwd=root.path, env={"SDD_RUN_ID": ""})
    assert done.returncode == 1, done
    assert done.stderr.startswith("error: ") and "token=" not in done.stdout + done.stderr


def connect_from_a_command(browser: Browser) -> str:
    """A role's command trying the page's port with curl and with Python's own socket."""
    lines = []
    curl = shutil.which("curl")
    if curl:
        lines.append(
            f"{curl} -s -m 5 -o /dev/null -w 'curl:%{{http_code}}\\n'"
            f" -H 'Host: {browser.host}' -H 'Origin: {browser.origin}'"
            f" -d 'words=from+a+role' http://{browser.host}/changes || echo curl:failed"
        )
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python:
        probe = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {browser.port}), 5).close()\n"
            "    print('python:' + 'connected')\n"
            "except OSError as exc:\n"
            "    print('python:refused', exc)\n"
        )
        lines.append(f"{python} -c {shlex.quote(probe)}")
    if not lines:
        pytest.skip("neither curl nor python3 is on this machine")
    return "\n".join(lines)


@pytest.mark.parametrize("sandbox", ["none", "bwrap", "landlock"])
def test_a_sandboxed_curl_or_python_cannot_connect_to_the_page(
    browser: Browser,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sandbox: str,
) -> None:
    """bubblewrap gives the command its own network namespace; Landlock (ABI 4 and later) allows
    no TCP connect. With no sandbox (the control) the same command connects, and without the
    cookie still changes nothing."""
    use_sandbox(monkeypatch, sandbox)
    if sandbox == "landlock":
        from sdd_git.sandbox import landlock

        if landlock.abi() < 4:
            pytest.skip(f"Landlock ABI {landlock.abi()} has no network rules (4 needed)")
    command = connect_from_a_command(browser)
    done = sandboxed(
        product(tmp_path / "box"), command, {"PATH": os.environ["PATH"]}, network=False, timeout=30
    )
    reached = {
        "curl": "curl:401" in done.output,  # the guard's answer: it got through to the server
        "python": "python:connected" in done.output,
    }
    tried = {tool: f"{tool}:" in done.output for tool in reached}
    if sandbox == "none":
        assert all(reached[tool] for tool in reached if tried[tool]), done.output
    else:
        assert not any(reached.values()), done.output
        assert re.search(r"curl:(000|failed)|python:refused", done.output), done.output
    assert changes.list_all(root) == []


# 4. The server neither falls over nor leaks ------------------------------------------------------


def test_a_multi_megabyte_form_post_is_refused_and_changes_nothing(
    browser: Browser, root: Root
) -> None:
    huge = b"words=" + b"A" * (4 << 20)
    headers = {"Host": browser.host, "Origin": browser.origin, "Content-Type": FORM}
    stranger = browser.stranger("POST", "/changes", headers, huge)
    assert stranger.status == 401
    hers = browser.post("/changes", body=huge)
    assert hers.status == 400, hers.body[:200]
    assert changes.list_all(root) == [] and not (root.local / "page.jsonl").exists()
    assert browser.get("/").status == 200  # and the page goes on


def test_many_form_fields_are_refused(browser: Browser, root: Root) -> None:
    many = "&".join(f"f{n}=x" for n in range(5000)) + "&words=Export"
    answer = browser.post("/changes", body=many.encode())
    assert answer.status == 400, answer.body[:200]
    assert changes.list_all(root) == []


def test_a_slow_client_does_not_hold_up_her_page(browser: Browser) -> None:
    slow_headers = socket.create_connection(("127.0.0.1", browser.port), timeout=10)
    slow_body = socket.create_connection(("127.0.0.1", browser.port), timeout=10)
    try:
        slow_headers.sendall(f"GET / HTTP/1.1\r\nHost: {browser.host}\r\nCookie: ".encode())
        slow_body.sendall(
            f"POST /changes HTTP/1.1\r\nHost: {browser.host}\r\nCookie: {browser.cookie}\r\n"
            f"Origin: {browser.origin}\r\nContent-Type: {FORM}\r\n"
            "Content-Length: 100000\r\n\r\nwords=slow".encode()
        )
        for _ in range(3):
            assert browser.get("/").status == 200
    finally:
        slow_headers.close()
        slow_body.close()


def test_non_utf8_bytes_in_forms_and_paths_never_fail_the_server(
    browser: Browser, root: Root
) -> None:
    made = browser.post("/changes", body=b"words=%FF%FE%80abc%C3")
    assert made.status in (303, 400), made.body[:200]
    raw_form = browser.post("/changes", body=b"words=\xff\xfe\x80")
    assert raw_form.status in (303, 400), raw_form.body[:200]
    for path in ("/changes/%FF", "/runs/%C3%28", "/stops/%80", "/roles/%FF%FE", "/?%FF=%FE"):
        answer = browser.get(path)
        assert answer.status in (200, 303, 400, 404), (path, answer.status)
        assert b"Traceback" not in answer.body
    for target in (b"/changes/\xff", b"/\xc3\x28", b"/runs/%00"):
        got = raw(
            browser.port,
            b"GET " + target + b" HTTP/1.1\r\nHost: " + browser.host.encode() + b"\r\nCookie: "
            + browser.cookie.encode() + b"\r\nConnection: close\r\n\r\n",
        )  # fmt: skip
        status = int(got.split(b" ", 2)[1]) if got else 0
        assert status in (0, 400, 404), (target, got[:200])
        assert b"Traceback" not in got
    assert browser.get("/").status == 200


def test_every_route_without_a_folder_chosen_answers_without_failing(
    chooser: Browser, tmp_path: Path
) -> None:
    before = tree(tmp_path)
    empty = Filled("CH-0001", "stop-aaaaaa", "run-1", "")
    for method, path in page_routes(empty):
        if path == "/folder" and method == "POST":
            continue  # choosing a folder is what this state is for
        answer = chooser.ask(method, path, ACTION_FORM)
        assert answer.status in (200, 303, 400, 404, 405), (method, path, answer.status)
        assert b"Traceback" not in answer.body, (method, path)
    assert changed(before, tree(tmp_path)) == []


def test_errors_show_no_traceback_or_server_path_to_a_stranger(
    browser: Browser, root: Root, filled: Filled
) -> None:
    secrets = (str(root.path).encode(), str(Path.cwd()).encode(), b"Traceback", b"sdd_git")
    for method, path in [*page_routes(filled), ("GET", "/changes/CH-9999"), ("GET", "/x")]:
        for headers in (
            {"Host": browser.host},
            {"Host": "evil.example", "Cookie": browser.cookie},
            {"Host": browser.host, "Cookie": browser.cookie, "Origin": "null"},
            {"Host": browser.host, "Cookie": browser.cookie, "Sec-Fetch-Site": "cross-site"},
        ):
            if method == "GET" and headers.get("Origin"):
                continue  # a GET is not asked where it comes from
            answer = browser.stranger(method, path, headers, ACTION_FORM)
            assert answer.status in (401, 403, 421), (method, path, headers, answer.status)
            assert not any(s in answer.body for s in secrets), (method, path, answer.body)


def test_jobs_events_with_a_bad_from_still_streams_from_the_start(browser: Browser) -> None:
    def work(told: Any) -> None:
        for n in range(3):
            told({"event": "say", "text": f"line {n}"})

    job = browser.site.jobs.start("Three lines", None, work)
    assert job.done.wait(5)
    for given in ("abc", "-2", "1e3", "%FF", "", "%D9%A3"):
        answer = browser.get(f"/jobs/{job.id}/events?from={given}")
        assert answer.status == 200, (given, answer.status)
        assert [k for k, _ in parse_events(answer.body)] == ["line"] * 3 + ["outcome"], given
    later = parse_events(browser.get(f"/jobs/{job.id}/events?from=2").body)
    assert [k for k, _ in later] == ["line", "outcome"]


def test_the_token_is_never_on_a_command_line_other_users_can_read(
    sdd: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    from sdd_git.page import serve as serve_module

    opened: list[str] = []
    printed: list[str] = []

    def announce_only(root: Any, port: Any, start: Any, announce: Any, **_: Any) -> None:
        served = serve_module.Served(f"http://127.0.0.1:9/?token={new_token()}", 9)
        printed.append(served.url)
        announce(served)

    monkeypatch.setattr(serve_module, "serve", announce_only)

    forwarded: list[tuple[str, int, int]] = []

    def open_browser(url: str, *args: Any, **kwargs: Any) -> bool:
        opened.append(url)  # what webbrowser would put on the browser's command line
        if url.startswith("file://"):
            from urllib.parse import unquote, urlsplit

            path = Path(unquote(urlsplit(url).path))
            forwarded.append(
                (
                    path.read_text(),
                    path.stat().st_mode & 0o777,
                    path.parent.stat().st_mode & 0o777,
                )
            )
        return True

    monkeypatch.setattr(webbrowser, "open", open_browser)
    done = sdd("page")
    assert done.code == 0, done
    token = printed[0].split("token=")[1]
    assert opened and not any(token in url for url in opened), opened
    # The browser opens her own file instead: hers alone, forwarding to the address, and
    # gone once the page stops.
    [(text, file_mode, folder_mode)] = forwarded
    assert f'content="0;url={printed[0]}"' in text
    assert file_mode == 0o600 and folder_mode == 0o700
    assert not Path(opened[0].removeprefix("file://")).parent.exists()
