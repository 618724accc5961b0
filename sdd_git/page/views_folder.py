"""The folder chooser: a new product, or code she already has. Either way it runs `sdd init`
there (root.init_root: git init where needed, memory/, changes/, .sdd/; it commits nothing)."""

from __future__ import annotations

from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdd_git.errors import SddError, UsageError
from sdd_git.page.site import form_of, see_other, site_of


async def folder_page(request: Request) -> Response:
    site = site_of(request)
    start = site.start_folder or (site.root.path if site.root else Path.cwd())
    return site.render(request, "folder.html", folder=str(start), kind="new", product="")


def _refuse_records(folder: Path) -> None:
    """A product's folder is never the top of the file system, nor inside where git or sdd keep
    their own records: `sdd init` there would put a repository and an sdd root among them.
    `folder` is resolved, so a symlink is judged by where it leads."""
    from sdd_git.root import CONFIG_RELATIVE

    hint = "choose the product's own folder, or a new folder for a new product"
    if folder.parent == folder:
        raise UsageError(
            f"{folder} is the top of the file system, not a product's folder", hint=hint
        )
    if any(part in (".git", ".sdd") for part in folder.parts):
        raise UsageError(f"{folder} is inside a .git or .sdd folder", hint=hint)
    for above in folder.parents:
        if (above / CONFIG_RELATIVE).is_file():
            if folder.relative_to(above).parts[0] in ("memory", "changes"):
                raise UsageError(
                    f"{folder} is inside the records of the product in {above}", hint=hint
                )
            break


def _choose(folder: Path, kind: str, product: str | None) -> Path:
    from sdd_git.records.person import init as init_root

    _refuse_records(folder)
    if kind == "new":
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise UsageError(
                f"{folder} is not empty",
                hint="a new product needs a new or empty folder; for code you have, "
                "choose 'Code I already have'",
            )
        folder.mkdir(parents=True, exist_ok=True)
    elif not folder.is_dir():
        raise UsageError(
            f"there is no folder {folder}", hint="check the path, or choose a new product"
        )
    return init_root(folder, product).root.path


async def folder_choose(request: Request) -> Response:
    from sdd_git.root import find_root

    site = site_of(request)
    form = await form_of(request)
    raw, kind = form.get("folder", "").strip(), form.get("kind", "new")
    product = form.get("product", "").strip() or None

    def refused(error: str, hint: str | None = None) -> Response:
        return site.render(
            request,
            "folder.html",
            status=400,
            folder=raw,
            kind=kind,
            product=product or "",
            error=error,
            hint=hint,
        )

    if not raw:
        return refused("write the folder's path")
    folder = Path(raw).expanduser()
    if not folder.is_absolute():
        base = site.start_folder or Path.cwd()
        folder = base / folder
    try:
        chosen = await run_in_threadpool(_choose, folder.resolve(), kind, product)
    except SddError as exc:
        return refused(exc.message, exc.hint)
    except OSError as exc:
        return refused(f"{exc.strerror or exc} ({folder})")
    site.root = find_root(chosen)
    site.logged("init", folder=str(chosen), kind=kind, product=product)
    return see_other("/")


ROUTES = [
    Route("/folder", folder_page),
    Route("/folder", folder_choose, methods=["POST"]),
]
