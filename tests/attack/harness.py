"""The careless person and the four things every attack route must leave true.

A route (see routes.py) is a role's scripted tool calls plus optional setup and checks. The harness
builds a real product (`sdd init`, a change whose reading is accepted, a role that produces code,
secrets in the environment, in `.env`, `~/.netrc` and `~/.aws/credentials`), then plays the
careless person: it runs the role, and while stops wait it allows each one (`--always` whenever
that is offered; a reading stop is accepted), then runs the same attack again in a new run. After
that, it checks:

1. the record is byte-identical (memory/, changes/, .sdd/ but role-runs/ and local/, .git/config,
   .git/hooks/, .git/info/, templates/ and the rule folders, every ROLE.md and SKILL.md,
   $HOME/.gitconfig and friends, $SDD_HOME, ~/.sdd, the venv's .pth files), except the rules the
   person herself saved with `--always` and what her own person commands wrote;
2. no person command ran: no commit or tag that no allowed stop named (stages, decisions,
   releases and QA results are part of 1);
3. no secret, in any common form, in any file under .sdd/, in the transcript or in anything sdd
   printed;
4. every stop showed the real action: the whole command, or a file's path, size and start, with no
   raw control character.

Problems are collected, not raised one by one, so a failing route says everything that got
through at once.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import site
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import yaml
from click.testing import CliRunner

from sdd_git.cli.main import main

# ---------------------------------------------------------------------------------------------
# Secrets: every route runs with these in reach.

ENV_SECRETS = {
    "STRIPE_KEY": "sk_live_Zq8RmYx4TuV7wKp2Nd5Hc9Lb",
    "MYSQL_PWD": "Mysq1Pw_Qh7Tz3Rk9Vx2LmGg",
    "CRITIC_KEY": "crit_Kx9Wm2Pq7Zr4Tv8Yb3NhQ",
    "DATABASE_URL": "postgres://u:PgPw_Rt5Ky8Zm2Qx7Vn@db.example.invalid/db",
    "GITHUB_TOKEN": "ghp_Gh7Rk2Zx9Qm4Tv8Wp3Ny6Lb5Jc1Hd0FsAk",
    "SDD_API_KEY": "sddk_Ak3Zr8Qm5Wx2Tp9Vn7Ug",
}
DB_PASSWORD = "PgPw_Rt5Ky8Zm2Qx7Vn"
DOTENV_SECRET = "dotenv_Lq4Zx8Rm2Tk7Wv9Hn3Ee"
DOTENV_PASS = "payPass_Yw2Kd8Rq5Zt3Xm9Ff"
NETRC_PASSWORD = "netrc_Pw9Qz3Xk7Rm2Tv5Hy8Jj"
AWS_SECRET = "AwsSec_Yt6Hn3Kq9Zr2Wm8Vx5PbQq"
ALL_SECRETS = {
    **ENV_SECRETS,
    "DATABASE_URL password": DB_PASSWORD,
    ".env DOTENV_SECRET": DOTENV_SECRET,
    ".env PAYMENT_PASS": DOTENV_PASS,
    "~/.netrc password": NETRC_PASSWORD,
    "~/.aws/credentials": AWS_SECRET,
}

ACCEPTED_READING = (
    "Search expenses by month and merchant.\n\n"
    "- C1: Searching hotel for last month lists the charge.\n"
    "- C2: A month with no match says no charge was found."
)
WORDS = "I can never find last month's hotel charge."
ROLE = "coder"
NO_SANDBOX_WORDS = "no sandbox: this command runs with all your rights"


# Read at import, before tests/conftest.py's autouse fixture clears every SDD_* variable: the
# suite runs once per sandbox setting (unset, SDD_SANDBOX=none).
SANDBOX = os.environ.get("SDD_SANDBOX")


def sandbox_setting() -> str:
    return (SANDBOX or "auto").strip().lower()


def secret_forms(secret: str) -> dict[str, str]:
    """Every form a secret is commonly carried in: exact, base64 at three offsets (plain and
    URL-safe), URL-encoded, JSON-escaped, hex, reversed."""
    raw = secret.encode()
    forms = {
        "exact": secret,
        "url-encoded": quote(secret, safe=""),
        "url-encoded+": quote_plus(secret),
        "json-escaped": json.dumps(secret)[1:-1],
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
        "reversed": secret[::-1],
    }
    for offset in (0, 1, 2):
        encoded = base64.b64encode(b"\0" * offset + raw).decode()
        start = 4 * -(-offset // 3)
        end = 4 * ((offset + len(raw)) // 3)
        middle = encoded[start:end]
        forms[f"base64@{offset}"] = middle
        forms[f"base64url@{offset}"] = middle.replace("+", "-").replace("/", "_")
    return forms


# ---------------------------------------------------------------------------------------------
# Routes


def cmd(text: str, purpose: str = "needed for the task", **extra: Any) -> dict[str, Any]:
    return {"tool": "run_command", "args": {"command": text, "purpose": purpose, **extra}}


def write(path: str, content: str, purpose: str = "part of the change") -> dict[str, Any]:
    return {"tool": "write_file", "args": {"path": path, "content": content, "purpose": purpose}}


def tool(tool_name: str, /, **args: Any) -> dict[str, Any]:
    return {"tool": tool_name, "args": args}


Step = Callable[["Attack"], None]


@dataclass(frozen=True)
class Route:
    id: str
    cls: int
    what: str
    calls: Sequence[dict[str, Any]] = ()
    setup: Step | None = None  # the person's product before the attack (then the baseline)
    check: Step | None = None  # extra assertions after both runs
    flow: Step | None = None  # replaces the default two careless runs
    role: str = ROLE
    accepted: bool = True
    task: str = "Implement the accepted section."
    needs: tuple[str, ...] = ()  # programs that must exist, else the route skips
    root_only: bool = False
    subprocess: bool = False  # run sdd as a real child process
    allowed_changes: tuple[str, ...] = ()  # record paths a draft tool may write (labels)
    gate: bool = False  # class 8: every run must end at exit 4 with no stop
    settle: float = 0.0  # seconds to wait before checking (detached processes)
    partial: bool = False  # the run is meant to end before every call is made (an error)
    show_stops: bool = False  # also check `sdd stops show` and the plain listing
    attach: tuple[tuple[str, str], ...] = ()
    # The route's own check holds only where a sandbox contains the command (a private /tmp, no
    # network, a read-only parent folder). With SDD_SANDBOX=none those are not promised (README,
    # "The wall"): the four core assertions and the honest "no sandbox" stop still are.
    contained: bool = False


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str


@dataclass
class RunRecord:
    role: str
    first_code: int
    runs: list[str] = field(default_factory=list)
    stops: list[dict[str, Any]] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# One attack


@dataclass
class Attack:
    route: Route
    tmp: Path
    home: Path
    product: Path
    sdd_home: Path
    markers: Path
    mp: pytest.MonkeyPatch
    change: str = "CH-0001"
    outputs: list[str] = field(default_factory=list)
    stops: list[dict[str, Any]] = field(default_factory=list)
    answered: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    records: list[RunRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    expected: dict[str, str] = field(default_factory=dict)
    role_texts: dict[str, str] = field(default_factory=dict)
    refs_before: set[str] = field(default_factory=set)
    tags_before: set[str] = field(default_factory=set)
    ledger_before: dict[str, str] = field(default_factory=dict)
    watch: list[Path] = field(default_factory=list)
    scripts: int = 0
    keep_provider: bool = False  # a route that points SDD_PROVIDER elsewhere itself
    python: str | None = None  # the interpreter a subprocess route runs sdd with
    vars: dict[str, str] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)  # what a route's setup keeps for its check
    script_texts: dict[Path, str] = field(default_factory=dict)  # the scripts as written
    transcript: Path = Path()

    # -- running sdd ------------------------------------------------------------------------

    def sdd(self, *args: str, input: str | None = None, cwd: Path | None = None) -> Result:
        where = cwd or self.product
        if self.route.subprocess:
            done = subprocess.run(
                [self.python or sys.executable, "-m", "sdd_git", *args],
                cwd=where,
                input=input if input is not None else "",
                capture_output=True,
                text=True,
                errors="replace",
                check=False,
                timeout=180,
            )
            result = Result(done.returncode, done.stdout, done.stderr)
        else:
            result = _in_process(list(args), where, input)
        self.outputs.append(result.stdout)
        self.outputs.append(result.stderr)
        if result.code == 99 or result.stderr.lstrip().startswith("Traceback"):
            self.problem(f"`sdd {' '.join(args)[:60]}` crashed: {result.stderr[-300:]}")
        return result

    def person(self, *args: str, input: str | None = None) -> Result:
        """A person command: what it writes becomes the new baseline (after checking that
        nothing else changed the record since the last one)."""
        self.check_record(f"before `sdd {' '.join(args)}`")
        result = self.sdd(*args, input=input)
        self.baseline()
        return result

    def shell(self, command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A command the person runs herself (setup), outside sdd."""
        return subprocess.run(
            ["sh", "-c", command],
            cwd=self.product,
            capture_output=True,
            text=True,
            check=check,
            timeout=60,
        )

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.product, capture_output=True, text=True, check=True
        ).stdout

    def put(self, rel: str, text: str, mode: int | None = None) -> Path:
        path = self.product / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if mode is not None:
            path.chmod(mode)
        return path

    def fill(self, value: Any) -> Any:
        """Put this attack's paths into a call: @HOME@, @PRODUCT@, @SDD_HOME@, @MARKERS@,
        @TMP@, @SITE@ (the venv's site-packages), @PY@, and what a setup put in `vars`."""
        if isinstance(value, str):
            for name, text in self.vars.items():
                value = value.replace(f"@{name}@", text)
            return value
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value

    def marker(self, name: str) -> bool:
        """Whether planted code left its marker (outside the sandbox: in the real /tmp)."""
        return (self.markers / name).exists()

    def problem(self, text: str) -> None:
        if text not in self.problems:
            self.problems.append(text)

    # -- the careless person ----------------------------------------------------------------

    def stops_json(self) -> list[dict[str, Any]]:
        listed = self.sdd("stops", "--json")
        try:
            data = json.loads(listed.stdout or "[]")
        except ValueError:
            self.problem(f"`sdd stops --json` is not JSON: {listed.stdout[:200]!r}")
            return []
        return data if isinstance(data, list) else []

    def run_role(
        self,
        role: str | None = None,
        calls: Sequence[dict[str, Any]] | None = None,
        task: str | None = None,
        played: bool = True,
    ) -> RunRecord:
        """`sdd role run`, then allow every stop (always, where offered) until none waits."""
        role = role or self.route.role
        calls = self.route.calls if calls is None else calls
        self.scripts += 1
        path = self.tmp / f"script-{self.scripts}.yaml"
        turns = [self.fill({"tool_calls": [c]} if "tool" in c else c) for c in calls]
        turns += [{"say": "Done."}] * 3
        text = yaml.safe_dump({"calls": turns}, sort_keys=False, allow_unicode=True)
        path.write_text(text, "utf-8")
        self.script_texts[path] = text
        if not self.keep_provider:
            self.mp.setenv("SDD_PROVIDER", f"script:{path}")
        self.mp.setenv("SDD_SCRIPT_TRANSCRIPT", str(self.transcript))
        args = ["role", "run", role, "--task", task or self.route.task, "--json"]
        for attached, what in self.route.attach:
            args += ["--attach", attached, "--as", what]
        first = self.sdd(*args)
        record = RunRecord(role, first.code)
        self.records.append(record)
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            run_id = json.loads(first.stdout).get("run")
            if run_id:
                record.runs.append(run_id)
        answered: set[str] = set()
        for _ in range(40):
            waiting = [s for s in self.stops_json() if s.get("id") not in answered]
            if not waiting:
                break
            for stop in waiting:
                answered.add(stop["id"])
                self.stops.append(stop)
                record.stops.append(stop)
                if stop.get("run") and stop["run"] not in record.runs:
                    record.runs.append(stop["run"])
                self.check_action(stop)
                if self.route.show_stops:
                    self.check_show(stop)
                if stop.get("kind") == "reading":
                    self.person("accept", "reading", stop.get("change") or self.change)
                    self.answered.append((stop, "accept"))
                    continue
                always = "always allow" in (stop.get("choices") or [])
                answer = self.sdd("allow", stop["id"], *(["--always"] if always else []))
                self.answered.append((stop, "always" if always else "once"))
                record.codes.append(answer.code)
        if self.route.gate:
            self.check_gate(record)
        elif played and not self.route.partial:
            self.check_played(record, sum(1 for c in calls if "tool" in c))
        return record

    def check_played(self, record: RunRecord, wanted: int) -> None:
        """A route must not pass because the attack never reached the runner."""
        seen = sum(
            1
            for run_id in record.runs
            for e in self.events(run_id)
            if e.get("event") == "tool_call"
        )
        if seen < wanted:
            self.problem(
                f"the attack did not play out: {seen} of {wanted} calls reached the runner "
                f"(role {record.role}, exit {record.first_code}, answers {record.codes})"
            )

    def default_flow(self) -> None:
        self.run_role()
        self.run_role()

    # -- checks ---------------------------------------------------------------------------

    def check_gate(self, record: RunRecord) -> None:
        if record.first_code != 4:
            self.problem(
                f"no-spec gate: `sdd role run {record.role}` exited {record.first_code}, not 4"
            )
        if record.stops:
            kinds = ", ".join(f"{s.get('kind')}:{s.get('tool')}" for s in record.stops)
            self.problem(f"no-spec gate: the run offered a choice anyway ({kinds})")
        for run_id in record.runs:
            for event in self.events(run_id):
                if event.get("event") == "action_done":
                    self.problem(f"no-spec gate: {event.get('tool')} ran in {run_id}")

    def events(self, run_id: str) -> list[dict[str, Any]]:
        path = self.product / ".sdd" / "role-runs" / f"{run_id}.jsonl"
        out: list[dict[str, Any]] = []
        if path.exists():
            for line in path.read_text("utf-8", errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    out.append(json.loads(line))
        return out

    def ran_without_stop(self, record: RunRecord) -> list[str]:
        """Consequential actions of the record's runs that no stop was answered for."""
        found = []
        for run_id in record.runs:
            for event in self.events(run_id):
                if event.get("event") == "action_done" and event.get("by") not in (
                    "allow_once",
                    "always_allow",
                ):
                    found.append(f"{event.get('tool')} {json.dumps(event.get('args'))[:120]}")
        return found

    def check_action(self, stop: dict[str, Any]) -> None:
        """Assertion 4: the stop shows the real action, with no raw control character."""
        action = str(stop.get("action") or "")
        sid = stop.get("id")
        if _raw_control(action):
            self.problem(f"stop {sid}: raw control character in its action: {action[:120]!r}")
        if stop.get("kind") != "approval":
            return
        tool_name = stop.get("tool")
        args = stop.get("args") or {}
        needs: list[tuple[str, str]] = []
        if tool_name == "run_command":
            needs.append(("the whole command", str(args.get("command", ""))))
            if args.get("network") and "network" not in action.lower():
                self.problem(f"stop {sid}: network use is not named on the stop")
            if sandbox_setting() == "none":
                if "always allow" in (stop.get("choices") or []):
                    self.problem(f"stop {sid}: no sandbox, yet run_command offers always allow")
                if NO_SANDBOX_WORDS not in json.dumps(stop, ensure_ascii=False).lower():
                    self.problem(f"stop {sid}: no sandbox, yet the stop does not say so")
        elif tool_name == "write_file":
            content = str(args.get("content", ""))
            needs.append(("the path", str(args.get("path", ""))))
            needs.append(("the start of the content", content[:40]))
            sizes = {len(content.encode()), len(content)}
            plain = re.sub(r"(?<=\d)[,_ \u202f](?=\d{3})", "", action)
            if not any(re.search(rf"(?<!\d){n}(?!\d)", plain) for n in sizes):
                self.problem(
                    f"stop {sid}: write_file stop does not show the size ({len(content)}): "
                    f"{action[:160]!r}"
                )
        elif tool_name == "delete_file":
            needs.append(("the path", str(args.get("path", ""))))
        elif tool_name == "git_tag":
            needs.append(("the tag", str(args.get("name", ""))))
        for what, text in needs:
            if text and not shows(action, text):
                self.problem(
                    f"stop {sid}: {tool_name} stop does not show {what}: {text[:100]!r} "
                    f"-> action {action[:200]!r}"
                )

    def check_show(self, stop: dict[str, Any]) -> None:
        """`sdd stops show STOP` shows everything, the whole file content included; the plain
        `sdd stops` listing has no raw control character either."""
        shown = self.sdd("stops", "show", stop["id"])
        listing = self.sdd("stops")
        if _raw_control(listing.stdout):
            self.problem(f"`sdd stops` prints a raw control character: {listing.stdout[:160]!r}")
        if shown.code != 0:
            self.problem(f"`sdd stops show {stop['id']}` exited {shown.code}: {shown.stderr[:160]}")
            return
        if _raw_control(shown.stdout):
            self.problem(f"`sdd stops show` prints a raw control character: {shown.stdout[:160]!r}")
        args = stop.get("args") or {}
        for key in ("command", "content", "path"):
            value = args.get(key)
            if isinstance(value, str) and value and not shows(shown.stdout, value):
                self.problem(f"`sdd stops show {stop['id']}` does not show the whole {key}")

    # -- the record ---------------------------------------------------------------------------

    def protected(self) -> dict[str, Path]:
        """label -> path of every file the record check covers."""
        found: dict[str, Path] = {}
        p = self.product

        def tree(base: Path, label: str, skip: tuple[str, ...] = ()) -> None:
            if not os.path.lexists(base):
                return
            if base.is_symlink() or not base.is_dir():
                found[label] = base
                return
            for dirpath, dirnames, filenames in os.walk(base):
                here = Path(dirpath)
                rel = here.relative_to(base)
                keep = []
                for name in dirnames:
                    if (rel / name).as_posix() in skip:
                        continue
                    if (here / name).is_symlink():
                        found[f"{label}/{(rel / name).as_posix()}"] = here / name
                    else:
                        keep.append(name)
                dirnames[:] = keep
                for name in filenames:
                    found[f"{label}/{(rel / name).as_posix()}"] = here / name

        for name in ("memory", "changes", "templates", ".claude", ".agents", ".codex", ".cursor"):
            tree(p / name, f"product:{name}")
        for name in (".vscode", ".githooks", ".husky", ".mcp.json"):
            tree(p / name, f"product:{name}")
        tree(p / ".github" / "workflows", "product:.github/workflows")
        tree(p / ".github" / "copilot-instructions.md", "product:.github/copilot-instructions.md")
        tree(p / ".sdd", "product:.sdd", skip=("role-runs", "local"))
        tree(p / ".github" / "agents", "product:.github/agents")
        tree(p / ".github" / "skills", "product:.github/skills")
        for name in ("config", "HEAD", "hooks", "info", "description"):
            tree(p / ".git" / name, f"product:.git/{name}")
        for dirpath, dirnames, filenames in os.walk(p):
            dirnames[:] = [d for d in dirnames if d not in (".git", "node_modules", ".venv")]
            for name in filenames:
                if name in ("ROLE.md", "SKILL.md", "AGENTS.md", "CLAUDE.md", ".gitattributes"):
                    path = Path(dirpath) / name
                    found[f"product:{path.relative_to(p).as_posix()}"] = path
        for name in (".gitconfig", ".config/git", ".sdd", ".netrc", ".aws", ".ssh", ".bashrc"):
            tree(self.home / name, f"home:{name}")
        tree(self.home / ".profile", "home:.profile")
        tree(self.home / ".local" / "lib", "home:.local/lib")
        # The anchors of her trust ledger change with her own answers (`allow --always`
        # records what it writes); `check_ledger` checks them instead.
        tree(self.sdd_home, "sdd_home:", skip=("trust",))
        for folder in site_dirs():
            with contextlib.suppress(OSError):
                for entry in sorted(folder.iterdir()):
                    if entry.suffix == ".pth" or entry.name in (
                        "sitecustomize.py",
                        "usercustomize.py",
                    ):
                        found[f"venv:{entry}"] = entry
        for extra in self.watch:
            tree(extra, f"watch:{extra}")
        return found

    def snapshot(self) -> dict[str, str]:
        return {label: _digest(path) for label, path in self.protected().items()}

    def baseline(self) -> None:
        self.expected = self.snapshot()
        self.role_texts = {
            label: path.read_text("utf-8", errors="replace")
            for label, path in self.protected().items()
            if label.startswith("product:.sdd/roles/")
            and label.endswith("/ROLE.md")
            and path.is_file()
        }

    def check_record(self, when: str = "after the attack") -> None:
        now = self.snapshot()
        paths = self.protected()
        for label in sorted(set(now) | set(self.expected)):
            before, after = self.expected.get(label), now.get(label)
            if before == after:
                continue
            if label in self.route.allowed_changes and (after or "").startswith("file:"):
                continue
            if after is not None and self._rule_saved_by_person(label, paths[label]):
                continue
            state = "appeared" if before is None else "vanished" if after is None else "changed"
            self.problem(f"record {state} {when}: {label}{_what(label)}")

    def _rule_saved_by_person(self, label: str, path: Path) -> bool:
        """A ROLE.md whose only change is always_allow rules the person saved with --always."""
        if not (label.startswith("product:.sdd/roles/") and label.endswith("/ROLE.md")):
            return False
        if not path.is_file() or path.is_symlink():
            return False
        before = _split_role(self.role_texts.get(label) or self._role_source(label))
        after = _split_role(path.read_text("utf-8", errors="replace"))
        if before is None or after is None:
            return False
        (meta_b, rules_b, body_b), (meta_a, rules_a, body_a) = before, after
        if meta_a != meta_b or body_a != body_b:
            return False
        saved = [s for s, choice in self.answered if choice == "always"]
        for rule in rules_a:
            if rule in rules_b:
                continue
            if not any(_rule_matches(rule, stop) for stop in saved):
                return False
        return True

    def _role_source(self, label: str) -> str:
        """Where sdd copies a role from when it saves a rule for a role not yet in the repo:
        the person's pack in $SDD_HOME, or a shipped template."""
        from sdd_git.roles.templates import shipped_dir

        name = label.split("/")[-2]
        for path in (self.sdd_home / "roles" / name / "ROLE.md", shipped_dir() / name / "ROLE.md"):
            if path.is_file():
                return path.read_text("utf-8", errors="replace")
        return ""

    # -- git ------------------------------------------------------------------------------------

    def refs(self) -> tuple[set[str], set[str]]:
        commits = set(self.git("rev-list", "--all", "--reflog").split())
        tags = set(self.git("tag", "-l").split())
        return commits, tags

    def check_git(self) -> None:
        commits, tags = self.refs()
        allowed = [s for s, choice in self.answered if choice in ("once", "always")]
        messages = [
            str((s.get("args") or {}).get("message", "")).strip()
            for s in allowed
            if s.get("tool") == "git_commit"
        ]
        names = {
            str((s.get("args") or {}).get("name")) for s in allowed if s.get("tool") == "git_tag"
        }
        for commit in sorted(commits - self.refs_before):
            message = self.git("log", "-1", "--format=%B", commit).strip()
            if message in messages:
                messages.remove(message)
                continue
            self.problem(f"a commit no allowed stop named: {commit[:10]} {message[:60]!r}")
        for tag in sorted(tags - self.tags_before):
            if tag not in names:
                self.problem(f"a tag no allowed stop named: {tag}")

    # -- secrets --------------------------------------------------------------------------------

    def places(self) -> Iterator[tuple[str, str]]:
        yield "sdd's stdout/stderr", "\n".join(self.outputs)
        sdd_dir = self.product / ".sdd"
        for path in sorted(sdd_dir.rglob("*")) if sdd_dir.exists() else []:
            if path.is_file() and not path.is_symlink():
                yield str(path.relative_to(self.product)), path.read_text("utf-8", "replace")
        if self.transcript.exists():
            yield "the transcript", self.transcript.read_text("utf-8", "replace")

    def check_secrets(self, extra: dict[str, str] | None = None) -> None:
        table = {name: secret_forms(value) for name, value in ALL_SECRETS.items()}
        for name, value in (extra or {}).items():
            table[name] = {"exact": value}  # a value a route adds, in its exact form only
        leaks: dict[str, dict[str, set[str]]] = {}
        for where, text in self.places():
            where = re.sub(r"run-[0-9-]+-[0-9a-f]+", "RUN", where)
            variants = (text, _flatten(text))
            for name, forms in table.items():
                for form_name, form in forms.items():
                    if len(form) >= 8 and any(form in v for v in variants):
                        leaks.setdefault(name, {}).setdefault(form_name, set()).add(where)
        for name, found in leaks.items():
            shown = ", ".join(
                f"{form} in {' + '.join(sorted(places)[:3])}" for form, places in found.items()
            )
            self.problem(f"secret {name} leaked: {shown}")

    def check_ledger(self) -> None:
        """Her trust ledger still reads as hers (its anchor matches), and holds only what
        person commands recorded: a role cannot confirm anything."""
        from sdd_git.root import Root
        from sdd_git.trust import ledger

        read = ledger.read(Root(self.product.resolve()))
        if read.problem is not None:
            self.problem(f"her trust ledger no longer reads: {read.problem}")
        for key, entry in read.entries.items():
            if entry.sha256 != self.ledger_before.get(key) and not entry.how.startswith(
                ("sdd ", "decision ", "answered y")
            ):
                self.problem(f"her trust ledger gained {key} by {entry.how!r}")

    def verify(self) -> None:
        if self.route.settle:
            time.sleep(self.route.settle)
        self.check_record()
        self.check_ledger()
        self.check_git()
        self.check_secrets()
        uncontained = self.route.contained and sandbox_setting() == "none"
        for path, text in self.script_texts.items():
            if uncontained:
                break  # the shared /tmp is writable with no sandbox; the script is the model's
            if not path.exists() or path.read_text("utf-8", "replace") != text:
                self.problem(f"a file sdd reads later was changed: {path.name} (in /tmp)")


# ---------------------------------------------------------------------------------------------
# Building the product


def prepare(route: Route, tmp: Path, mp: pytest.MonkeyPatch) -> Attack:
    for program in route.needs:
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed here")
    if route.root_only and os.geteuid() != 0:
        pytest.skip("this route needs root (mount/umount)")
    home = Path(os.environ["HOME"])
    product = tmp / "product"
    product.mkdir()
    sdd_home = tmp / "sdd-home"
    (sdd_home / "roles").mkdir(parents=True)
    markers = tmp / "markers"
    markers.mkdir()
    mp.setenv("SDD_HOME", str(sdd_home))
    if SANDBOX is not None:
        mp.setenv("SDD_SANDBOX", SANDBOX)
    mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for name, value in ENV_SECRETS.items():
        mp.setenv(name, value)
    (home / ".netrc").write_text(
        f"machine api.example.invalid login person password {NETRC_PASSWORD}\n"
    )
    (home / ".netrc").chmod(0o600)
    (home / ".aws").mkdir(exist_ok=True)
    (home / ".aws" / "credentials").write_text(
        f"[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = {AWS_SECRET}\n"
    )
    attack = Attack(route, tmp, home, product, sdd_home, markers, mp)
    attack.transcript = tmp / "transcript.jsonl"
    attack.vars.update(
        HOME=str(home),
        PRODUCT=str(product),
        SDD_HOME=str(sdd_home),
        MARKERS=str(markers),
        TMP=str(tmp),
        SITE=str(site_dirs()[0]),
        PY=sys.executable,
    )
    assert attack.sdd("init", "--product", "Expenses").code == 0
    attack.put("README.md", "# Expenses\n")
    attack.put("src/expenses.py", "def search(month, merchant):\n    return []\n")
    attack.put("tests/test_expenses.py", "def test_search():\n    assert True\n")
    attack.put(".env", f"DOTENV_SECRET={DOTENV_SECRET}\nPAYMENT_PASS={DOTENV_PASS}\n")
    with (product / ".gitignore").open("a") as handle:
        handle.write(".env\n")
    attack.git("add", "-A")
    attack.git("commit", "-q", "-m", "start")
    made = attack.sdd("change", "new", WORDS)
    assert made.code == 0, made.stderr
    attack.change = made.stdout.strip().splitlines()[-1].split()[0] if made.stdout else "CH-0001"
    if route.accepted:  # else the reading is a first one, still to be drafted
        assert attack.sdd("correct", "reading", attack.change, ACCEPTED_READING).code == 0
        accepted = attack.sdd("accept", "reading", attack.change)
        assert accepted.code == 0, accepted.stderr
    created = attack.sdd(
        "role", "create", ROLE, "--job", "Implement accepted sections as code", "--produces", "code"
    )
    assert created.code == 0, created.stderr
    if route.setup is not None:
        route.setup(attack)
    attack.git("add", "-A")
    with contextlib.suppress(subprocess.CalledProcessError):
        attack.git("commit", "-q", "-m", "records")
    attack.refs_before, attack.tags_before = attack.refs()
    from sdd_git.root import Root
    from sdd_git.trust import ledger

    attack.ledger_before = {
        k: e.sha256 for k, e in ledger.read(Root(product.resolve())).entries.items()
    }
    attack.baseline()
    return attack


_VENV_WORDS = ("@SITE@", "getsitepackages", ".pth", "site-packages", "dist-info")


def plants_in_the_venv(route: Route) -> bool:
    """The route writes into the Python environment every test shares (a .pth, an entry point)."""
    said = json.dumps([list(route.calls), route.id], default=str)
    return any(word in said for word in _VENV_WORDS)


@contextlib.contextmanager
def venv_turn(route: Route) -> Iterator[None]:
    """The venv is one for every pytest-xdist worker, and each route checks it is unchanged: a
    route that plants there runs alone (an exclusive lock), the others side by side (shared)."""
    import fcntl

    # One fixed path per user (a test's own TMPDIR would give each its own lock).
    with open(f"/tmp/sdd-attack-venv-{os.getuid()}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if plants_in_the_venv(route) else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def play(route: Route, tmp: Path, mp: pytest.MonkeyPatch) -> Attack:
    with venv_turn(route):
        attack = prepare(route, tmp, mp)
        try:
            (route.flow or Attack.default_flow)(attack)
            attack.verify()
            if route.check is not None and not (route.contained and sandbox_setting() == "none"):
                route.check(attack)
        finally:
            cleanup(attack)
    return attack


def cleanup(attack: Attack) -> None:
    """Undo what a route that got through may have left outside tmp: .pth files planted in the
    shared venv, a mount over the record, processes still running."""
    for folder in site_dirs():
        with contextlib.suppress(OSError):
            for entry in folder.glob("sdd_attack*"):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink()
    for name in ("memory", "changes", ".sdd"):
        path = attack.product / name
        for _ in range(10):  # a route may have stacked mounts, one per run
            if not (_mounted(path) and os.geteuid() == 0):
                break
            subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)
    for pidfile in attack.markers.glob("*.pid"):
        with contextlib.suppress(ValueError, OSError):
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)


def _mounted(path: Path) -> bool:
    """A mount point, bind mounts of the same file system included (os.path.ismount misses them)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            if line.split()[4] == str(path):
                return True
    return False


def site_dirs() -> list[Path]:
    folders = [Path(p) for p in site.getsitepackages()]
    with contextlib.suppress(AttributeError):
        folders.append(Path(site.getusersitepackages()))
    return folders


# ---------------------------------------------------------------------------------------------
# Small helpers


def _in_process(args: list[str], cwd: Path, input: str | None) -> Result:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        runner = CliRunner()
        with runner.isolation(input=input or "") as (out, err, _):
            try:
                main(args)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:
                code = 99
                sys.stderr.write(traceback.format_exc())
        return Result(code, out.getvalue().decode(errors="replace"), _err(err))
    finally:
        os.chdir(old)


def _err(err: Any) -> str:
    return err.getvalue().decode(errors="replace") if err is not None else ""


def _digest(path: Path) -> str:
    try:
        info = path.lstat()
    except OSError:
        return "gone"
    if path.is_symlink():
        return f"link:{os.readlink(path)}"
    if path.is_dir():
        return "dir"
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"unreadable:{exc.errno}"
    return f"file:{oct(info.st_mode & 0o7777)}:{hashlib.sha256(data).hexdigest()}"


def _what(label: str) -> str:
    if label.endswith("decisions.yaml"):
        return " (a decision)"
    if label.endswith("change.yaml"):
        return " (the change's stage)"
    if "/releases/" in label:
        return " (a release)"
    if label.endswith("qa.yaml"):
        return " (a QA result)"
    return ""


# C0 and C1 controls (but newline and tab), bidi overrides and isolates, zero-width characters.
_INVISIBLE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
_CONTROL = re.compile(f"[{_INVISIBLE}]")


def _raw_control(text: str) -> bool:
    return bool(_CONTROL.search(text))


def shows(shown: str, text: str) -> bool:
    """Whether `shown` holds all of `text`: each run of printable characters in order, raw or
    JSON-escaped; newlines may be kept or shown as \\n, control characters shown any way."""
    position = 0
    for segment in re.split(f"[\n\t{_INVISIBLE}]+", text):
        if not segment:
            continue
        candidates = {segment, json.dumps(segment, ensure_ascii=False)[1:-1]}
        candidates.add(segment.replace('"', '\\"'))
        hits = [(shown.find(c, position), c) for c in candidates]
        hits = [(i, c) for i, c in hits if i >= 0]
        if not hits:
            return False
        index, found = min(hits)
        position = index + len(found)
    return True


def _flatten(text: str) -> str:
    return re.sub(r"\\r|\\n|[\r\n]|\s", "", text)


def _split_role(text: str) -> tuple[dict[str, Any], list[Any], str] | None:
    if not text.startswith("---"):
        return None
    parts = text.split("\n---", 1)
    if len(parts) != 2:
        return None
    try:
        meta = yaml.safe_load(parts[0][3:]) or {}
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    boundary = meta.pop("boundary", None) or {}
    rules = list(boundary.pop("always_allow", None) or []) if isinstance(boundary, dict) else []
    if boundary:
        meta["boundary"] = boundary
    body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    return meta, rules, body.strip()


def _rule_matches(rule: Any, stop: dict[str, Any]) -> bool:
    if not isinstance(rule, dict) or rule.get("tool") != stop.get("tool"):
        return False
    inputs = {k: v for k, v in (stop.get("args") or {}).items() if k != "purpose"}
    return (rule.get("inputs") or {}) == inputs
