"""Acceptance: the labelled corpus (tests/helpers/redaction_corpus.py) written through every way in
(remember, ingest with a stub LLM, import, flush) leaves no secret in the database file, its WAL
or what the provider received; ordinary sentences come back unchanged (at most 0.5% changed).
`python -m bench.redaction` prints the figures by category and language."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.engine.redaction import redact
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import (
    FlushRequest,
    ImportRequest,
    IngestRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock, llm_stub_settings
from tests.helpers.llm_stub import Received, Reply, StubLLM, extraction, llm_stub
from tests.helpers.redaction_corpus import ORDINARY, SECRETS, Secret, locomo_turns, needle

pytestmark = pytest.mark.anyio

MAX_CHANGED = 0.005


def raw_bytes(db_path: Path) -> bytes:
    """Everything SQLite keeps on disk for this database: main file, WAL and shared memory."""
    return b"".join(
        Path(f"{db_path}{suffix}").read_bytes()
        for suffix in ("", "-wal", "-shm")
        if Path(f"{db_path}{suffix}").exists()
    )


def leaked(items: list[Secret], data: bytes) -> list[str]:
    """Needles found in `data`, compared case-insensitively (full-text tokens are lower case)
    and in JSON's escaped form as well (request bodies)."""
    lowered = data.lower()
    found = []
    for item in items:
        text = needle(item)
        forms = {text.encode(), json.dumps(text)[1:-1].encode()}
        if any(form.lower() in lowered for form in forms):
            found.append(f"{item.category}/{item.lang}: {item.text!r}")
    return found


def _echo(request: Received) -> Reply:
    """A model that repeats what it was sent as a memory and a relation."""
    said = request.user[-600:]
    return extraction(
        [{"content": said, "category": "fact", "importance": 0.6, "source": said[:100]}],
        [{"subject": "user", "predicate": "said", "object": said[:200]}],
    )


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with llm_stub() as server:
        server.responder = _echo
        yield server


@pytest.fixture
def llm_settings(tmp_path: Path, stub: StubLLM) -> Settings:
    return llm_stub_settings(tmp_path / "brain.db", stub, llm_timeout_s=30)


@pytest.fixture
async def svc(llm_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(llm_settings, clock=clock) as service:
        yield service


def _batches(items: list[Secret], size: int) -> Iterator[list[Secret]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _export_document(texts: list[str], agent: str) -> str:
    """Our JSON export format, with the texts in every field an import stores."""
    now = "2026-10-01T09:00:00+00:00"
    memories = [
        {
            "id": str(uuid.uuid4()),
            "agent_id": agent,
            "layer": "core",
            "category": "fact",
            "content": text,
            "source": f"pasted: {text}"[:400],
            "importance": 0.6,
            "confidence": 0.8,
            "decay_score": 1.0,
            "access_count": 0,
            "created_at": now,
            "updated_at": now,
            "metadata": {"note": text, "nested": [{"said": text}]},
        }
        for text in texts
    ]
    relations = [
        {
            "agent_id": agent,
            "subject": "user",
            "predicate": "wrote",
            "object": text[:200],
            "confidence": 0.8,
            "created_at": now,
            "updated_at": now,
        }
        for text in texts
    ]
    logs = [
        {
            "action": "correct",
            "memory_ids": [m["id"]],
            "executed_at": now,
            "details": {"reason": m["content"]},
        }
        for m in memories
    ]
    return json.dumps(
        {
            "format": "cortex-mcp-export",
            "memories": memories,
            "relations": relations,
            "lifecycle_log": logs,
        },
        ensure_ascii=False,
    )


async def test_no_secret_of_the_corpus_reaches_disk_or_the_provider(
    svc: CortexService, llm_settings: Settings, stub: StubLLM
) -> None:
    assert len(SECRETS) >= 200 and {s.lang for s in SECRETS} == {"en", "zh", "ja"}
    for item in SECRETS:
        await svc.memories.remember(
            RememberRequest(content=item.text, source=item.text[:400]),
            metadata={"said": item.text},
        )
    for batch in _batches(SECRETS, 5):
        await svc.conversation.ingest(
            build(
                IngestRequest,
                user_message="\n".join(s.text for s in batch),
                assistant_message=f"Noted: {batch[0].text}",
                session_id=batch[-1].text[:128],
            )
        )
    await svc.exchange.import_memories(
        build(ImportRequest, content=_export_document([s.text for s in SECRETS], "default"))
    )
    for batch in _batches(SECRETS, 20):
        messages = [{"role": "user", "content": s.text} for s in batch]
        await svc.conversation.flush(
            build(
                FlushRequest,
                messages=messages,
                session_id=batch[0].text[:128],
                reason=batch[1].text[:200],
            )
        )
    await svc.drain()

    assert stub.received, "the ingests and flushes reached the provider"
    sent = bytes(stub.raw) + json.dumps([r.body for r in stub.received]).encode()
    assert leaked(SECRETS, sent) == []
    assert leaked(SECRETS, raw_bytes(llm_settings.db_path)) == []
    redactions = (await svc.status.stats())["redactions"]
    assert sum(redactions.values()) >= 4 * len(SECRETS)


async def test_ordinary_sentences_come_back_unchanged(service: CortexService) -> None:
    sentences = list(dict.fromkeys(ORDINARY + locomo_turns()))
    await service.exchange.import_memories(
        build(ImportRequest, content=_export_document(sentences, "default"))
    )
    stored = {m.content for m in await service.stores.exports.memories(None)}
    changed = [s for s in sentences if s.strip() not in stored]  # import trims the ends
    assert len(changed) <= MAX_CHANGED * len(sentences), changed[:20]


def test_the_detector_alone_meets_both_figures() -> None:
    missed = [s for s in SECRETS if s.secret in redact(s.text).text]
    assert missed == []
    sentences = ORDINARY + locomo_turns()
    changed = [s for s in sentences if redact(s).changed]
    assert len(sentences) >= 700
    assert len(changed) <= MAX_CHANGED * len(sentences), changed[:20]


@pytest.mark.needs_data("locomo_dev.json")
def test_the_ordinary_set_holds_every_dev_locomo_turn_when_the_data_is_here(
    data_file: Path,
) -> None:
    turns = locomo_turns(data_file)
    assert len(ORDINARY) + len(turns) >= 1000
    assert len(turns) > 2500
