"""The YAML reader's bounds: a file from the repository cannot make sdd read or hold more than
its cap (the attack round: a 300 MB routine file cost 640 MB of memory to refuse)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from sdd_git.errors import RecordError
from sdd_git.yamlio import MAX_YAML_BYTES, read_mapping


@pytest.mark.parametrize("within", [True, False])
def test_a_file_over_the_cap_is_refused_with_its_name_and_never_read_whole(
    tmp_path: Path, within: bool
) -> None:
    big = tmp_path / "routine.yaml"
    with big.open("wb") as handle:
        handle.write(b"name: x\nnote: ")
        handle.truncate(MAX_YAML_BYTES * 50)  # 100 MiB, sparse: costs no disk
    tracemalloc.start()
    try:
        with pytest.raises(RecordError) as refused:
            read_mapping(big, tmp_path if within else None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "routine.yaml" in refused.value.message and "more than" in refused.value.message
    assert peak < 4 * MAX_YAML_BYTES, f"{peak:,} bytes held to refuse it"
