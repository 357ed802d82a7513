"""Single-valued slots: the facts a newer statement replaces rather than adds to.

Where someone lives, where they work, their role, email, phone, relationship status, a person's
or pet's age, a metric's current figure: each has one value at a time, so "Marco moved to Milan"
closes "Marco lives in Turin" (it stays as history, valid until the move). A fact of another
kind ("Marco likes Turin") is no slot and never closes anything.

`find_slot_facts` reads them by rules, in English, Chinese and Japanese, from one memory's text:
each `SlotFact` says whose slot it is (`holder`: "I" for the speaker, a name, or a phrase such
as "my sister"), which slot, and the value. Deliberately narrow: a missed update leaves two
facts side by side (what recall did before); a wrong one would retire a true fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cortex_mcp.tokenize import SELF_HOLDER as SELF
from cortex_mcp.tokenize import slot_holder_key as holder_key
from cortex_mcp.tokenize import slot_value_key as value_key

SLOTS = ("residence", "workplace", "role", "email", "phone", "relationship", "age", "metric")


@dataclass(frozen=True)
class SlotFact:
    holder: str  # SELF, a name ("Marco"), or an alias phrase ("my sister")
    slot: str
    value: str

    @property
    def key(self) -> tuple[str, str]:
        """What two facts must share for one to replace the other."""
        return (holder_key(self.holder), self.slot)

    def same_value(self, other: SlotFact) -> bool:
        return value_key(self.value) == value_key(other.value)


# --- English -----------------------------------------------------------------------------
_EN_HOLDER = (
    r"(?P<holder>I|We|we|[Mm]y (?:[a-z]+ )?(?:sister|brother|mom|mother|dad|father|son|daughter|"
    r"wife|husband|partner|boyfriend|girlfriend|friend|boss|cousin|aunt|uncle|grandma|grandpa|"
    r"kid|dog|cat|puppy|kitten)|[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
)
# whose age: anyone a possessive names ("my niece", "our dog"), besides the holders above
_EN_AGE_HOLDER = (
    r"(?P<holder>I|[Mm]y (?:[a-z]+ )?[a-z]+|[Oo]ur (?:[a-z]+ )?[a-z]+|[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
)
_EN_ADVERB = r"(?:\s+(?:just|recently|finally|now|currently|still|already|officially|also))*"
# "have found", "may have found", "'ve landed": the perfect and a hedged perfect of a verb
_EN_PERFECT = r"(?:\s+(?:may|might|must|could)\s+have|\s+(?:have|has|had)|'ve|'d)?"
# an employer as a lower-case noun phrase ("the mechanical engineering company", "a tech company
# I like"): a determiner and up to five lower-case words, ending before a preposition, a
# conjunction, a time word, a capital or punctuation
_EN_NOT_IN_NP = (
    r"(?:and|but|or|because|since|so|yesterday|today|tonight|last|next|this|that|which|who|"
    r"where|when|while|after|before|for|as|in|on|at|near|by|from|to|of|with|until|now|then|"
    r"recently|again|anymore)\b"
)
_EN_DETERMINER = r"(?:the|a|an|one|this|that|my|our|his|her|their)"
_EN_NP = (
    r"(?P<value>" + _EN_DETERMINER + r" (?:(?!" + _EN_NOT_IN_NP + r")"
    r"[a-z][\w&'-]*)(?: (?!" + _EN_NOT_IN_NP + r")[a-z][\w&'-]*){0,4})"
)
# what "joined" takes as an employer when it is not a name: an organisation's head noun, so that
# a gym or a choir joined is no job
_EN_WORKPLACE_NOUN = (
    r"(?:company|firm|startup|start-up|agency|bank|factory|plant|hospital|clinic|school|"
    r"university|college|lab|laboratory|studio|bakery|restaurant|cafe|café|store|shop|office|"
    r"practice|consultancy|publisher|newspaper|charity|nonprofit|ngo|ministry|department|"
    r"council|brewery|warehouse|hotel|garage|dealership|airline|bistro|salon|library|team)"
)
_EN_EMPLOYER_NP = (
    r"(?P<value>" + _EN_DETERMINER + r"(?: (?!" + _EN_NOT_IN_NP + r")"
    r"[a-z][\w&'-]*){0,3} " + _EN_WORKPLACE_NOUN + r")\b"
)
_EN_UNIT = (
    r"(?:%|ms|s|secs?|seconds?|mins?|minutes?|hours?|hrs?|days?|weeks?|months?|years?|kg|g|lbs?|"
    r"pounds?|km|miles?|k|m|mb|gb|tb|x|dollars?|euros?|points?|users?|people|members?|"
    r"customers?|steps?|pages?|errors?|tests?|bugs?)\b"
)
_EN_PLACE = r"(?P<value>[A-Z][\w'.-]*(?:(?:,? | of | de )[A-Z][\w'.-]*){0,3})"
_EN_ORG = r"(?P<value>(?:the )?[A-Z][\w&'.-]*(?: (?:[A-Z][\w&'.-]*|of|&|and))*[\w.]?)"
# a job that ended ("lost my job as a banker", "quit my job at Door Dash"): the slot's value
# becomes "no longer: <what it was>", which the next job replaces in turn
_EN_ENDED = r"\b(?P<ended>[Ll]ost|[Qq]uit|[Ll]eft)\s+(?P<holder>my)\s+job\s+"
# the same with its subject, and being let go: "Maya quit her job at", "I got laid off from"
_EN_ENDED_BY = (
    _EN_HOLDER + _EN_ADVERB + _EN_PERFECT + r"\s+(?:(?P<ended>lost|quit|left)\s+(?:my|his|her|"
    r"their|our)\s+(?:job|position|post)\s+(?:at|with)|(?:got|was|were|been|'s been|has been)\s+"
    r"(?P<let_go>laid off|fired|let go|made redundant|sacked)\s+(?:from|by|at)|"
    r"(?P<resigned>resigned|retired)\s+from)\s+"
)
# a job begun, at any employer: "found a job at", "started working at", "landed a position with"
_EN_BEGUN = (
    _EN_HOLDER + _EN_ADVERB + _EN_PERFECT + r"\s+(?:(?:found|got|landed|took|accepted|started|"
    r"began|secured)(?: (?:a|an|the|my|his|her|their))?(?: new)?(?: full-time| part-time)?"
    r" (?:job|position|role|gig|work|post) (?:at|with)|(?:started|began) working (?:at|for)|"
    r"got hired (?:at|by)|was hired (?:at|by)|works? (?:at|for)|(?:is|am|'m|'s) working (?:at|for))"
    r" "
)
# a job left and another joined in one sentence: the later clause is the value now
_EN_THEN_JOINED = (
    _EN_HOLDER + r"\b[^.!?\n]{0,80}?\band (?:then |now |later )?(?:joined|started (?:working )?at|"
    r"found (?:a )?(?:new )?(?:job|work) at|moved to) "
)
# a business of one's own, opened or finally started ("I opened an online clothing store",
# "finally start my dream business"): where they work and what they do now; an intention
# ("gonna take a shot at starting my own business") is not one
_EN_VENTURE = (
    r"(?:own\s+|dream\s+|new\s+|online\s+|little\s+|small\s+)*(?P<value>(?:[a-z]+\s+){0,2}?"
    r"(?:business|store|shop|studio|company|startup|restaurant|bakery|cafe|café|clinic|"
    r"practice|agency|firm|brand|label))\b"
)
_EN_OPENED = r"\s+(?:opened|started|launched|founded|set up)\s+(?:an?|my|his|her|their)\s+"
_EN_OPENED_MY = r"\b(?:finally (?:start|open|launch)|opened|launched|founded)\s+(?P<holder>my)\s+"

_ENGLISH: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern))
    for slot, pattern in (
        (
            "residence",
            _EN_HOLDER + _EN_ADVERB + r"(?:\s+(?:moved|relocated|have moved|has moved)|'ve moved)"
            r"(?: (?:back|away|out))?(?: from [A-Z][\w'.-]*(?: [A-Z][\w'.-]*)*)? to " + _EN_PLACE,
        ),
        (
            "residence",
            _EN_HOLDER + _EN_ADVERB + r"(?:\s+(?:live|lives|am living|is living|are living|"
            r"reside|resides)|'m living|'s living|'re living)(?: now)? in " + _EN_PLACE,
        ),
        (
            "workplace",
            _EN_HOLDER + _EN_ADVERB + r"(?:\s+(?:work|works|am working|is working)|'m working|"
            r"'s working)(?: now)? (?:at|for) " + _EN_ORG,
        ),
        (
            "workplace",
            _EN_HOLDER + _EN_ADVERB + r"\s+(?:joined|started (?:a (?:new )?job |working )?at|"
            r"got (?:a|the) job at|took a job at|was hired by|got hired (?:at|by)|"
            r"(?:has|have|'ve) joined) " + _EN_ORG,
        ),
        (
            "workplace",
            _EN_HOLDER + _EN_ADVERB + r"\s+(?:joined|(?:has|have|'ve) joined) " + _EN_EMPLOYER_NP,
        ),
        ("workplace", _EN_BEGUN + "(?:" + _EN_ORG + ")"),
        ("workplace", _EN_BEGUN + _EN_NP),
        ("workplace", _EN_ENDED_BY + _EN_ORG),
        ("workplace", _EN_ENDED_BY + _EN_NP),
        ("workplace", _EN_ENDED + r"(?:at|with)\s+" + _EN_NP),
        ("workplace", _EN_THEN_JOINED + _EN_ORG),
        ("workplace", _EN_THEN_JOINED + _EN_EMPLOYER_NP),
        (
            "residence",
            _EN_HOLDER
            + _EN_ADVERB
            + _EN_PERFECT
            + r"(?:\s+(?:settled|(?:am|is|are) (?:now )?based)|"
            r"'m (?:now )?based|'s (?:now )?based|'re (?:now )?based) in " + _EN_PLACE,
        ),
        (
            "role",
            _EN_ENDED + r"as\s+(?:an?\s+)?(?P<value>[a-z]+"
            r"(?: (?!yesterday|today|now|last|this|at|in|for|and|but|so)[a-z]+)?)\b",
        ),
        ("workplace", _EN_ENDED + r"(?:at|with)\s+" + _EN_ORG),
        ("workplace", _EN_HOLDER + _EN_ADVERB + _EN_OPENED + _EN_VENTURE),
        ("role", _EN_HOLDER + _EN_ADVERB + _EN_OPENED + _EN_VENTURE),
        ("workplace", _EN_OPENED_MY + _EN_VENTURE),
        ("role", _EN_OPENED_MY + _EN_VENTURE),
        (
            "role",
            _EN_HOLDER + _EN_ADVERB + r"\s+(?:was promoted to|got promoted to|became|"
            r"(?:has|have) become|works as|is working as|'m working as|am working as) "
            r"(?:an? |the )?(?P<value>(?:senior |junior |lead |head |chief |staff )?"
            r"[a-z]+(?: [a-z]+)?)\b",
        ),
        (
            "email",
            r"(?P<holder>I|[A-Z][a-z]+|my)\b[^.\n]{0,20}?\bemail(?: address)? (?:is|:|"
            r"changed to|is now) (?P<value>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",
        ),
        (
            "phone",
            r"(?P<holder>I|[A-Z][a-z]+|my)\b[^.\n]{0,20}?\b(?:phone|cell|mobile)(?: number)? "
            r"(?:is|:|changed to|is now) (?P<value>\+?\d[\d ()-]{5,}\d)",
        ),
        (
            "relationship",
            _EN_HOLDER + _EN_ADVERB + r"(?:\s+(?:am|is|are|got|just got)|'m|'s|'re)"
            r"(?: now)? (?P<value>married|engaged|divorced|single|separated|widowed)\b",
        ),
        (
            "age",  # "turned N" is an age whatever time follows ("last week", "on Sunday")
            _EN_AGE_HOLDER + r"(?: (?:just|finally|recently))? (?:turned|turns|has turned) "
            r"(?P<value>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
            r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|"
            r"fifty|sixty|seventy|eighty|ninety)(?: years? old| months? old)?"
            r"(?=[.!,;]|$| (?:years?|months?|last|this|on|over|in|at|yesterday|today|earlier|"
            r"recently|just|and|but|so)\b)",
        ),
        (
            "age",
            _EN_AGE_HOLDER + r"(?:(?: (?:just|finally))? (?:is|turned|am|turns)|'s|'m) (?:now )?"
            r"(?P<value>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
            r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)"
            r"(?: years? old| months? old|(?=[.!,;]|$)| now\b| today\b| this year\b)",
        ),
        (
            "metric",
            r"(?P<holder>(?:[Tt]he |[Oo]ur |[Mm]y )?[a-z][a-z -]{2,40}?) (?:went|dropped|fell|"
            r"rose|grew|climbed|improved|came down) from [\d.,]+ ?(?:" + _EN_UNIT + r")? to "
            r"(?P<value>[\d.,]+(?: ?" + _EN_UNIT + r")?)",
        ),
        (
            "metric",
            r"(?P<holder>(?:[Tt]he |[Oo]ur |[Mm]y )[a-z][a-z -]{2,40}?) (?:now )?(?:takes|is down to|"
            r"is up to|is at|is now|runs in|costs|weighs)(?: only| just| about)? "
            r"(?P<value>[\d.,]+ ?" + _EN_UNIT + r")",
        ),
    )
)

# --- Chinese -----------------------------------------------------------------------------
_ZH_HOLDER = r"(?P<holder>我们|我|他|她|我(?:的)?(?:姐姐|妹妹|哥哥|弟弟|表弟|表妹|表哥|表姐|爸爸|妈妈|老公|老婆|儿子|女儿|朋友|同事)|[\u4e00-\u9fff]{2,3}?)"
_ZH_ADVERB = r"(?:现在|目前|已经|刚刚|刚|最近|终于|又)*"
_ZH_VALUE = r"(?P<value>[\u4e00-\u9fffA-Za-z]{2,12}?)"
_ZH_END = r"(?=了|啦|。|，|,|！|!|$|工作|上班|去了|住)"

_CHINESE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern))
    for slot, pattern in (
        ("residence", _ZH_HOLDER + _ZH_ADVERB + r"(?:从[\u4e00-\u9fff]{2,8})?(?:搬到了?|搬去了?|搬家到|定居在?|移居到?)" + _ZH_VALUE + _ZH_END),
        ("residence", _ZH_HOLDER + _ZH_ADVERB + r"住在" + _ZH_VALUE + r"(?=了|。|，|,|！|$)"),
        ("workplace", _ZH_HOLDER + _ZH_ADVERB + r"在" + _ZH_VALUE + r"找到了?(?:一份)?(?:新的?)?(?:工作|职位)"),
        ("workplace", _ZH_HOLDER + _ZH_ADVERB + r"在" + _ZH_VALUE + r"(?:工作|上班|任职)"),
        ("workplace", _ZH_HOLDER + _ZH_ADVERB + r"(?:入职了?|加入了|跳槽到了?|跳槽去了?)" + _ZH_VALUE + r"(?=了|。|，|,|！|$|工作|上班)"),
        # going somewhere is a trip (去了三亚度假) unless it is to work there (去字节跳动上班了)
        ("workplace", _ZH_HOLDER + _ZH_ADVERB + r"去了?" + _ZH_VALUE + r"(?:工作|上班|任职)"),
        # a job that ended: 从X辞职/离职, 被X裁员/解雇
        ("workplace", _ZH_HOLDER + _ZH_ADVERB + r"(?P<ended>从)" + _ZH_VALUE + r"(?:辞职|离职|退休|下岗)"),
        ("workplace", _ZH_HOLDER + _ZH_ADVERB + r"(?P<let_go>被)" + _ZH_VALUE + r"(?:裁员|裁掉|解雇|开除|辞退)"),
        # a job left, and the subject goes on into the next clause (我从银行辞职了，现在在X上班)
        ("workplace", _ZH_HOLDER + r"[^。！？!?\n，,]{0,20}?(?:辞职|离职|退休|被裁|裁员|解雇|跳槽|失业|丢了工作)[^。！？!?\n，,]{0,6}[，,；;]" + _ZH_ADVERB + r"(?:在|去了?)" + _ZH_VALUE + r"(?:工作|上班|任职)"),
        ("role", _ZH_HOLDER + _ZH_ADVERB + r"(?:升职为|升为|当上了?|成为了?|晋升为)" + _ZH_VALUE + _ZH_END),
        ("relationship", _ZH_HOLDER + _ZH_ADVERB + r"(?P<value>结婚|订婚|离婚|分手|单身)"),
        ("age", _ZH_HOLDER + r"(?:今年|已经|现在|刚满|满|上个?月|上周|上星期|上礼拜|昨天|前天|去年|这个月|本月|这周|刚刚|刚|都|也)*(?P<value>\d{1,3}|[一二三四五六七八九十两]{1,3})(?:岁|周岁)"),
        ("age", _ZH_HOLDER + _ZH_ADVERB + r"(?:上个?月|上周|昨天|前天|刚)*(?:过了|庆祝了)(?P<value>\d{1,3}|[一二三四五六七八九十两]{1,3})岁(?:的)?生日"),
        ("metric", r"(?P<holder>[\u4e00-\u9fffA-Za-z]{2,10}?)(?:现在|目前)?(?:需要|要花|耗时|用时)(?P<value>[\d.]+\s?(?:毫秒|秒钟?|分钟|小时|天|ms|s))(?=[，。,！]|$)"),
        ("metric", r"(?P<holder>[\u4e00-\u9fffA-Za-z]{2,10}?)从[\d.]+\S{0,3}?(?:降到了?|减少到了?|缩短到了?|提高到了?|增加到了?|涨到了?|变成了?)(?P<value>[\d.]+\S{0,3}?)(?=[，。,！]|$)"),
        ("email", r"(?P<holder>我|[\u4e00-\u9fff]{2,3}?)的?(?:新)?邮箱(?:地址)?(?:是|改成了?|换成了?|：|:)\s*(?P<value>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"),
        ("phone", r"(?P<holder>我|[\u4e00-\u9fff]{2,3}?)的?(?:新)?(?:手机号码?|电话号码?|手机|电话)(?:是|改成了?|换成了?|：|:)\s*(?P<value>\+?\d[\d -]{5,}\d)"),
    )
)  # fmt: skip

# --- Japanese ----------------------------------------------------------------------------
_JA_HOLDER = r"(?P<holder>私|僕|俺|わたし|ぼく|(?:うちの|私の)?(?:姉|妹|兄|弟|母|父|息子|娘|夫|妻|犬|猫)|[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{1,8}(?:さん|くん|ちゃん)?)(?:は|が|も)"
_JA_ADVERB = r"(?:今|いま|現在|最近|先月|去年|もう|ついに|やっと|先週|先日|昨日|今年|今月|今週|この前|今日|、)*"
# a workplace with what describes it before it: 大きな病院, 小さい会社, 地元の銀行
_JA_NP = r"(?P<value>(?:[\u4e00-\u9fff\u30a0-\u30ff]{1,4}[\u3041-\u3093]{0,2}?(?:な|い|の))?[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{2,12}?)"
_JA_VALUE = r"(?P<value>[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{2,12}?)"

_JAPANESE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern))
    for slot, pattern in (
        ("residence", _JA_HOLDER + _JA_ADVERB + r"(?:[\u4e00-\u9fff\u30a0-\u30ff]{2,8}から)?" + _JA_VALUE + r"(?:に|へ)(?:引っ越し|引越し|移住|転居)"),
        ("residence", _JA_HOLDER + _JA_ADVERB + _JA_VALUE + r"に住んで"),
        ("workplace", _JA_HOLDER + _JA_ADVERB + _JA_NP + r"(?:で働いて|で働き始め|に勤めて|に勤務して|に勤め始め)"),
        ("workplace", _JA_HOLDER + _JA_ADVERB + _JA_NP + r"に(?:転職|入社|就職|採用され)"),
        # a job that ended: Xを辞め/退職/退社, Xをクビに, Xを解雇され
        ("workplace", _JA_HOLDER + _JA_ADVERB + _JA_NP + r"を(?P<ended>辞め|退職|退社|クビに|解雇され|リストラされ)"),
        # a job left, and the subject goes on into the next clause (私は銀行を辞めて、商社で働き始めました)
        ("workplace", _JA_HOLDER + r"[^。！？!?\n、,]{0,20}?(?:辞め|退職|退社|クビ|解雇|リストラ)[^。！？!?\n、,]{0,6}[、,]" + _JA_ADVERB + _JA_NP + r"(?:で働いて|で働き始め|に勤めて|に勤め始め|に(?:転職|入社|就職|採用され))"),
        ("role", _JA_HOLDER + _JA_ADVERB + _JA_VALUE + r"に(?:昇進|昇格|就任)"),
        ("relationship", _JA_HOLDER + _JA_ADVERB + r"(?P<value>結婚|婚約|離婚)(?:し|する)"),
        ("age", _JA_HOLDER + _JA_ADVERB + r"(?P<value>\d{1,3}|[一二三四五六七八九十]{1,3})歳(?:に|です|だ|で|。|$)"),
        ("metric", r"(?P<holder>[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{2,10}?)(?:は|が)(?:今|現在)?(?:約)?(?P<value>[\d.]+\s?(?:ミリ秒|秒|分|時間|日))(?:ほど|くらい|ぐらい)?(?:かかり|かかる|かかって)"),
        ("metric", r"(?P<holder>[\u4e00-\u9fff\u30a0-\u30ffA-Za-z]{2,10}?)(?:は|が)[\d.]+\S{0,3}?から(?P<value>[\d.]+\S{0,3}?)(?:に|へ|まで)(?:短縮|減|増|改善|向上|下が|上が)"),
        ("email", r"(?P<holder>私|[\u4e00-\u9fff\u30a0-\u30ff]{1,6}(?:さん)?)の?(?:新しい)?メール(?:アドレス)?(?:は|が|を)\s*(?P<value>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"),
        ("phone", r"(?P<holder>私|[\u4e00-\u9fff\u30a0-\u30ff]{1,6}(?:さん)?)の?(?:新しい)?(?:電話番号|携帯番号|携帯)(?:は|が|を)\s*(?P<value>\+?\d[\d -]{5,}\d)"),
    )
)  # fmt: skip

_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_SPEAKER_LABEL = re.compile(r"^\s*[^:：\n]{1,40}[:：]\s*")
_HONORIFIC = re.compile(r"(?:さん|くん|ちゃん)$")
# words the English holder pattern would take for a name at the start of a sentence
_NOT_HOLDERS = {
    "It", "This", "That", "There", "Here", "They", "He", "She", "You", "What", "Who", "Which",
    "When", "Where", "Why", "How", "Then", "And", "But", "So", "Also", "Now", "Today",
    "Yesterday", "Everyone", "Someone", "Nobody", "Everything",
}  # fmt: skip


def find_slot_facts(text: str, *, speaker: str | None = None) -> list[SlotFact]:
    """The slot facts `text` states, one per (holder, slot): the one said last in the text ("quit
    her job at the brewery and joined a software company": the software company). `speaker`:
    who said it, so that "I" can be told apart from a name (it stays `SELF`; the caller binds
    it)."""
    body = _SPEAKER_LABEL.sub("", text, count=1) if speaker else text
    tables = _tables_for(body)
    found: dict[tuple[str, str], tuple[int, SlotFact]] = {}
    for slot, pattern in tables:
        for match in pattern.finditer(body):
            fact = _fact(slot, match)
            if fact is None:
                continue
            at = match.start("value")  # said later in the sentence: the value now
            if fact.key not in found or at > found[fact.key][0]:
                found[fact.key] = (at, fact)
    return [fact for _, fact in found.values()]


_MEASURE_WORD = re.compile(r"(?:\s+time|的?(?:时间|耗时|用时)|の?時間)$")


def _measured(holder: str) -> str:
    """What a metric measures, as two statements of it name it alike: "the page load time" and
    "the page load", "每晚的构建" and "构建时间" (the noun after the last 的)."""
    holder = _MEASURE_WORD.sub("", holder) or holder
    return holder.rsplit("的", 1)[-1] or holder


def _tables_for(text: str) -> tuple[tuple[str, re.Pattern[str]], ...]:
    if not _CJK.search(text):
        return _ENGLISH
    return _JAPANESE if _KANA.search(text) else _CHINESE


def _fact(slot: str, match: re.Match[str]) -> SlotFact | None:
    holder = match.group("holder").strip()
    value = match.group("value").strip(" ,.;:!?，。、")
    if not value or holder in _NOT_HOLDERS:
        return None
    groups = match.groupdict()
    if groups.get("ended") or groups.get("let_go") or groups.get("resigned"):
        value = f"no longer: {value}"
    if slot == "metric":
        holder = _measured(holder)
    holder = _HONORIFIC.sub("", holder) or holder
    if holder_key(holder) == holder_key(SELF):
        holder = SELF
    return SlotFact(holder=holder, slot=slot, value=value)
