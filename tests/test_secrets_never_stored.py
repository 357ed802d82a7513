"""Acceptance 4: no secret from the redaction table reaches the database file or its WAL."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.service import CortexService
from tests.redaction_table import POSITIVES

pytestmark = pytest.mark.anyio


def raw_bytes(db_path: Path) -> bytes:
    """Everything SQLite keeps on disk for this database: main file, WAL and shared memory."""
    data = b""
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db_path}{suffix}")
        if path.exists():
            data += path.read_bytes()
    return data


def leaked(data: bytes) -> list[str]:
    return [secret for _, _, secret in POSITIVES if secret.encode() in data]


async def test_remember_and_correction_store_no_secret(
    service: CortexService, settings: Settings
) -> None:
    ids = []
    for _, text, _ in POSITIVES:
        ids.append((await service.remember(text, source=f"note {text}")).id)
    await service.forget(ids[0], reason=POSITIVES[1][1], correction=POSITIVES[2][1])
    stats = await service.stats()
    assert stats["redactions"]["openai_key"] >= 2
    assert sum(stats["redactions"].values()) >= len(POSITIVES)
    assert leaked(raw_bytes(settings.db_path)) == []
    detail = await service.memory_detail(ids[0])
    assert "[REDACTED:openai_key]" in detail["memory"]["content"]


async def test_stats_count_redactions_but_never_hold_values(service: CortexService) -> None:
    await service.remember("deploy token ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4")
    stats = await service.stats()
    assert stats["redactions"] == {"github_token": 1}
    assert "ghp_" not in repr(stats)
