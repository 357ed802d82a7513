"""Secrets are redacted by kind; look-alikes are left exactly as they were."""

from __future__ import annotations

import pytest

from cortex_mcp.engine.redaction import luhn_valid, redact
from tests.helpers.redaction_table import NEGATIVES, POSITIVES


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


def test_detection_reads_through_zero_width_and_full_width_characters() -> None:
    hidden = "ghp_R2d2C3poBb8Luke5Le\u200bia7Han9Solo1Chewie4"
    result = redact(f"token: {hidden} \u200bkeep\u200b")
    assert result.text == "token: [REDACTED:github_token] \u200bkeep\u200b"  # the rest as given
    wide = redact("ｐａｓｓｗｏｒｄ：ｈｕｎｔｅｒ２ｘ　ｏｋ")
    assert wide.text == "ｐａｓｓｗｏｒｄ：[REDACTED:password]　ｏｋ"


def test_an_env_key_ending_in_token_key_or_secret_is_redacted_whatever_its_prefix() -> None:
    text = (
        "MY_SERVICE_TOKEN=abcd1234efgh5678\nSTRIPE_WEBHOOK_SECRET='whatever-it-is'\nsort_key=name"
    )
    assert redact(text).text == (
        "MY_SERVICE_TOKEN=[REDACTED:secret]\nSTRIPE_WEBHOOK_SECRET='[REDACTED:secret]'\n"
        "sort_key=name"
    )


def test_redacting_twice_changes_nothing_more() -> None:
    once = redact("my password is hunter two; card 4111-1111-1111-1111").text
    again = redact(once)
    assert again.text == once and not again.changed


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("IBAN GB82 WEST 1234 5698 7654 32 please", "iban"),
        ("ssn 219-09-9998", "national_id"),
        ("身份证号11010519491231002X", "national_id"),
        ("密码：芝麻开门", "password"),
        ("パスワードは sakura2024 です", "password"),
        ("postgres://app:p@ss/w0rd@db.internal:5432/app", "url_password"),
        ("login is bob and pass is Bobby1985", "password"),
        ("密码我已经改成了sunshine2024", "password"),
    ],
)
def test_checksummed_numbers_and_prose_secrets_are_found(text: str, kind: str) -> None:
    assert redact(text).counts == {kind: 1}


@pytest.mark.parametrize(
    "text",
    [
        "IBAN GB82 WEST 1234 5698 7654 33 (one digit off)",
        "订单110105194912310021 (an 18-digit number with a bad check digit)",
        "the password is the same as the old one",
        "密码是多少？",
        "パスワードを忘れました",
    ],
)
def test_look_alikes_with_a_bad_checksum_or_no_value_stay(text: str) -> None:
    assert redact(text).text == text


# Random ids whose hex holds a run that passes a card's Luhn test and issuer prefix, or an
# IBAN's country length and mod-97 (about one UUID in 800 does): ids in audit entries and
# memories must come back exactly as given.
UUIDS_WITH_LOOK_ALIKES = [
    "0b06975b-26e9-4e60-8735-20084419535e",  # a card number across 4e60-8735-2008...
    "ee041ace-c0b0-4d61-9ccc-c7da74eced5f",  # an IBAN
]


@pytest.mark.parametrize("uuid", UUIDS_WITH_LOOK_ALIKES)
def test_a_uuid_is_never_read_as_a_card_number_or_an_iban(uuid: str) -> None:
    for text in (uuid, f"merged {uuid} into another", f'{{"memory_ids": ["{uuid}"]}}'):
        assert redact(text).text == text


def test_a_card_number_or_iban_next_to_a_uuid_is_still_redacted() -> None:
    uuid = UUIDS_WITH_LOOK_ALIKES[0]
    text = f"request {uuid}: card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00"
    redacted = redact(text)
    assert uuid in redacted.text
    assert "4111" not in redacted.text and "DE89" not in redacted.text
    assert redacted.counts == {"card_number": 1, "iban": 1}


def test_a_word_that_only_contains_cle_does_not_make_an_id_near_it_a_key() -> None:
    # reflect's summaries quote their sources ("Marco cycles to work (memory <id>)"): the French
    # "clé" inside "cycles", "uncle" or "vehicle" named the id beside it a secret
    for text in (
        "Marco cycles to work every day (memory 01a24d85-1034-7b1d-93d8-c8321038e09f)",
        "My uncle sold the vehicle (memory 01a24d85-1077-7de8-aab1-581931a6c699)",
    ):
        assert redact(text).text == text
    assert "[REDACTED:secret]" in redact("la clé est 8f3kQ9xZ2mP7vL4nR6tY").text
