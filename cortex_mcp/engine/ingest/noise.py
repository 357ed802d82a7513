"""What looks like a high signal but is not a lasting fact about the speaker, as data per language.

`sieve.py` applies these around the triggers of `signals.py`: leading interjections and
vocatives are set aside before matching ("Hey Nate, I love ..."); a clause that is a question,
a photo presentation, a hedge, a statement about the listener or about someone else, or an
instruction with nothing to remember ("Remember this, it's important!", "记住哦", "覚えといてね")
is vetoed; a trigger whose object is only a pronoun ("I love it", "我也喜欢它") does not count;
a near time word ("tonight", "明天", "明日") makes a plan or a liking a thing of the moment.

Three vetoes key on the grammatical form of a sentence rather than on its words, so they hold on
lines no one here has read: reported speech (what follows "the email said:", "according to",
"他说", or precedes "と書いてあった" is someone else's words, never the speaker's identity), a
conditional or a wish ("if", "要是", "もし"), and a passing state (an ongoing search, "lately",
"这阵子", "このところ"), which is working memory, not a lasting taste or plan.
"""

from __future__ import annotations

# Set aside before matching: "Hey Nate, ", "Wow, ", "By the way, ", "Guess what - ", and "You
# know" before the speaker's own clause ("You know I love live music").
LEADING: dict[str, str] = {
    "en": r"^(?:(?:hey|hi|hello|oh|ohh|wow|whoa|yeah|yes|yep|yup|no|nah|nope|ok|okay|well|so|"
    r"and|but|plus|also|haha|hah|lol|omg|aww|aw|hmm|um|uh|sure|totally|definitely|honestly|"
    r"by the way|btw|anyway|anyways|on another note|on a different note|guess what|"
    r"you know what|ya know|you know(?=,? (?:i|we|my)\b)|lately|now|then|thanks|thank you|sorry|oops|wait|right|true|"
    r"cool|great|awesome|nice|man|dude|ah|hehe|gosh|absolutely|exactly|indeed|"
    r"(?-i:[A-Z][a-z]+)(?=\s*[,!]))\b[\s,!.:;–—-]*)+",
    "zh": r"^(?:(?:哈哈+|嗯+|哇|啊|哦+|对了|对|是的|是啊|好的|好|嗨|嘿|其实|另外|还有|顺便说一下|"
    r"顺便|谢谢|不过|但是|而且|所以)[，,！!。~～\s]+)+",
    "ja": r"^(?:(?:あ|ああ|うん|ええ|へえ|わあ|ねえ|そう|そうそう|実は|ちなみに|ところで|あと|"
    r"でも|それに|ありがとう|じゃあ|まあ|えっと)[、，,！!。\s]+)+",
}

# A sentence's clauses: a trigger is vetoed by what its own clause says, not by a greeting,
# a tag question or a remark on either side of it ("你好，我叫孙悦。", "I love jazz, don't you?",
# "It's a bit scary, but I ..."). Clauses part at a dash, a semicolon, and a comma before a
# conjunction, a new first-person subject or a tag; in Chinese at every comma. Japanese keeps
# the sentence whole (its particles, not commas, join the clauses) but for a comma that turns to
# the listener ("猫が好きです、あなたは？").
CLAUSE: dict[str, str] = {
    "en": r"\s+[-–—]+\s*|[–—]|\s*;\s*|,\s+(?=(?:but|so|and|because|since|though|although|yet|"
    r"while|i|we|do|does|did|don't|didn't|isn't|aren't|wasn't|right|huh|eh|pretty|what|how|"
    r"which)\b)",
    "zh": r"[，,；;]",
    "ja": r"[、，](?=(?:あなた|君|きみ)(?:は|も|の))",
}

# Vetoes for every rule family, in the clause that holds the trigger.
NOISE: dict[str, list[str]] = {
    "en": [
        r"\?",  # questions (the splitter ends a question at its mark)
        r"^(?:what|how|why|where|when|who|which|do|does|did|can|could|would|will|are|is|"
        r"have you|has|any|anything|shall|should)\b(?!.*\b(?:i|my)\b.*[.!]$)",
        r"^(?:you|your|you're|you've|you'll)\b",  # about the listener
        r"^(?:here(?:'s| is| are)|this is|these are|check out|check this|look at|take a look|"
        r"see this|sharing)\b(?:[^.!]{0,40})\b(?:photo|pic|picture|snap|shot|image|selfie|"
        r"video|drawing|painting)s?\b",
        r"^(?:here(?:'s| is)|check (?:out|this)|look at) (?:this|that|these|my|one|a)\b",
        r"^(?:i|we) (?:have|got|took|found|made) (?:a|this|some|these) (?:\w+ )?(?:photo|pic|"
        r"picture|snap|shot|selfie)s?\b",
        r"\b(?:not sure|unsure|maybe|perhaps|i guess|i wonder|i think|probably|might be(?! able)|"
        r"might give|may have|might have|who knows|hopefully|i wish|if only)\b|\bi mean\b[,.]",
        r"\b(?:make sure|have a (?:safe|good|great|nice|fun|wonderful) \w+|for you)\b",
        r"\bi(?:'m| am) not\b(?! allergic)",
        r"\bhaven't decided\b|\bcan't decide\b|\bundecided\b",
        r"\bdon't remember\b|\bnot important\b",
        r"\bi used to (?:love|like|enjoy)\b",
    ],
    "zh": [
        r"[?？]|[吗呢]\s*[。！!]?$",
        r"^(?:你|您)",
        r"(?:给你看|你看|看看|瞧瞧|这是|这张|分享)[^。！]{0,12}(?:照片|相片|图|合影|视频)",
        r"不确定|不知道|也许|可能|大概|好像|还没(?:决定|想好)|没决定|希望|我觉得|我感觉|我猜",
        r"我叫了|我是说",
    ],
    "ja": [
        r"[?？]|(?:ですか|ますか|の|か)\s*[。]?$",
        r"^(?:あなた|君|きみ)",
        r"(?:これ|この写真|写真)[^。！]{0,20}(?:写真|撮った|見て)",
        r"わから|分から|知らな|かもしれ|たぶん|多分|まだ決め|決めていません|かな[。！]?$",
        r"みたい[。！]?$|らしい[。！]?$|そうです[。！]?$",  # hearsay: about someone else
        r"(?:大丈夫|元気|平気|賛成|反対|忙しい|眠い|暇)です",
        r"好きに|覚えていな|覚えてません|覚えていません",
        # thanks and favours done for the speaker, a wish: no fact about the speaker
        r"ありがとう|助かり|助かって|お世話に|[てで](?:くれ|もらっ|いただ)|たい(?:と思|な|です|んです|けど)",
    ],
}

# A conditional or a wish holds the whole sentence, whichever clause it opens ("If I move to
# Berlin next year, I'll learn German", "要是…就好了", "もし…").
CONDITIONAL: dict[str, str] = {
    "en": r"^(?:if|unless|whenever)\b|, (?:if|unless) (?:i|we)\b",
    "zh": r"如果|要是|假如|万一|的话|就好了",
    "ja": r"^もし|(?:たら|れば)いいな|といいな",
}

# A feeling or a reaction opens the clause ("I'm so grateful to have a job I enjoy every day"):
# it vetoes all but a relationship ("I'm lucky to have my husband and kids"). When what the
# speaker is excited to tell is a new first-person clause, that clause is set aside and judged
# alone ("I'm so excited to tell you I started a yoga class"): see FEELING_FRAME.
FEELING: dict[str, str] = {
    "en": r"^i(?:'m| am) (?:\w+ )?(?:grateful|thankful|proud|glad|happy|excited|stoked|thrilled|"
    r"blessed|lucky|sorry|amazed|impressed)\b",
}
FEELING_FRAME: dict[str, str] = {
    "en": r"^i(?:'m| am) (?:so |really |super |very )?(?:excited|happy|glad|thrilled|stoked|"
    r"pleased|proud) (?:to (?:tell|let|share with|say to) you(?: that)?|that|to say(?: that)?)?"
    r"\s*(?=(?:i|we)\b(?!'d))",
}

# A dummy subject ("It", "That") opens the clause, and the trigger has a first-person subject
# of its own ("That's why I love traveling", "It reminded me why I'm passionate about ..."):
# the trigger is the speaker's own statement; OTHERS does not veto it. A milestone
# or a plan told under it is the back-story of the remark ("It's a reminder of why I started
# playing"), not news: those still need a clause of their own.
DUMMY_SUBJECT: dict[str, str] = {"en": r"^(?:it|that|this|there)\b"}
EVENT_KINDS = {"milestone", "plan"}
OWN_SUBJECT: dict[str, str] = {"en": r"^(?:i|we)\b"}

# Reported speech: where someone else's words begin. English and Chinese put the reporting
# clause first ("The email said: ...", "According to the form, ...", "短信写着："), so what
# follows it is not the speaker's; a trigger that opens before it ("My doctor said I have ...")
# still counts. Japanese closes the quote with the verb ("...と書いてあった", "...って言ってた"),
# so the whole sentence is reported. A colon that opens a quotation mark reports, too. The verbs
# are those of saying, writing and sending a message (replied, texted, posted, quoted; a text
# "reads:"), and in Chinese a message's content given after 内容是 / 写的是 / 上面写. A verb of
# saying whose subject is the speaker ("I said it before: ...", "I'd say I'm ...") reports the
# speaker's own words: SAID_BY_SPEAKER, read just before the verb, lifts it.
REPORTED: dict[str, str] = {
    "en": r"(?<!\bi )(?<!\bwe )\b(?:said|says|saying|wrote|writes|claims?|claimed|insists?|"
    r"insisted|states|stated|told (?:me|us)|according to|supposedly|apparently|allegedly|"
    r"repl(?:y|ies|ied|ying)|texted|messaged|posted|tweeted|forwarded|quot(?:e|es|ed|ing)|"
    r"say|mention(?:s|ed)?|(?:was|were|been) told)\b"
    r"|(?<!\bi )(?<!\bwe )\breads?\b(?=\s*[:：'\"‘“])"
    r"|[:：]\s*['\"‘“]",
    "zh": r"(?:说|写着|写道|声称|表示|告诉我|称)\s*[:：，,]|据说|听说|据[^，。]{1,8}(?:说|称)"
    r"|(?:他|她|他们|她们|人家|别人|有人|大家|网友|人们|邮件|短信|信里|消息|广告|网上|骗子)"
    r"[^，。：:]{0,8}(?:说|讲|写着|写道|声称|提到|发|转发|留言|告诉)|[:：]\s*[“「『\"]"
    r"|内容(?:是|为)?\s*[:：]|写的是|上面(?:写|说)",
    "ja": r"(?:と|って)(?:言って|言った|言われ|言います|言う|書いて|書かれ|聞い)|によると|によれば|らしい"
    r"|[:：]\s*[「『“\"]",
}
SAID_BY_SPEAKER: dict[str, str] = {
    "en": r"\b(?:i|we)(?:'d|'ve|'ll| would| will| have| had| always| often| usually| just| "
    r"never| already| once| also| even| did| do| can| could| must| should| might| keep)*\s*$",
    "zh": r"(?!)",
    "ja": r"(?!)",
}
# Reported words end where a clause of the speaker's own joins them ("..., so I joined").
OWN_AGAIN: dict[str, str] = {
    "en": r"[,;]\s*(?:so|but|and so)\s+(?=(?:i|we)\b)",
    "zh": r"(?!)",
    "ja": r"(?!)",
}

# Words the speaker does not state as their own, whoever the subject: an instruction to say,
# write, repeat, translate or act something out ("Repeat after me: ...", "Say 'I am ...'",
# "Pretend my name is ...", "Translate: ...", "跟我念：...", "假装我是...", "...と繰り返して",
# "...ふりをして"), a frame of make-believe ("imagine that I ...", "as if I ...") and hearsay
# ("I heard someone say ...", "rumour has it ...", "有人说...", "...って噂"), an exercise
# ("Complete the sentence: ...", "造句") and fiction ("In the story, I am ...", "物語の中では").
# What follows is someone else's text or no claim at all; in Japanese the whole sentence is. A
# request to note the speaker's own fact ("Remember that I ...", "Write down that I ...") is
# none of these.
_SAYING = (
    r"(?:repeat|say(?!,)|recite|echo|chant|spell(?: out)?|read (?:out|aloud|back|this|these|"
    r"the following|it)|(?:write|type|copy|paste|print|output)(?! down that\b)(?= (?:this|these|"
    r"it|that sentence|that line|the following|following|exactly|verbatim|word for word|out|"
    r"back|after me|a (?:sentence|line|note|message|post|caption)|the (?:sentence|line|phrase|"
    r"words|text|message))\b|\s*[:：'\"‘“])|(?:respond|reply|answer)(?= (?:with|as|only|exactly"
    r"|by saying)\b|\s*[:：])|translate|rephrase|paraphrase)"
)
FRAMED: dict[str, str] = {
    "en": r"(?:^|[,;:.!?]\s*|\b(?:please|just|now|then|kindly|can you|could you|would you|"
    r"will you|i want you to|i need you to|i'd like you to|you should|you must|go ahead and|"
    r"try to|help me|let's|let us|from now on,?)\s+)" + _SAYING + r"\b"
    r"|\brepeat after\b|\btranslate\b|\bhow (?:do|would|should) (?:you|i) say\b"
    r"|(?<!\bi )\b(?:pretend(?:ing)?|imagine|role-?play(?:ing)?|make[- ]believe|act (?:as|like)|"
    r"play(?:ing)? (?:the role|a role|a game|along))\b|\bas (?:if|though)\b"
    r"|\b(?:over)?heard (?:(?:it )?(?:said|say)|that|someone|somebody|people|from|rumou?rs?|"
    r"them|him|her|they|he|she|a (?:rumou?r|guy|woman|man|girl|kid)|through the grapevine)\b"
    r"|\boverheard\b|\brumou?rs? (?:is|has it|says|goes|are)\b|\bword (?:is|has it)\b"
    r"|\b(?:people|they|others|folks|everyone|everybody|some|someone|somebody|anyone)"
    r" (?:keep |are |kept |were )?(?:say|says|said|saying|told|tells|think|thinks|mentioned|"
    r"claim|claims|wrote|writes)\b"
    # an exercise or a text to complete, and fiction: a story, a game, a part to play
    r"|\b(?:complete|finish|continue) (?:the|this|my|a) (?:sentence|line|phrase|story|text)\b"
    r"|\bfill in the blanks?\b|\b(?:practice|example|sample|test) (?:sentence|line|phrase)\b"
    r"|\bmake (?:up )?a sentence\b|\bmy character(?:'s)?\b|\b(?:in|for) (?:the|this|a|our|my) "
    r"(?:story|skit|play|game|novel|movie|film|script|scene|fiction|dream|sketch)\b",
    "zh": r"跟(?:着)?我(?:念|读|说|重复|学|写)|重复(?:一遍|一下|一次|这句|以下|下面|如下)?\s*[:：]"
    r"|请重复|(?:你|请)(?:就)?说\s*[:：]|你就说|假装|假设|想象|设想|扮演|角色扮演|翻译|译成|"
    r"(?:写|造)一句|帮我写|照着(?:写|念|说|读)|抄写|听(?:别人|人家|有人|朋友|他|她|他们|她们|人)说"
    r"|传言|谣言|传闻|据传|复述|造句|例句|填空|完成(?:这个|下面的)?句子|模仿|台词"
    r"|在(?:故事|游戏|小说|剧本|电影|梦)(?:里|中)",
    "ja": r"繰り返|復唱|ふりを|ふりして|振りを|のふり|フリを|演じ|ロールプレイ|訳して|翻訳|"
    r"想像して|仮定|と言って(?:ください|下さい|みて)|って言って|と書いて|って書いて|言ってた|"
    r"言っていた|誰かが|噂|と聞いた|って聞いた|と聞きました|真似|まねして|例文|穴埋め|台詞|セリフ"
    r"|(?:物語|ゲーム|小説|夢|劇|映画)の中",
}

# A passing state: an ongoing search or a state bounded to the present stretch ("I'm still
# looking for ...", "for now", "这阵子", "今のところ"). It keeps a liking, a plan or a decision
# out of core; an identity or a relationship is still one. "Recently" is not among them: what
# one recently took up is a new habit ("最近开始学做烘焙，每个周末都做面包").
PASSING: dict[str, str] = {
    "en": r"\b(?:at the moment|for now|for the time being)\b"
    r"|\bstill (?:\w+ )?(?:looking|searching|figuring|trying|working on|deciding|thinking|"
    r"waiting|hoping)\b",
    "zh": r"这阵子|这段时间|这几天|暂时|还在(?:找|考虑|想|犹豫|等)",
    "ja": r"このところ|今のところ|しばらく|まだ[^、。]{0,10}(?:探して|考えて|迷って|待って)",
}
PASSING_KINDS = {"preference", "plan", "decision", "milestone"}

# The subject is someone other than the speaker: vetoes all but relationships.
OTHERS: dict[str, str] = {
    "en": r"^(?:he|she|they|it|this|that|these|those|there|his|her|their|"
    r"my (?:friend|boss|colleague|coworker|teacher|neighbo(?:u)?r)s?)\b",
    "zh": r"^(?:他|她|它|这(?:个|些|是|位|里)|那(?:个|些|是|位|里)|我(?:朋友|同事|老板|邻居))",
    "ja": r"^(?:彼|彼女|あの子|この子|その子|友達|同僚|上司|それ|これ(?!から)|あれ)"
    r"|^[^、。]{1,10}(?:さん|くん|君|ちゃん|様)(?:は|が|も)",
}

# A trigger followed only by a pronoun ("I love it", "a huge fan of them", "喜欢它").
PRONOUN_OBJECT: dict[str, str] = {
    "en": r"^\s*(?:(?:\w+ing |to \w+ )?(?:it|them|him|her|you|your|yours|one|there|everything|"
    r"all of it)\b(?!['-])|(?:this|that|these|those|is|are|was|were|not)\b|to\s*(?:[,.!;:]|$)"
    r"|(?:\w+ing |to \w+ )(?:this|that|these|those)(?=\s*(?:[,.!;:?]|$|(?:one|ones|so|too|"
    r"very|really|a lot|stuff|thing|kind|at|in|on|for|with|to|from)\b))|to \w+\s*(?:[,.!;:]|$))",
    "zh": r"^(?:(?:它|他们|她们|他|她|这样|那样)(?:[了啊呀哦吧]|[！!。，,]|$)|你|您|"
    r"(?:这|那)(?!种[^，。]{2,}的))",  # "那种富有深度的文学风格" describes a kind
    "ja": r"^(?:それ|これ|あれ|そう)",
}
# A liking of something just said or shown is a reaction, not a lasting taste ("I love how you
# ...", "I love the colour", "我喜欢你送的礼物"): stable tastes take a general object. (Japanese
# puts the object first: see PRONOUN_SUBJECT_JA.)
REACTION_OBJECT: dict[str, str] = {
    "en": r"^\s*(?:how|when|the way|what|why|(?:all )?the|his|her|their|its)\b",
    "zh": r"^(?:他的|她的|他们的|(?:那种|这种)(?![^，。]{2,}的))",
}
# A liking of something with the listener in it is about the conversation, not a taste ("I love
# hanging out with you", "我喜欢和你聊天").
LISTENER: dict[str, str] = {
    "en": r"\b(?:you|your|yours|ya)\b",
    "zh": r"你|您",
    "ja": r"あなた|君と|きみと",
}
# A liking or a decision with nothing after it ("我决定了！", "I decided."): no object at all.
EMPTY_OBJECT: dict[str, str] = {
    "en": r"^\s*[.!,;:]*\s*$",
    "zh": r"^[了啊呀哦吧]*[！!。，,~～]*$",
}
OBJECT_VERB = (
    r"(?:决定|定了|选择了|选定|喜欢|讨厌|偏好|偏爱|爱吃|爱喝|爱看|爱听|爱玩|热爱|喜爱|受不了|"
    r"decided|chose|picked|opted for|went with)$"
)
LIKING_VERB = (
    r"(?:love|like|enjoy|adore|prefer|hate|dislike|stand|(?:love|passion|fondness) (?:for|of)|"
    r"喜欢|喜爱|热爱|讨厌|偏爱|爱吃|爱喝|爱看|爱听|爱玩)$"
)
# A liking of doing something for or with people in general, or of the conversation's own
# pastime, or of getting better at it, is a motive, not a taste: "I just like helping people",
# "I just like playing for fun", "I love seeing my teammates succeed", "my love for improving
# my skills".
GENERIC_OBJECT: dict[str, str] = {
    "en": r"^\s*\w+ing (?:\w+ ){0,2}(?:people|others|everyone|everybody|folks|teammates|"
    r"for fun)\b(?: \w+)?\s*(?:[.!,;]|$)"
    r"|^\s*(?:improving|bettering|challenging|pushing|growing) (?:my ?self|my (?:skills|game|craft))\b",
}
# A liking whose object is a pronoun, or that opens the sentence with no object at all
# ("大好きだから何度も行っちゃう").
PRONOUN_SUBJECT_JA = (
    r"(?:それ|これ|あれ|僕も|私も|(?:その|この|あの)[^、。]{0,6})(?:は|が|も|、)?[^、。]{0,4}"
    r"(?:好き|嫌い)|^(?:本当に|ほんとに|ほんと|すごく|とても|めっちゃ|超)?(?:大)?(?:好き|嫌い)"
)

# A past time: what the sentence tells is over, not a plan ("our camping trip last year").
PAST: dict[str, str] = {
    "en": r"\blast (?:year|month|week|summer|spring|fall|autumn|winter|weekend|night|time)\b"
    r"|\bago\b|\bused to\b",
    "zh": r"去年|上个月|上周|上星期|以前|小时候|那时候",
    "ja": r"去年|先月|先週|昔|子供の頃|以前",
}
# A plan whose object is vague or an errand: a part of a trip ("去一些其他的博物馆"), a few of
# something, an ordinary outing ("去看电影").
VAGUE_PLAN: dict[str, str] = {
    "zh": r"一些|其他|别的|几(?:个|本|家|部|天)|某些|什么|哪|看电影|吃饭|晚饭|午饭|逛街|买|"
    r"散步|睡觉|洗澡|在家|回家|超市|商场|上班|上课",
    # a plan put off or only guessed at: "来年のことはまた考えます", "来月は忙しくなりそう"
    "ja": r"また|そのうち|いつか|考え(?:ます|たい|てい|中)|なりそう|未定",
}

# A plan whose destination is only a pronoun ("Planning a trip there next month").
PLAN_PRONOUN: dict[str, str] = {
    "en": r"\b(?:there|that place)\b",
    "zh": r"去那(?:里|儿|边)|那个地方",
    "ja": r"そこ|あそこ",
}

# A near time ahead: a decision about tonight is not a decision about one's life.
SOON: dict[str, str] = {
    "en": r"\b(?:tonight|tomorrow|this (?:afternoon|evening|weekend)|for (?:lunch|dinner|breakfast))\b",
    "zh": r"今晚|明天|后天|这周末|午饭|晚饭|早饭|午餐|晚餐",
    "ja": r"今夜|今晩|明日|あした|今週末|今日は|昼ご飯|晩ご飯|夕飯|朝ご飯|ランチ|ディナー",
}

# A near time: what the sentence says belongs to today or the coming days. "Later" alone is
# near; "later this month" is a time of its own (TIME_PHRASE).
NEAR_TIME: dict[str, str] = {
    "en": r"\b(?:today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening|weekend)|"
    r"last night|right now|later today|in a bit|earlier today|"
    r"later(?! (?:this|next|in the) (?:month|year|summer|spring|fall|autumn|winter|season)))\b",
    "zh": r"今天|明天|后天|今晚|昨天|昨晚|刚才|这周末|这个周末|今早|待会|一会儿|下午[^，。]{0,4}点",
    "ja": r"今日|明日|あした|明後日|今夜|今晩|昨日|昨夜|さっき|今週末|午後[^、。]{0,4}時",
}

# A time phrase is read as a time before any pronoun check: the "this" of "a conference this
# month" is no pronoun object.
TIME_PHRASE: dict[str, str] = {
    "en": r"\b(?:(?:later|earlier|early|late) )?(?:this|that|next|last) (?:coming )?(?:day|week|"
    r"weekend|month|year|summer|spring|fall|autumn|winter|semester|season|morning|afternoon|"
    r"evening|time)\b|\bthese days\b|\b(?:not (?:so |that |too )?long|a (?:little )?while|"
    r"(?:a|an|one|two|three|a few|\d+|several|many) (?:\w+ )?(?:days?|weeks?|months?|years?)) ago\b",
    "zh": r"这(?:个)?(?:月|周|星期|礼拜|学期|季度)|这些天|那(?:天|时候|年)",
    "ja": r"(?!)",
}

# A request to note what follows, said before the fact itself ("Please remember: our staging
# database ...", "Remember that I ...", "请记住：...", "覚えておいて：..."): the fact is stored
# without it (the rest of the sentence is kept as said).
REQUEST_TO_NOTE: dict[str, str] = {
    "en": r"^(?:(?:hey|ok|okay|so|oh|and|also)\s*,?\s+)?(?:please\s+|pls\s+|kindly\s+)?"
    r"(?:(?:always\s+)?remember|keep in mind|note|don't forget|never forget|make a note|"
    r"write (?:this|it|that) down|for the record|fyi|for your information|just so you know)"
    r"(?:\s*,?\s*please)?(?:\s*[:：,]+\s*|\s+[-–—]+\s*|\s+that\s+(?=(?:i|i'm|i've|i'd|"
    r"i'll|my|we|we're|our|the|this|you|your|he|she|they|it|it's)\b))",
    "zh": r"^(?:请你?|麻烦你?)?(?:一定要?|务必)?(?:帮我)?(?:记住|记得|记下|记一下)(?:一下)?"
    r"(?:哦|啊)?(?:[：:，,]\s*|(?=我))",
    "ja": r"^(?:これ(?:を|は)?)?(?:覚えて(?:おいて|て|ね)?|覚えといて|メモして(?:おいて)?)"
    r"(?:ください)?(?:ね)?[：:、,]\s*",
}

# What an instruction to remember is made of when it holds nothing to remember.
FILLER: dict[str, str] = {
    "en": r"\b(?:please|pls|always|remember|keep in mind|note|don't forget|never forget|"
    r"write (?:this|that|it) down|save|store|memori[sz]e|this|that|it's|it is|it|what i said|"
    r"very|really|super|so|important|ok|okay|for me|for later|forever|yeah|now)\b",
    "zh": r"请|一定要|一定|要|记住|记得|记下|这个|这一点|这些|这件事|我说的话|我的话|哦|啊|吧|了|"
    r"呀|呢|很|非常|特别|重要|你|我|好|的",
    "ja": r"これ|これは|それ|私の言ったこと|言ったこと|を|は|大事|大切|重要|だから|なので|"
    r"覚えて(?:おいて|ください|て|ね|よ)?|覚えといて|おいて|ください|ね|よ|ちゃんと|絶対に?|"
    r"です|だ|本当に",
}

# "X, not Y" and its kin: the corrected term is group 1.
CONTRAST: dict[str, list[str]] = {
    "en": [r"\bnot (?!only\b)([^,.;]{1,40}), but\b"],
    "zh": [r"不是([^，。！？,]{1,40}?)[，,]?\s*(?:而)?是"],
    "ja": [r"([^、。]{1,40}?)(?:ではなく|じゃなくて|じゃなく)"],
}
# "..., not X" at the end: a correction too; what it supersedes, if anything, is decided by
# speaker and subject (engine/ingest/corrections.py), never by the substring X alone.
TRAILING_CONTRAST: dict[str, str] = {
    "en": r",\s*not ([^,.;!]{1,40})[.!]?$",
    "zh": r"[，,]\s*(?:而)?不是([^，。！？,]{1,20})[。！!]?$",
}
# A corrected term that is an opinion, a feeling or the conversation itself is no correction.
NOT_A_TERM: dict[str, str] = {
    "en": r"^(?:(?:that|what|how|why|to|the point|a big deal|really|so|too|very|quite|just|"
    r"only|about|because|big|bad|good|great|much|many|sure|true|fair|easy|hard|that bad|"
    r"today|tomorrow|yesterday|tonight|it|this|me|you|i)\b|.*\b(?:i|you)\b)",
    "zh": r"[我你他她它这那不没在想要说]|开玩笑|意思|问题|故意",
    "ja": r"そう|それ|これ|あなた|私|僕|ない|たい|冗談|意味|わけ|つもり",
}
# A sentence that opens like this and states something is a correction ("Actually, I ...").
REVISION: dict[str, str] = {
    "en": r"^(?:actually|sorry|oops|my bad|wait|to be clear|i mean|correction)\b",
    "zh": r"^(?:其实|更正一下|纠正一下|不好意思|抱歉|对了)",
    "ja": r"^(?:実は|ごめん|すみません|訂正です|あ、)",
}

# Precision first: what decides between core and working when a trigger stands. Core is pasted
# into every prompt, so a line that could be either is working memory.
#
# A statement of the moment: a near or bounded-present time, a past episode told by its day, or a
# state that passes by its nature (on a trip, in hospital, 出張中). Whatever rule matched, the
# line is about now, not about the speaker's life: working memory. LIFE_EVENT lifts it when what
# it tells is a change that lasts by nature ("my grandmother passed away last week", "I joined a
# gym yesterday", "我们上周领养了一只狗").
MOMENT: dict[str, str] = {
    "en": r"\b(?:today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening|weekend|week)|"
    r"last (?:night|weekend|week|(?:mon|tues|wednes|thurs|fri|satur|sun)day)|the other day|"
    r"right now|just now|at the moment|earlier today|later today|in a bit|"
    r"on (?:a |the )?(?:business trip|vacation|holiday|leave|sick leave|break|call)|"
    r"in (?:the )?hospital|out sick|jet-?lagged|stuck in|a cold|the flu|a fever|this time)\b",
    "zh": r"今天|明天|后天|今晚|今早|昨天|昨晚|刚才|待会|一会儿|这周|这个?星期|这几天|上周|上星期|"
    r"这个?周末|上个?周末|(?:在|正在)(?:出差|度假|住院|请假|路上)|(?:出差|住院)中|感冒|发烧|这次",
    "ja": r"今日|明日|あした|明後日|今夜|今晩|今朝|昨日|昨夜|さっき|先ほど|今週|先週|今週末|"
    r"先週末|(?:出張|旅行|休暇|入院|帰省|外出|移動|会議|作業)中|風邪|熱が|熱で|休んで|入院し|"
    r"今回",
}
LIFE_EVENT: dict[str, str] = {
    "en": r"\b(?:passed away|died|was born|were born|gave birth|got (?:married|engaged|divorced|"
    r"hired|promoted|accepted|a (?:new )?job|into)|(?:lost|quit|left) my job|laid off|adopted|"
    r"(?:got|rescued) (?:a|an|our|my|this|two) (?:new |little |cute )?(?:puppy|pup|dog|kitten|"
    r"cat|pet)|moved (?:to|from|into|in with|back)|diagnosed|graduated|retired|"
    r"joined (?!(?:the|a|an|this|that) (?:call|meeting|chat|stream|queue|line|thread)\b)|"
    r"pregnant|expecting|new addition|(?:bought|got) (?:a|an|our|my) (?:new |first )?(?:house|"
    r"home|car|apartment|condo|flat)(?= *(?:[.,;!]|$|(?:in|on|at|for|from|with|and|last|this|"
    r"yesterday|today)\b)))\b",
    "zh": r"去世|过世|走了|出生|生了|怀孕|结婚|订婚|离婚|领养|养了|搬到|搬家|辞职|失业|被裁|退休|"
    r"毕业|录取|录用|入职|加入了|确诊|诊断|买了(?:房|车|一辆|辆|一套|套)",
    "ja": r"亡くな|生まれ|出産|妊娠|結婚|婚約|離婚|引っ越|退職|辞め|転職|就職|合格|卒業|入学|入社|"
    r"飼い始め|迎え|診断|入会|に入りました|(?:家|車|マンション)を買",
}

# A habit told as lately's ("最近毎日残業しています", "these days I walk to work") is a passing
# stretch, unless the line tells it was taken up ("我最近开始学做烘焙", "最近パン作りにはまって").
LATELY: dict[str, str] = {
    "en": r"\b(?:lately|these days|recently)\b(?!.*\b(?:started|began|took up|got into|picked up)\b)",
    "zh": r"(?:最近|近来|这些天)(?![^。]*(?:开始|迷上|爱上))",
    "ja": r"(?:最近|近頃|このごろ)(?![^。]*(?:始め|はまっ|ハマっ))",
}

# Someone the speaker works or lives beside is in their world, not their life: what is said of
# a colleague, a boss or a neighbour (the subject of the line) is working memory (family, partners, friends and pets are
# RELATIVE words of vocabulary.py and stay).
ACQUAINTANCE: dict[str, str] = {
    "en": r"^(?:my|our) (?:\w+ )?(?:colleague|coworker|co-worker|boss|manager|neighbou?r|landlord|"
    r"landlady|client|customer|teammate|classmate|roommate|flatmate|teacher)s?\b",
    "zh": r"^我(?:的|们)?(?:同事|老板|领导|上司|邻居|房东|客户|同学|室友|老师)",
    "ja": r"(?:同僚|上司|部長|課長|先輩|後輩|隣の人|大家さん|取引先|同級生|ルームメイト)(?:の|が|は|も)",
}

# In English a plan or a family event is the speaker's when a first-person word is in it or it
# opens on its verb ("Gonna visit Lisbon next month"); "Rachel is going to Rome next month" is
# hers, not theirs. (Chinese and Japanese drop the subject: their OTHERS rules name someone else.)
FIRST_PERSON: dict[str, str] = {
    "en": r"\b(?:i|i'm|i've|i'll|i'd|we|we're|we've|we'll|we'd|me|my|our|us|myself)\b"
    r"|^(?:gonna|going|planning|thinking|looking|hoping|heading|flying|moving|off|just|also|"
    r"still|aiming|getting|can't wait|excited|preparing|training|signing|signed|starting)\b",
}

# Precision first, by the form of the whole sentence: when a trigger stands, the line still goes
# to core only if nothing in it says the fact is not a lasting one of the speaker's. Each family
# is a grammatical form, not a topic, so it holds on dialogue no one here has read; each applies
# to the whole sentence, not only the trigger's clause ("I'm a nurse, I think."), and to every
# rule family but corrections, flags and pending actions. What one of them holds is working
# memory (or nothing): a false core line is pasted into every prompt, a missed one is not.
NOT_LASTING: dict[str, dict[str, str]] = {
    # hedged: the speaker is not sure of it, or says it only roughly
    "hedged": {
        "en": r",\s*(?:i think|i guess|i believe|i suppose|i reckon|i'm not sure|not sure|"
        r"or something|or so|at least for now|if that makes sense)\s*[.!…]*$"
        r"|\b(?:probably|maybe|perhaps|possibly|basically|practically|pretty much|kinda|"
        r"more or less|supposedly|hopefully)\b|\b(?:i|i'm|we|we're) (?:kind|sort) of\b",
        "zh": r"应该|大概|可能|好像|估计|也许|或许|说不定|算是|似乎|我猜|我觉得|我感觉",
        "ja": r"たぶん|多分|おそらく|恐らく|かも|気がする|と思(?:う|います|って|いま)|だろう|"
        r"でしょう|一応",
    },
    # temporary: held for a stretch, until something, or for this conversation only ("I decided
    # to take a break for a week", "For now I'm living with my parents"); a plan is spared (its
    # time is when it happens, not how long it holds: a trip of a few days is still a plan)
    "temporary": {
        "en": r"\b(?:for now|for the time being|at the moment|temporarily|this (?:month|week|"
        r"semester|term)|for the (?:next|coming) (?:few |couple of |\w+ )?(?:days|weeks|months)|"
        r"for (?:a|one|the|two|three|a few|a couple of|several) (?:days?|weeks?|weekend|nights?|"
        r"months?)|"
        r"(?:until|till)(?! (?:i say otherwise|further notice|i tell you otherwise)\b)|"
        r"(?:in|for) this (?:chat|conversation|thread|session)|(?:just|only) for (?:now|today|"
        r"this|the moment))\b",
        "zh": r"这个?月|这段时间|这阵子|暂时|目前先|临时|[到在][^，。]{1,15}之前|这次(?:对话|聊天)|"
        r"本次|(?:这|几|一|两)(?:天|周|个星期)(?:内|里|之内)",
        "ja": r"^(?:今|いま)[、，]|今月|今週|当分|しばらく|一時的|とりあえず|今だけ|今回だけ|この会話|"
        r"(?:数日|一週間|二、三日)(?:の間|は|だけ)|"
        r"(?:る|た|い)まで(?:は|の間)?[、，]|までの間",
    },
    # a wish, a hope or make-believe, not a fact or a commitment
    "wished": {
        "en": r"\b(?:i'd|i would|we'd|we would) (?:love|like|prefer|want) to\b|\bcould see myself\b"
        r"|\bin another life\b|\bideally\b|\bsome ?day\b|\bone day(?! (?:a|per|each|every)\b)"
        r"|\b(?:i|we) (?:\w+ )?(?:hope|wish|dream of|dream about)\b|\bwould be (?:nice|great|cool)\b",
        "zh": r"我(?:很|真|好|特别|一直|也|还|真的|都)?想(?!起|到|法|念|象|像|你|说)|希望|"
        r"有一天|哪天|总有一天|有机会",
        "ja": r"たい(?:と|な|です|んです|けど|[。！]|$)|たかった|(?<![てで])ほしい|いつか|そのうち",
    },
    # someone else's belief or word about the speaker ("My mom thinks I'm allergic to cats")
    "believed": {
        "en": r"\b(?:thinks|believes|reckons|assumes|suspects|figures|swears|insists|"
        r"(?:is|are) convinced|keeps? telling me)\b",
        "zh": r"(?:他|她|他们|她们|朋友|同事|老板|领导|老师|医生|邻居|室友|同学|家人|别人|大家|"
        r"爸爸?|妈妈?|父母|(?:小|老|阿)[\u4e00-\u9fff])(?:都|也|总|一直|老是|还)?"
        r"(?:说(?!话|过)|觉得|认为|以为|告诉我)",
        "ja": r"(?:と|って)(?:言って|言われ|思われ)",
    },
    # a plan of the past, or one called off ("I was going to ...", "本来打算", "つもりでした")
    "past plan": {
        "en": r"\b(?:was|were) (?:going to|gonna|planning|supposed to|meant to|hoping to|about to)\b"
        r"|\b(?:had|i'd|we'd) (?:planned|hoped|meant|intended|wanted) to\b"
        r"|\bwanted to (?!(?:tell|let|say|share|show|ask|thank|check|update|mention)\b)"
        r"|\b(?:called off|cancel+ed|fell through|postponed|put on hold|changed (?:my|our) minds?|"
        r"didn't happen|never happened|never got (?:around|round) to|gave up on)\b",
        "zh": r"本来|原来|原本|原计划|曾经(?:打算|计划|想)|取消了|泡汤|没去成|没能|推迟|延期|改期|"
        r"不去了",
        "ja": r"つもりでした|つもりだった|予定でした|予定だった|はずだった|はずでした|中止|"
        r"キャンセル|延期|見送|取りやめ|やめにし|行けなかった|できなかった",
    },
    # a one-off episode of the past told as a story ("When I was ten, we once drove to Rome")
    "one-off": {
        "en": r"\bonce\b(?! (?:a|per|every) )|\bone time\b|\bthat (?:time|day|night|summer)\b",
        "zh": r"有一(?:年|次|回|天)|那一?次|那(?:年|天)",
        "ja": r"(?<!に)一度(?!も)|あの時|あのとき|その時|ある日",
    },
    # a question about one's own fact ("I'm allergic to penicillin, right?")
    "checking": {
        "en": r",\s*(?:right|correct|yes|yeah|no|isn't it|aren't i|am i not|don't i|didn't i|"
        r"wasn't i|haven't i|or not)\s*\?+\s*$",
        "zh": r"是不是|对吧|对不对|没错吧|来着|是吧",
        "ja": r"っけ|ですよね[？?]|でしょ[？?]",
    },
    # a joke: said with a laugh, or called one
    "joking": {
        "en": r"\b(?:lol|lmao|rofl|haha\w*|hehe\w*|jk|just kidding|kidding)\b|😂|🤣|😜|😝|🙃",
        "zh": r"哈哈|嘿嘿|嘻嘻|开玩笑|😂|🤣|[（(]笑[)）]",
        "ja": r"[（(]笑[)）]|[wｗ]{2,}|冗談|😂|🤣",
    },
}
# Rule families a form does not speak against.
SPARED: dict[str, set[str]] = {"temporary": {"plan"}}

# Someone else as the only person in the sentence: a third-person pronoun and no first person
# ("She works as a pilot", "朋友说他明年要搬到上海"). A relationship is about someone else by
# nature and is not asked.
THIRD_PERSON: dict[str, str] = {
    "en": r"\b(?:he|she|they|his|her|their|him|them)\b",
    "zh": r"他|她",
    "ja": r"彼(?:は|が|も|ら)",  # 彼女 and 彼氏 are also a girlfriend and a boyfriend
}
SPEAKER_WORD: dict[str, str] = {
    "en": FIRST_PERSON["en"],
    "zh": r"我",
    "ja": r"私|僕|俺|わたし|うち|自分",
}
