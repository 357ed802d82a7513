"""Linking where names have no spaces or capitals, and people are called by a pronoun or a title
after they were introduced (issue 33): a name the agent already knows links wherever a Chinese or
Japanese text says it (张伟找到房子了, モモが寝ている) but not inside a street, a town or a
longer katakana word; a he/she/他/她/它/彼女 stands for the one person (pet) the turn just before
named; 部長 is the speaker's one 上司; 我姐 is 我姐姐; 阿强 and 小王 are names before a time word;
a greeting speaks to the listener. Rules are pure functions (tested directly), and the links are
checked in real stores (SQLite and PostgreSQL), the turns imported as one agent's memories."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from cortex_mcp.config import Settings
from cortex_mcp.engine.entities.mentions import find_mentions, pronouns, zero_subject
from cortex_mcp.engine.entities.resolve import (
    alias_forms,
    known_cjk_words,
    known_words,
    superior_keys,
)
from cortex_mcp.models import EntityKind, LinkRole
from cortex_mcp.runtime import open_cortex
from cortex_mcp.service import CortexService
from cortex_mcp.service.requests import ImportRequest, RecallRequest, SearchRequest, build
from cortex_mcp.tokenize import about_the_listener, one_question
from tests.conftest import FakeClock

DAY = datetime(2025, 1, 10, 10, tzinfo=UTC)


def _names(text: str, speaker: str | None = None) -> list[str]:
    return [m.name for m in find_mentions(text, speaker=speaker).mentions if m.rule != "speaker"]


# --- the rules, pure ----------------------------------------------------------------------


def test_a_familiar_chinese_name_with_a_before_one_character_is_a_name_and_auntie_is_not():
    assert _names("阿强昨天给我打电话了。") == ["阿强"]
    assert _names("阿芳说她下周回来。") == ["阿芳"]
    for text in ("阿姨今天来了。", "阿里巴巴的股票涨了。", "阿根廷队赢了。", "阿门。"):
        assert _names(text) == [], text


def test_xiao_and_lao_before_a_surname_are_names_before_a_time_word_too():
    assert _names("小王明天去北京出差。") == ["小王", "北京"]
    assert _names("老张昨天请我吃饭。") == ["老张"]
    assert _names("小时候我住在乡下。") == []  # 小时 is no one


def test_a_time_word_after_a_kinship_word_is_no_name():
    assert _names("老师明天考试。") == []  # 明 is a surname, 明天 a day
    assert [r.phrase for r in find_mentions("我同事明天来。").references] == ["我同事"]
    assert _names("我表弟张伟下个月来。") == ["张伟"]


def test_a_greeting_speaks_to_the_listener_so_the_name_before_it_is_an_address():
    for text, name in (
        ("小陈: 周凯，好久不见！", "周凯"),
        ("鈴木: 健太、久しぶり！", "健太"),
        ("Priya: Dayo, long time no see!", "Dayo"),
    ):
        found = [m for m in find_mentions(text).mentions if m.rule == "address"]
        assert [m.name for m in found] == [name], text
    assert [
        m for m in find_mentions("小陈: 今天，好久不见！").mentions if m.rule == "address"
    ] == []
    assert [
        m for m in find_mentions("Priya: Well, thanks a lot.").mentions if m.rule == "address"
    ] == []


def test_third_person_pronouns_are_found_in_three_languages_and_their_look_alikes_are_not():
    def said(text: str) -> list[tuple[str, EntityKind, LinkRole]]:
        return [(text[p.start : p.end], p.kind, p.role) for p in pronouns(text)]

    person, pet = EntityKind.person, EntityKind.pet
    subject, mentioned = LinkRole.subject, LinkRole.mentioned
    assert said("Tom: She works as a translator.") == [("She", person, subject)]
    assert said("mkrause: Tell her congratulations!") == [("her", person, mentioned)]
    assert said("Lily_W: 他做什么工作的？") == [("他", person, subject)]
    assert said("兽医让它减肥。") == [("它", pet, mentioned)]
    assert said("佐藤: 彼女は医者です。") == [("彼女", person, subject)]
    for text in (
        "小林: 他们都来了，其他人没来。",  # they, other people
        "她们去了上海。",
        "他の人に聞いた。",  # Japanese 他: other
        "彼氏ができた。",  # a boyfriend
        "彼女ができた！",  # a girlfriend
        "私の彼女は優しい。",
        "The shell is here, it is heavy.",
    ):
        assert said(text) == [], text


def test_a_doubled_family_word_is_also_said_once_and_the_own_role_word_alone():
    assert alias_forms("我姐姐") == ["我姐姐", "我姐", "姐姐"]
    assert "我妹" in alias_forms("我的妹妹")
    assert alias_forms("姐姐") == ["姐姐"]  # alone it keeps both characters
    assert alias_forms("我表弟") == ["我表弟", "表弟"]
    assert alias_forms("我姐") == ["我姐", "姐姐"]  # 姐 alone is said 姐姐
    assert alias_forms("我家的狗") == ["我家的狗"]  # a pet word is no role said alone
    assert alias_forms("My grandmother") == ["My grandmother", "Grandma"]
    assert alias_forms("my dad") == ["my dad", "Dad"]
    assert alias_forms("my sister") == ["my sister"]  # no one calls a sister "Sister"


def test_a_one_kanji_given_name_after_a_family_word_is_a_name_but_a_one_kanji_noun_is_not():
    (aya,) = find_mentions("妹の綾が来月結婚するんだ。").mentions
    assert (aya.name, aya.rule, aya.aliases) == ("綾", "kinship", ("妹",))
    assert _names("娘の凪と公園に行った。") == ["凪"]
    for text in (
        "母の日にプレゼントを買った。",
        "兄の車が壊れた。",
        "父の腰が痛い。",
        "姉の夢は歌手だ。",
    ):
        assert _names(text) == [], text  # 日, 車, 腰, 夢 are things
    assert _names("同僚の机に置いた。") == []  # one kanji needs a family word before it
    assert _names("妹の綾香が来た。") == ["綾香"]


def test_a_thing_or_an_event_after_a_role_word_is_no_name_but_a_person_there_still_is():
    meeting = find_mentions("課長の送別会で、課長が昔バンドをやっていたと聞いた。")
    assert meeting.mentions == () and [r.phrase for r in meeting.references] == ["課長"]
    assert _names("妹が看護師の試験に合格した！") == []
    assert _names("部長の会議が長かった。") == []
    assert _names("上司の田中さんが来た。") == ["田中"]
    assert _names("同僚のマイクが試験に受かった。") == ["マイク"]
    assert _names("先輩の山口が結婚した。") == ["山口"]


def test_a_name_with_chan_or_kun_opening_a_turn_calls_the_listener_whatever_follows():
    def called(text: str) -> list[str]:
        return [m.name for m in find_mentions(text).mentions if m.rule == "address"]

    assert called("高橋: 美香ちゃん、新年会お疲れさま！") == ["美香"]
    assert called("高橋: ゆみちゃん、今日は寒いね。") == ["ゆみ"]  # a kana name with its ちゃん
    assert called("高橋: 健太くん、資料ありがとう。") == ["健太"]
    assert called("高橋: 健太、資料を置いておいた。") == []  # bare, neither asking nor greeting
    for text in (
        "高橋: おばあちゃん、元気？",
        "高橋: みなさん、おはよう",
        "高橋: でも、それは違う。",
    ):
        assert called(text) == [], text
    assert called("高橋: 店長さん、こんにちは") == []  # さん after a job title is no name
    assert [r.phrase for r in find_mentions("高橋: 店長さん、こんにちは").references] == ["店長"]


def test_a_chinese_given_name_opening_a_turn_that_asks_the_listener_is_an_address():
    def called(text: str) -> list[str]:
        return [m.name for m in find_mentions(text).mentions if m.rule == "address"]

    assert called("阿强: 晓雯，春节回老家了吗？") == ["晓雯"]
    assert called("阿强: 思远，你最近忙什么呢") == ["思远"]
    for text in (
        "阿强: 首先，你要冷静吗？",
        "阿强: 听说，你要走了？",  # 说 is a verb
        "阿强: 老板，你好吗？",  # a role word
        "阿强: 晓雯，我们明天见。",  # neither asks nor greets
        "阿强: 好呀，你去的是哪个公园呢？",  # interjections, no names
        "阿强: 哇塞，你的厨艺真的很厉害？",
    ):
        assert called(text) == [], text


def test_a_chinese_role_word_opening_a_clause_is_the_speakers_own_one():
    def referred(text: str) -> list[str]:
        return [r.phrase for r in find_mentions(text).references]

    assert referred("阿强: 舅舅以前是中学的物理老师。") == ["舅舅"]
    assert referred("阿强: 领导说我的项目做得不错。") == ["领导"]
    assert referred("阿强: 上周表弟到了北京。") == ["表弟"]  # after a time word
    assert referred("阿强: 他是一个好老师。") == []  # inside a clause: a description
    assert referred("你好，朋友。今天想跟你聊聊。") == []  # a friend: one of many, here addressed
    assert referred("同事说明天开会。") == []
    assert referred("阿强: 一张照片。") == []  # 张 counts, no surname and no role


def test_a_known_one_kanji_name_is_a_candidate_alone_before_a_particle_in_japanese_only():
    def words(text: str) -> list[str]:
        return [w for w, _ in known_cjk_words(text, find_mentions(text)) if len(w) == 1]

    assert words("高橋: 綾は新居に引っ越した。") == ["綾"]
    assert words("高橋: 毎日お弁当を作っている。") == []  # 作っ is a verb, お弁当 a word
    assert words("小林: 张伟找到房子了。") == []  # no kana: Chinese, where one Han is no name


def test_a_chinese_or_japanese_turn_that_may_leave_its_subject_unsaid_is_told_apart():
    assert zero_subject("kevin.zhou: 真厉害，生意怎么样？") == "question"
    assert zero_subject("mika_s: 何歳？") == "question"
    assert zero_subject("高橋: 腰の骨を折ったの。") == "statement"
    assert zero_subject("小林: 你周末去哪了？") == "personal"  # about the listener
    assert zero_subject("小林: 我去爬山了。") == "personal"  # about the speaker
    assert zero_subject("Tom: How old is he?") is None  # English says its subject
    assert zero_subject("小林: 你看了Avatar吗？") is None


def test_a_japanese_role_word_before_tte_or_kara_is_a_reference():
    def referred(text: str) -> list[str]:
        return [r.phrase for r in find_mentions(text).references]

    assert referred("ken_w: 先輩ってどんな仕事してるの？") == ["先輩"]
    assert referred("鈴木: 先輩から博多ラーメンが送られてきた。") == ["先輩"]
    assert referred("鈴木: 先輩方からの連絡。") == []  # 先輩方 is a word of its own


def test_a_title_and_the_general_word_for_a_superior_look_each_other_up_but_two_titles_do_not():
    assert "上司" in superior_keys("部長")
    assert "部長" in superior_keys("上司") and "課長" in superior_keys("上司")
    assert "课长" not in superior_keys("部長") and "課長" not in superior_keys("部長")
    assert {"领导", "我领导", "我的领导"} <= set(superior_keys("经理"))
    assert superior_keys("表弟") == []


def test_chinese_and_japanese_runs_are_candidate_known_names_but_not_inside_a_street_or_a_count():
    def words(text: str) -> dict[str, LinkRole]:
        return dict(known_cjk_words(text, find_mentions(text)))

    found = words("小林: 豆豆三岁了，是一只橘猫。")
    assert found["豆豆"] is LinkRole.subject
    assert words("モモが最近よく寝ている。")["モモ"] is LinkRole.subject
    assert "中山" not in words("今天中山路堵车了。")  # a street
    assert "田中" not in words("田中町のスーパーが休みだった。")  # a town
    assert "张照" not in words("他给我寄了几张照片。") and "张照片" not in words("几张照片")
    assert "モモ" not in words("モモンガを見た。")  # part of a longer katakana word
    assert "张伟" not in words("我在读《张伟传》。")  # a title
    assert "张伟" in words("昨天见到张伟了。")


def test_a_known_name_right_after_a_speakers_label_starts_the_sentence_and_is_its_subject():
    def roles(text: str) -> dict[str, LinkRole]:
        return dict(known_words(text, find_mentions(text)))

    assert roles("Tom: Anna arrived on Friday.")["Anna"] is LinkRole.subject
    assert roles("I told him: Anna is here.")["Anna"] is LinkRole.mentioned  # no label


# --- links in real stores -----------------------------------------------------------------


async def _import(
    svc: CortexService, turns: list[str], agent: str, gaps: list[int] | None = None
) -> list[str]:
    """The turns as one agent's memories, a minute apart (or `gaps` minutes after the one
    before), as a chat export is imported."""
    memories, at = [], DAY
    for n, text in enumerate(turns):
        at += timedelta(minutes=(gaps[n] if gaps else 1))
        memories.append(
            {
                "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{agent}-{n}")),
                "content": text,
                "layer": "core",
                "category": "fact",
                "importance": 0.5,
                "created_at": at.isoformat(),
                "occurred_at": at.isoformat(),
            }
        )
    document = {"format": "cortex-mcp-export", "memories": memories}
    await svc.exchange.import_memories(build(ImportRequest, document=document, agent_id=agent))
    await svc.drain()
    return [m["id"] for m in memories]


async def _linked(svc: CortexService, agent: str, turns: list[str], **kw: object) -> list[set[str]]:
    ids = await _import(svc, turns, agent, **kw)  # type: ignore[arg-type]
    found = await svc.stores.entities.entities_of(agent, ids)
    return [set(found.get(i, [])) for i in ids]


@pytest.mark.anyio
async def test_a_known_chinese_or_japanese_name_links_wherever_it_is_said_but_not_in_a_town(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        zh = await _linked(
            svc,
            "zh",
            [
                "小林: 我表弟张伟下个月来上海。",
                "小林: 张伟找到房子了。",
                "小林: 我家的猫豆豆三岁了。",
                "小林: 豆豆最近胖了。",
            ],
        )
        assert "张伟" in zh[1] and "豆豆" in zh[3]
        ja = await _linked(
            svc,
            "ja",
            [
                "佐藤: 同僚の田中さんが来た。",
                "佐藤: うちの猫のモモが寝ている。",
                "佐藤: モモがまた寝ている。",
                "佐藤: 田中町のスーパーが休みだった。",
            ],
        )
        assert "モモ" in ja[2]
        assert ja[3] == {"佐藤"}  # 田中町 is a town, not 田中


@pytest.mark.anyio
async def test_a_pronoun_stands_for_the_one_person_the_turn_before_named_and_for_no_one_else(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        en = await _linked(
            svc,
            "en",
            [
                "Tom: My sister Anna just moved to Lisbon.",
                "mkrause: What is she doing there?",
                "Tom: She works as a translator.",
                "Tom: My kitten Luna turned one, we gave her a treat.",  # her is Luna
                "Tom: Anna and Beth came over for dinner.",
                "mkrause: Was she tired?",  # two people before: no one
            ],
        )
        assert "Anna" in en[1] and "Anna" in en[2]
        assert "Anna" not in en[3]
        assert en[5] == {"mkrause"}
        zh = await _linked(
            svc,
            "zh",
            [
                "小林: 我表弟张伟从成都搬来了。",
                "Lily_W: 他做什么工作的？",
                "小林: 他是程序员。",
                "小林: 我家的狗旺财生病了。",
                "小林: 它现在好多了。",
            ],
        )
        assert "张伟" in zh[1] and "张伟" in zh[2] and "成都" not in zh[2]
        assert "旺财" in zh[4]
        later = await _linked(
            svc,
            "later",
            ["Tom: My brother Sam came home.", "Tom: He is a civil engineer."],
            gaps=[1, 120],
        )
        assert later[1] == {"Tom"}  # two hours later: another conversation


@pytest.mark.anyio
async def test_a_pronoun_of_the_other_gender_never_stands_for_someone(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        en = await _linked(
            svc,
            "en",
            [
                "Tom: My brother Sam came home for the holidays.",
                "Tom: She was tired after the flight.",  # a brother is no she
                "Tom: The coach Joe called this morning.",
                "Tom: He sounded happy about the match.",
                "Tom: She said the team won.",  # Joe was a he just before
            ],
        )
        assert "Sam" not in en[1]
        assert "Joe" in en[3] and "Joe" not in en[4]
        zh = await _linked(svc, "zh", ["小林: 我表弟张伟来了。", "小林: 她带了一个蛋糕。"])
        assert "张伟" not in zh[1]  # 表弟 is a he


@pytest.mark.anyio
async def test_a_title_is_the_speakers_one_superior_and_a_short_family_word_the_long_ones_alias(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        ja = await _linked(
            svc, "ja", ["佐藤: 上司の田中さんが札幌に異動する。", "佐藤: 部長の趣味は釣りだ。"]
        )
        assert "田中" in ja[1]
        (tanaka,) = await svc.stores.entities.entity_named("ja", "田中")
        assert {"上司", "部長"} <= set(tanaka.aliases)
        two = await _linked(
            svc,
            "two",
            [
                "佐藤: 上司の田中さんが来た。",
                "佐藤: 上司の山本さんも来た。",
                "佐藤: 部長が怒った。",
                "佐藤: 課長の木村さんが来た。",
                "佐藤: 社長が来た。",
            ],
        )
        assert two[2] == {"佐藤"}  # two superiors: 部長 is neither
        assert two[4] == {"佐藤"}  # and 社長 is not 課長 木村
        zh = await _linked(
            svc, "zh", ["小陈: 我姐姐李娜在杭州开了一家花店。", "小陈: 我姐下个月要来北京。"]
        )
        assert "李娜" in zh[1]


@pytest.mark.anyio
async def test_the_gaps_of_the_alias_sets_link_in_a_store_one_kanji_names_given_names_and_bare_roles(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        ja = await _linked(
            svc,
            "ja",
            [
                "高橋: 美香ちゃん、新年会お疲れさま！",
                "mika_s: ありがとう！最近ヨガを始めたよ。",
                "高橋: 課長の木村さんが大阪に転勤になる。",
                "高橋: 妹の綾が来月結婚するんだ。",
                "高橋: 課長の送別会で、課長がドラムを叩いた。",
                "高橋: 綾は新居に引っ越した。",
                "高橋: 課長はたこ焼きにはまっている。",
                "高橋: 妹が試験に合格した！",
                "mika_s: おめでとう！",
            ],
        )
        assert "綾" in ja[3] and "綾" in ja[5] and "綾" in ja[7]
        assert "木村" in ja[4] and "木村" in ja[6]  # 送別会 took no 課長 away from him
        assert not await svc.stores.entities.entity_named("ja", "送別会")
        (mika,) = await svc.stores.entities.entity_named("ja", "mika_s")
        assert "美香" in mika.aliases
        zh = await _linked(
            svc,
            "zh",
            [
                "阿强: 晓雯，春节回老家了吗？",
                "Echo_Liu: 回了！我最近在学古筝。",
                "阿强: 我舅舅王建国退休了。",
                "阿强: 舅舅以前是物理老师。",
                "阿强: 我领导刘洋要去深圳。",
                "阿强: 领导说我的项目做得不错。",
            ],
        )
        assert "王建国" in zh[3] and "刘洋" in zh[5]
        (echo,) = await svc.stores.entities.entity_named("zh", "Echo_Liu")
        assert "晓雯" in echo.aliases
        en = await _linked(
            svc,
            "en",
            [
                "Rachel: Ben! Long time no see, how's the new flat?",
                "bwhitfield: Still unpacking, but I joined a choir.",
                "Rachel: My grandmother Rose is turning ninety next week.",
                "Rachel: Grandma's party was lovely.",
                "bwhitfield: The choir had its first concert!",
            ],
        )
        assert "Rose" in en[3]
        (ben,) = await svc.stores.entities.entity_named("en", "bwhitfield")
        assert "Ben" in ben.aliases


@pytest.mark.anyio
async def test_a_question_that_names_no_one_and_its_answer_are_about_the_one_person_just_named(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        zh = await _linked(
            svc,
            "zh",
            [
                "小陈: 我姐姐李娜在杭州开了一家花店。",
                "kevin.zhou: 真厉害，生意怎么样？",
                "小陈: 情人节那天卖了三百多束花。",
                "kevin.zhou: 你周末去哪了？",  # about the listener
                "小陈: 我去爬山了。",
                "小陈: 我同事小王和小李结婚了。",
                "kevin.zhou: 什么时候办酒？",  # two people before: no one
            ],
        )
        assert "李娜" in zh[1] and "李娜" in zh[2]
        assert zh[3] == {"kevin.zhou"} and zh[4] == {"小陈"}
        assert zh[6] == {"kevin.zhou"}
        ja = await _linked(
            svc,
            "ja",
            [
                "鈴木: うちの犬のコタロウが散歩中に足をけがした。",
                "ken_w: 大丈夫？",
                "鈴木: 少し腫れただけだよ。",
                "鈴木: 週末は雨だった。",  # no question before: no one
            ],
            gaps=[1, 1, 1, 1],
        )
        assert "コタロウ" in ja[1] and "コタロウ" in ja[2]
        assert ja[3] == {"鈴木"}
        later = await _linked(
            svc,
            "later",
            ["小陈: 我姐姐李娜开了一家花店。", "Kevin: 生意怎么样？"],
            gaps=[1, 120],
        )
        assert later[1] == {"Kevin"}  # two hours later: another conversation


@pytest.mark.anyio
async def test_your_kin_said_to_the_other_speaker_is_their_own_and_the_kitten_is_the_one_kitten(
    backend_settings: Settings, clock: FakeClock
) -> None:
    async with open_cortex(backend_settings, clock=clock) as svc:
        en = await _linked(
            svc,
            "en",
            [
                "Rachel: My grandmother Rose is turning ninety.",
                "bwhitfield: How is your grandmother doing?",
                "Rachel: My kitten Luna knocked my coffee over.",
                "bwhitfield: Did the kitten settle in?",
                "Rachel: The kitten of my neighbour is loud.",  # "of": someone else's
                "Rachel: Is your grandmother coming too?",  # bwhitfield has no "my grandmother"
                "bwhitfield: Maybe.",
            ],
        )
        assert "Rose" in en[1] and "Luna" in en[3]
        assert "Luna" not in en[4] and "Rose" not in en[5]
        (rose,) = await svc.stores.entities.entity_named("en", "Rose")
        assert "the grandmother" not in rose.aliases  # "the X" is looked up, never stored


# --- recall: the lift reorders, it does not bury ------------------------------------------


async def _ask(svc: CortexService, agent: str, query: str) -> list[str]:
    hits = await svc.memories.search(build(SearchRequest, query=query, agent_id=agent))
    return [m.content for m in hits]


@pytest.mark.anyio
async def test_a_single_fact_question_keeps_the_turn_that_matches_its_words_above_the_persons_other_turns(
    backend_settings: Settings, clock: FakeClock
) -> None:
    turns = [
        "小林: 我表弟张伟下个月要从成都搬来上海。",
        "小林: 我表弟已经到上海了，暂时住在我家。",
        "小林: 下班以后喜欢打篮球，周末也打。",  # the answer: no subject, so no link
        "小林: 我表弟说上海的火锅不好吃。",
        "小林: 今天地铁特别挤。",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _import(svc, turns, "zh")
        hits = await _ask(svc, "zh", "我表弟下班以后做什么？")
        assert hits[0] == turns[2]  # not the turn of his right before it, lifted by 我表弟
        assert set(turns[:2]) <= set(hits[:4])  # his own turns still come next


@pytest.mark.anyio
async def test_a_question_after_several_things_brings_up_to_ten_of_the_persons_own_memories(
    backend_settings: Settings, clock: FakeClock
) -> None:
    hobbies = [
        "mkrause: I finally took up climbing at the gym near my office.",
        "mkrause: I went to my first pottery class last night.",
        "mkrause: I ran the city half marathon on Sunday.",
        "mkrause: I went bouldering outdoors for the first time.",
        "mkrause: I've been growing tomatoes and basil on my balcony.",
        "mkrause: I joined a choir that sings on Thursday nights.",
        "mkrause: I started learning the saxophone.",
        "mkrause: I photograph birds at the lake every morning.",
    ]
    turns = ["Tom: Maya, how was your weekend?", *hobbies]
    turns += [f"Tom: The weather report said rain on day {n}." for n in range(12)]
    async with open_cortex(backend_settings, clock=clock) as svc:
        await _import(svc, turns, "en")
        hits = await _ask(svc, "en", "What are Maya's hobbies?")
        assert len(set(hobbies) & set(hits[:10])) >= 7


# --- pages: what memory holds about someone, not what they asked --------------------------


def test_one_question_is_a_text_that_only_asks():
    assert one_question("kevin.zhou: 旺财最近还好吗？")
    assert one_question("How long is she staying?")
    assert not one_question("mkrause: Lisbon, wow! What is she doing there?")
    assert not one_question("yuki_h: え、寂しくなるね。田中さんってどんな人？")
    assert not one_question("Tom: Pepper is twelve.")


def test_a_line_about_the_listener_asks_and_says_nothing_of_its_speaker():
    assert about_the_listener("Melanie: Wow, that agency looks great! What made you pick it?")
    assert about_the_listener("小李：你去哪儿玩了？")
    assert not about_the_listener("Melanie: I just finished this one. What do you think?")
    assert not about_the_listener("小李：我去了成都，你呢？")
    assert not about_the_listener("Tom: You're great at this.")  # tells, asks nothing
    # Japanese leaves the speaker unsaid: "I saw a film yesterday. And you?"
    assert not about_the_listener("佐藤：昨日映画を見ました。あなたは？")


@pytest.mark.anyio
async def test_a_page_lists_what_its_person_said_and_leaves_off_their_questions_about_others(
    backend_settings: Settings, clock: FakeClock
) -> None:
    turns = [
        "小陈: 周凯，好久不见！",
        "kevin.zhou: 是啊，我最近迷上了钓鱼，每个周六都去水库。",
        "小陈: 我们家的狗旺财学会握手了。",
        "kevin.zhou: 旺财是什么品种？",
        "kevin.zhou: 我报了一个吉他班，手指都磨破了。",
        "kevin.zhou: 旺财最近还好吗？",
        "kevin.zhou: 我上个月跑完了人生第一个马拉松。",
    ]
    async with open_cortex(backend_settings, clock=clock) as svc:
        ids = await _import(svc, turns, "zh")
        result = await svc.memories.recall(
            build(RecallRequest, query="告诉我关于周凯的事", agent_id="zh")
        )
        page = result.meta.entity
        assert page is not None and page.name == "kevin.zhou"
        shown = set(page.memory_ids)
        assert {ids[1], ids[4], ids[6]} <= shown  # what he said he does
        assert not shown & {ids[3], ids[5]}  # his questions about the dog
