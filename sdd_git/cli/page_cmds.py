"""`sdd page`: her page in the browser, served on 127.0.0.1 (the [page] extra)."""

from __future__ import annotations

from pathlib import Path

import click

from sdd_git.cli.output import say


@click.command("page")
@click.option(
    "--folder",
    type=click.Path(file_okay=True),
    help="Start with the folder chooser, at DIR: a new product, or code you already have.",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), help="Listen on this port (default: a free one)."
)
@click.option("--no-browser", is_flag=True, help="Print the URL; do not open a browser.")
@click.option(
    "--install-shortcut",
    is_flag=True,
    help="Write a launcher that opens this product's page (Linux: in your applications menu;"
    " macOS: in ~/Applications), and print where.",
)
# What the shortcut runs: her page, or a fresh sign-in to the one served already.
@click.option("--shortcut", is_flag=True, hidden=True)
def page(
    folder: str | None, port: int | None, no_browser: bool, install_shortcut: bool, shortcut: bool
) -> None:
    """Open her page in the browser, for this sdd root (or the folder chooser with --folder)."""
    from sdd_git.errors import UsageError
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    from sdd_git.page import missing_extra

    missing = missing_extra()
    if missing:
        raise UsageError(
            f"the page needs the [page] extra ({', '.join(missing)} not installed):"
            " pip install 'sdd-git[page]'"
        )
    if install_shortcut:
        from sdd_git.cli.output import current_root
        from sdd_git.page.shortcut import install

        written = install(current_root())
        say("your page's shortcut is written: open it from your applications")
        click.echo(written)
        return
    from sdd_git.page.serve import Served, serve

    root = None
    start = None
    if folder is not None:
        start = Path(folder).expanduser().resolve()
    else:
        from sdd_git.cli.output import current_root

        root = current_root()
        if shortcut:
            from sdd_git.page.reopen import ask_served_page

            if ask_served_page(root):
                say("your page is served already: it opens again in your browser")
                return

    openers: list[Path] = []

    def open_browser(url: str) -> None:
        import webbrowser

        from sdd_git.page.serve import opener_file

        openers.append(opener_file(url))
        webbrowser.open(openers[-1].as_uri())

    def announce(served: Served) -> None:
        from sdd_git.page.serve import OWNER_CHECKED, RANDOM_ADDRESS

        if served.wall == OWNER_CHECKED:
            say(
                f"your page is served on {served.host} only, and answers your own programs"
                " alone; Ctrl-C stops it"
            )
        elif served.wall == RANDOM_ADDRESS:
            say(
                f"your page is served on {served.host} only, a random loopback address (this"
                " system does not say who owns a connection); Ctrl-C stops it"
            )
        else:
            say(
                f"your page is served on {served.host} only; this system neither says who owns a"
                " connection nor serves on another loopback address, so another user of this"
                " computer who has your cookie could use it; Ctrl-C stops it"
            )
        click.echo(served.url)
        if not no_browser:
            open_browser(served.url)

    try:
        serve(root, port, start, announce, reopen=open_browser)
    finally:
        import shutil

        for opener in openers:
            shutil.rmtree(opener.parent, ignore_errors=True)
