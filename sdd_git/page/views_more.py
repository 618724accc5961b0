"""The rest of what she sees: each role's conversation (reply to one message, Stop now), its
memory (which she corrects by forgetting an item), and the routines (test, pause, resume,
history). Each action is the one core function of its person command."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from sdd_git.errors import SddError, UsageError
from sdd_git.page.site import form_of, root_of, site_of
from sdd_git.page.views_trust import started
from sdd_git.root import Root

ATTACHMENT_LIMIT = 10 << 20  # bytes: a log or a screenshot, not an archive


async def roles_page(request: Request) -> Response:
    from sdd_git.roles.registry import load_registry

    site = site_of(request)
    root = root_of(request)
    registry = await run_in_threadpool(load_registry, root)
    shown = [r for r in registry.roles if not r.hidden]
    # A role file that does not load is skipped, never fatal: the page says which, and where.
    skipped = [w.removeprefix("warning: skipped ") for w in registry.warnings if "skipped" in w]
    return site.render(request, "roles.html", roles=shown, skipped=skipped)


def _role_view(request: Request, name: str, status: int = 200, **extra: Any) -> Response:
    from sdd_git.roles.conversation import messages
    from sdd_git.roles.registry import load_registry
    from sdd_git.roles.rules import saved_rules
    from sdd_git.runner import conversation

    site = site_of(request)
    root = root_of(request)
    role = load_registry(root).get(name)
    if role is None:
        return site.render(request, "missing.html", status=404, what=f"role {name}")
    return site.render(
        request,
        "role.html",
        status=status,
        role=role,
        messages=messages(root, name),
        memory=conversation.memory(root, name),
        rules=saved_rules(role),
        attachment_limit_mb=ATTACHMENT_LIMIT >> 20,
        **extra,
    )


async def role_page(request: Request) -> Response:
    return await run_in_threadpool(_role_view, request, request.path_params["role"])


async def role_reply(request: Request) -> Response:
    """`sdd role run NAME --task "..." [--reply-to MSG] [--attach FILE --as "WHAT"]`, in the
    background. An uploaded file waits in a private temporary folder until the run has copied
    it into the role's attachments, as `--attach` copies a file of hers."""
    from sdd_git.roles.registry import load_registry
    from sdd_git.runner.conversation import Attachment
    from sdd_git.runner.run import RunRequest, start

    site = site_of(request)
    root = root_of(request)
    name = request.path_params["role"]
    if (await run_in_threadpool(load_registry, root)).get(name) is None:
        return await run_in_threadpool(_role_view, request, name)  # missing: nothing kept
    try:
        form, upload = await _message_form(request)
    except SddError as exc:
        return await run_in_threadpool(
            _role_view, request, name, 400, error=exc.message, hint=exc.hint
        )
    text, reply_to = form.get("task", ""), form.get("reply_to") or None
    what = form.get("attachment_what", "").strip()
    problem = (
        "write your message first"
        if not text.strip()
        else "say what the attached file is, in your words"
        if upload is not None and not what
        else None
    )
    if problem:
        if upload is not None:
            shutil.rmtree(upload.parent, ignore_errors=True)
        return await run_in_threadpool(_role_view, request, name, 400, error=problem)
    attachments = (Attachment(upload, what),) if upload is not None else ()
    run = RunRequest(author=name, task=text, reply_to=reply_to, attachments=attachments)

    def work(told: Any) -> Any:
        try:
            return start(root, run, on_event=told)
        finally:
            if upload is not None:
                shutil.rmtree(upload.parent, ignore_errors=True)

    job = site.jobs.start(f"{site.called(name)} reads your message", None, work)
    attached = {"attachment": upload.name, "attachment_what": what} if upload else {}
    site.logged("role run", role=name, task=text, reply_to=reply_to, job=job.id, **attached)
    return await started(request, job)


async def _message_form(request: Request) -> tuple[dict[str, str], Path | None]:
    """Her message's fields, and the file she attached (saved to a private temporary folder
    under its own base name), if any. Anything over the limit is refused, never cut."""
    import tempfile

    from starlette.datastructures import UploadFile

    form = await request.form(max_files=1, max_fields=10)
    try:
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        upload = form.get("attachment")
        if not isinstance(upload, UploadFile) or not upload.filename:
            return fields, None
        name = _upload_name(upload.filename)
        folder = Path(tempfile.mkdtemp(prefix="sdd-page-upload-"))
        target = folder / name
        size = 0
        try:
            with open(target, "xb") as out:
                while chunk := await upload.read(1 << 16):
                    size += len(chunk)
                    if size > ATTACHMENT_LIMIT:
                        raise UsageError(
                            f"{name} is larger than {ATTACHMENT_LIMIT // (1 << 20)} MB",
                            hint="attach a smaller file, or the part of it that matters",
                        )
                    out.write(chunk)
        except BaseException as exc:  # every way out but success leaves no half-kept upload
            shutil.rmtree(folder, ignore_errors=True)
            if isinstance(exc, OSError):
                raise UsageError(
                    f"could not keep {name} for the role ({exc.strerror or exc})",
                    hint="free some disk space, or attach a smaller file",
                ) from None
            raise
        return fields, target
    finally:
        await form.close()


def _upload_name(filename: str) -> str:
    """The file's own name, without any folder a browser (or anyone) put in front of it, and
    without characters that are not text: a control character would end a line of the model's
    prompt or drive her terminal, and a direction override shows `a<RLO>gol.exe` as `aexe.log`."""
    import unicodedata

    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if name in ("", ".", "..") or "\0" in name or len(name.encode()) > 200:
        return "attachment"
    return "".join("_" if unicodedata.category(c) in ("Cc", "Cf") else c for c in name)


async def role_stop_now(request: Request) -> Response:
    """`sdd role stop NAME`: "Stop now"; what is done stays done."""
    from sdd_git.runner.control import stop_now

    site = site_of(request)
    root = root_of(request)
    name = request.path_params["role"]
    try:
        run_id = await run_in_threadpool(stop_now, root, name)
    except SddError as exc:
        return await run_in_threadpool(
            _role_view, request, name, 400, error=exc.message, hint=exc.hint
        )
    site.logged("stop now", role=name, run=run_id)
    return await run_in_threadpool(
        _role_view,
        request,
        name,
        notice=f"{site.called(name)} was asked to stop now. What is done stays done.",
    )


async def role_correct(request: Request) -> Response:
    """Her correction of one memory item (what `sdd role memory NAME --edit` does to it)."""
    from sdd_git.runner import conversation

    form = await form_of(request)
    note = form.get("note", "")

    def correct(root: Root, name: str, number: int) -> tuple[dict[str, Any], str]:
        before = conversation.correct(root, name, number, note)
        said = f"Corrected: {name} no longer remembers “{before['note']}”."
        return {"note": note.strip()}, said

    return await _memory_action(request, form, "memory correct", correct)


async def role_forget(request: Request) -> Response:
    """`sdd role memory NAME --forget N`: her correction of the role's memory."""
    from sdd_git.runner import conversation

    def forget(root: Root, name: str, number: int) -> tuple[dict[str, Any], str]:
        removed = conversation.forget(root, name, number)
        return {}, f"{name} forgot: {removed['note']}"

    return await _memory_action(request, await form_of(request), "memory forget", forget)


async def role_revoke(request: Request) -> Response:
    """`sdd role rules NAME --revoke N`: one saved rule taken out of the role's file."""
    from sdd_git.roles import rules

    form = await form_of(request)

    def revoke(root: Root, name: str, number: int) -> tuple[dict[str, Any], str]:
        # The rule she was shown as that number: a file that changed since (a pull, a revoke
        # in another tab) never loses another rule, such as an ask-first one, in its place.
        gone = rules.revoke(
            root, name, number, how="sdd role rules --revoke (her page)", shown=form.get("rule")
        )
        return {"rule": gone.rule.as_dict()}, f"Revoked rule {number} of {name}: {gone.words()}."

    return await _memory_action(request, form, "role rules revoke", revoke)


async def _memory_action(
    request: Request,
    form: dict[str, str],
    action: str,
    change: Callable[[Root, str, int], tuple[dict[str, Any], str]],
) -> Response:
    """One change to a role's memory (or its saved rules), on item `number` of the form:
    logged, then shown."""
    from sdd_git.sink import refuse_inside_run

    site = site_of(request)
    root = root_of(request)
    name = request.path_params["role"]
    try:
        number = int(form.get("number", ""))
        refuse_inside_run()
        logged, said = await run_in_threadpool(change, root, name, number)
    except ValueError:
        return await run_in_threadpool(_role_view, request, name, 400, error="choose an item")
    except SddError as exc:
        return await run_in_threadpool(
            _role_view, request, name, 400, error=exc.message, hint=exc.hint
        )
    site.logged(action, role=name, number=number, **logged)
    return await run_in_threadpool(_role_view, request, name, notice=said)


def _routines(root: Root) -> tuple[list[Any], list[Any]]:
    from sdd_git.routines.manage import list_routines

    return list_routines(root)


async def routines_page(request: Request, **extra: Any) -> Response:
    site = site_of(request)
    root = root_of(request)
    found, problems = await run_in_threadpool(_routines, root)
    return site.render(request, "routines.html", routines=found, problems=problems, **extra)


async def routine_pause(request: Request) -> Response:
    """`sdd routine pause NAME` / `sdd routine resume NAME`."""
    from sdd_git.routines.manage import set_paused

    site = site_of(request)
    root = root_of(request)
    name = f"{request.path_params['role']}/{request.path_params['routine']}"
    paused = request.url.path.endswith("/pause")
    try:
        await run_in_threadpool(set_paused, root, name, paused)
    except SddError as exc:
        return await routines_page(request, error=exc.message, hint=exc.hint)
    site.logged("routine pause" if paused else "routine resume", routine=name)
    return await routines_page(
        request, notice=f"{name} is {'paused' if paused else 'running again'}."
    )


async def routine_test(request: Request) -> Response:
    """`sdd routine test NAME`: a dry run; no consequential action runs."""
    from sdd_git.routines.fire import fire, synthetic_event
    from sdd_git.routines.routine import find_routine
    from sdd_git.sink import refuse_inside_run

    site = site_of(request)
    root = root_of(request)
    name = f"{request.path_params['role']}/{request.path_params['routine']}"

    def rehearse(told: Any) -> Any:
        refuse_inside_run()
        found = find_routine(root, name)
        event = synthetic_event(root, found)
        if event is None:
            from sdd_git.errors import UsageError

            raise UsageError(
                f"{found.role}/{found.name} needs a build result to test with, and none is "
                "configured",
                hint='set watch: {build_results: ["build/*.xml"]} in .sdd/config.yaml',
            )
        return fire(root, found, event, rehearsal=True, on_event=told)

    job = site.jobs.start(f"Testing the routine {name}", None, rehearse)
    site.logged("routine test", routine=name, job=job.id)
    return await started(request, job)


async def routine_history(request: Request) -> Response:
    from sdd_git.routines.fire import runs_for
    from sdd_git.routines.routine import find_routine

    site = site_of(request)
    root = root_of(request)
    name = f"{request.path_params['role']}/{request.path_params['routine']}"

    def history() -> tuple[Any, list[dict[str, Any]]]:
        found = find_routine(root, name)
        return found, runs_for(root, found)

    routine, runs = await run_in_threadpool(history)
    return site.render(request, "routine_history.html", routine=routine, runs=runs)


ROUTES = [
    Route("/roles", roles_page),
    Route("/roles/{role}", role_page),
    Route("/roles/{role}/reply", role_reply, methods=["POST"]),
    Route("/roles/{role}/stop", role_stop_now, methods=["POST"]),
    Route("/roles/{role}/forget", role_forget, methods=["POST"]),
    Route("/roles/{role}/correct", role_correct, methods=["POST"]),
    Route("/roles/{role}/revoke", role_revoke, methods=["POST"]),
    Route("/routines", routines_page),
    Route("/routines/{role}/{routine}/pause", routine_pause, methods=["POST"]),
    Route("/routines/{role}/{routine}/resume", routine_pause, methods=["POST"]),
    Route("/routines/{role}/{routine}/test", routine_test, methods=["POST"]),
    Route("/routines/{role}/{routine}/history", routine_history),
]
