"""The real openai and anthropic SDKs against the local stub: wire formats, faults, cascade."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from cortex_mcp.config import load_settings
from cortex_mcp.errors import ProviderError
from cortex_mcp.providers.llm import AnthropicMessages, LLMCascade, OpenAIChat
from cortex_mcp.runtime import build_llm
from tests.helpers.llm_stub import StubLLM, dropped, held, llm_stub, slow, status, text

pytestmark = pytest.mark.anyio


@pytest.fixture
def stub() -> Iterator[StubLLM]:
    with llm_stub() as server:
        yield server


@pytest.fixture
async def made() -> AsyncIterator[list[LLMCascade]]:
    """Cascades a test builds, closed even when the test fails (no client outlives its loop)."""
    cascades: list[LLMCascade] = []
    yield cascades
    for cascade in cascades:
        await cascade.close()
    gc.collect()
    leaked = [
        o
        for o in gc.get_objects()
        if type(o).__name__ == "AsyncHttpxClientWrapper" and not o.is_closed
    ]
    assert leaked == [], leaked


def cascade_of(made: list[LLMCascade], *providers: object, **options: object) -> LLMCascade:
    cascade = LLMCascade(list(providers), **options)  # type: ignore[arg-type]
    made.append(cascade)
    return cascade


def openai_at(stub: StubLLM, timeout_s: float = 5.0) -> OpenAIChat:
    return OpenAIChat(model="stub-gpt", api_key="k", base_url=stub.openai_url, timeout_s=timeout_s)


def anthropic_at(
    stub: StubLLM, monkeypatch: pytest.MonkeyPatch, timeout_s: float = 5.0
) -> AnthropicMessages:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.anthropic_url)
    return AnthropicMessages(model="stub-claude", api_key="k", timeout_s=timeout_s)


async def test_openai_speaks_chat_completions(made: list[LLMCascade], stub: StubLLM) -> None:
    stub.queue(text("hello"))
    cascade = cascade_of(made, openai_at(stub), timeout_s=5)
    completion = await cascade.complete("SYS", "USER")
    assert (completion.text, completion.provider) == ("hello", "openai")
    assert completion.prompt_tokens > 0
    (request,) = stub.received
    assert request.wire == "openai" and request.system == "SYS" and request.user == "USER"
    assert request.body["model"] == "stub-gpt"


async def test_anthropic_speaks_messages(
    made: list[LLMCascade], stub: StubLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub.queue(text("hola"))
    cascade = cascade_of(made, anthropic_at(stub, monkeypatch), timeout_s=5)
    completion = await cascade.complete("SYS", "USER")
    assert (completion.text, completion.provider) == ("hola", "anthropic")
    (request,) = stub.received
    assert request.wire == "anthropic" and request.system == "SYS" and request.user == "USER"


async def test_a_short_retry_after_is_retried_once(made: list[LLMCascade], stub: StubLLM) -> None:
    stub.queue(status(429, retry_after="0.1"), text("ok"))
    cascade = cascade_of(made, openai_at(stub), timeout_s=5)
    assert (await cascade.complete("s", "u")).text == "ok"
    assert len(stub.received) == 2 and cascade.retries == 1


async def test_a_long_retry_after_moves_on_to_the_next_provider(
    made: list[LLMCascade], stub: StubLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub.queue(status(429, retry_after="30"), text("from anthropic"))
    cascade = cascade_of(made, openai_at(stub), anthropic_at(stub, monkeypatch), timeout_s=5)
    await cascade.warm_up()
    started = time.monotonic()
    completion = await cascade.complete("s", "u")
    # it did not wait the 30 s it was asked to (half of that is a margin for a loaded machine)
    assert completion.provider == "anthropic" and time.monotonic() - started < 15
    assert [r.wire for r in stub.received] == ["openai", "anthropic"]
    assert "busy" in cascade.failures["openai"]


@pytest.mark.parametrize("fault", ["500", "drop", "slow"])
async def test_each_fault_fails_within_the_timeout_and_says_why(
    made: list[LLMCascade], stub: StubLLM, fault: str
) -> None:
    reply = {"500": status(500), "drop": dropped(), "slow": held()}[fault]
    stub.queue(reply)
    cascade = cascade_of(made, openai_at(stub, timeout_s=0.5), timeout_s=0.5)
    await cascade.warm_up()  # the SDK import is kept out of the timeout, and out of this test's
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        await cascade.complete("s", "u")
    # the held reply never comes: the 0.5 s timeout ended it (10 s: a margin for a loaded
    # machine, far under the SDK's retries with back-off that this would otherwise catch)
    assert time.monotonic() - started < 10.0
    assert len(stub.received) == 1  # no SDK retries behind our back
    assert "openai" in caught.value.message


async def test_the_cascade_bounds_calls_in_flight(made: list[LLMCascade], stub: StubLLM) -> None:
    stub.default = slow(0.2, "x")
    cascade = cascade_of(made, openai_at(stub), timeout_s=5, max_in_flight=3)
    await asyncio.gather(*(cascade.complete("s", str(i)) for i in range(9)))
    assert cascade.peak_in_flight == 3 and len(stub.received) == 9


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_cortex_llm_api_key_is_the_key_the_llm_provider_is_sent(
    stub: StubLLM, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    """The one LLM key a Claude Desktop bundle asks for: it is chosen over the provider's own
    variable and sent as that provider's credential."""
    monkeypatch.setenv("OPENAI_API_KEY", "the-environments-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "the-environments-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.anthropic_url)
    settings = load_settings(
        llm_provider=provider, llm_api_key="sk-from-the-form", llm_base_url=stub.openai_url
    )
    cascade, notes = build_llm(settings)
    try:
        stub.queue(text("ok"))
        assert (await cascade.complete("SYS", "USER")).provider == provider
    finally:
        await cascade.close()
    (request,) = stub.received
    sent = request.headers.get("authorization", "") + request.headers.get("x-api-key", "")
    assert "sk-from-the-form" in sent and "the-environments-key" not in sent
    assert notes == []
