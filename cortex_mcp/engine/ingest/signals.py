"""High-signal patterns of the fast channel (seed 000 §5.2.3), as data: one table per language.

A sentence that matches a category's pattern, and none of the guards, is a high signal and goes
straight to core memory. The table in ``tests/signal_table.py`` holds the positives and the
look-alikes ("I am not sure" is not identity) that every change here must keep passing.

Importance follows the seed's rules (seed 003 "重要性评分"): an intrinsic score per category
plus the explicit signal of how the user said it ("remember", "important", "by the way"),
capped at 1.0.
"""

from __future__ import annotations

# Categories in priority order: the first that matches a sentence names it.
CATEGORY_ORDER = ("correction", "identity", "preference", "decision", "todo", "important")

# The category a hit is stored under ("important" alone is a fact the user flagged).
STORED_AS = {"important": "fact"}

# Intrinsic importance: identity/health 1.0, preferences and state changes 0.8, decisions 0.7,
# pending actions and flagged facts 0.5 (the explicit signal then raises them).
INTRINSIC = {
    "identity": 1.0,
    "preference": 0.8,
    "correction": 0.8,
    "decision": 0.7,
    "todo": 0.5,
    "important": 0.5,
}

PATTERNS: dict[str, dict[str, list[str]]] = {
    "en": {
        "identity": [
            r"\bmy name(?:'s| is)\b",
            r"\bcall me (?-i:[A-Z])",
            r"\bi(?:'m| am) (?:an? |the )(?!(?:bit|little|lot|fan|big fan|huge fan|bit of)\b)\w+",
            r"\bi work (?:as|at|for|in)\b",
            r"\bi(?:'m| am) (?:based|living) in\b",
            r"\bi live in\b",
            r"\bi(?:'m| am) from\b",
            r"\bi(?:'m| am) allergic to\b",
            r"\bi(?:'m| am) \d{1,3} years old\b",
            r"\bmy (?:job|role|title) is\b",
        ],
        "preference": [
            r"\bi (?:really |strongly |much |generally |usually |always |absolutely |kind of )?"
            r"(?:prefer|like|love|hate|dislike|enjoy|can't stand|cannot stand)\b(?! to know\b)",
            r"\bi don't (?:really )?(?:like|enjoy|want)\b",
            r"\bmy favou?rite\b",
            r"\bi'd rather\b",
            r"\bi(?:'m| am) (?:a |a big |a huge )?fan of\b",
            r"^(?:please )?(?:always|never) (?:use|reply|answer|write|respond|call|give|show)\b",
        ],
        "decision": [
            r"\b(?:we|i)(?:'ve| have)? (?:finally )?decided\b",
            r"\blet's (?:go with|use|stick with|pick)\b",
            r"\b(?:we|i)(?:'ll| will) (?:go with|use|stick with)\b",
            r"\b(?:we|i) (?:chose|picked|settled on|went with|opted for)\b",
            r"^decision:",
        ],
        "correction": [
            r"^actually,",
            r"^correction:",
            r"\bcorrection:",
            r"\bi meant\b",
            r"\bthat(?:'s| is| was) (?:wrong|incorrect|not right|not true)\b",
            r"\bi was wrong\b",
            r"\bscratch that\b",
            r"\bnot (?!only\b)[^,.;]{1,40}, but\b",
        ],
        "todo": [
            r"\bremind me (?!(?:of|what|who|how|why|where|which|when)\b)",
            r"^todo\b",
            r"\btodo:",
            r"\bdon't forget to\b",
            r"\bi need to remember to\b",
            r"\bnote to self\b",
        ],
        "important": [
            r"^(?:please )?(?:always )?remember (?:that|this)\b",
            r"^(?:please )?keep in mind\b",
            r"^important:",
            r"\bit(?:'s| is) (?:very |really )?important (?:that|to)\b",
        ],
    },
    "zh": {
        "identity": [
            r"我(?:是|叫|姓)(?!不是|说|否|不|在想|觉得|真|挺|有点|了)",
            r"我的名字(?:是|叫)",
            r"我(?:现在)?(?:住在|来自|在[^，。,]{1,15}(?:工作|上班|读书|上学))",
            r"我(?:今年)?\d{1,3}岁",
            r"我(?:对[^，。,]{1,15})过敏",
            r"我的(?:职业|工作)是",
        ],
        "preference": [
            r"我(?:很|非常|最|特别|比较|更|真的|一直|也|还是|不太|不)?"
            r"(?:喜欢|讨厌|偏好|偏爱|爱吃|受不了|倾向于?|习惯用|喜爱)",
            r"(?:以后|今后)(?:都|请|一律)",
            r"我(?:更)?愿意用",
        ],
        "decision": [
            r"(?:^|我们?|最后|最终|那就|那)(?:已经)?(?:决定|选择了|选定|定了|敲定|确定用)",
            r"^(?:那)?就(?:用|选)[^，。,]{1,20}吧",
        ],
        "correction": [
            r"不是[^，。！？]{1,40}[，,]?\s*(?:而)?是",
            r"^其实",
            r"更正|纠正一下|我说错了|搞错了|正确的是",
        ],
        "todo": [
            r"^(?:请)?记得",
            r"提醒我",
            r"别忘了|不要忘了|不要忘记",
            r"待办",
        ],
        "important": [
            r"记住",
            r"(?<!不)(?<!不太)(?<!没那么)(?<!并不)重要",
            r"关键是|务必",
        ],
    },
    "ja": {
        "identity": [
            r"(?:私|僕|俺|わたし)(?:の名前)?は[^、。]{1,30}(?:です|だ|である|と申します|といいます)",
            r"と申します",
            r"に住んでいます|に住んでる",
            r"で働いています|に勤めています",
            r"出身です",
            r"アレルギーがあります",
        ],
        "preference": [
            r"(?<!お)(?:大)?好き(?:です|だ|なんです|なの)",
            r"(?:大)?嫌い(?:です|だ|なんです)",
            r"苦手(?:です|だ|なんです)",
            r"の方が(?:好き|いい|好み)",
            r"を好みます|好みです",
            r"(?:いつも|必ず)[^、。]{1,20}(?:使って|答えて|書いて)(?:ください|ほしい)",
        ],
        "decision": [
            r"にしました|に決めました|ことにしました|に決定しました",
            r"を選びました|で行きましょう|でいきます",
        ],
        "correction": [
            r"訂正|正しくは|間違えました|間違っていました",
            r"ではなく|じゃなくて",
            r"^実は",
        ],
        "todo": [
            r"忘れずに",
            r"リマインド(?:して|お願い)",
            r"思い出させて",
            r"やることリスト|TODO",
        ],
        "important": [
            r"覚えて(?:おいて|ください|て)",
            r"(?<!そんなに)(?:重要|大事|大切)(?:です|だ|な|なこと)",
        ],
    },
}

# Sentences that look like a signal but are not: a guard vetoes every category but "todo".
GUARDS: dict[str, list[str]] = {
    "en": [
        r"\?\s*$",  # questions
        r"\b(?:not sure|unsure|maybe|perhaps|i guess|i wonder|probably|might be)\b",
        r"\bi(?:'m| am) not\b",
        r"\bhaven't decided\b|\bcan't decide\b|\bundecided\b",
        r"\bdon't remember\b|\bnot important\b",
        r"^(?:he|she|they|you|my (?:friend|wife|husband|boss|mom|dad|brother|sister|colleague)) ",
    ],
    "zh": [
        r"[?？]\s*$|[吗呢]\s*[。？]?$",
        r"不确定|不知道|也许|可能|大概|好像|还没(?:决定|想好)|没决定",
        r"^(?:他|她|你|他们|她们|我(?:朋友|妈妈?|爸爸?|老婆|老公|同事))",
        r"我叫了|我是说",
    ],
    "ja": [
        r"[?？か]\s*[。]?$",
        r"わから|分から|知らな|かもしれ|たぶん|多分|まだ決め|決めていません",
        r"^(?:彼|彼女|あなた|君|母|父|友達|妻|夫|同僚)",
        r"(?:大丈夫|元気|平気|賛成|反対|忙しい|眠い|暇)です",
        r"好きに|覚えていな|覚えてません|覚えていません",
    ],
}

# Explicit signals: how strongly the user flagged it (added to the intrinsic score).
EXPLICIT: list[tuple[str, float]] = [
    (r"记住|以后都|永远|覚えて|忘れないで|\bremember\b|\bfrom now on\b|\balways\b", 0.5),
    (r"重要|关键|务必|大事|大切|\bimportant\b|\bcritical\b|\bkey point\b", 0.3),
    (r"顺便说一下|顺便|ちなみに|ついでに|\bby the way\b|\bbtw\b", -0.2),
]
