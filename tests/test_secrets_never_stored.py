"""Acceptance 4: no secret from the redaction table reaches the database file or its WAL."""

from __future__ import annotations

from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ForgetRequest, RelationRequest, RememberRequest, build
from tests.helpers.redaction_table import POSITIVES

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
        ids.append(
            (
                await service.memories.remember(
                    RememberRequest(content=text, source=f"note {text}")
                )
            ).id
        )
    await service.memories.forget(
        ForgetRequest(memory_id=ids[0], reason=POSITIVES[1][1], correction=POSITIVES[2][1])
    )
    stats = await service.status.stats()
    assert stats["redactions"]["openai_key"] >= 2
    assert sum(stats["redactions"].values()) >= len(POSITIVES)
    assert leaked(raw_bytes(settings.db_path)) == []
    detail = await service.reading.memory_detail(ids[0])
    assert "[REDACTED:openai_key]" in detail["memory"]["content"]


async def test_stats_count_redactions_but_never_hold_values(service: CortexService) -> None:
    await service.memories.remember(
        RememberRequest(content="deploy token ghp_R2d2C3poBb8Luke5Leia7Han9Solo1Chewie4")
    )
    stats = await service.status.stats()
    assert stats["redactions"] == {"github_token": 1}
    assert "ghp_" not in repr(stats)


async def test_relations_profile_edits_and_audit_details_store_no_secret(
    service: CortexService, settings: Settings
) -> None:
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z0AbC"
    relation = await service.relations.add(
        build(RelationRequest, subject="user", predicate="has password", object="Zebra!Quasar-4471")
    )
    assert relation["object"] == "[REDACTED:password]"
    await service.relations.add(
        build(RelationRequest, subject="openai account", predicate="uses key", object=key)
    )
    await service.conversation.edit_profile({"summary": f"Developer; their OpenAI key is {key}"})
    made = await service.memories.remember(
        RememberRequest(content="The staging box runs Debian 12")
    )
    await service.memories.forget(ForgetRequest(memory_id=made.id, reason=f"rotated to {key}"))
    log = await service.lifecycle.log()
    assert any("[REDACTED:openai_key]" in str(entry["details"]) for entry in log)
    data = raw_bytes(settings.db_path)
    assert key.encode() not in data and b"Zebra!Quasar-4471" not in data


async def test_metadata_values_at_any_depth_are_redacted_and_counted(
    service: CortexService,
) -> None:
    result = await service.memories.remember(
        RememberRequest(content="Deploy notes for the api"),
        metadata={"env": {"DB_PASSWORD": "p@ss-w0rd-99"}, "links": ["postgres://a:b0b@h/db"]},
    )
    memory = (await service.reading.memory_detail(result.id))["memory"]
    assert memory["metadata"] == {
        "env": {"DB_PASSWORD": "[REDACTED:password]"},
        "links": ["postgres://a:[REDACTED:url_password]@h/db"],
    }
    assert result.redacted == {"password": 1, "url_password": 1}
