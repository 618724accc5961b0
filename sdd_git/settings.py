"""Her settings, in three layers, merged: the one place every reader of settings goes through.

1. her user file, `config.yaml` in her configuration folder (`~/.config/sdd/config.yaml` on
   Linux, `$XDG_CONFIG_HOME/sdd/config.yaml` where that is set: platformdirs' `user_config_dir`);
2. the product's `.sdd/config.yaml`, tracked, shared with everyone who clones it;
3. `.sdd/config.local.yaml`, gitignored: her settings for this product on this machine.

A later layer wins: mappings are merged key by key, at every depth; a list or a scalar is
replaced whole. `origin(...)` says which file a value came from, and `where(...)` gives its file
and line, so that an error names the layer the bad value is in.

Every layer grants (CONTRACT §13): each is confirmed in her trust ledger as `.sdd/config.yaml`
is (`sdd_git.trust.pending`), the user file under its absolute path.

Reading is cheap on the hot paths: the user file's place is worked out without platformdirs
where it is the XDG rule (Linux and the BSDs), and the merged result is kept per process while
none of the three files changes."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.root import Root

USER = "user"
REPO = "repo"
LOCAL = "local"
LOCAL_RELATIVE = Path(".sdd") / "config.local.yaml"
LOCAL_KEY = str(LOCAL_RELATIVE)  # the local layer's key in her ledger
REPO_KEY = ".sdd/config.yaml"
APP_NAME = "sdd"


def user_config_file() -> Path:
    """Her user layer: `config.yaml` in platformdirs' `user_config_dir("sdd")`. On Linux and
    the BSDs that is the XDG rule, worked out here without importing platformdirs (`sdd role
    list` reads settings and must stay fast); elsewhere platformdirs says."""
    if os.name == "posix" and sys.platform != "darwin" and "ANDROID_ROOT" not in os.environ:
        base = os.environ.get("XDG_CONFIG_HOME", "")
        if not base.strip():
            base = os.path.expanduser("~/.config")
        return Path(base) / APP_NAME / "config.yaml"
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.yaml"


def local_config_file(root: Root) -> Path:
    return root.path / LOCAL_RELATIVE


@dataclass(frozen=True)
class Layer:
    name: str  # user, repo or local
    path: Path
    within: Path | None  # the product holding the file; None for her user file
    data: dict[str, Any] = field(compare=False)

    @property
    def key(self) -> str:
        """The layer's key in her trust ledger: the file's path in the product, or, for her
        user file, its absolute path."""
        if self.name == USER:
            return str(self.path)
        return REPO_KEY if self.name == REPO else LOCAL_KEY

    @property
    def shown(self) -> str:
        return display(self.path)


@dataclass(frozen=True)
class Settings:
    """The merged settings (`data`) and the layers they came from, lowest first."""

    data: dict[str, Any]
    layers: tuple[Layer, ...]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def origin(self, *keys: str) -> Layer | None:
        """The layer the value at `keys` came from: the last layer that holds that path (a
        mapping gathered from several layers: the last that adds to it)."""
        for layer in reversed(self.layers):
            if _holds(layer.data, keys):
                return layer
        return None

    def file_of(self, *keys: str) -> str:
        """The file the value at `keys` came from, as she would type it (no line: cheap)."""
        layer = self.origin(*keys)
        if layer is None:
            repo = next((each for each in self.layers if each.name == REPO), None)
            return repo.shown if repo is not None else REPO_KEY
        return layer.shown

    def where(self, *keys: str) -> str:
        """`file:line` of the value at `keys`, in the layer it came from; the product's
        `.sdd/config.yaml` when no layer holds it."""
        layer = self.origin(*keys)
        if layer is None:
            repo = next((each for each in self.layers if each.name == REPO), None)
            return repo.shown if repo is not None else REPO_KEY
        line = line_of(layer, keys)
        return f"{layer.shown}:{line}" if line else layer.shown

    def flat(self) -> list[tuple[str, Any, Layer | None]]:
        """Every value as (dotted key, value, the layer it came from), in the merged order; a
        mapping is walked into, a list or a scalar is one value (`sdd config show`)."""
        out: list[tuple[str, Any, Layer | None]] = []

        def walk(value: Any, path: tuple[str, ...]) -> None:
            if isinstance(value, dict) and value:
                for key, inner in value.items():
                    walk(inner, (*path, str(key)))
                return
            out.append((".".join(path), value, self.origin(*path)))

        for key, value in self.data.items():
            walk(value, (str(key),))
        return out


def _holds(data: Any, keys: tuple[str, ...]) -> bool:
    for key in keys:
        if not isinstance(data, dict):
            return False
        found = next((k for k in data if str(k) == key), _MISSING)
        if found is _MISSING:
            return False
        data = data[found]
    return True


_MISSING = object()


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`: mappings key by key, at every depth; anything else whole. A
    mapping that names another `kind` than the one below it replaces it whole: settings written
    for one provider or connector lend nothing (a base_url, a key variable) to another."""
    out = dict(base)
    for key, value in over.items():
        below = out.get(key)
        if isinstance(value, dict) and isinstance(below, dict) and _same_kind(below, value):
            out[key] = merge(below, value)
        else:
            out[key] = value
    return out


def _same_kind(below: dict[str, Any], over: dict[str, Any]) -> bool:
    return "kind" not in over or "kind" not in below or below["kind"] == over["kind"]


def line_of(layer: Layer, keys: tuple[str, ...]) -> int | None:
    """The 1-based line of the key at `keys` in the layer's file (the deepest one found)."""
    import yaml

    from sdd_git.yamlio import read_text

    try:
        node = yaml.compose(read_text(layer.path, layer.within))
    except (RecordError, yaml.YAMLError, OSError):
        return None
    line: int | None = None
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            break
        pair = next((p for p in node.value if str(p[0].value) == key), None)
        if pair is None:
            break
        line = int(pair[0].start_mark.line) + 1
        node = pair[1]
    return line


def _stamp(path: Path) -> tuple[int, ...] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_mode)


_memo: dict[tuple[str, str], tuple[tuple[Any, ...], Settings]] = {}


def layer_files(root: Root) -> tuple[tuple[str, Path, Path | None], ...]:
    """(name, path, within) of the three layers, lowest first, whether they exist or not."""
    return (
        (USER, user_config_file(), None),
        (REPO, root.config, root.path),
        (LOCAL, local_config_file(root), root.path),
    )


def settings(root: Root) -> Settings:
    """Her settings for `root`: the layers that exist, merged. A layer that does not load is an
    error naming its file and line."""
    files = layer_files(root)
    stamps = tuple(_stamp(path) for _, path, _ in files)
    key = (str(root.path), str(files[0][1]))
    memo = _memo.get(key)
    if memo is not None and memo[0] == stamps:
        return memo[1]
    layers = tuple(
        Layer(name, path, within, read_layer(name, path, within))
        for (name, path, within), stamp in zip(files, stamps, strict=True)
        if stamp is not None
    )
    data: dict[str, Any] = {}
    for layer in layers:
        data = merge(data, layer.data)
    found = Settings(data, layers)
    _memo[key] = (stamps, found)
    return found


def read_layer(name: str, path: Path, within: Path | None) -> dict[str, Any]:
    """One layer's mapping. The product's file must hold one; her own files may be empty."""
    from sdd_git.yamlio import read_mapping, read_yaml

    if name == REPO:
        return read_mapping(path, within)
    data = read_yaml(path, within)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RecordError(
            f"{display(path)}:1: expected a mapping of keys to values, found {type(data).__name__}",
            hint="the file must hold `key: value` lines at the top level",
        )
    return data


def layer(root: Root, name: str) -> Layer | None:
    """One layer of `root`'s settings, as read now; None when its file does not exist."""
    return next((each for each in settings(root).layers if each.name == name), None)


_REFERENCE_ONLY = re.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
SECRET_SHOWN = "[secret]"


@dataclass(frozen=True)
class ShownValue:
    """One value of her merged settings, as `sdd config show` prints it."""

    key: str  # dotted: provider.model
    value: Any
    layer: str  # user, repo or local
    origin: Path | None

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": json.loads(json.dumps(self.value, default=str)),  # a YAML date as text
            "origin": str(self.origin) if self.origin is not None else None,
            "layer": self.layer,
        }


def shown_values(root: Root) -> list[ShownValue]:
    """Every merged value with the file it came from. A header's value is shown only when it
    names a variable (`$AZURE_KEY`): written out, it may be a key."""
    out = []
    for key, value, layer in settings(root).flat():
        parts = key.split(".")
        if "headers" in parts[:-1] and not (
            isinstance(value, str) and _REFERENCE_ONLY.match(value.strip())
        ):
            value = SECRET_SHOWN
        out.append(
            ShownValue(
                key,
                value,
                layer.name if layer is not None else "",
                layer.path if layer is not None else None,
            )
        )
    return out
