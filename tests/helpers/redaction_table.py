"""Secrets that must never be stored, and look-alikes that must be left alone.

Each positive is (kind, text, secret): after redaction `secret` must be gone and
``[REDACTED:kind]`` present. Each negative is text that must come back unchanged. The values
are fabricated (right shape, no real account)."""

from __future__ import annotations

_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7Zq3xT0k1mQ9vJr8cXbFh2nA4sKpL0wYtE5uR6iO3dG\n"
    "q1W2e3R4t5Y6u7I8o9P0aSdFgHjKlZxCvBnM\n"
    "-----END RSA PRIVATE KEY-----"
)
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)

POSITIVES: list[tuple[str, str, str]] = [
    (
        "openai_key",
        "my key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0AbC",
        "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0AbC",
    ),
    (
        "openai_key",
        "export OPENAI_API_KEY=sk-4fGh7Jk0LmN3pQr6StU9vWx2YzA5bC8dEf",
        "sk-4fGh7Jk0LmN3pQr6StU9vWx2YzA5bC8dEf",
    ),
    (
        "anthropic_key",
        "ANTHROPIC_API_KEY=sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-xyzXYZ12",
        "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA-xyzXYZ12",
    ),
    (
        "github_token",
        "clone with ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4 please",
        "ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4",
    ),
    (
        "github_token",
        "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCD",
    ),
    (
        "aws_access_key",
        "AWS key id AKIAZ7Q2W3E4R5T6Y7U8 for the backup bucket",
        "AKIAZ7Q2W3E4R5T6Y7U8",
    ),
    ("aws_secret_key", f"aws_secret_access_key = {_AWS_SECRET}", _AWS_SECRET),
    (
        "slack_token",
        "the bot uses xoxb-2048-4096-AbCdEfGhIjKlMnOpQrStUv",
        "xoxb-2048-4096-AbCdEfGhIjKlMnOpQrStUv",
    ),
    (
        "slack_token",
        "webhook https://hooks.slack.com/services/T0ABCDEF1/B0GHIJKL2/QrStUvWxYz0123456789abcd",
        "QrStUvWxYz0123456789abcd",
    ),
    (
        "google_key",
        "Maps key AIzaSyD4e5F6g7H8i9J0kL1mN2oP3qR4sT5uV6w",
        "AIzaSyD4e5F6g7H8i9J0kL1mN2oP3qR4sT5uV6w",
    ),
    (
        "stripe_key",
        "stripe secret sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
    ),
    ("jwt", f"session cookie {_JWT}", _JWT),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c'",
        "9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c",
    ),
    ("private_key", f"here is the deploy key:\n{_PEM}\nthanks", "MIIEowIBAAKCAQEA7Zq3xT0k1mQ9vJr8"),
    ("password", "password: hunter2-Correct", "hunter2-Correct"),
    ("password", "db password=Tr0ub4dor&3 on staging", "Tr0ub4dor&3"),
    ("password", "我的密码是 qwer1234abcd", "qwer1234abcd"),
    ("password", "パスワードは s3cr3t-pass です", "s3cr3t-pass"),
    ("password", "my password is Blue-Horse-77", "Blue-Horse-77"),
    ("url_password", "DATABASE_URL=postgres://app:pa55w0rd@db.local:5432/app", "pa55w0rd"),
    ("card_number", "charge card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111"),
    ("card_number", "Visa 4012-8888-8888-1881 on file", "4012-8888-8888-1881"),
    ("card_number", "卡号5555555555554444", "5555555555554444"),
    (
        "secret",
        'config: api_key = "q8W2e4R6t8Y0u2I4o6P8a0S2d4F6g8H0"',
        "q8W2e4R6t8Y0u2I4o6P8a0S2d4F6g8H0",
    ),
]

NEGATIVES: list[str] = [
    "I forgot my password again, how do I reset it?",
    "The password policy requires at least 12 characters.",
    "Our order number is 1234 5678 9012 3456 (not a card).",
    "Call me at +81 90 1234 5678 tomorrow.",
    "The task-list skill is great for planning.",
    "Use the Bearer scheme in the Authorization header.",
    "The build id is 2026-11-21-0930.",
    "我的生日是1990年5月3日,电话13800138000。",
    "Git commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed it.",
    "The eyJ prefix means base64 JSON.",
    "Deploy with ssh://deploy@example.com/srv/app (key auth, no password).",
    "the password is stored hashed with argon2",
    "ISBN 978-3-16-148410-0 is the book.",
]
