from __future__ import annotations

import base64
import json
from urllib.parse import quote, quote_plus

from sdd_git.runner.masking import MASK, Masker, child_environment

SECRET = 's3cr3t/Value+=&"x'


def test_every_form_of_a_secret_is_masked() -> None:
    mask = Masker([SECRET])
    forms = [
        SECRET,
        base64.b64encode(SECRET.encode()).decode(),
        base64.b64encode(SECRET.encode()).decode().rstrip("="),
        base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
        quote(SECRET, safe=""),
        quote_plus(SECRET),
        json.dumps(SECRET)[1:-1],
    ]
    for form in forms:
        assert mask(f"before {form} after") == f"before {MASK} after", form


def test_a_multi_line_secret_is_masked_line_by_line() -> None:
    pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAKj34GkxFhD9\nAbCdEfGhIjKlMnOpQrStUv\n-----END KEY-----"
    mask = Masker([pem])
    leaked = "the log printed: AbCdEfGhIjKlMnOpQrStUv and MIIBOgIBAAJBAKj34GkxFhD9"
    assert mask(leaked) == f"the log printed: {MASK} and {MASK}"


def test_short_values_are_never_used_as_masks() -> None:
    assert Masker(["abc", ""])("abc is a word") == "abc is a word"


def test_children_get_the_run_id_and_no_secrets() -> None:
    env = child_environment(
        {"PATH": "/bin", "OPENAI_API_KEY": "k" * 20, "GH_TOKEN": "t" * 20, "MY_LLM": "x" * 20},
        "run-1",
        extra_secret_names=["MY_LLM"],
    )
    assert env == {"PATH": "/bin", "SDD_RUN_ID": "run-1"}
