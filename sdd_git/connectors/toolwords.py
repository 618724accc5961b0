"""A tool's own name and words, as a server lists them (an MCP tool), and what they make hers.

The rules are broad on purpose, not a list of verb and object pairs: a server's author picks
the words, and a false refusal costs her one line of config while a release made by a role
cannot be taken back. A tool is hers when its name or its description mentions, in any
inflection or case:

- a release at all ("Releases page", `gh_rel_new`), shipping, or publishing, cutting or bumping
  a version or a tag ("Publish v2.0.0", "make the tag public");
- QA, or a scenario or test case with a result (pass, fail, outcome, verdict, mark, record,
  status);
- accepting or approving (accept, approve, ratify, sign off, endorse, confirm) a reading, spec,
  section, plan, scenario, decision, change or pull request;
- moving a stage (a stage, step, phase, status or column moved, advanced, set, transitioned or
  promoted), or a change moved to one of sdd's stages.

Text is read in two forms, and a rule matching either counts: lower-cased whole words
(`ReLease` is "release"), and camelCase split first (`releaseCreate` is "release create")."""

from __future__ import annotations

import re
import unicodedata

from sdd_git.records.changes import STAGES

_STAGES = "|".join(STAGES)
_READS = (
    r"\b(get|gets|list|lists|read|reads|search|show|view|fetch|find|describe|query|lookup|look|"
    r"count|browse|inspect|diff|compare|download|latest|info|status)\b"
)
_MOVES = r"\b(mov(e|es|ed|ing)|advanc\w*|set|sets|setting|transition\w*|promot\w*)\b"
_STAGE_VERBS = (
    r"\b(set|sets|mov\w*|next|advanc\w*|chang\w*|updat\w*|transition\w*|complet\w*|promot\w*|"
    r"go|goto|bump\w*|push\w*|mark\w*)\b"
)
_RECORDS = (
    r"\b(record\w*|submit\w*|set|sets|mark\w*|log|logs|logged|writ\w*|post\w*|sav\w*|stor\w*|"
    r"enter\w*|report\w*|upload\w*|updat\w*|add|adds|added|creat\w*)\b"
)

# Each rule: the patterns that must all be found in one text, and what the tool then does.
_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    ((r"releas|\b(rel|rels|rls|rlse|rlses|relnotes)\b",), "makes or changes a release"),
    ((r"\b(publish\w*|pub|public|publicly|cut|cuts|cutting|bump\w*|mint\w*)\b",
      r"\b(versions?|versioned|v\d+|\d+ \d+|semver|tag|tags|tagged|tagging)\b"),
     "makes or changes a release"),
    ((r"\bqa(\b|result|pass|fail|status|verdict|record|sign|ok)|quality assurance",),
     "records a QA result"),
    ((r"scenario|\btest ?cases?\b",
      r"\b(pass|passes|passing|passed|fail|fails|failed|failing|failures?|results?|outcomes?|"
      r"verdicts?|mark\w*|record\w*|status\w*)\b"),
     "records a QA result"),
    ((r"\b(tests? results?|verdicts?)\b", _RECORDS), "records a QA result"),
    ((r"\b(accept\w*|approv\w*|ratif\w*|sign(s|ed|ing)? ?off|signoff\w*|endors\w*|confirm\w*|"
      r"lgtm)\b",
      r"\b(readings?|specs?|specifications?|sections?|plans?|scenarios?|decisions?|changes?|"
      r"pull ?requests?|prs?|merge ?requests?|mrs?|proposals?|requirements?|drafts?)\b"),
     "accepts or approves"),
    ((r"\b(mark\w*|set|sets|flag\w*)\b",
      r"\b(approved|accepted|done|complete|completed|passed|verified|released|shipped|"
      r"signed off)\b"),
     "accepts or approves"),
    ((r"\b(stages?|steps?|phases?|status\w*|columns?)\b", _MOVES), "moves a stage"),
    ((r"\b(stages?|phases?)\b", _STAGE_VERBS), "moves a stage"),
    ((r"\bchanges?\b", rf"{_MOVES}|\b(put|puts|send\w*|push\w*|bring\w*|tak\w*)\b",
      rf"\b({_STAGES})\w*|\bverif\w*"),
     "moves a stage"),
    ((r"\bnext (stage|phase|step)\b",), "moves a stage"),
    ((r"\b(complet\w*|finish\w*)\b", r"\b(changes?|stages?|phases?)\b"), "moves a stage"),
)  # fmt: skip
# A name is short and says what the tool does: these words in it are enough.
_NAME_RULES: tuple[tuple[str, str | None, str], ...] = (
    # (the words, unless these words are there too, what it does)
    (r"\b(accept\w*|approv\w*|ratif\w*|signoff|sign off|lgtm)\b", None, "accepts or approves"),
    (r"\bnext\b.*\b(step|change|state|status)\b|^next$|\badvanc\w*", None, "moves a stage"),
    (r"\bcomplete[sd]?\b", _READS, "moves a stage"),
)
# Checked against the server's listing only (a name read alone, by every connector's rules,
# leaves it to the listing, where the description is read first).
_SHIPS = re.compile(r"\bship(s|ped|ping|it)?\b")
_COMPILED = tuple((tuple(re.compile(p) for p in ps), what) for ps, what in _RULES)
_NAME_COMPILED = tuple(
    (re.compile(p), re.compile(u) if u else None, what) for p, u, what in _NAME_RULES
)
# Every rule of sdd's connectors reads text as `folded` gives it: compatibility forms folded
# (fullwidth letters), invisible format characters dropped, letters of other scripts that look
# Latin made Latin, lower case, and the dots of an abbreviation dropped (Q.A. is QA). A model
# cannot pass "Accepted" with a Cyrillic A, or "create_release" in fullwidth letters, past them.
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁԛӏкмнтвԝАВЕКМНОРСТХІЈЅαεορτυνκιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqlkmhtbwabekmhopctxijsaeoptuvkiabezhikmnoptyx",
)
_ABBREVIATION = re.compile(r"\b([a-z])\.(?=[a-z]\b)")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _lowered(text: str) -> str:
    return _ABBREVIATION.sub(r"\1", text.translate(_LOOK_ALIKES).casefold())


def folded(text: str) -> str:
    """`text` as the rules read it (see _LOOK_ALIKES)."""
    return _lowered(_normal(text))


def word_forms(text: str) -> tuple[str, ...]:
    """`text` as the tool rules read it: folded lower-case words, whole and with camelCase
    split (`ReLease` is "release" whole and "re lease" split; a rule matching either counts)."""
    plain = _normal(text)
    forms: list[str] = []
    for form in (plain, re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", plain)):
        words = " ".join(w for w in re.split(r"[^a-z0-9]+", _lowered(form)) if w)
        if words not in forms:
            forms.append(words)
    return tuple(forms)


def _says(text: str, listed: bool = True) -> str | None:
    for form in word_forms(text):
        if listed and _SHIPS.search(form):
            return "makes or changes a release"
        for patterns, what in _COMPILED:
            if all(p.search(form) for p in patterns):
                return what
    return None


def name_says(name: str, listed: bool = False) -> str | None:
    """What an operation's name says it does that is hers, or None; `listed`: the name of a
    tool as a server lists it."""
    for form in word_forms(name):
        for rule, unless, what in _NAME_COMPILED:
            if rule.search(form) and not (unless is not None and unless.search(form)):
                return what
    return _says(name, listed)


def hers_by_words(name: str, description: str) -> str | None:
    """Why a listed tool is hers by its own description or name, or None."""
    said = _says(description)
    if said is not None:
        return f"'{name}' {said}, as its own description says: the person's, by any route"
    said = name_says(name, listed=True)
    if said is not None:
        return f"'{name}' {said}, as its name says: the person's, by any route"
    return None
