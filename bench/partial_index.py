"""Hybrid recall while the vector index catches up: LoCoMo R@10 with 0%, 25%, 50%, 75% and
100% of the memories embedded, beside text-only recall over the same store in the same run.

Each state is built as it happens in use: a seeded random share of a conversation's turns is
remembered and embedded, then the rest is remembered and left waiting for the indexer (the
query itself is embedded). Hybrid recall must never fall below text-only recall minus 0.005
at any share, and fully indexed it should gain over text.

    python bench/partial_index.py                      # vectors from the cache (see below)
    python bench/partial_index.py --embed-url http://127.0.0.1:8765/v1
    python bench/partial_index.py --shares 0 0.5 1 --seed 7
    python bench/partial_index.py --dated     # each turn with its session's date, a minute apart

Vectors: all-MiniLM-L6-v2 through the same on-disk cache as bench/locomo_recall.py (serve the
model with bench/embed_server.py once; later runs need no server), or `--stub-embeddings` for
the hashed-stem stub of the tests (which says nothing of semantic recall).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.embed_cache import caching_proxy  # noqa: E402
from bench.locomo_data import Conversation, DataNotFound, find_dataset, load_dataset  # noqa: E402
from bench.locomo_recall import (  # noqa: E402
    DEFAULT_CACHE,
    MODEL,
    Scores,
    cached_everything,
    conversation_store,
)
from bench.time_data import session_times  # noqa: E402
from cortex_mcp.models import SearchFilters, SystemClock, to_iso  # noqa: E402
from cortex_mcp.runtime import open_cortex  # noqa: E402
from cortex_mcp.service import CortexService  # noqa: E402
from cortex_mcp.service.requests import RememberRequest  # noqa: E402
from tests.helpers.embedding_stub import StubState, embedding_stub  # noqa: E402

SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)


Dates = dict[str, datetime]  # dia_id -> when it was said (empty: remembered undated, in order)


async def remember(
    service: CortexService,
    conv: Conversation,
    dia_ids: list[str],
    owners: dict[str, set[str]],
    dates: Dates,
) -> None:
    for dia_id in dia_ids:
        at = dates.get(dia_id)
        result = await service.memories.remember(
            RememberRequest(
                content=conv.turns[dia_id],
                agent_id=conv.sample_id,
                importance=0.5,
                occurred_at=to_iso(at) if at else None,
            )
        )
        owners.setdefault(result.id, set()).add(dia_id)


def turn_dates(dataset: Path, conv: Conversation) -> Dates:
    """Each turn at its session's start plus a minute per turn (as bench/entities_locomo.py)."""
    samples = {s["sample_id"]: s for s in json.loads(dataset.read_text(encoding="utf-8"))}
    starts = session_times(samples[conv.sample_id])
    dates = {}
    for dia_id in conv.turns:
        session, turn = (int(n) for n in dia_id[1:].split(":"))
        if session in starts:
            dates[dia_id] = starts[session] + timedelta(minutes=turn)
    return dates


async def one_state(
    conv: Conversation, url: str, share: float, seed: int, scores: dict[str, Scores], dates: Dates
) -> int:
    """Build the store with `share` of the turns embedded; rank every question both ways."""
    overrides: dict[str, Any] = {
        "embedding_provider": "openai",
        "embedding_base_url": url,
        "embedding_model": MODEL,
        "embedding_timeout_s": 60.0,
    }
    dia_ids = list(conv.turns)
    random.Random(f"{seed}:{conv.sample_id}").shuffle(dia_ids)
    cut = round(share * len(dia_ids))
    owners: dict[str, set[str]] = {}
    with conversation_store(overrides, None, conv) as settings:
        async with open_cortex(settings, background=False) as service:
            await remember(service, conv, dia_ids[:cut], owners, dates)
            embedded = await service.embed_pending()
            await remember(service, conv, dia_ids[cut:], owners, dates)
            now = SystemClock().now()
            if dates:  # asked the day after the last session
                last = max(dates.values()).date() + timedelta(days=1)
                now = datetime.combine(last, datetime.min.time(), UTC) + timedelta(hours=12)
            filters = SearchFilters(agent_id=conv.sample_id, now=to_iso(now))
            for question, evidence in conv.questions:
                for mode in ("text", "hybrid"):
                    outcome = await service.engines.searcher.search(
                        question, filters, 10, now, mode=mode
                    )
                    ranked = [owners.get(c.memory_id, set()) for c in outcome.ranked]
                    scores[mode].add(conv.sample_id, ranked, evidence, 0.0)
    return embedded


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", type=Path, help="locomo_dev.json or locomo10.json")
    parser.add_argument("--split", choices=["dev", "heldout", "all"], default="dev")
    parser.add_argument("--embed-url", help="OpenAI-compatible /v1 base URL serving " + MODEL)
    parser.add_argument("--embed-cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--stub-embeddings", action="store_true")
    parser.add_argument("--shares", type=float, nargs="+", default=list(SHARES))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dated", action="store_true", help="turns with their sessions' dates")
    args = parser.parse_args()
    try:
        dataset = find_dataset(args.dataset, ROOT)
        conversations = load_dataset(dataset, args.split)
    except DataNotFound as exc:
        sys.exit(str(exc))
    if not (
        args.stub_embeddings or args.embed_url or cached_everything(args.embed_cache, conversations)
    ):
        sys.exit(f"no --embed-url and no cached vectors in {args.embed_cache}: see --help")
    with ExitStack() as stack:
        if args.stub_embeddings:
            url, _ = stack.enter_context(
                embedding_stub(StubState(default_dim=384, keep_alive=True))
            )
            source = "the local stub (hashed word stems), not a model"
        else:
            proxy = stack.enter_context(caching_proxy(args.embed_cache, args.embed_url))
            url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
            source = MODEL
        dated = "each turn dated by its session" if args.dated else "undated, remembered in order"
        print(f"LoCoMo {args.split}, {len(conversations)} conversations ({dated}); {source}")
        print("| embedded | text-only R@10 | hybrid R@10 | hybrid - text | conversations >= text |")
        print("|---|---|---|---|---|")
        for share in args.shares:
            scores = {"text": Scores(), "hybrid": Scores()}
            for conv in conversations:
                dates = turn_dates(dataset, conv) if args.dated else {}
                asyncio.run(one_state(conv, url, share, args.seed, scores, dates))
            text, hybrid = scores["text"], scores["hybrid"]
            per_text, per_hybrid = text.r10_by_conv(), hybrid.r10_by_conv()
            at_least = sum(per_hybrid[c] >= per_text[c] - 0.005 for c in per_text)
            print(
                f"| {share:.0%} | {text.mean(1):.4f} | {hybrid.mean(1):.4f}"
                f" | {hybrid.mean(1) - text.mean(1):+.4f} | {at_least}/{len(per_text)} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
