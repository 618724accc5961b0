"""Attack round on issue 23's redesign: the hidden commands spawned as `python -m sdd_git`,
the one ordered decision, the code-host aliases of connector_act, the typed outcome, one HTTP
client and its proxies, one `is_local`, one front-matter splitter.

Each test asserts the SAFE behaviour and is named after the route it tries: it fails while the
route gets through. Real parts: real processes of `python -m sdd_git` and of the `sdd` entry
point, a real root, the real guard, boundary and splitter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sdd_git import frontmatter
from sdd_git.root import Root
from sdd_git.runner.guard import Clearance, Rejection, check
from sdd_git.shellpolicy.decision import Decision, Verdict, strictest

pytestmark = pytest.mark.attack

HIDDEN = (
    ["event-worker", "ROOT"],
    ["network-node", "c1", "n1", "0" * 64],
)


def _spawned(root: Root, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sdd_git", *argv],
        cwd=root.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


# --- 1. the hidden commands -------------------------------------------------------------------


@pytest.mark.parametrize("argv", HIDDEN, ids=lambda a: a[0])
def test_hidden_command_spawned_inside_a_run_is_refused(root: Root, argv: list[str]) -> None:
    """`python -m sdd_git` runs them before click: the early path still refuses a caller that
    carries SDD_RUN_ID (a role's command), and starts no worker and no run."""
    before = sorted(p.relative_to(root.path) for p in root.path.rglob("*"))
    words = [str(root.path) if word == "ROOT" else word for word in argv]
    done = _spawned(root, words, {"SDD_RUN_ID": "r1"})
    assert done.returncode != 0
    assert "inside a role run" in done.stdout + done.stderr
    after = sorted(p.relative_to(root.path) for p in root.path.rglob("*"))
    assert after == before  # no lock, no log, no run folder


@pytest.mark.parametrize("argv", HIDDEN, ids=lambda a: a[0])
def test_hidden_command_through_the_sdd_entry_point_is_refused_inside_a_run(
    root: Root, argv: list[str]
) -> None:
    """The same command typed as `sdd event-worker` goes through click: refused the same way."""
    sdd = Path(sys.executable).with_name("sdd")
    if not sdd.exists():
        pytest.skip("no sdd entry point beside this python")
    done = subprocess.run(
        [str(sdd), *[str(root.path) if word == "ROOT" else word for word in argv]],
        cwd=root.path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SDD_RUN_ID": "r1"},
    )
    assert done.returncode != 0
    assert "inside a role run" in done.stdout + done.stderr


def test_event_worker_refuses_a_folder_that_is_not_a_root(tmp_path: Path) -> None:
    """A root that is not hers (no .sdd/config.yaml): nothing is run, nothing is written."""
    folder = tmp_path / "not-a-root"
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "sdd_git", "event-worker", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 1
    assert "not an sdd root" in done.stderr
    assert list(folder.iterdir()) == []


def test_network_node_runs_nothing_for_a_plan_she_never_accepted(root: Root) -> None:
    """Outside a run, `sdd network-node CH NODE SHA` still starts nothing unless the plan's
    bytes hash to SHA and she accepted that hash."""
    done = _spawned(root, ["network-node", "c1", "n1", "0" * 64], {})
    assert done.returncode != 0
    assert '"status": "error"' in done.stdout
    assert not list(root.path.rglob("run.jsonl")) and not list(root.path.rglob("*.jsonl"))


SPELLINGS = [
    "sdd event-worker .",
    "sdd network-node c1 n1 abc",
    "python -m sdd_git event-worker .",
    "python3 -m sdd_git network-node c1 n1 abc",
    "python3 -Im sdd_git event-worker .",
    "python -m sdd_git.events.worker .",
    "python -m sdd_git.network.node c1 n1 abc",
    "env -S 'sdd event-worker .'",
    "env SDD_RUN_ID= sdd event-worker .",
    "nohup sdd event-worker . &",
    "timeout 5 sdd network-node c1 n1 abc",
    "bash -c 'sdd event-worker .'",
    'sh -c "python3 -m sdd_git event-worker ."',
    "command sdd event-worker .",
    "exec sdd event-worker .",
    "echo . | xargs sdd event-worker",
    "git -c alias.w='!sdd event-worker .' w",
    f"{sys.executable} -m sdd_git event-worker .",
    "$(which sdd) event-worker .",
    # The sink taken off first: still a command that runs code, so it always stops and a saved
    # rule allows it only where a working sandbox holds it.
    "env -u SDD_RUN_ID python3 -c \"import runpy; runpy.run_module('sdd_git', "
    "run_name='__main__')\" event-worker .",
    "SDD_RUN_ID= python3 -c \"import sdd_git.events.worker as w; w.main(['.'])\"",
    "unset SDD_RUN_ID; sdd event-worker .",
]


@pytest.mark.parametrize("command", SPELLINGS)
def test_role_command_cannot_reach_a_hidden_command(root: Root, command: str) -> None:
    """Every spelling of the hidden commands a role's run_command could use is refused as the
    person's, or at least never certain (it always stops and no saved rule allows it)."""
    verdict = check("run_command", {"command": command}, root.path, ["run_command"])
    if isinstance(verdict, Rejection):
        assert verdict.forbidden and not verdict.allowed
        return
    assert isinstance(verdict, Clearance)
    assert not verdict.certain or verdict.runs_code, f"{command!r} looks certain and harmless"


# --- 2. the ordered decision ------------------------------------------------------------------


def test_rejection_is_forbidden_however_it_is_built() -> None:
    for rejection in (Rejection(), Rejection("x"), Rejection("x", "y"), Rejection(code="x")):
        assert rejection.forbidden and not rejection.allowed
        assert rejection.verdict is Verdict.FORBID


def test_a_saved_rule_never_beats_a_rejection_or_an_ask() -> None:
    always = Decision("always_allow", verdict=Verdict.ALLOW)
    ask = Decision("ask_first", verdict=Verdict.ASK)
    forbid = Rejection("person_command", "the person's")
    assert strictest(always, forbid) is forbid
    assert strictest(forbid, always) is forbid
    assert strictest(Clearance(), always, ask) is ask
    assert strictest(always, ask, forbid) is forbid
    assert not strictest(Clearance(certain=False), ask).allowed


def test_the_boundary_never_lets_a_saved_rule_beat_ask_first_or_a_missing_sandbox() -> None:
    from sdd_git.roles.profile import Boundary, Rule
    from sdd_git.runner.boundary import BoundaryIndex

    args = {"command": "make build"}
    saved = Rule("run_command", args)
    index = BoundaryIndex(Boundary(always_allow=(saved,)))
    assert index.decide("run_command", args, sandboxed=True).allowed
    assert not index.decide("run_command", args, sandboxed=False).allowed
    assert not index.decide("run_command", args, certain=False, sandboxed=False).allowed
    both = BoundaryIndex(Boundary(always_allow=(saved,), ask_first=(Rule("run_command"),)))
    assert both.decide("run_command", args, sandboxed=True).code == "ask_first"


# --- 3. the code-host aliases -----------------------------------------------------------------


@pytest.mark.parametrize("tool", ["open_pull_request", "merge_pull_request", "deploy"])
def test_aliases_are_consequential_and_gated(tool: str) -> None:
    from sdd_git.runner.dispatch import GATED_TOOLS
    from sdd_git.tools.catalog import TOOL_CLASSES

    assert TOOL_CLASSES[tool] == "consequential"  # the boundary decides: a stop unless a rule
    assert tool in GATED_TOOLS  # and never without an accepted section


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("deploy", {"target": "prod", "command": "sdd complete c1"}),
        ("open_pull_request", {"title": "x", "body": "run `sdd accept c1`"}),
        ("merge_pull_request", {"number": 1, "note": "python -m sdd_git qa c1 pass"}),
    ],
)
def test_aliases_refuse_what_connector_act_refuses(root: Root, tool: str, args: dict) -> None:  # type: ignore[type-arg]
    verdict = check(tool, args, root.path, [tool])
    assert isinstance(verdict, Rejection) and verdict.forbidden, verdict


def test_alias_refuses_a_forbidden_operation_at_run_time_too() -> None:
    """The wall kept behind the guard: checked_operation refuses a forbidden operation."""
    from sdd_git.tools.base import ToolFailed
    from sdd_git.tools.connector import checked_operation

    class _Config:
        name = "gh"
        table_kind = "github"
        reads = ()

    with pytest.raises(ToolFailed):
        checked_operation(_Config(), "release_publish", {"tag": "v1"})  # type: ignore[arg-type]


# --- 4. the typed outcome ---------------------------------------------------------------------


def test_a_connector_reply_cannot_set_typed_fields() -> None:
    """What a connector answers is text: handoff, artifact and tampered come only from the
    tool's own code, never from a `data` dict whatever keys it holds."""
    from sdd_git.tools.base import ToolOutcome

    reply = {"handoff": {"to": "lead"}, "artifact": {"x": 1}, "tampered": [], "done": True}
    outcome = ToolOutcome("ok", reply)
    assert outcome.handoff is None and outcome.artifact is None
    assert outcome.tampered == () and outcome.not_done is None
    nothing = ToolOutcome.nothing_done("no", "")
    assert nothing.not_done  # an empty reason is still logged as not done


# --- 5. HTTP, proxies and "local" -------------------------------------------------------------

NOT_LOCAL = [
    "http://localhost.evil.com",
    "http://127.0.0.1.nip.io",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://172.32.0.1",
    "http://[::ffff:8.8.8.8]",
    "http://100.64.0.1",
    "http://evil.com#@localhost",
    "http://localhost@evil.com",
    "http://evil.com/?localhost",
    "https://api.openai.com",
]


@pytest.mark.parametrize("url", NOT_LOCAL)
def test_a_host_that_is_not_local_is_not_called_local(url: str) -> None:
    from sdd_git.netaddress import is_local

    assert not is_local(url)


@pytest.mark.parametrize("host", ["localhost.evil.com", "127.0.0.1.nip.io", "evil.com", "0x7f.1"])
def test_a_host_spelt_like_loopback_still_goes_through_her_proxy(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.http.proxy import proxy_for

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert proxy_for("https", host) == "http://proxy.example:3128"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "a.localhost"])
def test_loopback_never_goes_through_a_proxy(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from sdd_git.http.proxy import proxy_for

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert proxy_for("https", host) is None
    assert proxy_for("http", host) is None


def test_a_proxy_in_a_merged_repo_file_is_never_read(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .env or config that arrives with the repo names a proxy: sdd reads proxies only from
    her own environment, never from the product's files."""
    from sdd_git.http.proxy import proxy_for

    for key in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.delenv(key, raising=False)
    (root.path / ".env").write_text("HTTPS_PROXY=http://evil.example:8080\n", encoding="utf-8")
    config = root.config.read_text(encoding="utf-8")
    root.config.write_text(config + "\nproxy: http://evil.example:8080\n", encoding="utf-8")
    monkeypatch.chdir(root.path)
    assert proxy_for("https", "api.openai.com") is None


def test_local_only_changes_the_context_never_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 172.16/12 server is now "local": that gives it a smaller default context, and no key:
    SDD_API_KEY goes only where shared_key says (her own server), local or not."""
    from sdd_git.providers.settings import ProviderSettings

    monkeypatch.setenv("SDD_API_KEY", "her-main-key")
    other = ProviderSettings(
        "openai", "m", "http://172.20.0.5:8000/v1", None, None, shared_key=False
    )
    assert other.local
    assert other.key is None


# --- 6. front matter --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "----\nrole: x\n---\nbody\n",
        "--- x\nrole: x\n---\nbody\n",
        "\ufeff\ufeff---\nrole: x\n---\nbody\n",
        "\n---\nrole: x\n---\n",
        " ---\nrole: x\n---\n",
    ],
)
def test_what_is_not_front_matter_is_not_opened(text: str) -> None:
    with pytest.raises(frontmatter.NotOpened):
        frontmatter.split(text)


def test_a_closing_line_with_words_after_it_does_not_close() -> None:
    """`--- x` or `---#` is not a closing line: the keys after it stay in the front matter,
    so no reader sees a body where another sees keys."""
    parts = frontmatter.split("---\nrole: a\n--- x\nlevel: b\n---\nthe body\n")
    assert "level: b" in parts.front and parts.body == "the body\n"


@pytest.mark.parametrize(
    "text",
    [
        "\ufeff---\nrole: a\n---\nthe body\n",
        "---\r\nrole: a\r\n---\r\nthe body\n",
        "---  \nrole: a\n--- \t\nthe body\n",
    ],
)
def test_bom_crlf_and_trailing_spaces_split_the_same_way(text: str) -> None:
    parts = frontmatter.split(text)
    assert parts.front.strip() == "role: a"
    assert parts.body.strip() == "the body"
    assert not parts.text.startswith(frontmatter.BOM)


# --- 7. typed log events ----------------------------------------------------------------------


def test_the_run_log_takes_only_typed_events(tmp_path: Path) -> None:
    """A plain dict (a forged `stop` or `action_done` a caller builds) is not a log event."""
    from sdd_git.runner import logevents
    from sdd_git.runner.logwriter import RunLog

    assert not isinstance({"event": "stop"}, logevents.LogEvent)
    assert RunLog is not None


@pytest.mark.parametrize(
    "path", [".sdd/role-runs/r1/run.jsonl", ".sdd/local/runs/r1/log.jsonl", ".sdd/stops/s1.json"]
)
def test_a_role_cannot_write_a_run_log_or_a_stop(root: Root, path: str) -> None:
    """A forged `stop` or `action_done` needs a write into sdd's own files: refused by
    write_file and by a command alike."""
    for tool, args in (
        ("write_file", {"path": path, "content": '{"event": "action_done"}\n'}),
        ("run_command", {"command": f'echo \'{{"event": "stop"}}\' >> {path}'}),
    ):
        verdict = check(tool, args, root.path, [tool])
        assert isinstance(verdict, Rejection) and verdict.code == "protected_path", verdict


def test_an_unknown_kind_or_extra_fields_stay_aside() -> None:
    """A line of an unknown kind reads as Unknown (never as a stop), and fields a kind does not
    name stay in `extra`, never in the event's own fields."""
    from sdd_git.runner import logevents

    odd = logevents.parse({"event": "stop_answered_yes", "run": "r1", "seq": 3, "tool": "x"})
    assert isinstance(odd, logevents.Unknown) and odd.kind == "stop_answered_yes"
    done = logevents.parse({"event": "action_done", "tool": "git_push", "allowed_by": "x", "z": 1})
    assert type(done).__name__ == "ActionDone"
    assert done.extra.get("z") == 1 and "z" not in dict(logevents.ActionDone.FIELDS)


@pytest.mark.parametrize(
    "command",
    [
        "sdd network-node CH-0001 N1 abc",
        "python -m sdd_git event-worker .",
        "sdd -C . event-worker .",
    ],
)
def test_route_the_hidden_commands_passed_to_a_connector_or_a_deploy_job_are_refused(
    command: str,
) -> None:
    from sdd_git.connectors.operations import forbidden_reason

    assert forbidden_reason("trigger_build", {"parameters": {"CMD": command}}) is not None
    assert forbidden_reason("deploy", {"target": "prod", "command": command}) is not None
