"""What waits for her: a file whose grant surface her ledger does not hold, said in words.

`WaitsForHer` is what every path that would act on such a file raises before anything runs: a
run, a routine, a provider's key, a connector's token, an MCP server's command. In her terminal
the CLI asks her about it first; elsewhere the event or the run waits (exit 3, `sdd trust
review`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError, SddError
from sdd_git.root import Root
from sdd_git.trust import ledger as trust_ledger
from sdd_git.trust.ledger import Ledger
from sdd_git.trust.words import mapping_changes, visible

CONFIG_KEY = ".sdd/config.yaml"
PRODUCT_KEY = "memory/product.yaml"
REVIEW_HINT = "see what changed with `sdd trust review`, and confirm it with `sdd trust accept`"


@dataclass(frozen=True)
class Unconfirmed:
    key: str  # the ledger's key: the file's path in the product (or a pack's, an entry point)
    kind: str  # settings, role, routine, skill, product or decision
    name: str  # as she reads it: "the settings", "role helper", "routine helper/nightly"
    changes: tuple[str, ...]  # what it grants that she has not confirmed, each in words
    surface: Any = field(compare=False, default=None)  # what she confirms when she says yes
    path: Path | None = None

    def words(self) -> str:
        said = "; ".join(self.changes) if self.changes else "it changed since you confirmed it"
        return visible(f"{self.name}: {said}")

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.key,
            "kind": self.kind,
            "name": self.name,
            "changes": list(self.changes),
        }


class WaitsForHer(SddError):
    """Something would act on a grant she has not confirmed: nothing ran."""

    exit_code = 3

    def __init__(self, items: Iterable[Unconfirmed], doing: str = "this") -> None:
        self.items = tuple(items)
        lines = "\n".join(f"  - {item.words()}" for item in self.items)
        super().__init__(
            f"{doing} waits for you: what follows arrived or changed without your confirmation, "
            f"and nothing of it counts until you confirm it\n{lines}",
            hint=REVIEW_HINT,
        )


def ledger_for(root: Root) -> Ledger | None:
    """Her ledger, or None on a CI engine (the engine is the trust anchor there)."""
    return None if trust_ledger.on_ci_engine() else trust_ledger.read(root)


def yaml_surface(path: Path, within: Path | None) -> Any:
    """A settings file's grant surface: all of it, as parsed (comments grant nothing). None
    when the file is missing. `within`: the product holding it (None for her own layers)."""
    from sdd_git.yamlio import exists, read_yaml

    if not exists(path, within):
        return None
    from sdd_git.trust.ledger import jsonable

    return jsonable(read_yaml(path, within))


def settings_item(root: Root, ledger: Ledger | None) -> Unconfirmed | None:
    """`.sdd/config.yaml` when she has not confirmed it as it is (None: confirmed, or absent)."""
    return _yaml_item(
        root, ledger, root.config, CONFIG_KEY, "settings", "the settings (.sdd/config.yaml)"
    )


def settings_items(root: Root, ledger: Ledger | None) -> list[Unconfirmed]:
    """Every settings layer she has not confirmed as it is: her user file (keyed by its
    absolute path), `.sdd/config.yaml` and `.sdd/config.local.yaml`. Each grants (a provider's
    address, a key's host, a model alias), so each is confirmed as the product's file is."""
    from sdd_git.settings import LOCAL, LOCAL_KEY, USER, layer_files

    found: list[Unconfirmed] = []
    for name, path, _within in layer_files(root):
        if name == USER:
            item = _yaml_item(
                root, ledger, path, str(path), "settings",
                f"your user settings ({path})", within=None,
            )  # fmt: skip
        elif name == LOCAL:
            item = _yaml_item(
                root, ledger, path, LOCAL_KEY, "settings",
                f"your local settings ({LOCAL_KEY})",
            )  # fmt: skip
        else:
            item = settings_item(root, ledger)
        if item is not None:
            found.append(item)
    return found


def product_item(root: Root, ledger: Ledger | None) -> Unconfirmed | None:
    return _yaml_item(
        root,
        ledger,
        root.product,
        PRODUCT_KEY,
        "product",
        "the product's parts (memory/product.yaml)",
    )


def _yaml_item(
    root: Root,
    ledger: Ledger | None,
    path: Path,
    key: str,
    kind: str,
    name: str,
    *,
    within: Path | bool | None = True,
) -> Unconfirmed | None:
    """`within`: the product holding the file (True: this root), or None for her own file."""
    if ledger is None:
        return None
    folder = root.path if within is True else within if isinstance(within, Path) else None
    try:
        now = yaml_surface(path, folder)
    except RecordError as exc:
        return Unconfirmed(key, kind, name, (f"it does not load ({exc.message})",), None, path)
    if now is None or ledger.confirmed(key, now):
        return None
    before = ledger.before(key)
    changes = mapping_changes(before if before is not None else {}, now)
    if before is None:
        changes = ["you have not confirmed these settings yet", *changes]
    return Unconfirmed(key, kind, name, tuple(changes) or ("it changed",), now, path)


def require_settings(root: Root, doing: str) -> None:
    """Refuse to act on settings she has not confirmed (a key, a token, a server's command),
    in any of their layers."""
    items = settings_items(root, ledger_for(root))
    if items:
        raise WaitsForHer(items, doing)


def confirm(root: Root, items: Iterable[Unconfirmed], how: str) -> None:
    """She read these and said yes: what each showed her is now hers."""
    trust_ledger.record(root, [(i.key, i.surface) for i in items if i.surface is not None], how)


def record_settings(root: Root, before: Any, how: str, *, existed: bool) -> None:
    """After a person command wrote `.sdd/config.yaml`: hers, if what it replaced was hers."""
    trust_ledger.record_written(
        root, CONFIG_KEY, before, yaml_surface(root.config, root.path), how, existed=existed
    )


def record_layer(root: Root, path: Path, before: Any, how: str, *, existed: bool) -> None:
    """After a person command wrote one of her settings layers (her user file, the local
    file): hers, if what it replaced was hers. The user file's key is its absolute path."""
    from sdd_git.settings import LOCAL_KEY, local_config_file

    local = path == local_config_file(root)
    key = LOCAL_KEY if local else CONFIG_KEY if path == root.config else str(path)
    within = root.path if local or path == root.config else None
    trust_ledger.record_written(root, key, before, yaml_surface(path, within), how, existed=existed)


def record_product(root: Root, before: Any, how: str, *, existed: bool) -> None:
    trust_ledger.record_written(
        root, PRODUCT_KEY, before, yaml_surface(root.product, root.path), how, existed=existed
    )
