"""`sdd change ...` and `sdd scenario add`."""

from __future__ import annotations

from typing import Any

import click

from sdd_git.cli.complete import change_ids
from sdd_git.cli.output import current_root, emit_json, json_option, say, shown_in_full, table


@click.group()
def change() -> None:
    """Start, list and show change packs."""


@change.command("new")
@click.argument("words", required=False)
@click.option(
    "--from",
    "source",
    metavar="CONNECTOR:ISSUE",
    help="Start from a tracker issue's words: jira:ABC-12, github:#34 (read, never written).",
)
@click.option("--title", help="A short title (default: the start of WORDS).")
@click.option(
    "--bug", is_flag=True, help="This is a bug: keep what happened and what was expected."
)
@click.option("--happened", metavar="TEXT", help="What happened (with --bug).")
@click.option("--expected", metavar="TEXT", help="What you expected (with --bug).")
def change_new(
    words: str | None,
    source: str | None,
    title: str | None,
    bug: bool,
    happened: str | None,
    expected: str | None,
) -> None:
    """Start a change from the person's WORDS (or an issue's, with --from); prints its id."""
    from sdd_git.records import changes

    if source is not None:
        if words is not None or bug or happened or expected:
            raise click.UsageError("--from takes the issue's words: give no WORDS and no --bug")
        from sdd_git.connectors.seed import start_change_from
        from sdd_git.connectors.tokens import masker_for

        root = current_root()
        pack = start_change_from(root, source, masker_for(root.path), title=title)
        say(f"{pack.id} started from {pack.source}, with its title and text as the words")
    else:
        if words is None:
            raise click.UsageError('say what you need: sdd change new "WORDS" (or --from ISSUE)')
        pack = changes.create(
            current_root(), words, title=title, bug=bug, happened=happened, expected=expected
        )
    say(
        f"{pack.id} started with spec {pack.spec} (memory/specs/{pack.spec}.md); stage {pack.stage}"
    )
    click.echo(pack.id)


@change.command("list")
@json_option
def change_list(as_json: bool) -> None:
    """List the change packs."""
    from sdd_git.records import changes

    packs = changes.list_all(current_root())
    empty = 'no change packs yet; start one with sdd change new "WORDS"'
    if shown_in_full(packs, as_json, lambda p: p.as_dict(), empty):
        return
    table([(p.id, p.stage, p.kind, p.title) for p in packs], ("ID", "STAGE", "KIND", "TITLE"))


@change.command("show")
@click.argument("change_id", metavar="CH", shell_complete=change_ids)
@json_option
def change_show(change_id: str, as_json: bool) -> None:
    """Show a change: words, spec sections, scenarios, results and decisions."""
    from sdd_git.records.view import describe_change

    view = describe_change(current_root(), change_id)
    if as_json:
        emit_json(view)
        return
    _render(view)


def _render(view: dict[str, Any]) -> None:
    echo = click.echo
    echo(f"{view['id']}  {view['kind']}  stage: {view['stage']}")
    echo(f"title: {view['title']}")
    echo(f"words: {view['words']}")
    if view["kind"] == "bug":
        echo(f"happened: {view['happened']}")
        echo(f"expected: {view['expected']}")
    echo(f"spec: {view['spec']} ({view['spec_file']})")
    for section in view["sections"]:
        by = f" by {section['accepted_by']}" if section["accepted_by"] else ""
        echo(f"  {section['id']} {section['title']}: {section['state']}{by}")
        # The sha256 `sdd accept ... --hash` takes: she accepts the text she read, or nothing.
        echo(f"    sha256: {section['hash']}")
        for line in section["text"].splitlines():
            echo(f"      {line}")
    if view["scenarios"]:
        echo("scenarios:")
    for row in view["scenarios"]:
        _render_scenario(row)
    proposal = view["proposal"]
    if proposal is not None:
        echo("a role proposed another reading (your words stay the reading until you choose):")
        echo(f"    sha256: {proposal['hash']}")
        for line in proposal["text"].splitlines():
            echo(f"      {line}")
        echo(f"    take it: sdd correct reading {view['id']} --proposal --hash {proposal['hash']}")
    plan = view["plan"]
    if plan is not None:
        state = f"accepted by {plan['accepted_by']}" if plan["accepted_by"] else "not accepted"
        echo(f"plan: {plan['file']}: {state}")
        echo(f"    sha256: {plan['hash']}")
    if view["decisions"]:
        echo("decisions:")
    for entry in view["decisions"]:
        replaced = f" (replaced by {entry['replaced_by']})" if entry["replaced_by"] else ""
        subject = entry.get("section") or entry.get("scenario") or entry.get("release") or ""
        echo(f'  {entry["id"]} {entry["kind"]} {subject}{replaced}: "{entry["words"]}"')


def _render_scenario(row: dict[str, Any]) -> None:
    echo = click.echo
    if row["accepted_by"]:
        kind = "required" if row["required"] else "optional"
        state = f"accepted ({kind}) by {row['accepted_by']}"
        if row["changed_since_accepted"]:
            state += ", changed since"
    else:
        state = "draft"
    result = row["result"]
    outcome = f'{result["result"]}: "{result["words"]}"' if result else "no result yet"
    if row["failure_accepted_by"]:
        outcome += f" (failure accepted by {row['failure_accepted_by']})"
    echo(f"  {row['id']} {row['title']}: {state}; {outcome}")
    echo(f"    sha256: {row['hash']}")
    for key in ("steps", "expected"):  # with the title, what that sha256 covers
        first, *more = str(row[key]).splitlines() or [""]
        echo(f"      {key}: {first}")
        for line in more:
            echo(f"        {line}")


@click.group()
def scenario() -> None:
    """Write scenarios by hand (roles draft them too)."""


@scenario.command("add")
@click.argument("change_id", metavar="CH", shell_complete=change_ids)
@click.option("--title", required=True)
@click.option("--steps", required=True)
@click.option("--expected", required=True)
@click.option("--optional", is_flag=True, help="Propose it as optional rather than required.")
def scenario_add(change_id: str, title: str, steps: str, expected: str, optional: bool) -> None:
    """Add a draft scenario to CH; prints its reference CH/SC-n."""
    from sdd_git.records.acceptance import add_scenario

    added = add_scenario(current_root(), change_id, title, steps, expected, optional)
    say(
        f"added draft scenario {added.id}; accept it with "
        f"sdd accept scenario {change_id}/{added.id}"
    )
    click.echo(f"{change_id}/{added.id}")
