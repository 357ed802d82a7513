"""Secrets never stored: API keys, tokens, private keys, passwords and card numbers are replaced
by ``[REDACTED:kind]`` before any text is written or sent to a provider.

Every write path calls `redact()` first (remember, forget's correction, ingest, flush, import).
Callers count what was redacted by kind; the values themselves are never logged or kept.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

Replacement = Callable[[re.Match[str]], str]


def _mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _whole(kind: str) -> Replacement:
    return lambda _match: _mark(kind)


def _value_group(kind: str, group: str = "value") -> Replacement:
    """Keep the label ("password: ", "Bearer "), replace only the secret after it."""

    def replace(match: re.Match[str]) -> str:
        start, end = match.span(group)
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + _mark(kind) + text[end - whole_start :]

    return replace


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits):
        return _mark("card_number")
    return match.group(0)


_PASSWORD_LABEL = r"(?:password|passwd|passphrase|pwd|密码|密碼|口令|パスワード)"

# (kind, pattern, replacement). Order matters: specific shapes before generic ones.
_RULES: list[tuple[str, re.Pattern[str], Replacement]] = [
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
        _whole("private_key"),
    ),
    (
        "anthropic_key",
        re.compile(r"\bsk-ant-[A-Za-z0-9]{2,8}-[A-Za-z0-9_\-]{20,}"),
        _whole("anthropic_key"),
    ),
    (
        "openai_key",
        re.compile(r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
        _whole("openai_key"),
    ),
    (
        "github_token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        _whole("github_token"),
    ),
    (
        "aws_access_key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
        _whole("aws_access_key"),
    ),
    (
        "aws_secret_key",
        re.compile(
            r"(?i)\baws_?secret_?(?:access_?)?key\b[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{40})\b"
        ),
        _value_group("aws_secret_key"),
    ),
    (
        "slack_token",
        re.compile(
            r"\bxox[abprse]-[A-Za-z0-9\-]{10,}"
            r"|https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}"
        ),
        _whole("slack_token"),
    ),
    (
        "google_key",
        re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b|\bya29\.[0-9A-Za-z_\-]{20,}"),
        _whole("google_key"),
    ),
    (
        "stripe_key",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|\bwhsec_[0-9A-Za-z]{20,}"),
        _whole("stripe_key"),
    ),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        _whole("jwt"),
    ),
    (
        "bearer_token",
        re.compile(r"(?i)\b(?:bearer|basic|token)\s+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"),
        _value_group("bearer_token"),
    ),
    (
        "url_password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:(?P<value>[^\s@/]+)@"),
        _value_group("url_password"),
    ),
    (
        "password",
        re.compile(
            rf"(?i){_PASSWORD_LABEL}[\"']?\s*(?:[:=：]|は|是|为|為)\s*[\"']?(?P<value>[^\s\"'，。、]+)"
        ),
        _value_group("password"),
    ),
    (
        "password",
        # "my password is hunter2!": only when the value looks like one (a digit or symbol)
        re.compile(
            rf"(?i)\b{_PASSWORD_LABEL}\s+is\s+[\"']?(?P<value>(?=\S*[\d_]|\S*[^\w\s])[^\s\"',.]{{4,}})"
        ),
        _value_group("password"),
    ),
    (
        "secret",
        re.compile(
            r"(?i)\b(?:api[_\-]?key|secret[_\-]?key|client[_\-]?secret|access[_\-]?token"
            r"|auth[_\-]?token|secret|token)\b[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9_\-./+=]{16,})"
        ),
        _value_group("secret"),
    ),
    ("card_number", re.compile(r"(?<![\d\-])\d(?:[ \-]?\d){12,18}(?![\d\-])"), _card),
]


@dataclass
class Redacted:
    text: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def changed(self) -> bool:
        return bool(self.counts)


def redact(text: str) -> Redacted:
    """`text` with every secret replaced by ``[REDACTED:kind]``, and how many of each kind."""
    counts: Counter[str] = Counter()
    for kind, pattern, replacement in _RULES:
        if not text:
            break

        def counted(match: re.Match[str], _r: Replacement = replacement, _k: str = kind) -> str:
            out = _r(match)
            if out != match.group(0):
                counts[_k] += 1
            return out

        text = pattern.sub(counted, text)
    return Redacted(text, counts)


def redact_all(texts: list[str]) -> tuple[list[str], Counter[str]]:
    total: Counter[str] = Counter()
    out = []
    for text in texts:
        result = redact(text)
        total.update(result.counts)
        out.append(result.text)
    return out, total


Recorder = Callable[[Mapping[str, int]], Awaitable[None]]


class Redactor:
    """Redacts texts before a write and records how many secrets of each kind it removed
    (``redacted.<kind>`` counters: counts only, never values)."""

    def __init__(self, record: Recorder) -> None:
        self._record = record

    async def clean(self, text: str) -> str:
        return (await self.clean_many([text]))[0]

    async def clean_optional(self, text: str | None) -> str | None:
        return None if text is None else await self.clean(text)

    async def clean_many(self, texts: list[str]) -> list[str]:
        cleaned, counts = redact_all(texts)
        if counts:
            log.info("redacted %d secret(s): %s", sum(counts.values()), dict(counts))
            await self._record({f"redacted.{kind}": n for kind, n in counts.items()})
        return cleaned
