"""`sdd demo`: Maya's whole journey, offline, in a fresh folder.

The model's replies are RECORDED (sdd_git/demo_scripts/*.yaml) and replayed by the scripted
provider; everything else is the real thing: the runner, its guard and boundary, the stops, the
run logs, the person's record and the git repository.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from sdd_git.records import acceptance, changes, releases, stages
from sdd_git.records.person import init as init_root
from sdd_git.records.spec import read_spec
from sdd_git.root import Root

WORDS = "I can never find last month's hotel charge."
WORDS_2 = "When an expense is reimbursed, the invoice in Billing should show it."
SCRIPTS = Path(__file__).parent / "demo_scripts"


@contextlib.contextmanager
def _recorded(script: str) -> Iterator[None]:
    previous = os.environ.get("SDD_PROVIDER")
    os.environ["SDD_PROVIDER"] = f"script:{SCRIPTS / script}"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("SDD_PROVIDER", None)
        else:
            os.environ["SDD_PROVIDER"] = previous


def _git(root: Root, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root.path, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _loop_lines(root: Root, run_id: str) -> list[str]:
    from sdd_git.runner.control import event_text
    from sdd_git.runner.runlog import log_path, read_events

    shown = ("draft", "critique", "revision", "rejected")
    return [event_text(e) for e in read_events(log_path(root, run_id)) if e["event"] in shown]


def run_demo(folder: Path, narrate: Callable[[str], None]) -> None:
    from sdd_git.runner.run import RunRequest, answer, start

    root = init_root(folder, product="Expenses").root
    _git(root, "config", "user.name", "Maya (sdd demo)")
    _git(root, "config", "user.email", "maya@demo.invalid")
    narrate(
        f"1. A new product in {root.path} (git init, memory/, changes/, .sdd/; nothing committed)."
    )
    narrate("   The model's replies below are RECORDED (sdd_git/demo_scripts); the rest is real.")

    pack = changes.create(root, WORDS)
    narrate(f'2. Maya says: "{WORDS}"  ->  change {pack.id}, spec {pack.spec}, stage {pack.stage}.')

    with _recorded("spec-steward.yaml"):
        drafted = start(root, RunRequest("spec-steward", "Draft a short reading of CH-0001."))
    section = read_spec(root.spec_file(pack.spec)).section("S1")
    narrate(f"3. The spec-steward drafts the reading ({section.full_id}):")
    for line in section.body.splitlines():
        narrate(f"     {line}")
    assert drafted.stop is not None
    narrate(f"   It stops (exit {drafted.exit_code}): {drafted.stop.action}")
    narrate("   Her choices are accept, correct or not yet; a reading is never 'allowed'.")

    accepted = acceptance.accept_reading(root, pack.id)
    narrate(
        f"4. She accepts it. That is the decision {accepted.decision.id}; "
        f'its words are hers, verbatim: "{accepted.decision.words}"'
    )
    move = stages.advance(root, pack.id)
    narrate(f"5. sdd next: {move.before} -> {move.after} (the gate: an accepted section).")

    with _recorded("builder.yaml"):
        looped = start(
            root, RunRequest("builder", "Implement SPEC-0001#S1 and commit it.", critic="qa-author")
        )
        narrate(
            "6. The builder drafts; the qa-author, a different role, critiques it against C1, C2:"
        )
        for line in _loop_lines(root, looped.run_id or ""):
            narrate(f"     {line}")
        assert looped.stop is not None
        narrate(f"   One stop in plain words: {looped.stop.action}")
        first = answer(root, looped.stop.id, "allow_once")
        assert first.stop is not None
        narrate(
            f"   She lets it go on. The builder stops (exit {first.exit_code}): {first.stop.action}"
        )
        second = answer(root, first.stop.id, "allow_once")
        status = _git(root, "status", "--short", "src")
        narrate(
            f"7. She allows it once. The file is written and NOT committed: git status: {status}"
        )
        assert second.stop is not None
        narrate(f"   The builder stops again, naming the commit: {second.stop.action}")
        third = answer(root, second.stop.id, "allow_once")
        narrate(f"8. She allows that too. git log: {_git(root, 'log', '--oneline', '-1')}")
        narrate(f"   The builder: {third.reply}")

    scenario = acceptance.add_scenario(
        root,
        pack.id,
        title="Find last month's hotel charge",
        steps='Open the expense list, choose last month, search "hotel".',
        expected="The hotel charge is listed.",
    )
    scenario_ref = f"{pack.id}/{scenario.id}"
    decision = acceptance.accept_scenario(root, scenario_ref).decision
    narrate(
        f"9. A scenario {scenario_ref} is written and she accepts it as required ({decision.id})."
    )
    result = acceptance.record_qa(
        root, scenario_ref, "pass", "The March hotel charge showed up first."
    )
    narrate(f'10. She tries it and records: {result.result}, "{result.words}"')
    for step in ("11a", "11b"):
        move = stages.advance(root, pack.id)
        narrate(f"{step}. sdd next: {move.before} -> {move.after}.")
    release = releases.generate(root, [pack.id], tag=None)
    narrate(
        f"12. She chooses the release: {release.id} ({release.path.relative_to(root.path)}); "
        "its notes quote her sentence. Nothing was pushed or deployed."
    )
    move = stages.complete(root, pack.id)
    narrate(f"13. sdd complete: {move.before} -> {move.after}.")
    unchanged = read_spec(root.spec_file(pack.spec)).section("S1").hash == section.hash
    narrate(f"The reading she accepted is unchanged: {'yes' if unchanged else 'NO'}.")
    commits = _git(root, "rev-list", "--count", "HEAD")
    narrate(f"Commits in the repository: {commits} (only the one a stop named and she allowed).")
    _second_part(root, narrate)
    sdd = _sdd_command()
    narrate(
        f"Look around: cd {shlex.quote(str(root.path))} && {sdd} role runs"
        f" && {sdd} work CH-0002 --status"
    )


def _sdd_command() -> str:
    """How to run this same sdd from any shell, venv activated or not: the `sdd` script beside
    this interpreter, else the interpreter itself with `-m sdd_git`."""
    script = Path(sys.executable).parent / "sdd"
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m sdd_git"


def _second_part(root: Root, narrate: Callable[[str], None]) -> None:
    """The journey's second part: a task that crosses two modules with no connection."""
    from sdd_git.network.drive import drive, tree_lines
    from sdd_git.network.work import work
    from sdd_git.records import scopes
    from sdd_git.runner import stops
    from sdd_git.runner.run import answer
    from sdd_git.runner.state import RunOutcome

    scopes.add_module(root, "money")
    scopes.add_service(root, "expenses", "money", owner="builder")
    scopes.add_module(root, "billing")
    scopes.add_service(root, "invoices", "billing", owner="qa-author")
    narrate("14. She names the parts: module money (service expenses), module billing (invoices).")
    pack = changes.create(root, WORDS_2)
    acceptance.correct_reading(
        root, pack.id, "Billing shows reimbursements.\n\n- C1: A reimbursed expense shows on "
        "its invoice, with the date."
    )  # fmt: skip
    decision = acceptance.accept_reading(root, pack.id).decision
    narrate(f'15. Maya says: "{WORDS_2}"  ->  {pack.id}; she accepts its reading ({decision.id}).')
    with _recorded("network.yaml"):
        planned = work(root, pack.id)
        assert isinstance(planned, RunOutcome) and planned.stop is not None
        narrate("16. It crosses two modules with no connection: the product lead drafts a plan:")
        for line in (root.path / "changes" / pack.id / "plan.yaml").read_text().splitlines()[:12]:
            narrate(f"      {line}")
        narrate(f"   It stops: {planned.stop.action}")
        accepted = acceptance.accept_plan(root, pack.id).decision
        narrate(f"17. She accepts the plan ({accepted.id}); only now may anyone write for it.")
        first = drive(root, pack.id)
        waiting = next(v for v in first.nodes if v.state == "stopped")
        action = stops.load(root, waiting.stop or "").action
        narrate(f"18. The network runs. {waiting.id} ({waiting.owner}) stops: {action}")
        allowed = answer(root, waiting.stop or "", "allow_once")
        narrate(f"    She allows it; {waiting.id} returns its result ({allowed.status}).")
        second = drive(root, pack.id)
        narrate(f"19. Its prerequisite done, N2 runs. The network: {second.status}.")
        for line in tree_lines(second.nodes):
            narrate(f"      {line}")
