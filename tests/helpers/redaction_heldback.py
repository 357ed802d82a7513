"""Held-back redaction forms for probe item 4 of issue 26: written before the detector's
patterns were changed, and not looked at while they were written (so the figures they give are
a measure of the forms the probe did not name, not of patterns fitted to them). Do not tune the
detector against this list; add new forms to `PROBE_SECRETS` in redaction_corpus.py instead.

Rows are (category, language, text, secret) like `SECRETS`; values are fabricated from a seeded
generator and belong to no account."""

from __future__ import annotations

import random
import string

from tests.helpers.redaction_corpus import Secret

_rng = random.Random(2626)
_B62 = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"


def _draw(alphabet: str, n: int) -> str:
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


HELD_BACK: list[Secret] = []


def _add(category: str, lang: str, text: str, secret: str) -> None:
    assert secret in text, (text, secret)
    HELD_BACK.append(Secret(category, lang, text, secret))


_w = [_draw(_B62, n) for n in (32, 28, 24, 36, 20, 30)]
for text, secret in [
    (f"staging: DATABASE_PASSWORD={_w[0]}", _w[0]),
    (f"note to self: SESSION_SECRET={_w[1]}", _w[1]),
    (f"ci: NPM_AUTH_TOKEN={_w[2]}", _w[2]),
    (f"Remember: db_password={_w[4]}", _w[4]),
    (f"backup - MAILGUN_KEY=key-{_w[3]}", _w[3]),
    (f"TODO: rotate TWILIO_AUTH_TOKEN={_w[5]}", _w[5]),
]:
    _add("word_colon_assignment", "en", text, secret)
_add("word_colon_assignment", "zh", f"生产环境：SENTRY_DSN_SECRET={_w[2][:20]}", _w[2][:20])
_add("word_colon_assignment", "ja", f"メモ：REDIS_AUTH={_w[1][:22]}", _w[1][:22])

for text, secret in [
    ("the cvc is 321", "321"),
    ("CVC2: 889", "889"),
    ("card security code: 0412", "0412"),
    ("cvv2 557", "557"),
    ("Visa ending 4242, exp 09/29, cvv is 618", "618"),
    ("CID code 7391 on the front of the Amex", "7391"),
]:
    _add("cvv", "en", text, secret)
_add("cvv", "zh", "信用卡安全码是 274", "274")
_add("cvv", "ja", "セキュリティコード：946", "946")

_h = [_draw(_HEX, n) for n in (128, 32, 64, 96)]
for text, secret in [
    (f"SECRET_KEY_BASE: {_h[0]}", _h[0]),
    (f"RAILS_MASTER_KEY={_h[1]}", _h[1]),
    (f'secret_key_base = "{_h[2]}"', _h[2]),
    (f"prod: SECRET_KEY_BASE={_h[3]}", _h[3]),
    (f"DJANGO_SECRET_KEY={_draw(_B62, 50)}", ""),
]:
    _add("hex_key", "en", text, secret or text.split("=", 1)[1])

for text, secret in [
    ("curl -H 'Authorization: Bearer x9Yz12' https://api.example.com", "x9Yz12"),
    ("Authorization:Bearer q1w2e3r4", "q1w2e3r4"),
    ("use the header authorization: bearer Zz81kq", "Zz81kq"),
    ('headers = {"Authorization": "Bearer tk7Hq2pL"}', "tk7Hq2pL"),
    ("Proxy-Authorization: Bearer p0x9Ab", "p0x9Ab"),
]:
    _add("short_bearer", "en", text, secret)
_add("short_bearer", "ja", "ヘッダーは Authorization: Bearer Jp7k2m です", "Jp7k2m")
