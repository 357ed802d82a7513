"""Every provider format of engine/redaction/providers.py, each cut whole wherever it is written,
and words that only begin like one left alone. The values are fabricated: the right shape, a
fixed pseudo-random body, no real account."""

from __future__ import annotations

import random
import string

import pytest

from cortex_mcp.engine.redaction import redact

_RNG = random.Random(33)
_BASE62 = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_UPPER_DIGITS = string.ascii_uppercase + string.digits


def _run(length: int, alphabet: str = _BASE62) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(length))


FORMATS: list[tuple[str, str, str]] = [
    ("groq", "api_token", "gsk_" + _run(52)),
    ("replicate", "api_token", "r8_" + _run(37)),
    ("perplexity", "api_token", "pplx-" + _run(48)),
    ("xai", "api_token", "xai-" + _run(80)),
    ("linear", "api_token", "lin_api_" + _run(40)),
    ("notion", "api_token", "ntn_" + _run(46)),
    ("notion (older)", "api_token", "secret_" + _run(43)),
    ("postman", "api_token", "PMAK-" + _run(24, _HEX) + "-" + _run(34, _HEX)),
    ("atlassian", "api_token", "ATATT3" + _run(180)),
    ("doppler personal", "api_token", "dp.pt." + _run(43)),
    ("doppler service", "api_token", "dp.st.prd." + _run(43)),
    ("vault", "api_token", "hvs." + _run(90)),
    ("databricks", "api_token", "dapi" + _run(32, _HEX)),
    ("mailgun", "api_token", "key-" + _run(32, _HEX)),
    ("figma", "api_token", "figd_" + _run(40)),
    ("grafana service account", "api_token", "glsa_" + _run(32) + "_" + _run(8, _HEX)),
    ("supabase", "api_token", "sbp_" + _run(40, _HEX)),
    ("age", "api_token", "AGE-SECRET-KEY-1" + _run(58, _UPPER_DIGITS)),
    ("openrouter", "api_token", "sk-or-v1-" + _run(64, _HEX)),
    ("langsmith personal", "api_token", "lsv2_pt_" + _run(32, _HEX) + "_" + _run(10, _HEX)),
    ("langsmith service", "api_token", "lsv2_sk_" + _run(32, _HEX) + "_" + _run(10, _HEX)),
    ("mapbox secret", "api_token", "sk.eyJ1Ijoi" + _run(60) + "." + _run(22)),
    ("terraform cloud", "api_token", _run(14) + ".atlasv1." + _run(67)),
    ("netlify", "api_token", "nfp_" + _run(36)),
    ("fireworks", "api_token", "fw_" + _run(24)),
    ("firebase messaging", "api_token", "AAAA" + _run(7) + ":APA91b" + _run(134)),
    ("dropbox", "api_token", "sl." + _run(138)),
    ("dropbox (u.)", "api_token", "sl.u." + _run(140)),
    ("airtable", "api_token", "pat" + _run(14) + "." + _run(64, _HEX)),
    ("cloudflare origin ca", "api_token", "v1.0-" + _run(24, _HEX) + "-" + _run(146, _HEX)),
    ("bitbucket", "api_token", "ATBB" + _run(32)),
    ("telegram", "telegram_token", "123456789:" + _run(35)),
]


@pytest.mark.parametrize(("name", "kind", "secret"), FORMATS, ids=[f[0] for f in FORMATS])
@pytest.mark.parametrize(
    "sentence", ["the {name} token is {secret}", "{secret}", 'KEY="{secret}" # {name}']
)
def test_each_provider_format_is_cut_whole(
    name: str, kind: str, secret: str, sentence: str
) -> None:
    text = sentence.format(name=name, secret=secret)

    redacted = redact(text).text

    assert f"[REDACTED:{kind}]" in redacted
    for piece in (secret[-12:], secret[len(secret) // 2 :][:12]):
        assert piece not in redacted


@pytest.mark.parametrize(
    "secret", ["secret_" + _run(43) + "XYZ", "dapi" + _run(32, _HEX) + "abc9", "glsa_" + _run(45)]
)
def test_a_token_longer_than_its_format_leaves_no_tail(secret: str) -> None:
    redacted = redact(f"token: {secret} (rotated)").text

    assert secret[-4:] not in redacted
    assert redacted.endswith(" (rotated)")


@pytest.mark.parametrize(
    "text",
    [
        "the fw_update_firmware_helper script failed on v1.0-beta",
        "see sl.no 4 of the pattern library; patterns.yaml holds the rest",
        "we moved the dp.st.louis office to the new building",
        "the ATBB meeting is at noon; NRAK-ish names are fine",
        "python -m pip install key-value-store",
    ],
)
def test_words_that_begin_like_a_format_are_left_alone(text: str) -> None:
    assert redact(text).text == text
