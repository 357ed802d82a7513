"""Single-valued slots read from one memory's text (engine/beliefs/slots.py), per language,
with the near misses a careless rule would take for an update."""

from __future__ import annotations

import pytest

from cortex_mcp.engine.beliefs.slots import SELF, SlotFact, find_slot_facts

STATED = [
    # English
    ("Marco moved from Turin to Milan last spring.", ("Marco", "residence", "Milan")),
    ("I live in Turin.", (SELF, "residence", "Turin")),
    ("Caroline: I just moved to New York City!", (SELF, "residence", "New York City")),
    ("I'm living in Berlin now", (SELF, "residence", "Berlin")),
    ("I started a new job at Google.", (SELF, "workplace", "Google")),
    ("I was promoted to senior engineer.", (SELF, "role", "senior engineer")),
    ("My daughter is eight now.", ("My daughter", "age", "eight")),
    ("Anna is 30 years old.", ("Anna", "age", "30")),
    ("My email is anna@example.com", (SELF, "email", "anna@example.com")),
    ("I got married last week!", (SELF, "relationship", "married")),
    (
        "The nightly build went from 12 minutes to 4 after the cache was added.",
        ("The nightly build", "metric", "4"),
    ),
    ("The nightly build takes 12 minutes.", ("The nightly build", "metric", "12 minutes")),
    # Chinese
    ("我搬到了上海。", (SELF, "residence", "上海")),
    ("我现在住在北京。", (SELF, "residence", "北京")),
    ("我表弟在腾讯工作。", ("我表弟", "workplace", "腾讯")),
    ("张伟今年32岁。", ("张伟", "age", "32")),
    ("构建时间从12分钟降到了4分钟", ("构建时间", "metric", "4分钟")),
    # Japanese
    ("私は大阪に引っ越しました。", (SELF, "residence", "大阪")),
    ("田中さんは東京に住んでいます。", ("田中", "residence", "東京")),
    ("私はソニーに転職しました。", (SELF, "workplace", "ソニー")),
    ("娘は8歳になりました。", ("娘", "age", "8")),
]

NOT_SLOTS = [
    "I love living in Paris.",  # a liking, not where one lives
    "I moved the couch to the garage.",  # a move of a thing
    "It is 5 minutes away.",
    "I'm 5 minutes away.",
    "I'm a huge fan of it.",
    "The build takes forever.",  # no figure
    "我买了一张桌子。",
    "今日は東京に行った。",  # a visit, not a move
]


@pytest.mark.parametrize(("text", "expected"), STATED)
def test_a_single_valued_fact_is_read_with_its_holder_slot_and_value(text, expected):
    holder, slot, value = expected
    assert SlotFact(holder, slot, value) in find_slot_facts(text, speaker="x")


@pytest.mark.parametrize("text", NOT_SLOTS)
def test_a_sentence_that_only_looks_like_an_update_states_no_slot(text):
    assert find_slot_facts(text) == []


def test_two_facts_share_a_key_when_holder_and_slot_match_whatever_the_case_or_article():
    before = find_slot_facts("The nightly build takes 12 minutes.")[0]
    after = find_slot_facts("the nightly build now takes 4 min.")[0]
    assert before.key == after.key
    assert not before.same_value(after)


def test_a_restated_value_is_the_same_value_across_width_and_case():
    first = SlotFact(SELF, "residence", "Milan")
    assert first.same_value(SlotFact(SELF, "residence", "MILAN"))
    assert first.same_value(SlotFact(SELF, "residence", "Ｍｉｌａｎ"))
