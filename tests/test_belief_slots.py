"""Single-valued slots read from one memory's text (engine/beliefs/slots.py), per language,
with the near misses a careless rule would take for an update."""

from __future__ import annotations

import pytest

from cortex_mcp.engine.beliefs.slots import SELF, SlotFact, find_slot_facts
from cortex_mcp.search.slot_questions import slot_question

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
    ("构建时间从12分钟降到了4分钟", ("构建", "metric", "4分钟")),
    ("每晚的构建需要20分钟", ("构建", "metric", "20分钟")),  # what is measured, said alike
    ("页面加载需要8秒", ("页面加载", "metric", "8秒")),
    # Japanese
    ("私は大阪に引っ越しました。", (SELF, "residence", "大阪")),
    ("田中さんは東京に住んでいます。", ("田中", "residence", "東京")),
    ("私はソニーに転職しました。", (SELF, "workplace", "ソニー")),
    ("娘は8歳になりました。", ("娘", "age", "8")),
    ("ビルドは20分かかります", ("ビルド", "metric", "20分")),
    ("ビルド時間は20分から5分に短縮されました", ("ビルド", "metric", "5分")),
    # a job that ended, a business of one's own (how LoCoMo's speakers say a job changed)
    (
        "Lost my job as a banker yesterday, so I'm gonna start over",
        (SELF, "role", "no longer: banker"),
    ),
    (
        "Unfortunately, I also lost my job at Door Dash this month.",
        (SELF, "workplace", "no longer: Door Dash"),
    ),
    (
        "I opened an online clothing store and it's been great!",
        (SELF, "workplace", "clothing store"),
    ),
    ("It gave me the push to finally start my dream business", (SELF, "role", "business")),
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
    "I'm gonna take a shot at starting my own business.",  # an intention
    "I lost my keys at the station.",
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


@pytest.mark.parametrize(
    ("question", "slot", "holder", "history"),
    [
        ("What is Sara's role now?", "role", "sara", False),  # Sara's slot, not "sara's"
        ("Where did Omar use to work?", "workplace", "omar", True),
        ("What does Gina do for work now?", "workplace", "gina", False),
        ("页面加载现在需要多久？", "metric", None, False),
    ],
)
def test_a_question_names_the_slot_whose_holder_and_whether_it_asks_the_history(
    question: str, slot: str, holder: str | None, history: bool
) -> None:
    asked = slot_question(question)
    assert asked is not None and slot in asked.slots
    assert (asked.holder, asked.history) == (holder, history)


# The phrase families of a job that ended or began, with any employer a noun phrase names
# (lower-case ones too), an age said with "turned N" whatever follows, and a move told apart
# from a trip: general rules, checked on sentences of their own (not the bench's).
FAMILIES = [
    ("I got laid off from the furniture factory.", (SELF, "workplace", "no longer: the furniture factory")),
    ("Tom was fired from a small accounting firm last week", ("Tom", "workplace", "no longer: a small accounting firm")),
    ("Maya quit her job at the local bakery", ("Maya", "workplace", "no longer: the local bakery")),
    ("I also lost my job at the print shop this month.", (SELF, "workplace", "no longer: the print shop")),
    ("I found a job at a design studio in Leeds", (SELF, "workplace", "a design studio")),
    ("Ravi started working at the city library", ("Ravi", "workplace", "the city library")),
    ("I've landed a position with a consulting firm.", (SELF, "workplace", "a consulting firm")),
    ("I might have found a job at a car dealership I like", (SELF, "workplace", "a car dealership")),
    ("Jo works at a small brewery near the harbour", ("Jo", "workplace", "a small brewery")),
    ("Jo left her job at the brewery and joined a software company", ("Jo", "workplace", "a software company")),
    ("My niece turned nine last week", ("My niece", "age", "nine")),
    ("Our dog turned 3 on Sunday.", ("Our dog", "age", "3")),
    ("Pedro just turned forty over the holidays", ("Pedro", "age", "forty")),
    ("Kira has settled in Porto.", ("Kira", "residence", "Porto")),
    ("I'm now based in Lisbon.", (SELF, "residence", "Lisbon")),
    ("我从一家银行辞职了", (SELF, "workplace", "no longer: 一家银行")),
    ("我在一家咨询公司找到了工作", (SELF, "workplace", "一家咨询公司")),
    ("我从银行辞职了，现在在一家咨询公司上班", (SELF, "workplace", "一家咨询公司")),
    ("小李去字节跳动上班了", ("小李", "workplace", "字节跳动")),
    ("我儿子上个月满五岁了", ("我儿子", "age", "五")),
    ("私は銀行を退職しました", (SELF, "workplace", "no longer: 銀行")),
    ("私は大きな病院で働いています", (SELF, "workplace", "大きな病院")),
    ("私は銀行を辞めて、商社で働き始めました", (SELF, "workplace", "商社")),
    ("息子は先週5歳になりました", ("息子", "age", "5")),
]  # fmt: skip

TRIPS = [
    "I flew to Chicago for a conference.",
    "We went to Seattle for the game last month.",
    "I was in Chicago last week, it was awesome!",
    "Sam spent two weeks in Tokyo visiting family.",
    "I joined a gym near the office.",  # a gym joined is no employer
    "小王去了三亚度假",
    "上周我去北京出差了",
    "我去了上海看朋友",
    "私は先週、出張で福岡に行きました",
]


@pytest.mark.parametrize(("text", "expected"), FAMILIES)
def test_a_job_ended_or_begun_an_age_turned_and_a_move_are_read_whatever_the_employer_or_what_follows(
    text: str, expected: tuple[str, str, str]
) -> None:
    holder, slot, value = expected
    assert SlotFact(holder, slot, value) in find_slot_facts(text, speaker="x")


@pytest.mark.parametrize("text", TRIPS)
def test_a_trip_states_no_residence_or_workplace(text: str) -> None:
    assert find_slot_facts(text) == []


def test_an_age_of_anyone_a_possessive_names_is_read_when_said_with_is_too() -> None:
    # "my nephew is eleven" must join the chain "my nephew turned twelve" closes
    assert SlotFact("My nephew", "age", "eleven") in find_slot_facts("My nephew is eleven")
    assert SlotFact("Our cat", "age", "4") in find_slot_facts("Our cat is 4 years old.")


@pytest.mark.parametrize(
    "text",
    [
        "你说得对，在一份无聊的工作中工作着真的很难长久",
        "先生が言ったように、会社で働いていると大変です",
    ],
)
def test_a_sentences_subject_goes_on_into_its_next_clause_only_after_a_job_left(text: str) -> None:
    assert find_slot_facts(text) == []
