"""The profile round trip (acceptance 5), flush, the profile resource, and no secret anywhere
after ingest and flush: db, WAL, or what the provider received (acceptance 4)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from cortex_mcp.config import Settings
from cortex_mcp.errors import InvalidInput
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import FlushRequest, IngestRequest, RememberRequest, build
from cortex_mcp.transports.mcp import build_server
from tests.conftest import FakeClock, llm_stub_settings
from tests.helpers.llm_stub import StubLLM, extraction, llm_stub, status, text
from tests.helpers.redaction_table import POSITIVES
from tests.test_secrets_never_stored import leaked, raw_bytes

pytestmark = pytest.mark.anyio


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with llm_stub() as server:
        yield server


@pytest.fixture
def llm_settings(tmp_path: Path, stub: StubLLM) -> Settings:
    # no test here is about timeouts: a loaded machine must not make one
    return llm_stub_settings(tmp_path / "brain.db", stub, llm_timeout_s=30)


@pytest.fixture
async def svc(llm_settings: Settings, clock: FakeClock) -> AsyncIterator[CortexService]:
    async with open_cortex(llm_settings, clock=clock) as service:
        await service.engines.llm.warm_up()
        yield service


async def test_the_profile_round_trip(svc: CortexService, stub: StubLLM) -> None:
    assert (await svc.conversation.profile())["text"].startswith("No profile yet")
    await svc.memories.remember(
        RememberRequest(
            content="Harry lives in Tokyo and invests in real estate", category="identity"
        )
    )
    await svc.memories.remember(
        RememberRequest(
            content="Prefers low-risk, steady cash-flow investments", category="preference"
        )
    )
    profile = await svc.conversation.profile()
    assert "Harry lives in Tokyo" in profile["summary"] and profile["source"]["built_by"] == "rules"

    stub.queue(extraction([]))
    await svc.conversation.ingest(
        build(
            IngestRequest,
            user_message="Compare yields in Shinagawa and Ota ward for a 1LDK.",
            assistant_message="Ota is 0.4% higher.",
        )
    )
    assert "Harry lives in Tokyo and invests in real estate" in stub.received[-1].user

    await svc.conversation.edit_profile(
        {
            "domains": ["Japanese real estate"],
            "exclude": ["Small talk, greetings and one-off chit-chat"],
        }
    )
    await svc.memories.remember(
        RememberRequest(content="Speaks Chinese, Japanese and English", category="skill")
    )  # stale now
    rebuilt = await svc.conversation.profile()
    assert "Japanese real estate" in rebuilt["domains"]
    assert "Speaks Chinese, Japanese and English" in rebuilt["domains"]
    assert rebuilt["low_value_signals"] == []

    stub.queue(
        text(
            json.dumps(
                {
                    "summary": "Tokyo-based property investor",
                    "domains": ["servers"],
                    "high_value_signals": ["yields"],
                    "low_value_signals": ["weather"],
                    "language_preferences": "Chinese",
                    "active_projects": ["Shinagawa 1LDK"],
                }
            )
        )
    )
    synthesised = await svc.conversation.profile(refresh=True)
    assert synthesised["source"]["built_by"] == "llm"
    assert synthesised["summary"] == "Tokyo-based property investor"
    assert synthesised["domains"][0] == "Japanese real estate"  # the manual edit survived

    stub.queue(extraction([]))
    await svc.conversation.ingest(
        build(
            IngestRequest,
            user_message="What did the Ota ward listing cost per m2?",
            assistant_message="About 1.1M yen per m2.",
        )
    )
    prompt = stub.received[-1].user
    assert "Tokyo-based property investor" in prompt and "Japanese real estate" in prompt


async def test_the_rule_built_profile_reads_as_sentences(service: CortexService) -> None:
    for content, category in [
        ("Works as a backend engineer, based in Lisbon", "identity"),
        ("Prefers TypeScript over JavaScript for new services", "preference"),
        ("Likes concise code reviews", "preference"),
        ("喜欢绿茶", "preference"),
    ]:
        await service.memories.remember(RememberRequest(content=content, category=category))
    profile = await service.conversation.profile()
    rest = profile["summary"]
    for sentence in (
        "Works as a backend engineer, based in Lisbon.",
        "Prefers TypeScript over JavaScript for new services.",
        "Likes concise code reviews.",
        "喜欢绿茶。",
    ):
        assert sentence in rest
        rest = rest.replace(sentence, "")
    assert rest.strip() == ""  # nothing but the sentences and the spaces between them
    assert profile["summary"] in profile["text"]


async def test_a_long_rule_built_profile_keeps_whole_sentences(service: CortexService) -> None:
    said = "the user said something worth keeping about topic {n}, and more, "
    parts = [f"Fact {n}: " + said.format(n=n) * 3 + "the end" for n in range(6)]
    for n, part in enumerate(parts):
        category = "identity" if n % 2 else "preference"
        await service.memories.remember(RememberRequest(content=part, category=category))
    summary = (await service.conversation.profile())["summary"]
    assert 0 < len(summary) <= 600 and summary.endswith("the end.")
    assert all(sentence.removesuffix(".") in parts for sentence in summary.split(". "))


async def test_a_profile_edit_names_a_bad_field(svc: CortexService) -> None:
    with pytest.raises(InvalidInput, match="hobbies"):
        await svc.conversation.edit_profile({"hobbies": ["go"]})
    with pytest.raises(InvalidInput, match="domains"):
        await svc.conversation.edit_profile({"domains": "go"})


async def test_the_profile_resource_is_served(llm_settings: Settings, clock: FakeClock) -> None:
    server = build_server(lambda: open_cortex(llm_settings, clock=clock))
    async with Client(server) as client:
        await client.call_tool(
            "cortex_remember", {"content": "我是东京的不动产投资者", "category": "identity"}
        )
        read = await client.read_resource("cortex://profile")
        data = json.loads(read.contents[0].text)
        assert "用户是东京的不动产投资者" in data["summary"] and "text" in data  # said of the user


MESSAGES = [
    {"role": "user", "content": "我们决定用 Postgres 存账本。"},
    {"role": "assistant", "content": "好的，我会按 Postgres 设计表结构。"},
    {"role": "user", "content": "部署被防火墙挡住了，还没解决。"},
]


async def test_flush_sends_high_priority_items_to_core(svc: CortexService, stub: StubLLM) -> None:
    stub.queue(
        extraction(
            [
                {
                    "content": "账本数据库选定 Postgres",
                    "category": "decision",
                    "importance": 0.9,
                    "source": "user",
                },
                {
                    "content": "部署被防火墙挡住，尚未解决",
                    "category": "project_state",
                    "importance": 0.6,
                    "source": "user",
                },
            ]
        )
    )
    result = await svc.conversation.flush(
        build(FlushRequest, messages=MESSAGES, session_id="s9", reason="compaction")
    )
    layers = {m.content: m.layer.value for m in result.flushed}
    assert layers["账本数据库选定 Postgres"] == "core"
    assert layers["部署被防火墙挡住，尚未解决"] == "working"
    assert layers["我们决定用 Postgres 存账本。"] == "core"  # the rules' high signal
    assert all(m.metadata["tag"] == "pre-compaction-flush" for m in result.flushed)
    assert "防火墙" in stub.received[-1].user and len(stub.received) == 1


async def test_flush_without_an_llm_keeps_rules_and_a_raw_summary(service: CortexService) -> None:
    result = await service.conversation.flush(
        build(FlushRequest, messages=MESSAGES, reason="window full")
    )
    kinds = [(m.layer.value, m.category.value) for m in result.flushed]
    assert kinds == [("core", "decision"), ("working", "summary")]
    summary = result.flushed[-1]
    assert "防火墙" in summary.content and result.degraded
    assert "设计表结构" not in summary.content  # the assistant's side is not kept as a memory
    assert summary.metadata["unextracted"] is True and summary.metadata["speaker"] == "user"


async def test_flush_refuses_malformed_messages(service: CortexService) -> None:
    with pytest.raises(InvalidInput, match=r"messages\.0\.role"):
        await service.conversation.flush(
            build(FlushRequest, messages=[{"role": 5, "content": "x"}])
        )
    with pytest.raises(InvalidInput, match=r"messages\.0\.content\.1"):
        await service.conversation.flush(
            build(
                FlushRequest,
                messages=[{"role": "user", "content": [{"type": "text", "text": "a"}, 7]}],
            )
        )
    with pytest.raises(InvalidInput, match="messages"):
        await service.conversation.flush(build(FlushRequest, messages=[]))


async def test_no_secret_reaches_the_database_or_the_provider(
    svc: CortexService, stub: StubLLM, llm_settings: Settings
) -> None:
    secrets_text = "\n".join(text_ for _, text_, _ in POSITIVES)
    stub.queue(
        extraction(
            [
                {
                    "content": "User shared credentials for the deploy",
                    "category": "fact",
                    "importance": 0.5,
                    "source": "user",
                }
            ]
        )
    )
    await svc.conversation.ingest(
        build(
            IngestRequest,
            user_message=f"Here are my settings:\n{secrets_text}",
            assistant_message=f"Noted. {secrets_text}",
        )
    )
    stub.queue(status(500))  # the raw turn is kept: it must be redacted too
    await svc.conversation.ingest(
        build(
            IngestRequest,
            user_message=f"Again, with the keys: {secrets_text}",
            assistant_message="I will not repeat them.",
        )
    )
    stub.queue(extraction([]))
    await svc.conversation.flush(
        build(
            FlushRequest,
            messages=[
                {"role": "user", "content": secrets_text},
                {"role": "assistant", "content": "ok"},
            ],
        )
    )
    await svc.memories.remember(RememberRequest(content=secrets_text))
    assert len(stub.received) == 3
    assert leaked(bytes(stub.raw)) == []
    assert leaked(raw_bytes(llm_settings.db_path)) == []
    assert sum((await svc.status.stats())["redactions"].values()) >= 4 * len(POSITIVES)
