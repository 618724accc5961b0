"""A role's reading beside her own correction: once she has corrected a reading, her words stay
the reading, and a role's later draft is kept in `changes/CH/reading-proposal.md` until she takes
it (`sdd correct reading CH --proposal`) or corrects the reading again."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import UsageError
from sdd_git.records import changes
from sdd_git.records.acceptance import READING_SECTION, same_as_read, spec_of
from sdd_git.records.changes import ChangePack
from sdd_git.records.spec import Spec, parse_spec, read_spec, with_section_body
from sdd_git.root import Root
from sdd_git.sink import person_write

PROPOSAL_FILE = "reading-proposal.md"
_LIMIT = 1 << 20


def proposal_path(pack: ChangePack) -> Path:
    return pack.folder / PROPOSAL_FILE


def read_proposal(pack: ChangePack) -> str | None:
    """The proposed reading's text, or None. A link or anything but a regular file is no
    proposal: it is read only as a file of the change."""
    path = proposal_path(pack)
    if path.is_symlink() or not path.is_file():
        return None
    with path.open("rb") as handle:
        return handle.read(_LIMIT).decode("utf-8", "replace")


def proposal_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def take_proposal(root: Root, change_id: str, shown: str | None = None) -> Spec:
    """She takes the role's proposed reading: it becomes the reading (still unaccepted), and the
    reading is no longer hers until she corrects it again. `shown`, the sha256 of the proposal
    she read, refuses one that changed since."""
    with person_write(root):
        pack = changes.load(root, change_id)
        text = read_proposal(pack)
        if text is None:
            raise UsageError(
                f"no role has proposed another reading of {change_id}",
                hint=f"see the reading with `sdd change show {change_id}`",
            )
        same_as_read(
            f"the proposed reading of {change_id}",
            shown,
            proposal_hash(text),
            f"with sdd change show {change_id}",
        )
        spec = spec_of(root, pack)
        new_text = with_section_body(spec, READING_SECTION, text.strip())
        parse_spec(spec.path, new_text)  # never write a spec that would not read back
        write_text_atomic(spec.path, new_text)
        changes.set_corrected(pack, False)
        proposal_path(pack).unlink(missing_ok=True)
        return read_spec(spec.path)
