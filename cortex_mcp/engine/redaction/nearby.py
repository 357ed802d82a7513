"""A random-looking string next to a word that names a secret ("the signing secret is
8f3kQ9...", "API key: 9b1c...", "密钥 a8F3...", "トークンは Zx9...") is a secret whatever its
format. Ids, hashes and UUIDs without such a word next to them are left alone."""

from __future__ import annotations

import re

from cortex_mcp.engine.redaction.checks import entropy_bits, looks_random
from cortex_mcp.engine.redaction.providers import TOKEN_RUN
from cortex_mcp.engine.redaction.rules import Hint, Rule, lazy_pattern

_STRONG = (
    r"api[\s_\-]?keys?|secrets?|tokens?|passwords?|passwd|passphrase|credentials?|"
    r"access[\s_\-]?keys?|private[\s_\-]?keys?|client[\s_\-]?secret|auth(?:orization)?|"
    r"license\s+key|signing\s+key|session\s+(?:id|cookie)|cookie|"
    r"密钥|秘钥|密鑰|令牌|秘密|口令|密码|密碼|凭证|憑證|トークン|シークレット|アクセスキー|APIキー|秘密鍵|認証|"
    r"secretid|secretkey|access\s?key|clave|llave|schl[üu]ssel|\bcl[ée]\b|chave|chiave|jeton|geheimnis|"
    r"segreto|secreto|segredo|sleutel|ключ|токен|секрет|비밀|시크릿|토큰|인증키"
)
_CHARS = r"A-Za-z0-9+/=_\-.~"
NEAR_SECRET_WORD = Rule(
    "secret",
    lazy_pattern(
        rf"(?:{_STRONG})[^\n.。!?！？]{{0,30}}?(?<![{_CHARS}])(?P<value>[{_CHARS}]{{16,300}})(?![{_CHARS}])"
        rf"|(?<![A-Za-z])keys?\s*(?:is|was|:|=|：)\s*(?P<key>[{_CHARS}]{{16,300}})(?![{_CHARS}])",
        re.IGNORECASE,
    ),
    groups=("value", "key"),
    refine=lambda value: _random_token(value),
    # its characters are some of the providers' run's: no run of those, none of these
    hint=Hint(r"[a-z0-9+/=_\-.~]{16}", within=TOKEN_RUN),
)


def _random_token(value: str) -> tuple[int, int] | None:
    stripped = value.rstrip(".-_~")
    if stripped.startswith(("/", "~", ".", "http")) or "://" in stripped:
        return None
    if "/" in stripped and "." in stripped:
        return None  # a file path or a domain with a path
    if re.match(r"\d{4}-\d{2}-\d{2}", stripped):
        return None  # a date-based build or release name
    return (0, len(stripped)) if looks_random(stripped) else None


# A long token with the spread of a generated key, whatever is around it: upper and lower case
# letters and digits mixed (base62 or base64, 32 characters or more) and an entropy no word, id
# or hex hash reaches. Inside a URL or a path it is a part of the address, not a key.
_GENERATED = lazy_pattern(
    r"(?<![A-Za-z0-9+/=_\-.~:@%])[A-Za-z0-9+/_\-]{32,300}={0,2}(?![A-Za-z0-9+/=_\-~@%])"
)


def _generated_key(value: str) -> tuple[int, int] | None:
    body = value.rstrip("=")
    if body.startswith("/") or (
        "/" in body
        and (
            not re.fullmatch(r"[A-Za-z0-9+/]+", body)
            or any(re.fullmatch(r"[a-z]{3,}", part) for part in body.split("/"))
        )
    ):
        return None  # a path: a leading slash, a dash or underscore, or a folder's name
    kinds = (
        any(c.isupper() for c in body),
        any(c.islower() for c in body),
        any(c.isdigit() for c in body),
    )
    if not all(kinds) or sum(c.isdigit() for c in body) < 3:
        return None
    return (0, len(value)) if entropy_bits(body) >= 4.3 else None


GENERATED_KEY = Rule("secret", _GENERATED, refine=_generated_key)
