"""The person's decisions: accept, correct, qa record, decision, release, next, complete."""

from __future__ import annotations

import click

from sdd_git.cli.complete import change_ids
from sdd_git.cli.output import current_root, emit_json, json_option, say, table

WORDS_OPTION = click.option(
    "--words", help="The decision's words (default: the change's own words)."
)
HASH_OPTION = click.option(
    "--hash",
    "shown",
    metavar="H",
    help="Accept only the text whose sha256 is H (sdd change show prints it); refused if it"
    " changed since.",
)


def _report(acceptance: object, subject: str) -> None:
    from sdd_git.records.acceptance import Acceptance

    assert isinstance(acceptance, Acceptance)
    decision = acceptance.decision
    if acceptance.already:
        say(f"{subject} was already accepted by {decision.id}; nothing was added")
    else:
        say(f'accepted {subject}: decision {decision.id}, in your words: "{decision.words}"')
    if acceptance.text is not None:
        from sdd_git.trust.words import visible

        # What she accepted, whole: the file may have changed since she last read it (a merge
        # can rewrite a draft); --hash refuses that, `sdd decision replace` undoes it.
        say("the text accepted:")
        for line in acceptance.text.splitlines():
            say(f"  {visible(line)}")
    click.echo(decision.id)


@click.group()
def accept() -> None:
    """Accept a reading, a section, a scenario, a plan or a failure. Prints the decision id."""


@accept.command("reading")
@click.argument("change_id", metavar="CH", shell_complete=change_ids)
@WORDS_OPTION
@HASH_OPTION
def accept_reading(change_id: str, words: str | None, shown: str | None) -> None:
    """Accept the drafted reading (section S1) of CH; her words become the decision."""
    from sdd_git.records.acceptance import accept_reading as run

    _report(run(current_root(), change_id, words, shown), f"the reading of {change_id}")


@accept.command("section")
@click.argument("ref", metavar="SPEC#Sn")
@WORDS_OPTION
@HASH_OPTION
def accept_section(ref: str, words: str | None, shown: str | None) -> None:
    """Accept a hand-written section, e.g. SPEC-0001#S2."""
    from sdd_git.records.acceptance import accept_section as run

    _report(run(current_root(), ref, words, shown), ref)


@accept.command("scenario")
@click.argument("ref", metavar="CH/SC-n")
@click.option("--optional", is_flag=True, help="Accept it as optional: it never blocks a release.")
@click.option(
    "--words", help="The decision's words (default: the scenario's title and expectation)."
)
@HASH_OPTION
def accept_scenario(ref: str, optional: bool, words: str | None, shown: str | None) -> None:
    """Accept a scenario; it is required unless --optional."""
    from sdd_git.records.acceptance import accept_scenario as run

    _report(run(current_root(), ref, optional, words, shown), ref)


@accept.command("plan")
@click.argument("change_id", metavar="CH", shell_complete=change_ids)
@WORDS_OPTION
@HASH_OPTION
def accept_plan(change_id: str, words: str | None, shown: str | None) -> None:
    """Accept the drafted plan of CH (changes/CH/plan.yaml); it becomes binding."""
    from sdd_git.records.acceptance import accept_plan as run

    _report(run(current_root(), change_id, words, shown), f"the plan of {change_id}")


@accept.command("failure")
@click.argument("ref", metavar="CH/SC-n")
@click.argument("words")
def accept_failure(ref: str, words: str) -> None:
    """Accept a required scenario's failure in your WORDS; the reading stays as it is."""
    from sdd_git.records.acceptance import accept_failure as run

    decision = run(current_root(), ref, words)
    say(f"accepted the failure of {ref}: decision {decision.id}")
    click.echo(decision.id)


@click.group()
def correct() -> None:
    """Correct a drafted reading."""


@correct.command("reading")
@click.argument("change_id", metavar="CH", shell_complete=change_ids)
@click.argument("words", required=False)
@click.option(
    "--proposal", is_flag=True, help="Take the reading a role proposed beside your correction."
)
@click.option(
    "--hash",
    "shown",
    metavar="H",
    help="With --proposal: take it only if its sha256 is H (sdd change show prints it).",
)
def correct_reading(change_id: str, words: str | None, proposal: bool, shown: str | None) -> None:
    """Replace the reading of CH with your WORDS, or with a role's proposed reading. It stays
    unaccepted until you accept it, and no role's draft replaces your words."""
    from sdd_git.errors import UsageError

    if proposal == (words is not None):
        raise UsageError(
            "give your words, or --proposal to take the reading a role proposed",
            hint=f'sdd correct reading {change_id} "what you mean"',
        )
    if shown is not None and not proposal:
        raise UsageError(
            "--hash names the proposal you read; give it with --proposal",
            hint=f"sdd correct reading {change_id} --proposal --hash H",
        )
    if proposal:
        from sdd_git.records.proposals import take_proposal

        spec = take_proposal(current_root(), change_id, shown)
        say(
            f"the reading of {change_id} ({spec.id}#S1) now holds the proposed reading; "
            "it is not accepted yet. It says:"
        )
        for line in spec.section("S1").text.splitlines():
            say(f"  {line}")
    else:
        from sdd_git.records.acceptance import correct_reading as run

        assert words is not None
        spec = run(current_root(), change_id, words)
        say(
            f"the reading of {change_id} ({spec.id}#S1) now holds your words; "
            "it is not accepted yet"
        )
    click.echo(f"{spec.id}#S1")


@click.group()
def qa() -> None:
    """QA results, written by the person only."""


@qa.command("record")
@click.argument("ref", metavar="CH/SC-n")
@click.argument("result", type=click.Choice(["pass", "fail"]))
@click.argument("words")
def qa_record(ref: str, result: str, words: str) -> None:
    """Record a pass or fail for a scenario, in your WORDS."""
    from sdd_git.records.acceptance import record_qa

    entry = record_qa(current_root(), ref, result, words)
    say(f'recorded {ref}: {entry.result}, "{entry.words}"')


@click.group()
def decision() -> None:
    """The decision record (memory/decisions.yaml)."""


@decision.command("list")
@json_option
def decision_list(as_json: bool) -> None:
    """List every decision, with the ones replaced."""
    from sdd_git.records import decisions

    log = decisions.load(current_root())
    rows = [{**e.as_dict(), "replaced_by": log.replaced_by(e.id)} for e in log.entries]
    if as_json:
        emit_json(rows)
        return
    table(
        [
            (
                r["id"],
                r["kind"],
                str(
                    r.get("section")
                    or r.get("scenario")
                    or r.get("replaces")
                    or r.get("release")
                    or ""
                ),
                f"replaced by {r['replaced_by']}" if r["replaced_by"] else "",
                " ".join(str(r["words"]).split())[:60],
            )
            for r in rows
        ],
        ("ID", "KIND", "SUBJECT", "STATE", "WORDS"),
    )


@decision.command("replace")
@click.argument("decision_id", metavar="D-n")
@click.argument("words")
def decision_replace(decision_id: str, words: str) -> None:
    """Replace decision D-n with new WORDS; the old one stays, marked replaced."""
    from sdd_git.records.acceptance import replace_decision

    entry = replace_decision(current_root(), decision_id, words)
    say(f"{decision_id} is replaced by {entry.id}; the old entry stays in the record")
    click.echo(entry.id)


@click.group()
def release() -> None:
    """Release records (memory/releases/)."""


@release.command("generate")
@click.argument("change_ids", nargs=-1, required=True, metavar="CH...", shell_complete=change_ids)
@click.option("--tag", metavar="NAME", help="Also try to write this git tag at HEAD.")
@click.option("--words", help="The release decision's words (default: the changes' words).")
@click.option("--again", is_flag=True, help="Release changes that an earlier release holds.")
def release_generate(
    change_ids: tuple[str, ...], tag: str | None, words: str | None, again: bool
) -> None:
    """Write a release record whose notes quote each change's words. Never pushes or deploys."""
    from sdd_git.records.releases import generate

    made = generate(current_root(), list(change_ids), tag, words, again=again)
    say(f"wrote {made.path.name} for {', '.join(made.changes)} (decision {made.decision})")
    if made.tag.name and made.tag.written:
        say(
            f"wrote git tag {made.tag.name} at {(made.tag.commit or '')[:12]} (HEAD), which does "
            f"not hold {made.path.name}: sdd commits nothing. Commit it, then move the tag "
            f"there if you want it to (git tag -f {made.tag.name})"
        )
    elif made.tag.name:
        say(f"the git tag {made.tag.name} was not written: {made.tag.reason}")
    say("nothing was pushed or deployed")
    click.echo(made.id)


@click.command("next")
@click.argument("change_id", metavar="[CH]", required=False, shell_complete=change_ids)
def next_stage(change_id: str | None) -> None:
    """Move a change (default: the only open one) one stage on, when its gate holds."""
    from sdd_git.records.stages import advance

    move = advance(current_root(), change_id)
    click.echo(f"{move.change.id}: {move.before} -> {move.after}")


@click.command("complete")
@click.argument("change_id", metavar="[CH]", required=False, shell_complete=change_ids)
def complete(change_id: str | None) -> None:
    """Move a change to done when every gate up to it holds."""
    from sdd_git.records.stages import complete as run

    move = run(current_root(), change_id)
    click.echo(f"{move.change.id}: {move.before} -> {move.after}")
