"""Read a form off a page as her browser would send it: the hidden fields of the form that holds
a given button (an accept form carries the sha256 of the text it showed, so a test posts what the
page showed rather than what it guesses)."""

from __future__ import annotations

from html.parser import HTMLParser


class _Forms(HTMLParser):
    def __init__(self, button_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.button_id = button_id
        self.current: dict[str, str] | None = None
        self.found: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {key: value or "" for key, value in attrs}
        if tag == "form":
            self.current = {}
        elif self.current is not None and tag == "input" and named.get("type") == "hidden":
            self.current[named.get("name", "")] = named.get("value", "")
        elif self.current is not None and named.get("id") == self.button_id:
            self.found = self.current

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.current = None


def form_fields(html: str, button_id: str) -> dict[str, str]:
    """The hidden fields of the form holding the button `button_id` (an AssertionError with the
    page when there is no such button: the test would otherwise post a guess)."""
    parser = _Forms(button_id)
    parser.feed(html)
    assert parser.found is not None, f"no form with #{button_id} on the page:\n{html[:3000]}"
    return dict(parser.found)
