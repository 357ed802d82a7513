"""Import and export: files and documents in, files and documents out, for one agent or all."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from cortex_mcp.config import Settings
from cortex_mcp.engine import validate
from cortex_mcp.engine.beliefs.keeper import bank_beliefs
from cortex_mcp.engine.entities.linker import EntityLinker
from cortex_mcp.engine.exchange.agents import destination
from cortex_mcp.engine.exchange.exporters import (
    export_document,
    export_json,
    export_markdown,
    input_path,
    mirror_files,
    output_path,
)
from cortex_mcp.engine.exchange.pipeline import ImportJob, ImportReport, Progress, run_import
from cortex_mcp.engine.exchange.sources import Source, find_sources, inline_sources
from cortex_mcp.engine.recall.indexer import EmbeddingIndexer
from cortex_mcp.engine.redaction import Redactor
from cortex_mcp.models import LOCAL, Caller, Clock, to_iso
from cortex_mcp.service.effects import Refresher
from cortex_mcp.service.requests import ExportRequest, ImportRequest
from cortex_mcp.store.beliefs import BeliefStore
from cortex_mcp.store.interfaces import ExportStorage

_JSON = ExportRequest()


@dataclass(kw_only=True)
class ExchangeService:
    """Import and export: delegations to the exchange engine."""

    settings: Settings
    exports: ExportStorage
    redactor: Redactor
    indexer: EmbeddingIndexer | None
    refresher: Refresher
    clock: Clock
    linker: EntityLinker
    beliefs: BeliefStore  # the bank/ folder of a Markdown export shows them
    caller: Caller = LOCAL  # who is asking (CortexService.acting_for)

    async def import_path(
        self,
        path: str,
        agent_id: str | None = None,
        progress: Progress | None = None,
        merge_agents_into: str | None = None,
    ) -> ImportReport:
        """Import files (idempotent; secrets redacted; every item checked as `remember` checks
        it; one bad item refuses the whole import), each item to its own agent unless
        `agent_id` remaps a file of one agent or `merge_agents_into` merges several."""
        target = input_path(path)
        sources = await asyncio.to_thread(find_sources, target)
        return await self._import(sources, agent_id, merge_agents_into, progress)

    async def import_memories(self, request: ImportRequest) -> dict[str, Any]:
        """Import what a request carries (REST) into the caller's agent: `document` (what
        `export_memories` returns, posted back as is), `files` (a Markdown export's folder
        or an OpenClaw workspace: relative path -> text; daily notes dated by their name),
        or `content` in `format`: json (our export), jsonl (the MCP memory server's),
        markdown (a MEMORY.md) or openclaw (one daily note dated by a leading
        `# YYYY-MM-DD`, else today). Agents as `ImportRequest` says."""
        today = self.clock.now().date().isoformat()
        r = request
        sources = inline_sources(r.format, r.content, r.document, r.files, today)
        report = await self._import(sources, r.agent_id, r.merge_agents_into, None)
        return report.as_dict()

    async def _import(
        self,
        sources: list[Source],
        agent_id: str | None,
        merge_agents_into: str | None,
        progress: Progress | None,
    ) -> ImportReport:
        where = destination(self.caller, agent_id, merge_agents_into, self.settings.agent_id)
        job = ImportJob(
            sources=sources,
            destination=where,
            now=self.clock.now(),
            max_content_chars=self.settings.max_content_chars,
            store=self.exports,
            redactor=self.redactor,
            progress=self._embedding_as_it_goes(progress),
            linker=self.linker,
        )
        report = await run_import(job)
        if report.memories or report.relations:
            self.refresher.bulk_changed()
        return report

    def _embedding_as_it_goes(self, progress: Progress | None) -> Progress | None:
        """`progress`, also waking the indexer after each batch an import commits, so a long
        import is embedded while it runs rather than after it."""
        if self.indexer is None:
            return progress
        indexer = self.indexer

        def report(phase: str, done: int, total: int | None) -> None:
            if phase == "importing":
                indexer.notify()
            if progress is not None:
                progress(phase, done, total)

        return report

    async def export_json(
        self,
        out: str,
        agent_id: str | None = None,
        force: bool = False,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        agent = validate.agent_scope(self.caller, agent_id, self.settings.agent_id)
        target = output_path(out, folder=False, force=force)
        lines = await export_json(self.exports, target, agent, self._now(), progress)
        return {"format": "json", "path": str(target), "lines": lines}

    async def export_markdown(
        self, out: str, agent_id: str | None = None, force: bool = False
    ) -> dict[str, Any]:
        agent = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
        target = output_path(out, folder=True, force=force)
        words = self.settings.mirrors.memory_md_words
        beliefs = await bank_beliefs(self.beliefs, agent, self.clock.now())
        written = await export_markdown(self.exports, target, agent, self._now(), words, beliefs)
        return {"format": "markdown", "path": str(target), "files_written": written}

    async def export_sqlite(self, out: str, force: bool = False) -> dict[str, Any]:
        """A consistent copy taken with SQLite's online backup API, writers or not."""
        target = output_path(out, folder=False, force=force)
        await self.exports.backup(target)
        verdict, count = await self.exports.check_copy(target)
        return {"format": "sqlite", "path": str(target), "integrity": verdict, "memories": count}

    async def export_memories(self, request: ExportRequest = _JSON) -> dict[str, Any]:
        """An export returned rather than written to a file (REST): `{format, document}` for
        json, `{format, files}` for markdown; either can be posted back to `import_memories`."""
        agent_id = request.agent_id
        if request.format == "markdown":
            own = validate.agent_for(self.caller, agent_id, self.settings.agent_id)
            words = self.settings.mirrors.memory_md_words
            beliefs = await bank_beliefs(self.beliefs, own, self.clock.now())
            files = await mirror_files(
                self.exports, own, self._now(), words, exact=True, beliefs=beliefs
            )
            return {"format": "markdown", "files": files}
        agent = validate.agent_scope(self.caller, agent_id, self.settings.agent_id)
        document = await export_document(self.exports, agent, self._now())
        return {"format": "json", "document": document}

    def _now(self) -> str:
        return to_iso(self.clock.now())
