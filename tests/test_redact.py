"""Secrets are redacted by kind; look-alikes are left exactly as they were."""

from __future__ import annotations

import pytest

from cortex_mcp.engine.redact import luhn_valid, redact
from tests.redaction_table import NEGATIVES, POSITIVES


def test_the_table_has_at_least_25_samples_of_both_kinds() -> None:
    assert len(POSITIVES) + len(NEGATIVES) >= 25
    assert len(POSITIVES) >= 12 and len(NEGATIVES) >= 10


@pytest.mark.parametrize(("kind", "text", "secret"), POSITIVES)
def test_each_secret_is_replaced_by_its_kind(kind: str, text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text
    assert f"[REDACTED:{kind}]" in result.text
    assert result.counts[kind] >= 1


@pytest.mark.parametrize("text", NEGATIVES)
def test_text_without_secrets_is_unchanged(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert not result.changed


def test_labels_around_a_secret_are_kept() -> None:
    assert redact("password: hunter2-Correct").text == "password: [REDACTED:password]"
    assert redact("Authorization: Bearer abcdefghijklmnop1234").text == (
        "Authorization: Bearer [REDACTED:bearer_token]"
    )


def test_an_unterminated_private_key_block_is_redacted_to_the_end() -> None:
    result = redact("key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n")
    assert "b3BlbnNzaC1rZXkt" not in result.text
    assert result.counts == {"private_key": 1}


def test_luhn_rejects_a_mistyped_card_number() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert redact("4111 1111 1111 1112").text == "4111 1111 1111 1112"
