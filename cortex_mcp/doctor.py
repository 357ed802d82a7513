"""`cortex-mcp doctor`: what this installation would use, printed for a person to read."""

from __future__ import annotations

import sys

from cortex_mcp import __version__
from cortex_mcp.config import Settings
from cortex_mcp.runtime import open_cortex, resolve_embedding_providers, resolve_llm_providers
from cortex_mcp.store import connector_info


async def run_doctor(settings: Settings) -> int:
    out = sys.stdout
    info = connector_info()
    out.write(f"cortex-mcp {__version__} (Python {sys.version.split()[0]})\n")
    out.write(f"SQLite:        {info.sqlite_version} via {info.module}\n")
    out.write(f"FTS5:          {'yes' if info.fts5 else 'NO (text search will not work)'}\n")
    vec = (
        f"yes ({info.vec_version})"
        if info.vec_available
        else "no (vectors kept as BLOBs, numpy search)"
    )
    out.write(f"sqlite-vec:    {vec}\n")
    names, notes = resolve_embedding_providers(settings)
    llms = resolve_llm_providers(settings)
    out.write(f"DB path:       {settings.db_path}\n")
    async with open_cortex(settings, background=False) as service:
        stats = await service.stats()
    memories = stats["memories"]
    out.write(f"Schema:        version {stats['schema_version']}\n")
    out.write(
        f"Memories:      {memories['total']} total, by layer {memories['by_layer']},"
        f" {memories['forgotten']} forgotten, FTS rows {memories['fts_rows']}\n"
    )
    out.write(f"Vectors:       {stats['vectors'] or 'none'}\n")
    out.write(f"Embeddings:    {', '.join(names) or 'none (text search only)'}")
    out.write(f" model {stats['embeddings']['model']}\n" if names else "\n")
    out.write(f"LLM:           {', '.join(llms) or 'none (rules-only extraction)'}\n")
    for note in notes:
        out.write(f"note:          {note}\n")
    return 0
