"""`sdd demo`: the person's whole record journey, offline, in a fresh folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sdd_git.records import acceptance, changes, releases, stages
from sdd_git.records.spec import read_spec
from sdd_git.root import init_root

WORDS = "I can never find last month's hotel charge."
READING = """Search expenses by month and merchant, from the expense list.

- C1: Searching "hotel" for last month lists the charge.
- C2: A month with no match says that no charge was found."""


def run_demo(folder: Path, narrate: Callable[[str], None]) -> None:
    report = init_root(folder, product="Expenses")
    root = report.root
    narrate(
        f"1. A new product in {root.path} (git init, memory/, changes/, .sdd/; nothing committed)."
    )

    pack = changes.create(root, WORDS)
    narrate(f'2. Maya says: "{WORDS}"  ->  change {pack.id}, spec {pack.spec}, stage {pack.stage}.')

    acceptance.correct_reading(root, pack.id, READING)
    narrate(f"3. A short reading is written into {pack.spec}#S1 (here by hand; later by a role):")
    for line in READING.splitlines():
        narrate(f"     {line}")

    accepted = acceptance.accept_reading(root, pack.id)
    narrate(
        f"4. She accepts the reading. That is the decision {accepted.decision.id}; "
        f'its words are hers, verbatim: "{accepted.decision.words}"'
    )

    move = stages.advance(root, pack.id)
    narrate(f"5. sdd next: {move.before} -> {move.after} (the gate: an accepted section).")

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
        f"6. A scenario {scenario_ref} is written and she accepts it as required ({decision.id})."
    )

    result = acceptance.record_qa(
        root, scenario_ref, "pass", "The March hotel charge showed up first."
    )
    narrate(f'7. She tries it and records: {result.result}, "{result.words}"')

    for _ in range(2):
        move = stages.advance(root, pack.id)
        narrate(f"8. sdd next: {move.before} -> {move.after}.")

    release = releases.generate(root, [pack.id], tag=None)
    narrate(
        f"9. She chooses the release: {release.id} ({release.path.relative_to(root.path)}); "
        "its notes quote her sentence. Nothing was pushed or deployed."
    )

    move = stages.complete(root, pack.id)
    narrate(f"10. sdd complete: {move.before} -> {move.after}.")

    spec = read_spec(root.spec_file(pack.spec))
    unchanged = spec.section("S1").body == READING
    narrate(f"The reading she accepted is unchanged: {'yes' if unchanged else 'NO'}.")
    narrate(f"Look around: cd {root.path} && sdd change show {pack.id}")
