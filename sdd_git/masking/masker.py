"""The masker: hides every form of every secret in a text (run logs, conversations, transcripts,
messages to a model, provider errors, stderr all go through it).

It lives in the foundation because every layer masks: a provider masks its own errors before they
leave it, the runner its logs, the CLI stderr. `sdd_git.masking.reach` holds where the secrets
come from (`collect_secrets`). It is plain standard-library code.

What it hides: each secret's exact value, each line of a multi-line value, and the forms a value
commonly travels in: base64 (standard and URL-safe, padded or not, at the three byte offsets it
can have inside a longer stream), URL-encoded, JSON-escaped, hex and reversed. It looks for them
with whitespace and `\\n` escapes taken out of the text, so a value split across lines or words
(wrapped base64, `echo ${KEY:0:9} ${KEY:9}`) is found too. A secret that is not a path, URL, host
or e-mail address is also hidden when only 12 or more of its characters appear together (a server
echoing half a key). And whatever it was given, it hides every credential whose shape says what it
is (a JWT, a GitHub, GitLab or Slack token, an AWS access key id, a private key block), from any
variable, file or answer: a name like `CI_JOB_JWT` says nothing about its value.

Finding dozens of forms in a long text with one big regular expression is slow in Python (every
position tries every alternative, and compiling it takes ~100 ms), so the masker samples the text
instead: any form of 8 or more characters contains a 4-character window starting at a multiple of
4, so one set lookup per 4 characters says whether anything may be there, and only those places
are compared in full.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import json
import re
import sys
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote

MASK = "[secret]"

# Shorter values (whitespace not counted) are never used as masks: a 4- to 7-character value
# ("admin", "dev", "1234", "secret1") also occurs in ordinary text, so masking it would hide words
# and numbers all over the logs and make them useless, while hiding very little (such a value is
# guessed, not leaked).
MIN_LENGTH = 8
# A secret (see _fragmentable) is also hidden when this many of its characters, of any form of it,
# appear together: a partial echo ("invalid key sk-live-Zq8RmYx4...") is a leak too. Below 12 a
# piece of one value would too often be a piece of ordinary text.
FRAGMENT_LENGTH = 12

# scheme://user:password@host: the password ends at the last '@' before the host's '/'.
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^\s:/?#@]*):([^\s/?#]*)@")


def url_credentials(value: str) -> list[str]:
    """The secret parts of every URL in `value` with a password: the password as written and
    decoded, and `user:password` (what HTTP Basic authentication base64-encodes)."""
    found: list[str] = []
    for match in _URL_CREDENTIALS.finditer(value):
        user, password = match.group(1), match.group(2)
        if not password:
            continue
        for pw, who in ((password, user), (unquote(password), unquote(user))):
            found.append(pw)
            if who:
                found.append(f"{who}:{pw}")
    return found


# -- what looks like a credential -------------------------------------------------------------

_WORDS = re.compile(r"[A-Za-z]+(?:[._-](?:[A-Za-z]+|[0-9]+))*")  # production, us-east-1, my.app
_NUMBER = re.compile(r"[+-]?[0-9][0-9.,:_/+-]*")  # 8080, 3.14, 2024-01-01, 12:30:00
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w./-]*")  # /usr/local/bin, ./data, ~/logs
_HOST_PORT = re.compile(r"[A-Za-z0-9.-]+:[0-9]+")
_EMAIL = re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^\s]*)")
_BOOLS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})


def looks_like_credential(value: str) -> bool:
    """Whether a value whose name says nothing is still a secret: 8 or more characters, no
    whitespace, and not a plain word, number, date, path, host, e-mail or plain URL. A URL counts
    when a part of it looks like a credential (a webhook URL carries its token in the path)."""
    value = value.strip()
    if len(value) < MIN_LENGTH or any(c.isspace() for c in value):
        return False
    if value.lower() in _BOOLS:
        return False
    for plain in (_WORDS, _NUMBER, _PATH, _HOST_PORT, _EMAIL):
        if plain.fullmatch(value):
            return False
    url = _URL.fullmatch(value)
    if url is not None:
        if url_credentials(value):
            return True
        return any(looks_like_credential(part) for part in re.split(r"[/?&=#:;,]", url.group(1)))
    return True


def _fragmentable(value: str) -> bool:
    """Whether pieces of a secret are hidden too: not for a path, a plain URL, a host or an
    e-mail address, whose pieces (`/home/alice/`, `example.com`) are everywhere in ordinary text.
    Words and numbers are fine: a 12-character piece of `sk-test-SECRET-1234` is still the key."""
    if any(c.isspace() for c in value):
        return False
    if _URL.fullmatch(value):
        return looks_like_credential(value)
    return not any(plain.fullmatch(value) for plain in (_PATH, _HOST_PORT, _EMAIL))


# -- what a credential looks like, whoever holds it -------------------------------------------

# Tokens whose shape says what they are, masked wherever they appear, from any variable, file or
# answer: a CI engine's JWT under a plain name (`CI_JOB_JWT`) is still a JWT. Each shape is tight
# (its own prefix, a length, whole words only), so that prose and code keep their words.
_B64URL = r"[A-Za-z0-9_-]"
# A key block's body: base64 and its header lines, also with its line ends written as JSON
# escapes (a run log line, a service account file); a block cut short is masked to where it ends.
_KEY_BODY = r"(?:[A-Za-z0-9+/=:,.\s-]|\\+[nrt])"
_KEY_LINE = r"-----{0} [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_KEY_BLOCK = _KEY_LINE.format("BEGIN") + rf"(?:{_KEY_BODY}*?{_KEY_LINE.format('END')}|{_KEY_BODY}*)"
_SHAPES = re.compile(
    "|".join(
        (
            rf"(?<!{_B64URL})eyJ{_B64URL}{{8,}}\.ey{_B64URL}{{8,}}\.{_B64URL}*",  # a JWT
            r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])",  # GitHub
            r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{30,}",
            rf"(?<!{_B64URL})glpat-{_B64URL}{{20,}}(?:\.{_B64URL}+)*",  # GitLab
            r"(?<![A-Za-z0-9_-])xox[abprs]-[A-Za-z0-9-]{10,}",  # Slack
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",  # an AWS access key id
            _KEY_BLOCK,
        )
    )
)
# Each shape holds one of these as written. Looking for them first (`in`: 0.3 ms for 50 KB of
# text) spares the usual text, where none is, the expression's walk (6 ms).
_SHAPE_MARKS = (
    *("ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"),
    *("eyJ", "glpat-", "xox", "AKIA", "ASIA", "-----BEGIN "),
)


def secret_shapes(text: str) -> list[tuple[int, int]]:
    """Where in `text` a credential is recognised by its shape alone (see _SHAPES)."""
    if not any(mark in text for mark in _SHAPE_MARKS):
        return []
    return [match.span() for match in _SHAPES.finditer(text)]


def has_secret_shape(value: str) -> bool:
    """Whether `value` holds a credential by its shape (a variable's value: its name may say
    nothing)."""
    return bool(secret_shapes(value))


# -- the masker -------------------------------------------------------------------------------

# Taken out of the text before looking (and out of every form): whitespace, and the \n, \r and \t
# escapes a JSON or log line carries instead, so a value wrapped at 64 or 76 columns (PEM, MIME) or
# split over words is found whole. An escape whose backslash is itself escaped (`\\n` is a
# backslash and an n) is not one: other pairs are matched only to be kept whole.
_ESCAPED_GAP = re.compile(r"\\[nrt]|(\\.)", re.DOTALL)
_PAIR_STANDIN = "\ue000"  # a private-use character, stands for an escaped backslash
_NON_SPACE = re.compile(r"\S+")  # the pieces str.split() keeps (both use str.isspace)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
# Characters per sampled window: 4 UTF-16 code units fill one 64-bit integer, read in the
# machine's byte order (as memoryview.cast reads them).
_GRAM = 4
_PERCENT = re.compile(r"%[0-9A-F]{2}")
_URLSAFE = str.maketrans("+/", "-_")


class Masker:
    """Replaces every form of every secret, and every credential recognised by its shape, in a
    text with MASK. Built once per run (building costs a few milliseconds for twenty secrets);
    calling it costs about a millisecond and a half for 50 KB of text without secrets, a few
    with."""

    def __init__(self, secrets: Iterable[str]) -> None:
        fragmentable: dict[str, bool] = {}
        for secret in secrets:
            if not secret or len(secret) < MIN_LENGTH:
                continue
            for part in dict.fromkeys([secret, secret.strip(), *secret.splitlines()]):
                if len(part.strip()) < MIN_LENGTH:
                    continue
                partial = _fragmentable(part)
                for form in _forms(part):
                    flat = _flatten(form)
                    if len(flat) >= MIN_LENGTH:
                        fragmentable[flat] = fragmentable.get(flat, False) or partial
        # Longest first, so that of two forms found at one place the whole one is reported first
        # (overlapping finds are merged into one mask anyway).
        self._forms = sorted(fragmentable, key=len, reverse=True)
        self._fragmentable = [fragmentable[f] for f in self._forms]
        self._index: dict[int, list[tuple[int, int]]] = {}
        for number, form in enumerate(self._forms):
            for offset, key in enumerate(_windows(form)):
                self._index.setdefault(key, []).append((number, offset))

    def __call__(self, text: str) -> str:
        if len(text) < MIN_LENGTH:
            return text
        shaped = secret_shapes(text)
        if not self._forms:
            return _replace(text, shaped) if shaped else text
        flat = _flatten(text)
        spans = self._find(flat)
        if not spans and not shaped:
            return text
        if spans and len(flat) != len(text):
            ends = [end - 1 for _, end in spans]
            mapped = _text_positions(text, [start for start, _ in spans] + ends)
            spans = [(s, e + 1) for s, e in zip(mapped, mapped[len(spans) :], strict=False)]
        return _replace(text, spans + shaped)

    def _find(self, flat: str) -> list[tuple[int, int]]:
        """The spans of `flat` that hold a form (or a long enough piece of a credential's form)."""
        key_text = _ASTRAL.sub("\ufffd", flat) if not flat.isascii() else flat
        data = key_text.encode("utf-16-le", "surrogatepass")
        windows = memoryview(data)[: len(data) // 8 * 8].cast("Q")
        if self._index.keys().isdisjoint(windows):  # the usual case: nothing to look at
            return []
        spans: set[tuple[int, int]] = set()
        # How far the text was already compared for one form at one alignment: later windows of
        # the same occurrence are not compared again.
        reach: dict[tuple[int, int], int] = {}
        for where in _sampled_places(key_text, self._index.keys() & set(windows)):
            for form_number, offset in self._index[_window_key(key_text, where)]:
                form = self._forms[form_number]
                start = where - offset
                if reach.get((form_number, start), -1) >= where + _GRAM:
                    continue
                if start >= 0 and flat.startswith(form, start):
                    spans.add((start, start + len(form)))
                    reach[form_number, start] = start + len(form)
                elif self._fragmentable[form_number]:
                    piece = _common_run(flat, where, form, offset)
                    if piece is not None and piece[1] - piece[0] >= FRAGMENT_LENGTH:
                        spans.add(piece)
                    reach[form_number, start] = piece[1] if piece else where + _GRAM
        return sorted(spans)


def _flatten(text: str) -> str:
    flat = "".join(text.split())
    if "\\" not in flat:
        return flat
    if _PAIR_STANDIN in flat:
        return _ESCAPED_GAP.sub(r"\1", flat)
    # The same as the line above, three times faster on JSON text: set escaped backslashes aside,
    # drop the escapes that are left, put the backslashes back.
    flat = flat.replace("\\\\", _PAIR_STANDIN)
    for escape in ("\\n", "\\r", "\\t"):
        flat = flat.replace(escape, "")
    return flat.replace(_PAIR_STANDIN, "\\\\")


def _text_positions(text: str, positions: list[int]) -> list[int]:
    """Where characters of `_flatten(text)` are in `text`: the same two steps, undone."""
    pieces = text.split()
    joined = "".join(pieces)
    if "\\" in joined:
        removed = [m.start() for m in _ESCAPED_GAP.finditer(joined) if m.group(1) is None]
        kept_before = [at - 2 * n for n, at in enumerate(removed)]  # each escape is 2 characters
        positions = [p + 2 * bisect.bisect_right(kept_before, p) for p in positions]
    starts = [match.start() for match in _NON_SPACE.finditer(text)]
    ends = list(itertools.accumulate(map(len, pieces), initial=0))
    result = []
    for p in positions:
        piece = bisect.bisect_right(ends, p) - 1
        result.append(starts[piece] + p - ends[piece])
    return result


def _sampled_places(key_text: str, keys: set[int]) -> list[int]:
    """The sampled positions (multiples of 4) whose window is one of `keys`, in order."""
    places: set[int] = set()
    for key in keys:
        window = key.to_bytes(8, sys.byteorder).decode("utf-16-le", "surrogatepass")
        found = key_text.find(window)
        while found >= 0:
            if found % _GRAM == 0:
                places.add(found)
            found = key_text.find(window, found + 1)
    return sorted(places)


def _window_key(key_text: str, where: int) -> int:
    return int.from_bytes(
        key_text[where : where + _GRAM].encode("utf-16-le", "surrogatepass"), sys.byteorder
    )


def _windows(text: str) -> list[int]:
    """The 4-character window at each position of `text`, as the integers `_find` compares."""
    key_text = _ASTRAL.sub("\ufffd", text)  # keeps one code unit per character
    data = key_text.encode("utf-16-le", "surrogatepass")
    return [
        int.from_bytes(data[2 * i : 2 * i + 2 * _GRAM], sys.byteorder)
        for i in range(len(text) - _GRAM + 1)
    ]


def _common_run(flat: str, where: int, form: str, offset: int) -> tuple[int, int] | None:
    """The longest stretch around `flat[where]` that equals `form` around `form[offset]`."""
    if flat[where : where + _GRAM] != form[offset : offset + _GRAM]:
        return None  # two different windows with the same key (an astral character)
    left = 0
    while left < min(where, offset) and flat[where - left - 1] == form[offset - left - 1]:
        left += 1
    right = _GRAM
    limit = min(len(flat) - where, len(form) - offset)
    while right < limit and flat[where + right] == form[offset + right]:
        right += 1
    return where - left, where + right


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    merged: list[list[int]] = []
    for start, end in sorted(_whole_escapes(text, s, e) for s, e in spans):
        if start == end:
            continue
        if merged and start <= merged[-1][1]:  # overlapping or touching: one mask for both
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[str] = []
    done = 0
    for start, end in merged:
        out += (text[done:start], MASK)
        done = end
    out.append(text[done:])
    return "".join(out)


def _whole_escapes(text: str, start: int, end: int) -> tuple[int, int]:
    """Fits a span to JSON text, since masked JSON must stay JSON: it gives up a bare `"` at either
    end (a string's own quote, never part of a value written inside one) and neither starts nor
    ends inside a backslash escape (`\\"`, `\\\\` and `\\u00e9` stay whole or go whole)."""
    while start < end and text[start] == '"' and not _escaping(text, start - 1):
        start += 1
    while end > start and text[end - 1] == '"' and not _escaping(text, end - 2):
        end -= 1
    if start == end:
        return start, end
    head = _escape_around(text, start)
    if head is not None:
        start = head
    elif _escaping(text, start - 1):
        start -= 1
    head = _escape_around(text, end - 1)
    if head is not None:
        end = max(end, min(len(text), head + 6))
    elif _escaping(text, end - 1):
        end = min(len(text), end + 1)
    return start, end


def _escape_around(text: str, index: int) -> int | None:
    """Where the \\uXXXX escape that `index` falls in starts, if it falls in one."""
    for head in range(max(0, index - 5), index + 1):
        if text.startswith("\\u", head) and _escaping(text, head) and index < head + 6:
            return head
    return None


def _escaping(text: str, index: int) -> bool:
    """Whether the backslash at `index` starts an escape (an odd run of backslashes ends there)."""
    if index < 0 or index >= len(text) or text[index] != "\\":
        return False
    run = 0
    while index - run >= 0 and text[index - run] == "\\":
        run += 1
    return run % 2 == 1


def _forms(secret: str) -> set[str]:
    """The ways `secret` is commonly written out, each also as it reads inside a JSON string (a
    run log line is JSON: a reversed secret with a quote in it is logged escaped)."""
    forms = {secret, secret[::-1]}
    for encoded in _url_forms(secret):
        forms.update((encoded, _PERCENT.sub(lambda m: m.group(0).lower(), encoded)))
    raw = _utf8(secret)
    if raw is not None:
        forms.update((raw.hex(), raw.hex().upper()))
        whole = base64.b64encode(raw).decode()
        for encoded in (whole, whole.translate(_URLSAFE)):
            forms.update((encoded, encoded.rstrip("=")))
        for inner in _base64_inner(raw):
            forms.update((inner, inner.translate(_URLSAFE)))
    for form in list(forms):
        for ensure_ascii in (True, False):
            escaped = json.dumps(form, ensure_ascii=ensure_ascii)[1:-1]
            forms.update((escaped, escaped.replace("/", "\\/")))
    return forms


def _url_forms(secret: str) -> set[str]:
    forms: set[str] = set()
    # Every character, path-style (keeps /), and JavaScript's encodeURIComponent.
    for safe in ("", "/", "!'()*~"):
        forms.add(quote(secret, safe=safe, errors="surrogatepass"))
        forms.add(quote_plus(secret, safe=safe, errors="surrogatepass"))
    return forms


def _base64_inner(raw: bytes) -> list[str]:
    """The characters base64 gives `raw` wherever it sits in a longer stream: for each of the
    three offsets mod 3 it can start at, the characters that depend on its bytes alone (the first
    one or two may mix in the byte before, the last ones the byte after)."""
    inner: list[str] = []
    for offset in (0, 1, 2):
        encoded = binascii.b2a_base64(b"\0" * offset + raw, newline=False).decode()
        first = -(-4 * offset // 3)  # characters touched by the unknown leading bytes
        last = 4 * (offset + len(raw)) // 3  # characters wholly made of known bytes
        inner.append(encoded[first:last])
    return inner


def _utf8(text: str) -> bytes | None:
    for errors in ("strict", "surrogateescape", "surrogatepass"):
        try:
            return text.encode("utf-8", errors)
        except UnicodeError:
            continue
    return None
