"""Secrets written as settings: `.env`/shell/YAML/JSON assignments whose key names a secret
(`OPENAI_API_KEY=...`, `"db_password": "..."`, `authToken: ...`, also after a label such as
`prod: STRIPE_SECRET=...`), credentials inside URLs and DSNs (`postgres://user:p@ss/word@host`),
`Authorization: Bearer ...` (any length in the header, `Bearer` alone when it reads as a token)
and passwords given as command-line flags (`mysql -pSECRET`, `--password=...`,
`curl -u user:pass`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cortex_mcp.engine.redaction.checks import looks_random
from cortex_mcp.engine.redaction.rules import Hint, Refine, Rule, hinted, lazy_pattern, when
from cortex_mcp.engine.redaction.words import DESCRIBING, password_like

# The last word of a key that holds a secret: OPENAI_API_KEY, db.password, authToken, PGPASSWORD.
_PASSWORD_WORDS = {"password", "passwd", "pwd", "pass", "passphrase", "pgpassword"}
_SECRET_WORDS = {"token", "secret", "apikey", "credential", "credentials", "auth", "key"}
# ... unless the key is one of these (a key that names something that is not secret)
_NOT_SECRET_KEYS = {
    "public", "primary", "sort", "partition", "foreign", "cache", "hot", "publishable",
    "idempotency", "map", "group", "shard", "row", "lookup", "unique", "composite", "index",
    "natural", "surrogate", "routing", "hash", "dict", "sorting", "music", "song", "minor",
    "major", "next", "csrf", "page", "pagination", "cursor", "bypass", "boarding", "day",
    "ssh", "gpg", "pgp", "kms", "license", "registration", "activation", "product",
}  # fmt: skip
_PLACEHOLDERS = {
    "", "true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off",
    "required", "optional", "string", "str", "int", "todo", "tbd", "n/a", "na", "env",
}  # fmt: skip

_KEY = r"(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})"
_ASSIGNMENT = lazy_pattern(
    rf"(?<![A-Za-z0-9_.\-]){_KEY}[\"'\]]?\s*(?::=|=>|=|:(?!//))\s*"
    r"(?:(?P<q>[\"'`])(?P<quoted>[^\"'`\n]{1,300})(?P=q)|(?P<bare>[^\s\"'`,;}{)\]<>]{1,300}))"
)
_CAMEL = lazy_pattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def key_words(key: str) -> list[str]:
    """`OPENAI_API_KEY` -> [openai, api, key]; `authToken` -> [auth, token]."""
    words: list[str] = []
    for part in re.split(r"[_.\-]+", key):
        words += [w.lower() for w in _CAMEL.findall(part)] if part else []
    return words


def secret_key_kind(key: str) -> str | None:
    """`password`, `aws_secret_key` or `secret` when the key names a secret, else None."""
    words = key_words(key)
    if len(words) >= 3 and words[-2:] == ["key", "base"]:
        words = words[:-1]  # Rails' SECRET_KEY_BASE: the base every other key is derived from
    if not words:
        return None
    last = words[-1]
    if last in _PASSWORD_WORDS or last.endswith("password"):
        return None if len(words) >= 2 and words[-2] in _NOT_SECRET_KEYS else "password"
    if last not in _SECRET_WORDS and not last.endswith(("token", "secret", "apikey")):
        return None
    if last in {"key", "auth"} and len(words) >= 2 and words[-2] in _NOT_SECRET_KEYS:
        return None
    if last == "key" and len(words) == 1:
        return None  # a bare `key:` is too often a map key, a musical key or a column
    if "aws" in words and "secret" in words:
        return "aws_secret_key"
    return "secret"


def _placeholder(value: str) -> bool:
    lowered = value.strip().lower()
    return (
        lowered in _PLACEHOLDERS
        or lowered in DESCRIBING  # "secret: the launch codename is ...": the clause follows
        or lowered.startswith(("$", "{{", "%(", "<", "[redacted", "os.", "process.", "env("))
        or set(lowered) <= set("*x.•-_ ")
    )


def assigned_secret(key: str, value: str, *, quoted: bool = True) -> str | None:
    """The kind of secret `value` is when it is assigned to `key`, or None. A key ending in
    SECRET or PASSWORD holds a secret whatever it says; one ending in KEY or TOKEN needs a
    value that is not a plain word (`sort_key = created_at` stays)."""
    kind = secret_key_kind(key)
    if kind is None or _placeholder(value):
        return None
    if kind == "password" and key_words(key) == ["pass"]:
        return kind if _secret_like(value) else None  # "a pass: 2 days" is not a password
    if kind == "password":
        return kind if quoted or password_like(value) else None
    named_secret = key_words(key)[-1].endswith(("secret", "credentials"))
    return kind if named_secret or _secret_like(value) else None


class _AssignmentRule(Rule):
    """Only keys that name a secret, with a value that could be one. A value that is not a
    secret is read again as the start of an assignment: a label before one (`remember:
    API_TOKEN=...`, `prod: STRIPE_SECRET=...`) must not hide it; and a bare value followed by
    `=` is the next assignment's key (`aws secret: aws_secret_access_key = ...`)."""

    def spans(self, text: str) -> Iterator[tuple[str, int, int]]:
        position = 0
        while (match := self.pattern.search(text, position)) is not None:
            group = "quoted" if match.group("quoted") is not None else "bare"
            kind = assigned_secret(match.group("key"), match.group(group), quoted=group == "quoted")
            if kind is not None and group == "bare" and _NEXT_IS_VALUE.match(text, match.end()):
                kind = None
            if kind is None:
                position = match.start(group)
                continue
            yield kind, *match.span(group)
            position = match.end()


def _secret_like(value: str) -> bool:
    return looks_random(value, 8) or (
        len(value) >= 8 and any(c.isdigit() for c in value) and not value.isdigit()
    )


_NEXT_IS_VALUE = lazy_pattern(r"[ \t]*(?:=>|:?=)")
ASSIGNMENT = _AssignmentRule("secret", _ASSIGNMENT)


def _url_password(value: str) -> tuple[int, int] | None:
    if re.fullmatch(r"\d{1,5}(?:/.*)?", value):  # https://host:8080/@user is a port, not a password
        return None
    return 0, len(value)


URL_PASSWORD = Rule(
    "url_password",
    # the password runs to the last @ before the host, so it may hold '/', '@' and ':'
    lazy_pattern(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/@?#]*:"
        r"(?P<value>[^\s?#]+)@(?=[A-Za-z0-9\[_])"
    ),
    groups=("value",),
    refine=_url_password,
)

BEARER = Rule(
    "bearer_token",
    lazy_pattern(
        r"(?i)(?<![A-Za-z0-9])(?:bearer|token|basic)\s+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"
    ),
    groups=("value",),
    refine=lambda value: (0, len(value)) if looks_random(value, 16) else None,
)

# In an Authorization header whatever follows the scheme is the credential, however short.
AUTHORIZATION = Rule(
    "bearer_token",
    lazy_pattern(
        r"(?i)(?<![A-Za-z0-9\-])(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?\s*"
        r"(?:bearer|token|basic)\s+(?P<value>[A-Za-z0-9._~+/\-]{4,}=*)"
    ),
    groups=("value",),
    refine=lambda value: None if _placeholder(value) else (0, len(value)),
)
# `Bearer` capitalised as the scheme is written, then a word of letters and digits.
SHORT_BEARER = Rule(
    "bearer_token",
    lazy_pattern(r"(?<![A-Za-z0-9])Bearer\s+(?P<value>[A-Za-z0-9._~+/\-]{6,}=*)(?![A-Za-z0-9])"),
    groups=("value",),
    refine=lambda value: (
        (0, len(value))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
        else None
    ),
)

CLI_PASSWORD = Rule(
    "password",
    lazy_pattern(
        r"(?<![A-Za-z0-9])(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?\s-p(?P<mysql>[^\s\-]\S*)"
        r"|(?<![A-Za-z0-9])sshpass\s+-p\s*(?P<sshpass>\S+)"
        r"|\s(?:-u|--user)\s+[^\s:]+:(?P<curl>[^\s\"']+)"
        r"|--(?:[a-z0-9]+-)*(?:password|passwd|pass|passphrase|token|api-?key|secret|auth-token)"
        r"(?:=|\s+)[\"']?(?P<flag>[^\s\"']+)"
    ),
    groups=("mysql", "sshpass", "curl", "flag"),
    refine=lambda value: None if _placeholder(value) else (0, len(value)),
)


def _not_placeholder(value: str) -> tuple[int, int] | None:
    return None if _placeholder(value) else (0, len(value))


def _tool_flag(tools: str, flag: str, refine: Refine = _not_placeholder) -> Rule:
    """A command of `tools` (on one line, before a pipe or `;`) whose `flag` gives a password."""
    return Rule(
        "password",
        lazy_pattern(
            rf"(?<![A-Za-z0-9_\-])(?:{tools})\b[^\n|;&]*?(?<=\s){flag}[\"']?(?P<value>[^\s\"']+)"
        ),
        groups=("value",),
        refine=refine,
    )


# Short flags that take a password, by the tools that read them so.
TOOL_PASSWORDS: list[Rule] = [
    _tool_flag(
        r"(?:docker|podman|buildah|skopeo|helm|nerdctl|oras|crane)\b[^\n|;&]*?\blogin", r"-p\s+"
    ),
    _tool_flag(r"redis-cli|keydb-cli|valkey-cli", r"-a\s+"),
    _tool_flag(r"openssl", r"-k\s+"),
    _tool_flag(r"7z|7za|7zr|rar|unrar", r"-p(?=[^\s\-])"),
    _tool_flag(r"zip|unzip|zipcloak", r"-P\s+"),
    _tool_flag(r"ldap[a-z]+", r"-w\s+"),
    _tool_flag(r"mongo|mongosh|mongodump|mongorestore", r"-p\s+"),
    _tool_flag(r"smbclient|rpcclient|smbmap|smbget|mount\.cifs", r"-U\s+[^\s%]+%"),
    _tool_flag(r"sqlcmd|bcp|osql|isql", r"-P\s*"),
    # a positional password: `net user NAME PASSWORD`, `htpasswd -b FILE USER PASSWORD`
    _tool_flag(r"net", r"user\s+\S+\s+(?=[^\s/*])", when(_secret_like)),
    _tool_flag(r"htpasswd", r"-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+"),
    # OpenSSL's pass phrase arguments, in any command that takes them: -passin pass:SECRET
    _tool_flag(r"\S+", r"-(?:passin|passout|pass|password)\s+pass:"),
]

# A PostgreSQL password file line (~/.pgpass): host:port:database:user:password.
PGPASS = Rule(
    "password",
    lazy_pattern(
        r"(?<![^\s:])(?P<host>[\w.\-*\[\]]+):(?:\d{1,5}|\*):[\w.\-*]+:(?P<user>[\w.\-*@]*[A-Za-z*][\w.\-*@]*):"
        r"(?P<value>[^\s:]\S*)"
    ),
    groups=("value",),
    refine=lambda value: None if _placeholder(value) else (0, len(value.rstrip(".,;"))),
)

RULES: list[Rule] = [
    *hinted("://", [URL_PASSWORD]),
    *hinted("bearer|token|basic", [AUTHORIZATION, BEARER, SHORT_BEARER]),
    *hinted("mysql|mariadb|sshpass|-u |--", [CLI_PASSWORD]),
    *hinted(
        Hint(r"\s-(?:[pakwu]\b|p\S|pass)|net user|htpasswd", ("-", "net user", "htpasswd")),
        TOOL_PASSWORDS,
    ),
    *hinted(r":(?:\d{1,5}|\*):[^\s:]+:[^\s:]+:", [PGPASS]),
    *hinted(
        Hint(
            r"(?:key|token|secret|pass|pwd|auth|credentials?)\w*[\"'\]]?\s*[=:]",
            ("key", "token", "secret", "pass", "pwd", "auth", "credential"),
        ),
        [ASSIGNMENT],
    ),
]
