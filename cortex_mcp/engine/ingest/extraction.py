"""The deep channel's contract with the model: prompts rendered from ``prompts/`` at call time,
and the answer (docs/architecture.md, "Extraction") parsed and validated. Code fences or prose around one JSON object
are tolerated; anything else is a provider failure and the turn is kept raw."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from cortex_mcp.engine.ingest.sieve import looks_injected
from cortex_mcp.errors import ProviderError
from cortex_mcp.models import EntityKind
from cortex_mcp.prompts import load_prompt, prompts_dir

EXTRACTABLE = {
    "identity",
    "preference",
    "decision",
    "fact",
    "insight",
    "todo",
    "correction",
    "skill",
    "relationship",
    "project_state",
}
_PERSONAL = {"identity", "preference", "skill"}
_MAX_ENTITIES = 20  # per memory
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class ExtractionError(ProviderError):
    """The model answered, but not with the JSON the prompt asks for."""


class ExtractedEntity(BaseModel):
    """Who or what an extracted memory is about, as the model named it."""

    name: str = Field(min_length=1, max_length=200)
    kind: EntityKind = EntityKind.person
    role: Literal["subject", "mentioned"] = "mentioned"


class ExtractedMemory(BaseModel):
    content: str = Field(min_length=1, max_length=4000)
    category: str
    importance: float = Field(ge=0, le=1)
    source: Literal["user", "assistant", "both"] = "both"
    reasoning: str | None = None
    entities: list[ExtractedEntity] = Field(default_factory=list)

    @field_validator("entities", mode="before")
    @classmethod
    def _usable_entities(cls, value: Any) -> list[Any]:
        """The entities a model named that can be read; a malformed one is left out, never the
        memory it came with (the rules link the memory's names anyway)."""
        if not isinstance(value, list):
            return []
        kept = []
        for item in value[:_MAX_ENTITIES]:
            try:
                kept.append(ExtractedEntity.model_validate(item))
            except ValidationError:
                continue
        return kept


class ExtractedRelation(BaseModel):
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=100)
    object: str = Field(min_length=1, max_length=200)


class Extraction(BaseModel):
    memories: list[ExtractedMemory]
    relations: list[ExtractedRelation] = Field(default_factory=list)
    dropped: int = 0  # items that failed validation


def render(name: str, **values: str) -> str:
    """A prompt file rendered now (edits to ``prompts/`` apply without a restart)."""
    return load_prompt(prompts_dir() / name).render(**values)


def extraction_prompts(
    user_message: str, assistant_message: str, profile_block: str, today: datetime
) -> tuple[str, str]:
    system = render("extraction_system.md", date=today.strftime("%Y-%m-%d"))
    user = render(
        "extraction_user.md",
        user_message=user_message,
        assistant_message=assistant_message,
        profile=profile_block,
    )
    return system, user


def _candidates(text: str) -> list[str]:
    fenced = [m.group(1) for m in _FENCE.finditer(text)]
    return [*fenced, text]


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of an answer, fenced ones first, each found at any `{` (so prose
    around them is tolerated), lazily: a caller stops at the first that serves it."""
    decoder = json.JSONDecoder()
    for candidate in _candidates(text):
        for start in (i for i, ch in enumerate(candidate) if ch == "{"):
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                yield value


def _first_object(text: str) -> dict[str, Any] | None:
    return next((value for value in _json_objects(text) if "memories" in value), None)


def parse_answer(text: str) -> Extraction:
    """The extraction in a model's answer; raises ExtractionError when there is none."""
    data = _first_object(text)
    if data is None:
        # the answer may quote the conversation: its text never goes into a message or a log
        raise ExtractionError(f"answer ({len(text)} chars) holds no extraction JSON object")
    if not isinstance(data.get("memories"), list):
        raise ExtractionError('"memories" must be a list')
    memories, dropped = [], 0
    for item in data["memories"]:
        try:
            memory = ExtractedMemory.model_validate(item)
        except ValidationError:
            dropped += 1
            continue
        if memory.category not in EXTRACTABLE or not memory.content.strip():
            dropped += 1
            continue
        memories.append(memory)
    relations = []
    for item in data.get("relations") or []:
        try:
            relations.append(ExtractedRelation.model_validate(item))
        except ValidationError:
            dropped += 1
    return Extraction(memories=memories, relations=relations, dropped=dropped)


def parse_object(text: str, required: set[str]) -> dict[str, Any]:
    """One JSON object with `required` keys from an answer (fences and prose tolerated)."""
    for value in _json_objects(text):
        if required <= value.keys():
            return value
    raise ExtractionError(f"answer holds no JSON object with {sorted(required)}")


def guard_injected(
    items: list[ExtractedMemory], user_message: str, assistant_message: str, own_personal: bool
) -> tuple[list[ExtractedMemory], int]:
    """Drop what would make someone else's words the user's identity or preference.

    The assistant never speaks for the user about who they are or what they like. When the
    turn carries injected instructions (in pasted content or the assistant's text), personal
    items are kept only if the user's own words stated something personal too."""
    injected = looks_injected(user_message) or looks_injected(assistant_message)
    kept, blocked = [], 0
    for item in items:
        personal = item.category in _PERSONAL
        if personal and (item.source == "assistant" or (injected and not own_personal)):
            blocked += 1
            continue
        kept.append(item)
    return kept, blocked
