"""Probe item 4 of issue 26: the secret forms an attacker's probe found on disk. A leading
`word:` before an assignment (`remember: API_TOKEN=...`), a CVV after its word, a
`SECRET_KEY_BASE` of hex, a short bearer token, and a relation whose object alone is an
assignment: each is redacted before anything is written, by every way in (remember, ingest,
flush, relations, import, correct, profile edits), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.engine.redaction import redact
from cortex_mcp.engine.redaction.redactor import redact_joined
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service.requests import (
    ExportRequest,
    FlushRequest,
    ImportRequest,
    IngestRequest,
    LifecycleLogRequest,
    RelationListRequest,
    RelationRequest,
    RememberRequest,
    build,
)
from tests.conftest import FakeClock
from tests.helpers.redaction_corpus import ORDINARY, PROBE_SECRETS, Secret, locomo_turns
from tests.test_redaction_corpus import _export_document, leaked, raw_bytes

pytestmark = pytest.mark.anyio

AWS_SECRET = next(s.secret for s in PROBE_SECRETS if s.category == "relation_object")


@pytest.mark.parametrize("item", PROBE_SECRETS, ids=lambda s: f"{s.category}-{s.lang}")
def test_the_detector_catches_each_probe_form(item: Secret) -> None:
    assert item.secret not in redact(item.text).text


def test_the_new_rules_leave_ordinary_text_alone() -> None:
    changed = [s for s in [*ORDINARY, *locomo_turns()] if redact(s).changed]
    assert changed == []
    for text in [
        "The bearer of bad news arrived at 10",
        "the security code of conduct was updated in 2023",
        "cvv is the three digits on the back",
        "prod: deploy at 9:30, staging: 10:00",
        "note: the secret_key_base rotates yearly",
        "room 123, security desk on floor 2",
    ]:
        assert not redact(text).changed, text


def test_each_field_of_a_relation_is_redacted_on_its_own_and_in_context() -> None:
    counts: Counter[str] = Counter()
    for predicate in ("has token", "aws secret", "uses"):
        triple = redact_joined(["ci", predicate, f"aws_secret_access_key = {AWS_SECRET}"], counts)
        assert triple[:2] == ["ci", predicate]
        assert triple[2] == "aws_secret_access_key = [REDACTED:aws_secret_key]", triple
    # in context: the predicate names the secret the object holds
    _, _, said = redact_joined(["the wifi", "has password", "Tr0ub4dor&3"], counts)
    assert "Tr0ub4dor&3" not in said


async def test_no_probe_form_reaches_the_store_by_any_write_path(
    backend: str, backend_settings: Settings, clock: FakeClock, tmp_path: Path
) -> None:
    texts = [item.text for item in PROBE_SECRETS]
    async with open_cortex(backend_settings, clock=clock) as svc:
        for index, text in enumerate(texts):
            await svc.memories.remember(RememberRequest(content=text, source=text))
            await svc.relations.add(
                build(RelationRequest, subject="ci", predicate="has token", object=text)
            )
            await svc.relations.add(
                build(RelationRequest, subject=text, predicate="is set in", object="the vault")
            )
            await svc.conversation.ingest(
                build(
                    IngestRequest,
                    user_message=text,
                    assistant_message=f"Noted: {text}",
                    session_id=f"s{index}",
                )
            )
            kept = await svc.memories.remember(RememberRequest(content=f"card note {index}"))
            await svc.memories.correct(kept.id, content=text, reason=text)
        await svc.conversation.flush(
            build(
                FlushRequest,
                messages=[{"role": "user", "content": text} for text in texts],
                reason=texts[0],
            )
        )
        await svc.exchange.import_memories(
            build(ImportRequest, content=_export_document(texts, "default"))
        )
        await svc.conversation.edit_profile({"summary": " ".join(texts), "domains": texts})
        await svc.drain()
        seen = json.dumps(
            [
                await svc.exchange.export_memories(build(ExportRequest, format="json")),
                await svc.conversation.profile(),
                await svc.relations.list(build(RelationListRequest, limit=10_000)),
                await svc.lifecycle.log(build(LifecycleLogRequest, limit=10_000)),
            ],
            ensure_ascii=False,
        ).encode()
    assert leaked(PROBE_SECRETS, seen) == []
    if backend == "sqlite":
        assert leaked(PROBE_SECRETS, raw_bytes(backend_settings.db_path)) == []
