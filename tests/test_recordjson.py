from __future__ import annotations

from dataclasses import dataclass

from sdd_git.recordjson import record_json


@dataclass(frozen=True)
class _Inner:
    name: str

    def as_json(self) -> dict[str, str]:
        return {"called": self.name}


@dataclass(frozen=True)
class _Outer:
    run_id: str
    tags: tuple[str, ...]
    inner: _Inner | None
    hint: str | None = None


def test_fields_in_order_with_tuples_as_lists_and_records_as_their_json() -> None:
    got = record_json(_Outer("r1", ("a", "b"), _Inner("x"), "h"))
    assert list(got) == ["run_id", "tags", "inner", "hint"]
    assert got == {"run_id": "r1", "tags": ["a", "b"], "inner": {"called": "x"}, "hint": "h"}


def test_omit_and_rename_keep_the_order() -> None:
    got = record_json(_Outer("r1", (), None, "h"), omit=("hint",), rename={"run_id": "run"})
    assert got == {"run": "r1", "tags": [], "inner": None}
    assert list(got) == ["run", "tags", "inner"]
