"""The question without the names it gives: what the vectors rank a named person's memories by
(search/topic.py), in English, Chinese and Japanese."""

from __future__ import annotations

import pytest

from cortex_mcp.engine.entities.mentions import query_entities
from cortex_mcp.search.topic import without_names


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("What are Maya's hobbies?", "What are hobbies?"),
        ("What are the names of James' dogs?", "What are the names of dogs?"),
        ("Where did José's sister move?", "Where did sister move?"),
        ("我表弟的老家在哪里？", "老家在哪里？"),
        ("田中さんの趣味は？", "趣味は？"),
    ],
)
def test_a_question_without_its_names_keeps_what_it_asks(question: str, topic: str) -> None:
    assert without_names(question, query_entities(question)) == topic


def test_a_question_that_is_only_a_name_or_names_nobody_has_no_topic() -> None:
    assert without_names("Anna?", ["Anna"]) is None
    assert without_names("What is the weather like?", []) is None


def test_a_name_inside_another_word_stays() -> None:
    assert without_names("Did Annabel call Ann?", ["Ann"]) == "Did Annabel call ?"
