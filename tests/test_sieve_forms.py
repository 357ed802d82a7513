"""The sieve's rules that key on the grammatical form of a sentence, not on words from the dev
lines: reported speech and quotations are someone else's words, a conditional or a wish is no
fact, a state bounded to the present stretch is working memory, a habit is told by a frequency
adverb or by what an activity does for the speaker, and a flag points at what follows it. Every
line here was written for this test, in English, Chinese and Japanese."""

from __future__ import annotations

import pytest

from cortex_mcp.engine.ingest.sieve import detect_high_signals


def _core(line: str) -> list[str]:
    return [h.kind for h in detect_high_signals(line) if h.layer == "core"]


@pytest.mark.parametrize(
    "line",
    [
        "The phishing email said: 'Remember that my name is Mallory and I work at the bank.'",
        "The email said my name is Mallory and I live in Lagos.",
        "My landlord keeps saying I love loud music.",
        "According to the form, I was born in Ohio.",
        "Priya: The text message claimed I'm a customer of their bank.",
        "那封邮件说：“记住，我叫王伟，我住在上海。”",
        "骗子短信写着：我的名字是李强。",
        "听说我对海鲜过敏，其实没有。",
        "メールには「私の名前は田中です」と書いてあった。",
        "ユーザー名は山田だって言われた。",
    ],
)
def test_reported_or_quoted_words_are_never_the_speakers_identity(line: str) -> None:
    assert _core(line) == []


def test_a_trigger_that_opens_before_the_report_still_counts() -> None:
    assert _core("My doctor says I have asthma.") == ["identity"]


@pytest.mark.parametrize(
    "line",
    [
        "If I move to Berlin next year, I'll learn German.",
        "I'll adopt a dog next spring, if we find a bigger flat.",
        "要是我住在海边就好了。",
        "假如明年去留学，我会学法语。",
        "もし来年引っ越したら、犬を飼いたい。",
        "海の近くに住めたらいいな。",
    ],
)
def test_a_conditional_or_a_wish_is_not_a_fact(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "I'm still looking for a piano teacher in Leeds.",
        "For now I prefer working from the café downstairs.",
        "这阵子我喜欢喝乌龙茶。",
        "我还在考虑明年去读研。",
        "今のところ紅茶が好きです。",
    ],
)
def test_a_state_bounded_to_now_is_not_core(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "I usually go climbing on Saturday mornings.",
        "I often bake sourdough for my neighbours.",
        "We never eat meat on Fridays.",
        "I volunteer at the animal shelter.",
        "Baking bread helps me relax after work.",
        "Running keeps me sane.",
        "Knitting and hiking are my main hobbies.",
        "Pottery has become my go-to for stress relief.",
        "我通常早上六点起床跑步。",
        "我一般周末去爬山。",
        "我总是自己做午饭带去公司。",
        "普段は自転車で通勤しています。",
        "週末はいつも山に登っています。",
    ],
)
def test_a_habit_told_by_its_form_goes_to_core(line: str) -> None:
    assert _core(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "I always try to stay positive.",
        "I usually do it on weekends.",
        "I usually work during regular office hours.",
        "Seeing your photos makes me happy.",
        "Talking to you helps me a lot.",
        "Reading this made me smile.",
        "我经常感觉自己很累。",
        "我一直想去海边城市看看。",
        "我一直在想要不要换工作。",
        "よく分かります。",
    ],
)
def test_a_motto_a_feeling_or_a_reaction_is_not_a_habit(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "我有点紧张，因为这场演讲很重要。",
        "更重要的是价格合适。",
        "非常重要，我会注意的。",
        "我在学习如何做蛋糕。",
    ],
)
def test_an_adjective_is_not_a_flag_and_learning_is_not_a_job(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line", ["这个很重要：合同月底到期。", "重要的是：我对青霉素过敏。", "记住：我住在成都。"]
)
def test_a_flag_that_points_at_a_fact_still_counts(line: str) -> None:
    assert _core(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "Hello there, I work as a nurse in Cork, don't you?",
        "It's hard to say why, but I really enjoy birdwatching.",
        "That's why I love sailing.",
        "It reminded me why I'm passionate about woodworking.",
        "I'm so happy to tell you I joined a rowing club!",
        "I'm lucky to have my wife and two boys.",
        "早上好，我叫陈静。",
        "我喜欢下围棋，你呢？",
        "我很喜欢爬山和摄影，你觉得周末去哪里好？",
        "You know I love live music.",
        "抹茶が好きです、あなたは？",
    ],
)
def test_a_clause_of_the_speakers_own_stands_beside_a_greeting_a_tag_or_a_remark(
    line: str,
) -> None:
    assert _core(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "Do you like sailing, or is it too cold?",
        "You know what, I'm not sure I love sailing.",
        "I'm so happy for you!",
        "I'm grateful to have a job I like.",
        "It's a reminder of why I started running.",
        "If I ever move to Lisbon, I'll learn to surf.",
        "你喜欢下围棋吗，还是象棋？",
        "You know you love it.",
        "抹茶は好きですか、あなたは？",
        "如果明年去留学，我一定会喜欢那里。",
    ],
)
def test_a_question_a_hedge_a_feeling_or_a_conditional_still_vetoes_its_clause(
    line: str,
) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "I'm flying to a robotics conference this month.",
        "We're organising a chess tournament for the library later this month.",
        "My love for jazz started with my grandfather's records.",
        "We share a passion for mountain biking.",
        "I will always love sci-fi novels.",
        "I loved building model trains as a kid.",
        "Studying ancient languages fascinates me.",
    ],
)
def test_a_time_phrase_is_a_time_and_a_liking_may_be_a_noun_or_a_past_biography(
    line: str,
) -> None:
    assert _core(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "I'm meeting a friend later.",
        "I love that one too.",
        "I just like helping people.",
        "I just like playing for fun!",
        "I love seeing my teammates succeed.",
        "Their love for the game is infectious.",
        "Your story fascinates me.",
    ],
)
def test_a_motive_a_reaction_or_someone_elses_liking_is_not_a_taste(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "I graduated from nursing school in May.",
        "I was drafted by a team in Ohio.",
        "I've been climbing competitively for almost two years.",
        "I started my own small pottery studio.",
        "I'm gluten intolerant.",
        "I used to sail on the lake near our house.",
        "I'd go fishing with my grandpa every summer.",
        "I mentor two students at the community college.",
        "I'm keeping up with my Spanish lessons.",
        "I've also started learning the cello.",
        "We joined a local running club.",
        "Chess has been a big part of my life.",
        "我乳糖不耐受。",
        "我小时候每个周末都跟外公去钓鱼。",
        "乳糖不耐症です。",
        "子供の頃、祖父とよく山に登っていました。",
    ],
)
def test_a_change_of_status_or_a_biography_verb_goes_to_core(line: str) -> None:
    assert _core(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "I used to think that was silly.",
        "I'd love to try it someday.",
        "I'd try them out with my family.",
        "I just signed up for a pottery class yesterday.",
        "I teach them how to cook.",
        "It's a reminder of why I joined a band.",
    ],
)
def test_a_thought_a_wish_or_a_one_off_act_is_not_a_biography(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "We're considering adopting a retired greyhound.",
        "I'm gonna stay in Lisbon for good.",
        "We're going to buy a house near the coast.",
        "Next month I'm having a solo exhibition.",
        "Running a marathon is my biggest goal.",
        "I opened my own little bakery not so long ago.",
        "我最近打算去爬黄山。",
        "我计划在日本住一年。",
        "我通常会在睡前读半小时书。",
        "我一般都是骑车上班。",
        "我很喜欢那种安静而有深度的电影。",
        "我最喜欢《你好，李焕英》这部电影。",
    ],
)
def test_an_intent_with_a_concrete_step_a_time_ahead_or_a_habit_by_its_frequency(
    line: str,
) -> None:
    assert _core(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "I'm gonna try it out.",
        "I'm going to buy a coffee.",
        "I'm gonna join a call.",
        "We're going to stay in a hotel.",
        "我一般都是这样。",
        "我打算在家休息。",
        "I'm thinking about it.",
        "We're going to the park later.",
        "我计划去一些其他的博物馆看看。",
        "我打算去看电影。",
        "我每天都会觉得很累。",
        "我很喜欢那种。",
    ],
)
def test_a_vague_intent_an_errand_a_feeling_or_a_pronoun_is_not_a_plan_or_a_habit(
    line: str,
) -> None:
    assert _core(line) == []


# Precision first, by the form of the whole sentence (noise.NOT_LASTING): a trigger that stands
# still leaves the line out of core when the sentence says the fact is not a lasting one of the
# speaker's, wherever in the sentence it says so.


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I'm a nurse, I think.",
        "小刘：我是老师，应该吧。",
        "小刘：我住在成都，大概吧。",
        "健: 私は猫アレルギーだと思います。",
    ],
)
def test_a_hedged_line_is_not_core_wherever_the_hedge_stands(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I live in Leeds, at least for now.",
        "Kim: I'm vegetarian this month.",
        "Kim: For the next two weeks I'm living in Oslo.",
        "Kim: Please always answer in Spanish for this conversation.",
        "健: 今月はベジタリアンです。",
        "健: 車が直るまで、在宅で働いています。",
        "健: 今、ジムにはまっています。",
    ],
)
def test_a_state_held_for_a_stretch_or_for_this_conversation_is_not_core(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I hope to visit Peru next year.",
        "Kim: I hope to build my own cabin one day.",
        "小刘：我想明年搬到云南住。",
        "健: いつか来年の夏に留学するつもりです。",
    ],
)
def test_a_wish_or_a_hope_is_not_a_plan(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: My mom thinks I'm allergic to cats.",
        "Kim: My sister swears I'm a morning person.",
        "小刘：朋友说他明年要搬到上海。",
        "小刘：我妈觉得我对牛奶过敏。",
        "健: 母は私が猫アレルギーだと思っています。",
        "健: 兄は私が大阪に住んでいると言います。",
        "健: 父はいつも正直が一番って言います。",
    ],
)
def test_what_someone_else_believes_or_says_of_the_speaker_is_not_their_fact(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I was going to move to Berlin next year, but we changed our minds.",
        "小刘：我本来打算明年去留学的。",
        "小刘：我原来计划下个月搬家，后来取消了。",
        "健: 来年留学するつもりでしたが、やめました。",
        "健: 来月引っ越す予定だったけど、延期になりました。",
    ],
)
def test_a_plan_of_the_past_or_one_called_off_is_not_core(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I'm allergic to penicillin, right?",
        "Kim: I live in Leeds, don't I?",
        "小刘：我对青霉素过敏，对吧？",
        "小刘：我是O型血来着。",
        "健: 私、ペニシリンアレルギーでしたっけ。",
    ],
)
def test_a_check_of_the_speakers_own_fact_is_a_question_not_core(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I'm a professional couch potato lol.",
        "Kim: I love doing laundry, just kidding.",
        "小刘：我是个专业吃货哈哈。",
        "小刘：我最喜欢加班了，开玩笑的。",
        "健: 私は寝るプロです（笑）",
        "健: 残業が大好きですｗｗ",
    ],
)
def test_a_line_said_as_a_joke_is_not_core(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I loved that summer on my grandpa's farm as a kid.",
        "小刘：那年夏天我每天都去游泳。",
    ],
)
def test_a_one_off_episode_of_the_past_told_as_a_story_is_not_core(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "小刘：去年她搬到了深圳。",
        "健: 去年、彼は大阪に引っ越しました。",
        "健: 先月、彼は会社を辞めました。",
    ],
)
def test_someone_else_alone_in_the_sentence_is_not_the_speaker(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: I'm a big fan of yours!",
        "小刘：我很喜欢，谢谢你！",
        "健: 本当に好きだから、また来ます。",
        "健: 大好きなので、よく行きます。",
    ],
)
def test_a_liking_of_the_listener_or_with_no_object_is_not_a_taste(line: str) -> None:
    assert _core(line) == []


@pytest.mark.parametrize(
    "line",
    [
        "Kim: From now on, write commit messages in the imperative mood.",
        "Kim: Going forward, please cite sources when you give me numbers.",
        "Kim: Don't ever suggest pork recipes to me.",
        "Kim: Always put the summary at the top.",
        "Kim: Use tabs, not spaces, in all my Python files.",
        "小刘：以后给我发邮件都用正式一点的语气。",
        "小刘：以后别再给我推荐恐怖片了。",
        "小刘：请一律用公制单位。",
        "小刘：回答我的时候不要用表情符号。",
        "健: これからはメールの文面を丁寧語で書いてください。",
        "健: 今後、絵文字は使わないでください。",
        "健: 単位は必ずメートル法でお願いします。",
        "健: 辛いものは食べられません。",
    ],
)
def test_a_standing_instruction_to_the_agent_goes_to_core(line: str) -> None:
    assert _core(line) == ["preference"]


@pytest.mark.parametrize(
    "line",
    [
        "Kim: From now on, I'm going to be more careful.",
        "Kim: Never give up.",
        "Kim: Always look on the bright side.",
        "Kim: Always reply in French for this conversation.",
        "小刘：我们公司一律不准带宠物。",
        "小刘：永远不要放弃。",
        "小刘：以后我们都会好的。",
        "小刘：以后别这样了。",
        "健: これからもよろしくお願いします。",
        "健: これからも頑張ってください。",
        "健: 明日必ず連絡してください。",
    ],
)
def test_a_motto_a_greeting_or_a_one_off_request_is_not_a_standing_instruction(
    line: str,
) -> None:
    assert _core(line) == []
