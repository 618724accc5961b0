"""The accuracy loop with the scripted provider: separate calls per role, checked cites, spent
passes, and never a fourth pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import stops
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script, transcript

C1, C2 = "SPEC-0001#S1/C1", "SPEC-0001#S1/C2"


def draft(text: str = "Search by month and merchant.") -> dict[str, Any]:
    return {"role": "builder", "tool_calls": [{"tool": "submit_draft", "args": {"text": text}}]}


def gaps(*items: tuple[str, list[str], str]) -> dict[str, Any]:
    listed = [{"id": i, "cites": c, "text": t} for i, c, t in items]
    return {"role": "qa-author", "tool_calls": [{"tool": "report_gaps", "args": {"gaps": listed}}]}


def revision(changed: list[str], text: str = "Search; say when nothing matches.") -> dict[str, Any]:
    args = {"changed": changed, "text": text}
    return {"role": "builder", "tool_calls": [{"tool": "submit_revision", "args": args}]}


def run_loop(sdd: SddRunner) -> dict[str, Any]:
    result = sdd(
        "role", "run", "builder", "--task", "Draft the search", "--with", "qa-author", "--json"
    )
    assert result.code == 3, result.stderr
    outcome: dict[str, Any] = json.loads(result.stdout)
    return outcome


def of(root: Root, run_id: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(root, run_id) if e["event"] == kind]


def test_two_roles_make_separate_calls_each_with_its_own_role_id(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(
        tmp_path,
        monkeypatch,
        [draft(), gaps(("G1", [C2], "No message when nothing matches.")), revision(["G1"]), gaps()],
    )
    outcome = run_loop(sdd)
    sent = transcript(tmp_path)
    assert [t["role"] for t in sent] == ["builder", "qa-author", "builder", "qa-author"]
    critic_view = json.dumps(sent[1]["messages"])
    assert "Draft the search" not in critic_view  # the critic never sees the author's context
    assert "Search by month and merchant." in critic_view
    assert {t["name"] for t in sent[1]["tools"]} >= {"report_gaps"}
    assert "write_file" not in {t["name"] for t in sent[0]["tools"]}
    calls = of(root, outcome["run"], "provider_call")
    assert [(c["role"], c["pass"], c["purpose"]) for c in calls] == [
        ("builder", 1, "author"),
        ("qa-author", 1, "critic"),
        ("builder", 2, "revision"),
        ("qa-author", 2, "critic"),
    ]
    (critique, final) = of(root, outcome["run"], "critique")
    assert critique["gaps"] == [
        {"id": "G1", "cites": [C2], "text": "No message when nothing matches."}
    ]
    assert final["gaps"] == []
    assert of(root, outcome["run"], "revision")[0]["changed"] == ["G1"]
    assert outcome["stop"]["kind"] == "draft"
    assert (
        "qa-author, a second role, checked it in 2 pass(es): it matches the reading"
        in (outcome["stop"]["action"])
    )
    assert outcome["stop"]["choices"] == ["allow once", "deny"]


def test_an_empty_gap_list_after_pass_one_ends_with_no_revision(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [draft(), gaps()])
    outcome = run_loop(sdd)
    assert len(transcript(tmp_path)) == 2
    assert of(root, outcome["run"], "revision") == []
    assert "checked it in 1 pass(es)" in outcome["stop"]["action"]


def test_a_gap_citing_an_unknown_check_spends_the_pass(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(
        tmp_path,
        monkeypatch,
        [
            draft(),
            gaps(("G1", ["SPEC-0001#S1/C9"], "Made up.")),
            draft("Search by month."),
            gaps(),
        ],
    )
    outcome = run_loop(sdd)
    rejected = of(root, outcome["run"], "rejected")
    assert [(r["tool"], r["reason"], r["pass"]) for r in rejected] == [
        ("report_gaps", "bad_cite", 1)
    ]
    assert "SPEC-0001#S1/C9 is not a check id of this run's plan" in rejected[0]["message"]
    assert [c["pass"] for c in of(root, outcome["run"], "critique")] == [2]
    assert [c["purpose"] for c in of(root, outcome["run"], "provider_call")][2] == "author"


def test_a_revision_naming_a_gap_never_raised_spends_the_pass(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(
        tmp_path,
        monkeypatch,
        [
            draft(),
            gaps(("G1", ["C2"], "No empty-month message.")),
            revision(["G7"]),
            revision(["G1"]),
            gaps(),
        ],
    )
    outcome = run_loop(sdd)
    (bad,) = of(root, outcome["run"], "rejected")
    assert (bad["reason"], bad["pass"]) == ("bad_revision", 2)
    assert "names G7, which no critique raised" in bad["message"]
    assert [r["pass"] for r in of(root, outcome["run"], "revision")] == [3]
    assert [t["role"] for t in transcript(tmp_path)] == [
        "builder", "qa-author", "builder", "builder", "qa-author",
    ]  # fmt: skip


def test_three_passes_with_gaps_each_time_end_with_no_fourth_call(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    gap = ("G1", [C1], "Still no search by merchant.")
    script(
        tmp_path,
        monkeypatch,
        [
            draft(),
            gaps(gap),
            revision(["G1"]),
            gaps(gap),
            revision(["G1"]),
            gaps(gap),
            draft("never"),
        ],
    )
    outcome = run_loop(sdd)
    assert len(transcript(tmp_path)) == 6
    assert max(c["pass"] for c in of(root, outcome["run"], "provider_call")) == 3
    assert (
        "after 3 passes these gaps are still open: G1 (SPEC-0001#S1/C1): Still no search"
        in (outcome["stop"]["action"])
    )


def test_a_stale_decision_makes_a_cite_invalid(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    spec = root.spec_file("SPEC-0001")
    spec.write_text(spec.read_text() + "\n## S2 Export\nCSV.\n- C1: one row per charge\n")
    assert sdd("accept", "section", "SPEC-0001#S2", "--words", "CSV, yes").stdout == "D-0002\n"
    spec.write_text(spec.read_text().replace("CSV.", "CSV and PDF."))  # edited after acceptance
    script(
        tmp_path,
        monkeypatch,
        [
            draft(),
            gaps(("G1", ["SPEC-0001#S2/D-0002"], "Export is missing.")),
            draft(),
            gaps(("G1", ["SPEC-0001#S1/D-0001"], "Month is missing.")),
            revision(["G1"]),
            gaps(),
        ],
    )
    outcome = run_loop(sdd)
    (bad,) = of(root, outcome["run"], "rejected")
    assert bad["reason"] == "bad_cite"
    assert "SPEC-0001#S2 is not an accepted section of this run's plan" in bad["message"]
    assert [c["pass"] for c in of(root, outcome["run"], "critique")] == [2, 3]


def test_allowing_the_draft_lets_the_author_act_with_the_usual_stops(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    write = {"tool": "write_file", "args": {"path": "search.py", "content": "x\n", "purpose": "C1"}}
    script(
        tmp_path,
        monkeypatch,
        [draft(), gaps(), {"role": "builder", "tool_calls": [write]}, {"say": "Written."}],
    )
    outcome = run_loop(sdd)
    always = sdd("allow", outcome["stop"]["id"], "--always")
    assert always.code == 2
    went_on = sdd("allow", outcome["stop"]["id"], "--json")
    assert went_on.code == 3
    approval = json.loads(went_on.stdout)["stop"]
    assert approval["kind"] == "approval" and approval["action"].startswith(
        "Create the file search.py"
    )
    assert sdd("allow", approval["id"]).code == 0
    assert (root.path / "search.py").exists()
    last = transcript(tmp_path)[-1]["messages"]
    assert not any("report_gaps" in json.dumps(m) for m in last)  # the critic's context stays out
    assert stops.pending(root) == []


def test_denying_the_draft_continues_the_run_with_the_denial_and_runs_nothing(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(
        tmp_path,
        monkeypatch,
        [draft(), gaps(), {"role": "builder", "say": "Understood: I need the merchant list."}],
    )
    outcome = run_loop(sdd)
    result = sdd("deny", outcome["stop"]["id"])
    assert result.code == 0 and "I need the merchant list." in result.stdout
    last = transcript(tmp_path)[-1]
    assert "declined this draft" in last["messages"][-1]["content"]
    assert {t["name"] for t in last["tools"]} <= {
        "read_file", "list_files", "search_files", "git_status", "git_log", "git_diff",
        "read_record",
    }  # fmt: skip
    assert events(root, outcome["run"])[-1]["status"] == "done"


def test_a_critic_that_cannot_load_fails_before_any_call(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    broken = add_role(root, "critic")
    broken.write_text(broken.read_text().replace("level: 10", "level: high"))
    script(tmp_path, monkeypatch, [draft()])
    result = sdd("role", "run", "builder", "--task", "Draft", "--with", "critic")
    assert result.code == 1 and "key 'level'" in result.stderr
    assert transcript(tmp_path) == []
    assert not (root.sdd / "role-runs").exists()


def test_the_log_renders_the_loop_readably(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(
        tmp_path,
        monkeypatch,
        [draft(), gaps(("G1", [C2], "No empty message.")), revision(["G1"]), gaps()],
    )
    outcome = run_loop(sdd)
    text = sdd("role", "log", outcome["run"]).stdout
    assert "provider call 2 as qa-author (critic, pass 1)" in text
    assert "pass 1: qa-author found 1 gap(s): G1 (SPEC-0001#S1/C2): No empty message." in text
    assert "pass 2: revision of G1: Search; say when nothing matches." in text
    assert "pass 2: qa-author found no gap" in text


def test_a_decision_gone_stale_during_the_run_makes_its_cite_invalid(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.runner.gate import plan_for, resolve_change
    from sdd_git.runner.loop import CiteChecker

    accepted_change(root)
    plan = plan_for(root, resolve_change(root, "CH-0001"))
    checker = CiteChecker(root, plan)
    assert checker.problem("SPEC-0001#S1/D-0001") is None
    assert checker.problem("C1") is None and checker.problem(C2) is None
    spec = root.spec_file("SPEC-0001")
    spec.write_text(spec.read_text().replace("Search by month.", "Search by year."))
    assert "does not hold" in (checker.problem("SPEC-0001#S1/D-0001") or "")
    assert checker.problem("SPEC-0001#S1/D-0009") is not None


def test_stop_now_and_a_failing_provider_end_the_loop_in_its_log(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    script(tmp_path, monkeypatch, [draft()])  # exhausted at the critic's call
    result = sdd("role", "run", "builder", "--task", "Draft", "--with", "qa-author", "--json")
    assert result.code == 1 and "script exhausted after 1 calls" in result.stderr
    run_id = next((root.sdd / "role-runs").glob("run-*.jsonl")).stem
    assert events(root, run_id)[-1] == {**events(root, run_id)[-1], "status": "failed"}

    from sdd_git.runner.run import RunRequest, start

    script(tmp_path, monkeypatch, [draft(), gaps()], name="again")
    checks: list[int] = []

    def stop_after_the_first_call(state: object) -> bool:
        checks.append(1)
        return len(checks) > 1  # "Stop now" arrives while the author's call is answered

    monkeypatch.setattr("sdd_git.runner.loop.stop_requested", stop_after_the_first_call)
    stopped = start(root, RunRequest("builder", "Draft", critic="qa-author"))
    assert stopped.status == "stopped-now"
    assert [t["role"] for t in transcript(tmp_path, "again")] == ["builder"]
