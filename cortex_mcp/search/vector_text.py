"""The text a memory's vector is made from: its content without the greeting that opens a line
of dialogue and says nothing of its topic.

"Caroline: Hey Mel! Good to see you! I went to a pottery class yesterday." is embedded as
"Caroline: Mel, I went to a pottery class yesterday.": a greeting and a "how are you" weigh as
much in a sentence vector as the words of the topic, so a question about pottery can rank the
line below the speaker's other lines. Who is addressed stays (a question may name them).
The stored content never changes; only what goes to the embedding model does, for every memory
whichever store and way in (the indexer and a recall's fresh vectors both call `vector_text`).

Only greetings go: "Hi Caroline!", "Good to see you!", "How's it going?", "Hope you're doing
well!", "嗨，小丽！", "好久不见！", "おはよう、健太！", "お久しぶりです。". Not interjections and
thanks ("Wow,", "Thanks, Maria!", "哈哈，"): taking those out too lowered R@10 in every LoCoMo
category (tuning conversations, all-MiniLM-L6-v2: multi-hop 0.583 -> 0.564, all 0.822 -> 0.809).
A line that is nothing but a greeting keeps its text. Not `engine/ingest/noise.LEADING`: that
one sets aside interjections, "so", "and" and any capitalised word before a comma ("Paris,
..."), and search may not import the engine.
"""

from __future__ import annotations

import functools
import re

from cortex_mcp.tokenize import without_speaker

_EN_GREETS = (
    r"hey|hi|hello|hiya|howdy|yo|heya|hey there|hi there|hello there|good morning|morning|"
    r"good afternoon|good evening|evening"
)
# a whole opening sentence of small talk
_EN_SMALL_TALK = (
    r"(?:it's |it is |so |really )?(?:good|great|nice|lovely|awesome) to (?:see|hear from|"
    r"talk to|chat with|catch up with) you(?: again| too)?|long time no (?:see|talk)|"
    r"how (?:are|r) (?:you|ya|things)(?: doing| going)?(?: today| lately)?|"
    r"how(?:'s| is| has) (?:it|everything|life|your day|your week) (?:going|been)?(?: lately)?|"
    r"how have you been(?: lately)?|what's up|what's new|"
    r"(?:i )?hope (?:you're|you are|you've been|all is) (?:doing )?(?:well|good|great|fine)"
    r"(?: lately)?|it's been (?:a while|ages|too long)"
)
_EN = (
    rf"(?:(?:{_EN_GREETS})(?:,?\s+(?P<en>(?-i:[A-Z][\w'’-]*)))?|{_EN_SMALL_TALK})"
    r"(?:\s*[,!.?…~]+|\s*[-–—]+)\s*"
)
_ZH = (
    r"(?:(?:嗨|嘿|哈喽|哈啰|你好|您好|早上好|早安|下午好|晚上好|好久不见)"
    r"(?:[，,\s]*(?P<zh>[\u4e00-\u9fff]{1,4})(?=[！!]))?|"
    r"最近(?:怎么样|好吗|还好吗|过得怎么样)|你(?:最近)?(?:好吗|还好吗))[，,！!。~～？?\s]+"
)
_JA = (
    r"(?:(?:おはよう(?:ございます)?|こんにちは|こんばんは|やあ|お久しぶり(?:です)?|久しぶり)"
    r"(?:[、，,\s]*(?P<ja>[\u3040-\u30ff\u4e00-\u9fff]{1,6})(?=[！!]))?|"
    r"元気(?:ですか|だった|にしてた)?)[、，,！!。~～？?\s]+"
)
_SUBSTANCE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]|[^\W\d_]{2,}")


@functools.cache
def _greeting() -> re.Pattern[str]:
    return re.compile(f"{_EN}|{_ZH}|{_JA}", re.IGNORECASE)


def vector_text(content: str) -> str:
    """`content` without the greetings that open it, the name they address kept (and a
    speaker's "Name: " label); `content` itself when none opens it or nothing else is left."""
    body = without_speaker(content)
    rest, addressed = body, []
    while (match := _greeting().match(rest)) is not None:
        rest = rest[match.end() :]
        if match.group("en"):
            addressed.append(f"{match.group('en')}, ")
        elif match.group("zh"):
            addressed.append(f"{match.group('zh')}，")
        elif match.group("ja"):
            addressed.append(f"{match.group('ja')}、")
    if rest == body or len(_SUBSTANCE.findall(rest)) < 2:
        return content
    return content[: len(content) - len(body)] + "".join(addressed) + rest
