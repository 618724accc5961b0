"""Attack round on issue 26's new approval paths: command-prefix rules, allow for this run,
`sdd role rules --revoke`, stops answered from CI, and `approvals.notify`.

Each test asserts the SAFE behaviour and is named after the route it tries: it fails while the
route gets through. Real parts: real git repositories, real runs with the scripted model on this
machine's working sandbox (as tests/runner/ does), the exported CI files' answer steps run
locally against the kept folder (as tests/routines/test_export_answer*.py do), and a loopback
GitLab API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.roles.profile import Boundary, Rule
from sdd_git.root import Root
from sdd_git.runner.boundary import BoundaryIndex
from sdd_git.sandbox.choose import current
from sdd_git.shellpolicy.prefix import matches_prefix, prefix_problem
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script

pytestmark = pytest.mark.attack


def _command(text: str, **extra: object) -> dict[str, object]:
    return {"tool": "run_command", "args": {"command": text, "purpose": "look", **extra}}


def _run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> tuple[str, list[dict[str, Any]]]:
    script(tmp_path, monkeypatch, [{"tool_calls": [_command(command)]}, {"say": "Done."}])
    out = json.loads(sdd("role", "run", "builder", "--task", "Look", "--json").stdout)
    return out["status"], events(root, out["run"])


def _ran_without_a_stop(logged: list[dict[str, Any]]) -> bool:
    ran = any(e["event"] in ("action_done", "action_failed") for e in logged)
    return ran and not any(e["event"] in ("stop", "rejected") for e in logged)


# --- 1. Command-prefix rules -------------------------------------------------------------------

# Spellings that bash reads as another program, other words, or more than one command, each
# tried against the rule it would widen. None may match.
NEVER_MATCH: list[tuple[str, list[str]]] = [
    # A form feed or vertical tab is a blank to the parser and a plain character to bash: bash
    # runs the program `ls\vx` (or npm's command `test\f`), not the rule's words.
    ("ls\x0bx", ["ls"]),
    ("ls\x0cx", ["ls"]),
    ("npm test\x0c x", ["npm", "test"]),
    ("npm\x0btest", ["npm", "test"]),
    ("ls x\x0c2>&1", ["ls"]),
    ("ls\x1bx", ["ls"]),
    ("ls\x7fx", ["ls"]),
    # Unicode look-alikes and blanks bash does not split on.
    ("ls\u00a0-la", ["ls"]),
    ("ls\u3000-la", ["ls"]),
    ("l\u0455", ["ls"]),  # Cyrillic dze
    ("\uff4c\uff53", ["ls"]),  # fullwidth
    ("ls\u200b", ["ls"]),
    # Quoting, escapes, expansions in the rule's words.
    ("'ls'", ["ls"]),
    ('"ls"', ["ls"]),
    ("l\\s", ["ls"]),
    ("l''s", ["ls"]),
    ("l*", ["ls"]),
    ("l?", ["ls"]),
    ("l[s]", ["ls"]),
    ("{ls,touch} pwned", ["ls"]),
    ("ls{,}", ["ls"]),
    ("$'ls'", ["ls"]),
    ("${x}ls", ["ls"]),
    ("npm t", ["npm", "test"]),
    ("npm tes", ["npm", "test"]),
    ("npm 'test'", ["npm", "test"]),
    ("npm te\\st", ["npm", "test"]),
    ("npm -- test", ["npm", "test"]),
    ("npx npm test", ["npm", "test"]),
    # Words before the program.
    ("exec ls", ["ls"]),
    ("command ls", ["ls"]),
    ("builtin ls", ["ls"]),
    ("env -S 'ls -la'", ["ls"]),
    ("env ls", ["ls"]),
    ("time ls", ["ls"]),
    ("! ls", ["ls"]),
    ("PATH=. ls", ["ls"]),
    ("BASH_ENV=x ls", ["ls"]),
    ("\\ls", ["ls"]),
    ("ls=1 ls", ["ls"]),
    # Aliases and functions defined earlier in the same command.
    ("alias ls='touch pwned'; ls", ["ls"]),
    ("ls() { touch pwned; }; ls", ["ls"]),
    ("function ls { touch pwned; }\nls", ["ls"]),
    ("shopt -s expand_aliases; alias ls=touch; ls pwned", ["ls"]),
    # More than one command, or a command that is not a simple command.
    ("ls\ntouch pwned", ["ls"]),
    ("ls\r\ntouch pwned", ["ls"]),
    ("ls;touch pwned", ["ls"]),
    ("ls&touch pwned", ["ls"]),
    ("ls&&touch pwned", ["ls"]),
    ("ls||touch pwned", ["ls"]),
    ("ls|touch pwned", ["ls"]),
    ("ls|&touch pwned", ["ls"]),
    ("ls &", ["ls"]),
    ("(ls)", ["ls"]),
    ("{ ls; }", ["ls"]),
    ("[[ -e x ]] && ls", ["ls"]),
    ("if ls; then touch pwned; fi", ["ls"]),
    ("ls # \ntouch pwned", ["ls"]),
    ("ls \\\ntouch pwned", ["ls"]),
    # Substitutions, here-strings, process substitution, redirections that open a file.
    ("ls $(touch pwned)", ["ls"]),
    ("ls `touch pwned`", ["ls"]),
    ('ls "$(touch pwned)"', ["ls"]),
    ("ls <(touch pwned)", ["ls"]),
    ("ls >(touch pwned)", ["ls"]),
    ("ls <<<$(touch pwned)", ["ls"]),
    ("ls <<<x", ["ls"]),
    ("ls <<EOF\nx\nEOF", ["ls"]),
    ("ls >pwned", ["ls"]),
    ("ls >>pwned", ["ls"]),
    ("ls &>pwned", ["ls"]),
    ("ls >&pwned", ["ls"]),
    ("ls >&2x", ["ls"]),
    ("ls 2>pwned", ["ls"]),
    ("ls >|pwned", ["ls"]),
    ("ls <pwned", ["ls"]),
    ("ls 2>&1 >pwned", ["ls"]),
    ("ls 2>&1-", ["ls"]),
    ("ls {fd}>&1", ["ls"]),
    # Expansions in later words.
    ("ls $HOME", ["ls"]),
    ("ls ~", ["ls"]),
    ("ls ~root", ["ls"]),
    ("ls a=~", ["ls"]),
    ("ls --x=a:~", ["ls"]),
    ("ls *", ["ls"]),
    ("ls .g?t", ["ls"]),
    ("ls .gi[t]", ["ls"]),
    ("ls {a,b}", ["ls"]),
    ("ls {1..3}", ["ls"]),
    ("ls $((1+1))", ["ls"]),
    ("ls $'\\x41'", ["ls"]),
    ('ls $"x"', ["ls"]),
    # A path to the program, which may be the model's own file.
    ("./ls", ["ls"]),
    ("/bin/ls", ["ls"]),
    ("bin/ls", ["ls"]),
    ("~/ls", ["ls"]),
]


@pytest.mark.parametrize(("command", "words"), NEVER_MATCH, ids=[repr(c) for c, _ in NEVER_MATCH])
def test_a_prefix_rule_never_matches_a_spelling_bash_reads_otherwise(
    command: str, words: list[str]
) -> None:
    assert prefix_problem(words) is None
    assert not matches_prefix(command, words)


# Prefixes a crafted rule file (or a careless `--prefix`) might name to allow more than it says.
NEVER_A_PREFIX = [
    ["sdd"], ["./sdd"], ["/usr/bin/sdd"], ["bash"], ["sh"], ["env"], ["exec"], ["command"],
    ["builtin"], ["eval"], ["xargs"], ["sudo"], ["find"], ["git", "$(x)"], ["ls", "*"],
    ["ls", "~"], ["ls", "a b"], ["ls", "'x'"], ["ls", "{a,b}"], ["l*"], ["ls;"], ["ls\x0c"],
    ["ls", "x\x0b"], [""], [], ["\uff4c\uff53"], ["ls", ";"], ["ls", "&"], ["ls", "|"],
    ["ls", ">x"],
]  # fmt: skip


@pytest.mark.parametrize("words", NEVER_A_PREFIX, ids=[repr(w) for w in NEVER_A_PREFIX])
def test_a_prefix_that_names_a_runner_or_is_not_literal_is_refused(words: list[str]) -> None:
    assert prefix_problem(words) is not None


@pytest.fixture
def sandboxed(root: Root) -> Root:
    assert current().working, "these tests run on this machine's working sandbox"
    accepted_change(root)
    return root


LS_RULE = (
    "boundary:\n  always_allow:\n"
    "    - {tool: run_command, prefix: [ls], match: ['ls -la'], not_match: ['lsof']}\n"
)


@pytest.mark.parametrize("command", ["ls\x0bx", "ls\x0c-la"])
def test_a_form_feed_or_vertical_tab_in_a_command_stops_under_a_prefix_rule(
    sdd: SddRunner,
    root: Root,
    sandboxed: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    # bash runs the program `ls\vx`: not, for certain, the rule's `ls`.
    add_role(root, "builder", extra=LS_RULE)
    status, logged = _run(sdd, root, tmp_path, monkeypatch, command)
    assert not _ran_without_a_stop(logged), status


ASK_FIRST_LS_R = "  ask_first:\n    - {tool: run_command, inputs: {command: 'ls -R*'}}\n"


@pytest.mark.parametrize(
    "command", ["ls -R", "ls  -R", "ls\t-R", "ls '-R'", 'ls "-R"', "ls -\\R", "ls -R 2>&1"]
)
def test_ask_first_wins_over_a_prefix_rule_whatever_the_spacing_or_quoting(
    sdd: SddRunner,
    root: Root,
    sandboxed: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    # Her ask-first pattern is text (`ls -R*`); a prefix rule [ls] holds any spelling of the
    # words after it, so a second space or a quote must not slip the call past her ask-first.
    add_role(root, "builder", extra=LS_RULE + ASK_FIRST_LS_R)
    status, logged = _run(sdd, root, tmp_path, monkeypatch, command)
    assert status == "stopped"
    (stop,) = [e for e in logged if e["event"] == "stop"]
    assert stop["because"] in ("ask_first", "not allowed")
    assert not _ran_without_a_stop(logged)


def test_a_prefix_rule_disjoint_from_every_ask_first_still_runs_without_a_stop(
    sdd: SddRunner, root: Root, sandboxed: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_role(
        root,
        "builder",
        extra="boundary:\n  always_allow:\n"
        "    - {tool: run_command, prefix: [git, status], match: ['git status']}\n"
        "  ask_first:\n    - {tool: run_command, inputs: {command: 'git push*'}}\n",
    )
    status, logged = _run(sdd, root, tmp_path, monkeypatch, "git  status")
    assert status == "done" and _ran_without_a_stop(logged)


def _index(always: list[Rule], ask: list[Rule]) -> BoundaryIndex:
    return BoundaryIndex(Boundary(always_allow=tuple(always), ask_first=tuple(ask)))


def _prefix(*words: str) -> Rule:
    return Rule(tool="run_command", inputs=None, prefix=tuple(words))


def _ask(command: str) -> Rule:
    return Rule(tool="run_command", inputs={"command": command})


@pytest.mark.parametrize(
    ("prefix", "ask", "command"),
    [
        (["npm"], "npm publish*", "npm  publish"),
        (["npm"], "npm publish*", "npm\tpublish"),
        (["npm"], "npm publish*", "npm 'publish'"),
        (["npm"], "npm publish*", "npm pub"),  # npm's own abbreviation of publish
        (["npm"], "npm publish*", "npm -q publish"),
        (["npm", "-q"], "npm publish*", "npm -q publish"),
        (["npm"], "*publish*", "npm pub\\lish"),
        (["git"], "git push*", "git -c x=y push"),
        (["git"], "git push*", "git p\\ush"),
        (["make"], "make deploy*", "make -e deploy"),
    ],
)
def test_ask_first_wins_over_a_prefix_rule_that_could_reach_its_command(
    prefix: list[str], ask: str, command: str
) -> None:
    index = _index([_prefix(*prefix)], [_ask(ask)])
    decided = index.decide("run_command", {"command": command}, certain=True, sandboxed=True)
    assert not decided.allowed


@pytest.mark.parametrize(
    ("prefix", "ask", "command"),
    [
        (["npm", "test"], "npm publish*", "npm test"),
        (["npm", "test"], "npm publish*", "npm  test -- -x"),
        (["git", "status"], "git push*", "git status -s"),
        (["ls"], "git push*", "ls -la"),
        (["pytest"], "rm *", "pytest -q"),
    ],
)
def test_a_prefix_rule_that_cannot_reach_an_ask_first_command_still_holds(
    prefix: list[str], ask: str, command: str
) -> None:
    index = _index([_prefix(*prefix)], [_ask(ask)])
    decided = index.decide("run_command", {"command": command}, certain=True, sandboxed=True)
    assert decided.allowed and decided.code == "prefix_rule"


def test_a_prefix_rule_never_holds_without_a_working_sandbox_or_when_uncertain() -> None:
    index = _index([_prefix("ls")], [])
    assert not index.decide("run_command", {"command": "ls"}, sandboxed=False).allowed
    assert not index.decide("run_command", {"command": "ls"}, certain=False).allowed
    extra = {"command": "ls", "network": True}
    assert not index.decide("run_command", extra, sandboxed=True).allowed
    assert not index.decide("run_command", {"command": "ls", "cwd": "/"}, sandboxed=True).allowed
    assert not index.decide("write_file", {"command": "ls"}, sandboxed=True).allowed


# --- 5. approvals.notify ----------------------------------------------------------------------

PLANTED = "#!/bin/sh\necho planted > {marker}\n"


def _notify_stop(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commands: list[Any], path: str
) -> subprocess.CompletedProcess[str]:
    from tests.conftest import run_cli
    from tests.runner.scripted import write_call
    from tests.runner.test_notify import set_notify

    accepted_change(root)
    add_role(root, "builder")
    set_notify(root, commands)
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    return run_cli(
        "role", "run", "builder", "--task", "Write it", "--json", cwd=root.path,
        env={"PATH": f"{path}{os.pathsep}{os.environ['PATH']}"},
    )  # fmt: skip


def _plant(folder: Path, name: str, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    planted = folder / name
    planted.write_text(PLANTED.format(marker=marker))
    planted.chmod(0o755)


def _never_written(marker: Path, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if marker.exists():
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize("entry", ["absolute", "relative"])
def test_a_notifier_the_model_planted_on_a_path_inside_the_product_never_runs(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str
) -> None:
    # Her PATH names node_modules/.bin (direnv, an activated .venv/bin), where any sandboxed
    # command may write: a `notify-me` planted there would run outside the sandbox, as her.
    marker = tmp_path / "outside" / "planted.txt"
    marker.parent.mkdir()
    _plant(root.path / "node_modules" / ".bin", "notify-me", marker)
    where = str(root.path / "node_modules" / ".bin") if entry == "absolute" else "node_modules/.bin"
    ran = _notify_stop(root, tmp_path, monkeypatch, [["notify-me", "x"]], where)
    assert ran.returncode == 3, ran.stderr  # the stop still waits
    assert _never_written(marker)
    assert "is not on your PATH outside the product folder" in ran.stderr


def test_a_notifier_named_by_a_path_inside_the_product_never_runs(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "outside" / "planted.txt"
    marker.parent.mkdir()
    _plant(root.path / "scripts", "notify.sh", marker)
    ran = _notify_stop(root, tmp_path, monkeypatch, [["./scripts/notify.sh"]], "/nonexistent")
    assert ran.returncode == 3, ran.stderr
    assert _never_written(marker)
    assert "is a file inside the product" in ran.stderr


def test_her_notifier_on_her_path_outside_the_product_still_runs(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "outside" / "hers.txt"
    marker.parent.mkdir()
    _plant(tmp_path / "herbin", "notify-me", marker)
    ran = _notify_stop(root, tmp_path, monkeypatch, ["notify-me --now"], str(tmp_path / "herbin"))
    assert ran.returncode == 3, ran.stderr
    assert not _never_written(marker, 10.0)


def test_the_models_words_reach_the_notifier_only_as_data(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import run_cli
    from tests.runner.test_notify import notifier, set_notify, wait_for

    accepted_change(root)
    add_role(root, "builder")
    seen = tmp_path / "outside" / "seen.json"
    seen.parent.mkdir()
    set_notify(root, [[sys.executable, str(notifier(tmp_path)), str(seen)]])
    hostile = "a'; touch pwned; echo '$(touch pwned2)`touch pwned3`\n--help"
    call = {
        "tool": "write_file",
        "args": {"path": "b.txt", "content": "x\n", "purpose": hostile},
    }
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "Done."}])
    ran = run_cli("role", "run", "builder", "--task", "W", "--json", cwd=root.path)
    assert ran.returncode == 3, ran.stderr
    got = wait_for(seen)
    assert got["argv"] == [str(seen)]
    assert not any(root.path.glob("pwned*")) and not any(Path.cwd().glob("pwned*"))


# --- 4. Stops answered from CI ------------------------------------------------------------------


class PagedGitLab:
    """GitLab's jobs API as it pages: `per_page` at most 100, `page` from 1 (GitLab's own
    limits); the answer job's earlier run sits past the first page in a big pipeline."""

    def __init__(self, store: Path) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qs, urlsplit

        from tests.routines.test_export_answer_gitlab import PIPELINE

        self.store = store
        self.jobs: list[dict[str, Any]] = [
            {"id": n, "name": f"build-{n}", "status": "success"} for n in range(10, 160)
        ]
        self.seen_tokens: list[str] = []
        gitlab = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                gitlab.seen_tokens.append(self.headers.get("PRIVATE-TOKEN", ""))
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                body: bytes | None = None
                if parts.path == f"/api/v4/projects/1/pipelines/{PIPELINE}/jobs":
                    per = min(100, int(query.get("per_page", "20")))
                    page = int(query.get("page", "1"))
                    listed = sorted(gitlab.jobs, key=lambda j: j["id"])
                    body = json.dumps(listed[(page - 1) * per : page * per]).encode()
                elif parts.path.startswith("/api/v4/projects/1/jobs/"):
                    rest = parts.path.removeprefix("/api/v4/projects/1/jobs/")
                    job, _, name = rest.partition("/")
                    file = gitlab.store / job / name.removeprefix("artifacts/")
                    body = file.read_bytes() if file.is_file() else None
                self.send_response(200 if body is not None else 404)
                self.end_headers()
                self.wfile.write(body or b'{"message": "404 Not Found"}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v4"


@pytest.fixture
def paged_gitlab(tmp_path: Path) -> Any:
    import threading

    api = PagedGitLab(tmp_path / "gitlab-artifacts")
    thread = threading.Thread(target=api.server.serve_forever, daemon=True)
    thread.start()
    yield api
    api.server.shutdown()


def test_a_retried_gitlab_answer_in_a_pipeline_of_many_jobs_acts_on_nothing(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paged_gitlab: PagedGitLab
) -> None:
    # 150 jobs before the first answer: it is on the jobs API's second page, and a check that
    # reads one page answers the stop a second time (deny, then allow: the action runs).
    from tests.routines.test_export_answer_gitlab import _answer, _stopped

    p = _stopped(root, tmp_path, monkeypatch)
    first = _answer(p, paged_gitlab, tmp_path, "300", p["stop"], "deny")  # type: ignore[arg-type]
    assert first.returncode == 0, first.stderr
    again = _answer(p, paged_gitlab, tmp_path, "301", p["stop"], "allow")  # type: ignore[arg-type]
    assert again.returncode == 1
    assert "already answered in job 300" in again.stderr
    assert not (tmp_path / "project-301" / "fix.py").exists()


@pytest.fixture
def kept(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, str]:
    from sdd_git.routines.ci.carry import pack
    from sdd_git.runner.run import RunRequest, start
    from tests.runner.scripted import write_call

    accepted_change(root)
    add_role(root, "builder")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.py")]}, {"say": "Done."}])
    outcome = start(root, RunRequest("builder", "write a.py", origin="routine"))
    assert outcome.stop is not None
    folder = tmp_path / "kept"
    assert pack(root, folder) == [outcome.stop.id]
    return folder, outcome.stop.id, outcome.run_id


def test_extra_files_in_a_forged_artifact_never_land_in_the_checkout(
    kept: tuple[Path, str, str], tmp_path: Path
) -> None:
    from sdd_git.root import init_root
    from sdd_git.routines.ci.carry import unpack

    folder, stop, run = kept
    planted = {
        "roles/builder/ROLE.md": "---\nrole: builder\n---\n",
        "config.yaml": "approvals:\n  notify: [[touch, pwned]]\n",
        "local/trust.json": "{}",
        "hooks/pre-commit": "#!/bin/sh\ntouch pwned\n",
        "stops/../../../.git/hooks/post-checkout": "#!/bin/sh\ntouch pwned\n",
        f"role-runs/{run}.jsonl.d/x": "x",
        "role-runs/../config.yaml": "x: 1\n",
    }
    for name, text in planted.items():
        where = folder / name
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(text)
    fresh = init_root(tmp_path / "fresh", product="Expenses").root
    before = {p.relative_to(fresh.path) for p in fresh.path.rglob("*") if ".git" not in p.parts}
    assert unpack(fresh, folder, stop) == run
    after = {p.relative_to(fresh.path) for p in fresh.path.rglob("*") if ".git" not in p.parts}
    landed = {
        p.as_posix()
        for p in after - before
        if (fresh.path / p).is_file() and p.name != ".gitignore"
    }
    assert {Path(n).name for n in landed} == {f"{run}.jsonl", f"{stop}.json"}, landed
    assert not (fresh.path / ".git" / "hooks" / "post-checkout").exists()


@pytest.mark.parametrize(
    "stop", ["stop-../../x", "stop-ABCDEF", "stop-abcd/../../x", "stop-abcd\n", "../stop-abcd"]
)
def test_a_stop_id_that_walks_out_of_the_artifact_is_refused(
    kept: tuple[Path, str, str], tmp_path: Path, stop: str
) -> None:
    from sdd_git.errors import UsageError
    from sdd_git.root import init_root
    from sdd_git.routines.ci.carry import unpack

    folder, _, _ = kept
    fresh = init_root(tmp_path / "fresh", product="Expenses").root
    with pytest.raises(UsageError):
        unpack(fresh, folder, stop)


def _fire_github(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from tests.routines.test_export_answer import _fire

    p = _github_product(root, tmp_path, monkeypatch)
    _, stop = _fire(p)
    p["stop"] = stop
    return p


def _github_product(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from tests.routines.test_export_answer import github_product

    return github_product(root, tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "choice",
    ["always", "always allow", "allow for this run", "allow_for_run", "Allow", "allow ",
     "allow\n", "allow\ndeny", "--always", "allow --always", "$(touch pwned)", "allow;touch pwned",
     "${{ secrets.OPENAI_API_KEY }}", "", "ALLOW", "allow\u200b"],
)  # fmt: skip
def test_a_github_choice_that_is_not_allow_or_deny_is_refused_before_anything(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, choice: str
) -> None:
    from tests.routines.test_export_answer import _answer

    p = _fire_github(root, tmp_path, monkeypatch)
    refused = _answer(p, p["stop"], choice)
    assert refused.failed is not None and refused.ran == ["Check the answer"]
    assert not list(tmp_path.rglob("pwned")) and not (p["engine"].store / "202").exists()


@pytest.mark.parametrize("event", ["push", "pull_request", "workflow_dispatch"])
def test_an_artifact_from_a_run_of_another_branch_of_this_repository_is_refused(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, event: str
) -> None:
    from tests.routines.test_export_answer import _answer

    p = _fire_github(root, tmp_path, monkeypatch)
    engine = p["engine"]
    # The branch's own copy of the workflow uploaded an artifact of the same name in run 150.
    forged = engine.store / "150" / "sdd-stopped"
    forged.parent.mkdir()
    (engine.store / "101" / "sdd-stopped").rename(forged)
    sha = "ab" * 20
    engine.record_run("150", head_branch="mallory-branch", event=event, head_sha=sha)
    # Merged later, after a last commit that took the forging copy out: not the run's commit.
    engine.record_pull("8", head="cd" * 20, commits=[sha, "cd" * 20], merged=True)
    refused = _answer(p, p["stop"], "allow", source="150")
    assert refused.failed is not None and refused.ran == ["Check the answer"]
    assert "another branch's copy of this workflow" in refused.failed.stdout
    assert not (tmp_path / "ws-202" / "fix.py").exists()


def test_an_artifact_from_a_merged_pull_request_s_last_commit_is_answered(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.routines.test_export_answer import _answer

    p = _fire_github(root, tmp_path, monkeypatch)
    engine = p["engine"]
    sha = "ab" * 20
    engine.record_run("101", head_branch="feature", event="pull_request", head_sha=sha)
    engine.record_pull("7", head=sha, commits=[sha], merged=False)  # closed, not merged
    refused = _answer(p, p["stop"], "allow", run_id="201")
    assert refused.failed is not None and "another branch's copy" in refused.failed.stdout
    engine.record_pull("7", head=sha, commits=[sha], merged=True)
    done = _answer(p, p["stop"], "allow")
    assert done.failed is None, done.failed and done.failed.stdout + done.failed.stderr
    assert (tmp_path / "ws-202" / "fix.py").exists()


# --- 2. Allow for this run ----------------------------------------------------------------------


def test_allow_for_run_never_carries_a_command_past_a_sandbox_that_stopped_working(
    sdd: SddRunner, root: Root, sandboxed: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_role(root, "builder")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [_command("ls -la")]},
            {"tool_calls": [_command("ls -la")]},  # the same inputs, after SDD_SANDBOX=none
            {"say": "Done."},
        ],
    )
    first = json.loads(sdd("role", "run", "builder", "--task", "L", "--json").stdout)
    assert "allow for this run" in first["stop"]["choices"]
    from tests.conftest import run_cli

    answered = run_cli(
        "allow", first["stop"]["id"], "--for-run", "--json", cwd=root.path,
        env={"SDD_SANDBOX": "none"},
    )  # fmt: skip
    assert answered.returncode == 3, answered.stdout + answered.stderr
    again = json.loads(answered.stdout)["stop"]
    assert again["args"]["command"] == "ls -la"
    logged = events(root, first["run"])
    assert [e["because"] for e in logged if e["event"] == "stop"][-1] == "no sandbox"
    assert "allow for this run" not in again["choices"]


def test_allow_for_run_never_allows_the_same_command_with_another_input(
    sdd: SddRunner, root: Root, sandboxed: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_role(root, "builder")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [_command("ls -la")]},
            {"tool_calls": [_command("ls -la", network=True)]},
            {"say": "Done."},
        ],
    )
    first = json.loads(sdd("role", "run", "builder", "--task", "L", "--json").stdout)
    answered = sdd("allow", first["stop"]["id"], "--for-run", "--json")
    assert answered.code == 3
    assert json.loads(answered.stdout)["stop"]["args"].get("network") is True


# --- 3. sdd role rules --revoke -------------------------------------------------------------------

HER_RULE = (
    "boundary:\n  always_allow:\n    - {tool: run_command, prefix: [ls], match: ['ls -la']}\n"
)
THEIR_RULES = (
    "    - {tool: run_command, prefix: [git, status], match: ['git status']}\n"
    "    - {tool: run_command, prefix: [make], match: ['make']}\n"
)


def test_revoking_one_rule_of_a_file_a_merge_changed_confirms_none_of_the_strangers_rules(
    sdd: SddRunner, root: Root, sandboxed: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import git

    path = add_role(root, "builder", extra=HER_RULE)
    git(root.path, "add", "-A")
    git(root.path, "commit", "-qm", "builder")
    git(root.path, "checkout", "-qb", "theirs")
    path.write_text(
        path.read_text().replace("match: ['ls -la']}\n", "match: ['ls -la']}\n" + THEIR_RULES)
    )
    git(root.path, "commit", "-qam", "a stranger's pull request adds prefix rules")
    git(root.path, "checkout", "-q", "-")
    git(root.path, "merge", "-q", "--no-ff", "-m", "merge", "theirs")
    listed = json.loads(sdd("role", "rules", "builder", "--json").stdout)
    rules = listed["rules"] if isinstance(listed, dict) else listed
    assert [r["counts"] for r in rules] == [False, False, False]
    # She revokes the stranger's `make` rule, thinking the rest is hers.
    assert sdd("role", "rules", "builder", "--revoke", "3").code == 0
    listed = json.loads(sdd("role", "rules", "builder", "--json").stdout)
    rules = listed["rules"] if isinstance(listed, dict) else listed
    assert len(rules) == 2 and not any(r["counts"] for r in rules)
    script(tmp_path, monkeypatch, [{"tool_calls": [_command("git status")]}, {"say": "Done."}])
    ran = sdd("role", "run", "builder", "--task", "Look", "--json")
    assert ran.code != 0 and "sdd trust" in ran.stdout + ran.stderr


def test_revoke_from_inside_a_run_is_refused_and_the_file_is_unchanged(
    root: Root, sandboxed: Root
) -> None:
    from tests.conftest import run_cli

    path = add_role(root, "builder", extra=HER_RULE)
    before = path.read_bytes()
    ran = run_cli(
        "role", "rules", "builder", "--revoke", "1", cwd=root.path,
        env={"SDD_RUN_ID": "run-20261207-000000-abcdef"},
    )  # fmt: skip
    assert ran.returncode != 0 and "inside a role run" in ran.stderr
    assert path.read_bytes() == before


# --- The runs index (issue 26, item 1) ------------------------------------------------------------


@pytest.fixture
def two_runs(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    accepted_change(root)
    add_role(root, "builder")
    made = {}
    for name, task in [("a", "alpha report"), ("b", "beta 100% done_now")]:
        script(tmp_path, monkeypatch, [{"say": "Done."}], name=name)
        out = json.loads(sdd("role", "run", "builder", "--task", task, "--json").stdout)
        made[name] = out["run"]
    return made


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("%", {"b"}),
        ("_", {"b"}),
        ("' OR 1=1 --", set()),
        ("x') OR 1=1 --", set()),
        ('"alpha" OR "beta"', set()),
        ("alpha OR beta", set()),
        ("NEAR(alpha beta)", set()),
        ("alpha*", {"a"}),
        ("*", set()),
        ("^alpha", {"a"}),
        ("-alpha", {"a"}),
        ("alpha NOT beta", set()),
        ("\\", set()),
        ("%%", set()),
        ("a%r", {"a"}),  # the words a and r, each the start of a word: never a LIKE pattern
        ("'; DROP TABLE runs; --", set()),
    ],
)
def test_a_search_is_words_never_sql_like_or_fts_syntax(
    sdd: SddRunner, two_runs: dict[str, str], text: str, expected: set[str]
) -> None:
    shown = sdd("role", "runs", "--search", text, "--json")
    assert shown.code in (0, 2), shown.stderr
    if shown.code == 2:  # refused in words, never a traceback
        assert "Traceback" not in shown.stderr and expected == set()
        return
    found = {r["run"] for r in json.loads(shown.stdout)}
    assert found == {two_runs[k] for k in expected}
    assert len(json.loads(sdd("role", "runs", "--json").stdout)) == 2  # nothing dropped


def test_a_symlinked_index_is_never_written_through(
    sdd: SddRunner, root: Root, two_runs: dict[str, str], tmp_path: Path
) -> None:
    from sdd_git.runner import runindex

    path = runindex.index_path(root)
    victim = tmp_path / "hers.db"
    victim.write_bytes(b"her own file\n")
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    path.symlink_to(victim)
    found = {r["run"] for r in json.loads(sdd("role", "runs", "--json").stdout)}
    assert found == set(two_runs.values())
    assert victim.read_bytes() == b"her own file\n"
    assert not path.is_symlink()


def test_an_index_a_merge_brings_lists_no_run_of_its_own(
    sdd: SddRunner, root: Root, two_runs: dict[str, str]
) -> None:
    import shutil
    import sqlite3

    from sdd_git.runner import runindex
    from tests.conftest import git

    path = runindex.index_path(root)
    assert sdd("role", "runs", "--json").code == 0
    forged = root.path / "forged.sqlite3"
    shutil.copyfile(path, forged)
    db = sqlite3.connect(forged)
    db.execute("UPDATE runs SET task = 'forged run, allowed by the person'")
    db.commit()
    db.close()
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    shutil.move(forged, path)
    git(root.path, "add", "-f", str(path.relative_to(root.path)))
    git(root.path, "commit", "-qm", "a stranger's pull request brings an index")
    shown = sdd("role", "runs", "--search", "forged", "--json")
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout) == []


def test_her_page_never_revokes_another_rule_than_the_one_she_was_shown(root: Root) -> None:
    # Her page lists always allow A (1), B (2) and ask first Q (3). In another tab (or the
    # terminal) A is revoked: B is now 1 and Q is 2. Her click on B's stale "Revoke" (number 2)
    # must not take out her ask-first rule Q, leaving B.
    pytest.importorskip("starlette")
    import re

    from starlette.testclient import TestClient

    from sdd_git.page.app import build_app
    from sdd_git.roles import rules as saved_rules

    path = add_role(
        root,
        "helper",
        extra="boundary:\n  always_allow:\n"
        "    - {tool: read_file, inputs: {path: a.txt}}\n"
        "    - {tool: run_command, prefix: [make], match: ['make']}\n"
        "  ask_first:\n    - {tool: run_command, inputs: {command: 'make deploy*'}}\n",
    )
    page = TestClient(build_app(root))
    shown = page.get("/roles/helper").text
    forms = dict(
        re.findall(r'name="number" value="(\d+)">\s*<input type="hidden" name="rule" value="(\w+)"',
                   shown)
    )  # fmt: skip
    assert set(forms) == {"1", "2", "3"}
    saved_rules.revoke(root, "helper", 1)  # another tab
    stale = page.post("/roles/helper/revoke", data={"number": "2", "rule": forms["2"]})
    assert stale.status_code == 400 and "no longer the rule you were shown" in stale.text
    boundary = yaml.safe_load(path.read_text().split("---\n")[1])["boundary"]
    assert boundary["ask_first"] == [{"tool": "run_command", "inputs": {"command": "make deploy*"}}]
    assert [r.get("prefix") for r in boundary["always_allow"]] == [["make"]]
    # Reloaded, the same rule is revoked as she meant.
    fresh = re.search(r'value="1">\s*<input type="hidden" name="rule" value="(\w+)"',
                      page.get("/roles/helper").text)  # fmt: skip
    assert fresh is not None
    done = page.post("/roles/helper/revoke", data={"number": "1", "rule": fresh.group(1)})
    assert done.status_code == 200, done.text
    boundary = yaml.safe_load(path.read_text().split("---\n")[1])["boundary"]
    assert not boundary.get("always_allow") and boundary["ask_first"]


@pytest.mark.parametrize("choice", ["none", "nonesuch"])
def test_with_no_sandbox_a_prefix_rule_runs_nothing_and_offers_no_reach(
    root: Root, sandboxed: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, choice: str
) -> None:
    from tests.conftest import run_cli

    add_role(root, "builder", extra=LS_RULE)
    script(tmp_path, monkeypatch, [{"tool_calls": [_command("ls -la")]}, {"say": "Done."}])
    ran = run_cli(
        "role", "run", "builder", "--task", "Look", "--json", cwd=root.path,
        env={"SDD_SANDBOX": choice},
    )  # fmt: skip
    assert ran.returncode == 3, ran.stdout + ran.stderr
    stop = json.loads(ran.stdout)["stop"]
    assert "always allow" not in stop["choices"] and "allow for this run" not in stop["choices"]
    (logged,) = [e for e in events(root, stop["run"]) if e["event"] == "stop"]
    assert logged["because"] == "no sandbox"
