"""A run's usage, summed from its log's replies in either wire's names, old logs included."""

from __future__ import annotations

from sdd_git.runner.history import Usage, reply_usage, run_usage


def test_openai_prompt_tokens_already_hold_the_cached_ones() -> None:
    usage = {
        "prompt_tokens": 2600,
        "completion_tokens": 20,
        "prompt_tokens_details": {"cached_tokens": 2304},
        "cached_input_tokens": 2304,
        "cache_write_input_tokens": 0,
    }
    assert reply_usage(usage) == Usage(1, 2600, 2304, 0, 20)


def test_anthropic_input_tokens_leave_out_the_cache_so_it_is_added_back() -> None:
    usage = {
        "input_tokens": 40,
        "cache_creation_input_tokens": 300,
        "cache_read_input_tokens": 2500,
        "output_tokens": 12,
        "cached_input_tokens": 2500,
        "cache_write_input_tokens": 300,
    }
    assert reply_usage(usage) == Usage(1, 2840, 2500, 300, 12)


def test_a_log_from_before_the_cache_figures_is_read_from_the_providers_own_keys() -> None:
    assert reply_usage({"input_tokens": 5, "cache_read_input_tokens": 100}) == Usage(
        1, 105, 100, 0, 0
    )
    details = {"prompt_tokens": 90, "prompt_tokens_details": {"cached_tokens": 64}}
    assert reply_usage(details) == Usage(1, 90, 64, 0, 0)


def test_replies_without_usage_count_for_nothing() -> None:
    events = [
        {"event": "reply", "usage": {}},  # the scripted provider reports none
        {"event": "reply", "usage": None},
        {"event": "reply", "usage": {"prompt_tokens": 10, "completion_tokens": 2}},
        {"event": "tool_call", "usage": {"prompt_tokens": 99}},  # not a reply
    ]
    assert run_usage(events) == Usage(1, 10, 0, 0, 2)
    assert "read from" not in run_usage(events).words()
