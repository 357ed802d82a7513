"""High-signal patterns of the fast channel (seed 000 §5.2.3), as data: one table per language.

A sentence is a high signal when a category's trigger matches, what follows the trigger is a
concrete object (not "it" or "them"), and nothing in `noise.py` vetoes it. Triggers are built
from the structure of a lasting statement, not from keywords alone: a first-person subject, a
stable-state or life-event verb ("I'm allergic to", "my brother works as", "I joined"), a plan
with a horizon beyond the coming days ("next month", "明年", "来月") or a plan noun (a trip, a
competition, a move). The table in ``tests/helpers/signal_table.py`` holds positives and look-alikes.

Importance follows the seed's rules (seed 003 "重要性评分"): an intrinsic score per category
plus the explicit signal of how the user said it ("remember", "important", "by the way"),
capped at 1.0.
"""

from __future__ import annotations

from cortex_mcp.engine.ingest import vocabulary as vocab

# Rule families in priority order: the first that matches a sentence names it.
CATEGORY_ORDER = (
    "correction",
    "identity",
    "relationship",
    "preference",
    "decision",
    "milestone",
    "plan",
    "todo",
    "important",
)

# The category a hit is stored under, where the family is not itself a category.
STORED_AS = {"important": "fact", "milestone": "fact", "plan": "fact"}

# Families whose statements are about a moment, not a lasting state, when a near time word
# ("today", "明天", "明日") is in the sentence: those lines are working memory, not core.
TIME_BOUND = {"correction", "preference", "plan", "fact", "important"}

# Pending actions are short-lived: they are kept (working memory), never core.
WORKING_ONLY = {"todo"}

# Intrinsic importance: identity/health 1.0, preferences, relationships and corrections 0.8,
# decisions 0.7, life events and plans 0.6, pending actions and flagged facts 0.5.
INTRINSIC = {
    "identity": 1.0,
    "preference": 0.8,
    "relationship": 0.8,
    "correction": 0.8,
    "decision": 0.7,
    "milestone": 0.6,
    "plan": 0.6,
    "fact": 0.6,
    "todo": 0.5,
    "important": 0.5,
}

PATTERNS: dict[str, dict[str, list[str]]] = {
    "en": {
        "identity": [
            r"\bmy name(?:'s| is)\b",
            r"\bcall me (?-i:[A-Z])",
            r"\bi(?:'m| am) (?:an? |the )(?!(?:bit|little|lot|fan|big|huge|total|great|good|bad|"
            r"mess|sucker|part|kind|sort|bunch|while|ton|few|couple|mix)\b)\w+",
            r"\bi(?:'m| am)? (?:now )?(?:work|volunteer)(?:ing)? (?:as|at|for|in|with)\b",
            r"\bi(?:'m| am) (?:based|living) in\b",
            r"\bi live in\b",
            r"\bi(?:'m| am) (?:originally )?from\b",
            r"\bi (?:grew up|was born|was raised) in\b",
            r"\bi(?:'ve| have)? (?:just )?moved (?:to|from|here|into|in with|back)\b",
            r"\bdiagnosed with\b|\bdoctor (?:said|says|told me) i (?:have|had)\b",
            r"\bi (?:have|had|suffer from) (?:type \d )?(?:diabetes|asthma|adhd|autism|cancer|"
            r"arthritis|epilepsy|celiac|high blood pressure|migraines?|anxiety|depression|"
            r"insomnia|a heart condition)\b",
            r"\bi (?:teach|coach|run|own|manage) (?:a |an |my )?(?:[\w'-]+ ){0,3}(?:at|in|for|"
            r"classes|bakery|shop|store|business|company|restaurant|studio|team|downtown)\b",
            r"\ballergic to\b|\ballergies to\b",
            r"\bi(?:'m| am) \d{1,3}(?: years old\b|\s*[.!,]|$)",
            r"\bmy (?:job|role|title|profession) is\b",
            r"(?:^|\bi )(?:just )?(?:lost|quit|left) my job\b",
            r"\bi (?:just )?got (?:accepted|hired|promoted|into|a job|a new job|the job)\b",
            r"\bi(?:'m| am|'ve been| have been) (?:now )?(?:a )?(?:pregnant|retired|vegan|"
            r"vegetarian|diabetic|student)\b",
            r"\b(?:i )?(?:run|own|opened|started|have|having|running|owning) my own (?:[\w-]+ ){0,2}"
            r"(?:business|studio|store|shop|company|restaurant|practice|bakery|cafe|gym|label|"
            r"brand)\b",
            # a change of status, told by its verb: graduated, drafted, signed, enrolled, promoted
            r"\bi (?:just |recently |finally |officially )?(?:graduated|was drafted|got drafted|"
            r"signed (?:with|a contract)|enrolled (?:in|at)|was promoted|got promoted|"
            r"retired from|became an? )\b",
            # health beyond allergies: an intolerance, a lasting condition
            r"\b(?:lactose|gluten|dairy|wheat|soy|fructose)[- ]intolerant\b|\bintolerant (?:to|of)\b"
            r"|\bi(?:'m| am) (?:celiac|deaf|colou?r-?blind|dyslexic|autistic|epileptic)\b",
        ],
        "relationship": [
            rf"\bmy (?:\w+ )?{vocab.EN_RELATIVE}'s name is\b",
            # where someone is counts when it is a place of their life, not of the moment ("is in
            # Boston", "is at college"; not "is at work", "is in the photo"), and what they have
            # when it is someone (a child, a pet) or a condition, not an event ("has a recital")
            rf"\bmy (?:\w+ )?{vocab.EN_RELATIVE}(?:'s name)? (?:is (?:named|called|\d|a |an |"
            rf"pregnant|expecting|from |(?:in|at) (?=(?-i:[A-Z])|(?:college|university|grad school|"
            rf"high school|middle school|elementary school|kindergarten|preschool|daycare|the army|"
            rf"the navy|the air force)\b))|works|lives|wrote|has (?:a|an|two|three) (?:\w+ )?"
            rf"(?:{vocab.EN_RELATIVE}|{vocab.EN_PET}|disease|condition|disorder|allergy|diabetes|"
            rf"autism|asthma)s?\b|was born|"
            rf"passed|died|just turned|turned|(?:just )?got (?:married|engaged|a job)|studies|"
            rf"goes to|plays)",
            r"\b(?:passed away|died|was born|gave birth|got married|got engaged|is expecting|"
            r"are expecting|new addition to (?:the|our|my) family|marrying my)\b",
            rf"\b(?:i|we)(?:'ve| have)? (?:just )?(?:adopted|got|have|rescued) (?:a|an|this|"
            rf"two|three|my|our)? ?(?:new |little |cute |\w+ ){{0,2}}{vocab.EN_PET}s?\b",
            r"\b(?:i'?ve|i have) known (?:\w+ ){1,3}for (?:\d+|\w+) years\b",
            rf"\b(?:i|we) have (?:a|an|two|three|four) (?:\w+ )?{vocab.EN_RELATIVE}s?\b",
            # lucky or grateful "to have my husband and kids": who is in their life, by role
            # ("my family" alone names no one)
            rf"\bto have (?:my|our) (?!fam)(?:\w+ )?{vocab.EN_RELATIVE}s?\b(?!')",
        ],
        "preference": [
            rf"\b(?:i|we) {vocab.EN_ADVERB}(?:prefer|like|love|hate|dislike|enjoy|adore|"
            r"can't stand|cannot stand|can't live without)\b(?! to know\b)(?=\s*[\w\"'“])",
            r"\b(?:i|we) (?:do not|don't|never) (?:really )?(?:like|enjoy|eat|drink)\b",
            # liking as a noun: "my love for dance", "we share a passion for sailing"
            r"\b(?:(?:i|we) (?:\w+ ){0,2}(?:have|share|found|developed|discovered) (?:a|an)|my|our)"
            r" (?:[\w-]+ )?(?:love|passion|fondness) (?:for|of)\b(?=\s*[\w\"'“])",
            r"\b(?:i|we)(?:'ll| will) (?:always|forever) (?:love|enjoy|adore|hate)\b(?=\s*[\w\"'“])",
            # a liking of the past told as biography: "I loved reading as a kid"
            r"\b(?:i|we) (?:\w+ )?(?:loved|enjoyed|adored) (?:[\w'\"-]+ ){1,6}(?:as (?:a )?(?:kid|"
            r"child|teen\w*|boy|girl|kids|children)|growing up|when i was (?:a |little|young|\d))",
            r"\b(?:i'?ve|i have) (?:always |long )?(?:loved|enjoyed|been into|"
            r"been passionate about|had a (?:\w+ )?(?:respect|passion|love|soft spot) for)\b",
            r"\bmy (?:[\w'-]+ )?favou?rite (?:[\w'-]+ ){0,2}(?:is|are|has to be)(?: th(?:is|at|ese|ose))?\b",
            r"\bmy favou?rites? (?:is|are)(?: th(?:is|at|ese|ose))?\b",
            r"(?:^|, )(?!(?:it|this|that|they|these|those|he|she)\b)(?:\w[\w'\"-]* ){1,5}"
            r"(?:is|are|has been|have been|has become) (?:\w+ ){0,2}(?:one of )?my (?:\w+ )?"
            r"(?:favou?rites?|passions?|escapes?|things?|hobb(?:y|ies)|team|go-to)\b",
            # an activity as the subject of what it does for the speaker, in the present
            # ("Painting helps me unwind", "Running keeps me sane"): a lasting habit
            r"^(?!(?:seeing|hearing|knowing|having|being|getting)\b)(?:[a-z]+ing)"
            r"(?: (?!(?:you|your|it|this|that|these|those|them)\b)[\w'-]+){0,3}"
            r" (?:just |really |always |still )?(?:helps|keeps|makes|brings|"
            r"gives|lets|calms|relaxes|fascinates|interests|excites) me\b",
            # what fascinates the speaker, named: "Learning about old cultures fascinates me"
            r"^(?!(?:it|this|that|these|those|he|she|they|you|your|what|everything)\b)"
            r"(?:[\w'-]+ ){1,8}(?:really |always )?(?:fascinates?|interests?) me\b",
            r"\bi(?:'m| am) (?:a |an )?(?:\w+ ){0,2}fan of\b(?=\s*[\w\"'“])",
            r"\bi(?:'m| am) (?:a |an )(?:total |big |huge |die-hard )?"
            r"(?!(?:total|big|huge|massive|great|real)\b)\w+ (?:fan|lover|buff|nerd|"
            r"geek|addict|enthusiast)\b",
            r"\bi(?:'m| am) (?:really |so |totally |very )?(?:into|passionate about|obsessed with|"
            r"addicted to|hooked on)\b(?=\s*[\w\"'“])",
            r"\b(?:i|we) (?:started|began|took up) \w+(?:ing)? (?:\w+ ){0,3}(?:\w+ )?"
            r"(?:years?|months?) ago\b",
            r"\b(?:i'?ve|i have) been (?:\w+ing|into \w+)(?: \w+){0,4} (?:for (?:[\w-]+ ){0,3}"
            r"(?:years?|decades?)|ever since|since (?:i was|childhood|high school|college))\b",
            r"(?:^|, )(?!(?:it|this|that|they|these|those|he|she)\b)(?:\w[\w'\"-]* ){1,5}"
            r"(?:is|has been|has become) (?:a |an )?(?:\w+ )?part of my life\b",
            r"\b(?:i|we)(?:'m|'re|'ve)?(?: [\w'-]+){0,8} (?:every|each) (?:day|morning|evening|"
            r"night|week|weekend|"
            r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            # a habit: first person, a frequency adverb, a verb of doing (not of feeling,
            # trying or saying: "I always try to stay positive" is a motto, not a habit)
            r"\b(?:i|we) (?:usually|often|normally|typically|regularly|always|never|rarely)"
            r" (?:go \w+ing|(?!(?:try|want|wish|hope|feel|felt|think|know|say|tell|get|got|"
            r"find|forget|remember|believe|mean|wonder|need|have|love|like|enjoy|do|work|make|"
            r"take|am|was|will|would|can|could)\b)[a-z]+ (?!(?:it|them|that|this|you)\b)\w)",
            r"\bi'd rather\b",
            r"^(?:please )?(?:always|never) (?:use|reply|answer|write|respond|call|give|show)\b"
            r"(?! up\b)",
            r"\b(?:\w+ )?is (?:definitely )?on my (?:bucket )?list\b",
            # a standing instruction: what the agent is to do from now on, always or never, or
            # in all of the speaker's things
            r"^(?:please )?(?:from now on|going forward|from here on|in (?:the )?future)\b,?\s+"
            r"(?!(?:i|i'm|i'll|we|we're|we'll|it|it's|this|that|things|life|everything)\b)"
            r"(?:please )?(?:(?:always|never|don't|do not) )?\w",
            r"^(?:please )?(?:always|never|don't ever|do not ever|never ever)\s+"
            rf"(?:{vocab.EN_AGENT_ACT})\b",
            rf"^(?:please )?(?:{vocab.EN_AGENT_ACT})\b[^.!?]*\b(?:in|for|with|to) (?:all|every|each|"
            r"any) (?:of )?(?:my|your|the)\b",
        ],
        "decision": [
            r"\b(?:we|i)(?:'ve| have)? (?:finally )?decided\b",
            r"\blet's (?:go with|use|stick with|pick)\b",
            r"\b(?:we|i)(?:'ll| will) (?:go with|use|stick with)\b",
            r"\b(?:we|i) (?:chose|picked|settled on|went with|opted for)\b(?! (?:up|to|this|that)\b)",
            r"^decision:",
            r"\b(?:gonna|going to) (?:take a shot at |try )?(?:start|open|launch|quit|become|"
            r"go full-time|retire|go back to school)\w*\b",
            r"\bi(?:'m| am) (?:starting|opening|launching) (?:my own|a|an) (?:\w+ )?(?:business|"
            r"studio|company|store|shop|restaurant|practice|bakery|cafe|brand)\b",
            r"\bgoing full-time\b",
        ],
        "milestone": [
            r"\b(?:i|we) (?:just |recently |finally |officially )?joined (?!in\b)(?:a|an|the|my|"
            r"our)?\b",
            r"\b(?:i|we)(?:'ve| have)? (?:just |recently |also |finally )?(?:started|began) "
            + vocab.EN_HOBBY_VERB
            + r"\b",
            # a recurring commitment: a class or a team taken up, kept up, or given (signing up is
            # one act, not yet a habit)
            r"\b(?:i|we)(?:'ve| have)? (?:just |recently |also |finally )?(?:started|began|joined|"
            r"enrolled in|took up) (?:a|an|my|our|some) (?:[\w'-]+ ){0,3}(?:class|"
            r"classes|course|lessons|league|club|team|choir|band|program|group)\b",
            r"\b(?:keep(?:ing)? up|stick(?:ing)? with|continu(?:e|ing)|carry(?:ing)? on) (?:with )?"
            r"my (?:[\w-]+ ){0,2}(?:lessons|classes|course|training|practice|studies|program)\b",
            r"\b(?:i|we) (?:also |still )?(?:mentor|tutor|coach|teach) (?!(?:it|them|you|him|her|"
            r"myself|that|this|me)\b)\w+",
            r"\bi(?:'m| am) (?:now )?(?:learning|studying|mentoring|coaching|volunteering|"
            # not a lesson of life or of the day: "learning so much from my mentor", "learning
            # to be patient"
            r"training) (?!how to (?:market|deal|handle|cope)|(?:so much|a lot|lots|to be|from|"
            r"about)\b)\w+",
            r"\bi (?:just )?(?:bought|got|own|have) (?:a|an|my|our) (?:new |first |own )?"
            r"(?:car|house|home|apartment|condo|truck|motorcycle|boat|flat)\b",
            r"\bi used to (?:\w+ ){1,8}(?:when i was|as a (?:kid|child)|growing up|back in)\b",
            # a habit of the past told as biography: "I used to ride horses", "I'd go fishing
            # with my dad" (not a feeling, a thought or a wish)
            r"\b(?:i|we) used to (?!(?:think|feel|believe|be|worry|wonder|say|get|hate|love|like|"
            r"enjoy|have|want|need|know)\b)\w+ (?!(?:it|them|that|this|there|you)\b)\w",
            r"\b(?:i|we)'d (?:always |often |usually )?(?!(?:love|like|rather|say|be|have|want|"
            r"better|need|prefer|recommend|suggest|think|guess|imagine|appreciate|bet|try)\b)\w+ "
            rf"(?!(?:it|them|that|this|you)\b)(?:[\w'-]+ ){{0,5}}(?:with my (?:\w+ )?{vocab.EN_RELATIVE}|every (?:summer|weekend|"
            r"day|year|sunday|saturday|morning|night)|when i was|as a kid|growing up)",
            r"\bi (?:quit|stopped|gave up) (?:smoking|drinking|alcohol|caffeine|sugar|meat|vaping)\b",
            r"\bi(?:'ve| have)? got (?:lots of|a collection of) (?:[\w'-]+ ){0,2}(?:books|records|"
            r"plants|games|vinyls?|comics|stamps|coins)\b",
        ],
        "plan": [
            rf"{vocab.EN_FUTURE}.*(?:{vocab.EN_HORIZON}|\b{vocab.EN_PLAN_NOUN}\b)",
            rf"(?:{vocab.EN_HORIZON}|\b{vocab.EN_PLAN_NOUN}\b).*{vocab.EN_FUTURE}",
            rf"{vocab.EN_HAVE}.*{vocab.EN_HORIZON}|{vocab.EN_HORIZON}.*{vocab.EN_HAVE}",
            rf"{vocab.EN_HAVE} (?:[\w'-]+ ){{0,2}}{vocab.EN_PLAN_NOUN}\b.*{vocab.EN_DATE}",
            r"\b(?:gonna|going to) (?:continue|finish|pursue) (?:my|a) \w+",
            rf"{vocab.EN_INTENT} (?:\w+ )?{vocab.EN_LIFE_STEP} (?:a |an |my |our |(?-i:[A-Z]))",
            # a time ahead and the present progressive: "Next month I'm having an art show"
            rf"{vocab.EN_AHEAD}.*\b(?:i'm|i am|we're|we are) \w+ing\b"
            rf"|\b(?:i'm|i am|we're|we are) \w+ing\b.*{vocab.EN_AHEAD}",
            # a goal or a dream, named: "Winning a championship is my number one goal"
            r"(?:^|, )(?!(?:it|this|that|they|these|those|he|she)\b)(?:\w[\w'\"-]* ){1,5}"
            r"(?:is|has always been) my (?:[\w-]+ ){0,2}(?:goal|dream|ambition)\b",
            r"\bi(?:'m| am|'ve been| have been| started| began)? (?:\w+ )?(?:looking into|"
            r"looking at|exploring|considering|aiming|thinking (?:of|about)) (?:[\w'-]+ ){0,8}"
            r"(?:career|job|degree|opportunit|profession|field|industry|business)",
        ],
        "correction": [
            r"^correction:",
            r"\bcorrection:",
            r"\bscratch that\b",
            r"\b(?:i meant|i was wrong|i got that wrong|i misspoke|my mistake|my bad)\b",
            r"\bthat(?:'s| is| was) (?:wrong|incorrect|not right|not true)\b",
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
            # a request with the fact after a colon ("Please remember: our staging database ...")
            r"^(?:please |pls )?(?:always )?(?:remember|keep in mind)\s*[:：]\s*\S",
            r"^(?:please )?keep in mind\b",
            r"^important:",
        ],
    },
    "zh": {
        "identity": [
            r"我(?:是|叫|姓)(?!不是|说|否|不|在想|觉得|真|挺|有点|了|在[^，。]{0,8}(?:读书|上学)|第一次|"
            r"刚|来|去|因为|为了|想|要|会|很|太|最|怎么|这么|那么|故意|开玩笑|认真|随便|你)",
            r"我(?:现在)?在读(?:大学|研|博|高中|初中)|我(?:自己)?开了(?:一)?家",
            r"我的名字(?:是|叫)",
            r"我(?:现在)?(?:住在(?![^，。]{0,6}(?:酒店|宾馆|旅馆|民宿|朋友家))|来自|"
            r"在[^，。,]{1,15}(?:工作|上班|读书|上学))",
            # works somewhere as something; learning how to do a thing is no job
            r"我(?:现在)?在(?:(?!学|习|想|如何|怎么|准备|尝试)[^，。,]){1,15}(?:做|当)[^，。,]{1,10}",
            r"我(?:今年)?\d{1,3}岁",
            r"我(?:对[^，。,]{1,15})过敏|乳糖不耐|不耐受",
            r"我的(?:职业|工作)是",
            r"我(?:是在|在)[^，。,]{1,10}长大",
            r"我(?:的)?老家(?:在|是)",
            r"我(?:刚)?(?:被|考上了?)[^，。,]{1,15}(?:录取|录用|聘用)?",
            r"我(?:刚|刚刚|已经|去年|上个月)?(?:换了(?:新)?工作|辞职|失业|退休|被裁|毕业)",
            r"(?:上个月|去年|最近|刚)?搬到[^，。,]{1,10}",
            r"自己开了(?:一家|家)",
        ],
        "relationship": [
            rf"我(?:的|家|们家)?{vocab.ZH_RELATIVE}[^，。！]{{0,6}}?(?:{vocab.ZH_NUMBER}+岁|是|叫|名叫|在[^，。]"
            rf"{{1,10}}(?:工作|上班|读书|上学|当|做)|当|有[^，。]{{0,6}}(?:病|症)|去世|过世|走了|怀孕|"
            rf"生了|"
            rf"出生|结婚|上(?:小学|初中|高中|大学|幼儿园)|开始上)",
            r"我养了(?:一|两|三)?(?:只|条|个)",
            rf"我有{vocab.ZH_NUMBER}?(?:个|只|条)?[^，。]{{0,3}}(?:孩子|女儿|儿子|哥哥|姐姐|弟弟|妹妹|猫|狗)",
            r"(?:我们?|我和[^，。]{1,6})结婚",
            r"去世了|过世了|怀孕了|订婚了",
        ],
        "preference": [
            r"我(?:很|非常|最|特别|比较|更|真的|一直|也|还是|不太|不|太|超|挺|从小就?|都){0,2}"
            r"(?:喜欢|讨厌|偏好|偏爱|爱吃|爱喝|爱看|爱听|爱玩|受不了|倾向于?|习惯用|喜爱|热爱)",
            r"每(?:天|周|个?星期|个?月|年)[^，。]{0,4}(?:都|会)?[^，。]{0,4}"
            rf"{vocab.ZH_NUMBER}+次",
            r"我最喜欢的|是我最喜欢的|我的最爱",
            r"我(?:每天|每周|每个?周末|每个?月|每晚|平时|一直|经常|从小|通常|一般|常常|总是|向来|"
            r"平常)(?!(?:很|在)?(?:感觉|觉得|想|希望|担心|害怕|感到|沉浸|发现|在想))[^，。,]{0,6}"
            r"(?:都|会)?(?:去|做|吃|喝|起床|跑步|游泳|练|学|看|写|画|弹|打|玩|骑|不|只)",
            r"我从[^，。,]{1,6}(?:开始|起)(?:学|练|玩|打|做|画|弹|跑|写)",
            r"(?:以后|今后)(?:都|请|一律)",
            # a standing instruction: from now on, every time, never again, whenever it answers
            r"(?:以后|今后|从现在起|从今以后|往后)[，,]?\s*(?:请|你|麻烦你)?(?:都|一律|别|不要|用|给我|"
            r"叫我|回答|回复|帮我)",
            r"(?:请|都)一律|一律(?:用|不要|别|给我)|每次都(?:给我|用)|(?:永远|千万)(?:不要|别)"
            r"(?:给我|用|叫我)|(?:别|不要)再给我",
            r"(?:回答|回复|给我|写)[^，。]{0,8}(?:的时候|时)[^，。]{0,4}(?:不要|别|请|都|一律)",
            r"我(?:从来|一般|平时)?不(?:吃|喝)(?![了吧啊呢])",
            r"我(?:很|比较)?习惯(?!了)",
            r"我(?:更)?愿意用",
            r"我是(?:个|一个|一名)?(?:素食|吃素)",
            r"每个?(?:周末|星期|礼拜)都",
            # a habit by a frequency word and 会/是/在, whatever its verb ("我通常会听…",
            # "我每天都会花…画画", "我一般都是在健身房里锻炼"), not a feeling or a thought
            r"我(?:每天|每周|每个?周末|每个?月|每晚|平时|经常|通常|一般|常常|总是|平常)(?:都|也|还)?"
            r"(?:会|是|要|在)(?!(?:很|在)?(?:感觉|觉得|想|希望|担心|害怕|感到|发现|忘|记得)|这|那)"
            r"[^，。,]{2,}",
        ],
        "decision": [
            r"(?:^|我们?|最后|最终|那就|那)(?:已经)?(?:决定|选择了|选定|定了|敲定|确定用)",
            r"^(?:那)?就(?:用|选)[^，。,]{1,20}吧",
        ],
        "milestone": [
            r"我(?:已经)?戒[烟酒]",
            r"我(?:上周|去年|上个月|刚|最近)?买了(?:一辆|辆|一套|套|一栋|栋)",
            r"我小时候[^，。,]{0,10}(?:养过|学过|住在|住过|练过)",
            # a habit of childhood: "我小时候经常和爸爸去钓鱼"
            r"我小时候[^，。,]{0,4}(?:经常|常常|总是|每(?:天|周|年|个?周末)|都会)",
            r"我(?:们)?(?:刚|最近|已经|上周|上个月|去年)?加入了",
            r"参加了[^，。,]{1,10}(?:俱乐部|协会|社团|乐队|球队|小组|教会|健身房|志愿|读书会)",
        ],
        "plan": [
            rf"{vocab.ZH_FAR}[^。！]{{0,20}}(?:要|打算|准备|计划|会|将|去|来|搬|参加|{vocab.ZH_PLAN_NOUN})",
            rf"(?:要|打算|准备|计划)[^。！]{{0,20}}{vocab.ZH_FAR}",
            rf"(?:下周|下星期|下礼拜)[^。！]{{0,12}}{vocab.ZH_PLAN_NOUN}",
            rf"(?:打算|准备|计划)[^。！]{{0,20}}{vocab.ZH_PLAN_NOUN}",
            # the speaker plans to go somewhere: "我最近打算去攀登华山", "我计划在西班牙待两周"
            r"我[^，。]{0,4}(?:计划|打算|准备)[^，。]{0,3}(?:去|到|在|搬|回)[^，。]{2,}",
        ],
        "correction": [
            r"更正|纠正一下|我说错了|搞错了|正确的是",
        ],
        "todo": [
            r"^(?:请)?记得",
            r"提醒我",
            r"别忘了|不要忘了|不要忘记",
            r"待办",
        ],
        "important": [
            # a flag points at the rest of the sentence ("记住：", "这个很重要：", "重要的是，"):
            # "重要" as an adjective ("一场重要的演讲", "更重要的是它的舒适度") flags nothing
            r"记住",
            r"(?<!不)(?<!不太)(?<!没那么)(?<!并不)(?<!更)(?<!最)重要(?:的是)?\s*[:：]"
            r"|^(?:这|这个|这点|这一点|这件事)(?:很|非常|特别)?重要",
            r"关键是|务必",
        ],
    },
    "ja": {
        "identity": [
            r"(?:私|僕|俺|わたし)(?:の名前)?は[^、。]{1,30}(?<!い)(?:です|だ|である|と申します|"
            r"といいます)",
            r"と申します",
            r"に住んでいます|に住んでる",
            r"で働いています|に勤めています|として働いて|の仕事をしています|を教えています",
            r"(?:者|師|員|士|医|官|家|手|ナー|ター)(?:をしています|をしている|をしてる|として)",
            r"^(?:私は|僕は|俺は)?[^、。はがをにもの]{1,8}(?:者|師|員|士|医|官|家)(?:です|だ|なんです)",
            r"出身",
            r"アレルギー|不耐症",
            r"に引っ越し(?:た|ました|てきた)|へ引っ越し(?:た|ました)",
            r"で育(?:った|ちました)",
            r"実家は",
            r"に合格(?:した|しました)",
            r"(?:会社|仕事)を辞め|転職し|退職し|定年",
            r"自分で[^、。]{1,10}をやって",
            r"(?:大学|大学院|高校|専門学校)で[^、。]{0,10}を(?:勉強|専攻|研究)",
            r"を経営して|を営んで",
        ],
        "relationship": [
            rf"{vocab.JA_RELATIVE}(?:が|は|と|の名前は|に)[^、。]{{0,20}}(?:歳|です|しています|をしています|"
            rf"通い始め|生まれ|産|出産|結婚|亡くな|名前|病|看護師|医者|先生|エンジニア)",
            rf"{vocab.JA_RELATIVE}(?:は|が)[^、。]{{1,10}}で",
            r"(?:子供|子ども|娘|息子|兄弟|姉妹|孫|猫|犬)が[一二三四五六七八九十\d]+(?:人|匹|頭)(?:います|いる)",
            r"(?:猫|犬)を飼って(?:います|いる|る)",
            r"と結婚して",
        ],
        "preference": [
            r"(?<!お)(?:大)?好き(?:です|だ|なんです|なの|なんだ)",
            r"一番好きな",
            r"(?:大)?嫌い(?:です|だ|なんです)",
            r"苦手(?:です|だ|なんです)",
            r"の方が(?:好き|いい|好み)",
            r"を好みます|好みです",
            r"(?:いつも|必ず)[^、。]{1,20}(?:使って|答えて|書いて)(?:ください|ほしい)",
            r"毎(?:朝|日|週|晩|週末|月)[^、。]{0,20}(?:しています|してる|ています|ます)",
            # a habit by a frequency adverb, in the present ("普段は自転車で通勤しています")
            r"(?:普段|ふだん|いつも(?!の)|たいてい|よく)(?:は)?(?![^、。]*(?:分か|わか|知っ|覚え))"
            r"[^、。]{1,20}?"
            r"(?:しています|しています|ています|てる|ます)(?![かた])",
            r"にはまって",
            r"から[^、。]{0,10}を?習って",
            r"(?:年前|去年|頃|歳)から[^、。]{0,10}(?:を始め|を習|をやって|を続け)",
            r"(?:週|月|年)に?[一二三四五六七八九十\d]+回",
            r"(?:食べて|飲んで)いません|しか(?:飲み|食べ)ません|(?:飲み|食べ)ません",
            r"ベジタリアン|ヴィーガン",
            r"(?:食べ|飲め)られません|(?:食べ|飲め)ない体質",
            # a standing instruction: from now on, always or every time, asked of the agent
            r"(?:これから|今後|以後|次から)(?![^。]*(?:よろしく|頑張|がんば|気をつけ|お大事))[^。]{0,30}"
            r"(?:ください|下さい|お願いします|ないで|[てで]ほしい)",
            r"(?:必ず|いつも|常に|毎回)[^。]{0,20}(?:お願いします|ください|下さい|ないで)",
        ],
        "decision": [
            r"にしました|に決めました|ことにしました|に決定しました|ことに決めました",
            r"を選びました|で行きましょう|でいきます",
        ],
        "milestone": [
            r"子供の頃[、，]?[^。]{0,15}(?:飼って|住んで|習って|して)いました",
            # a habit of childhood, whatever its verb: "子供の頃、父とよく釣りに行っていました"
            r"子供の頃[、，]?[^。]{0,20}(?:よく|いつも|毎(?:週|年|日))[^。]{0,15}(?:て|で)いました",
            r"(?:車|家|マンション)を買いました|新しい車を",
            r"(?:タバコ|たばこ|お酒|酒)を(?:やめ|辞め)",
            r"毎週[^。]{0,15}ボランティア",
            r"(?:クラブ|サークル|部|チーム|ジム|教会|会)に(?:入(?:りました|った)|入会しました)",
        ],
        "plan": [
            rf"{vocab.JA_FAR}[^。！]{{0,30}}(?:予定|つもり|ます|する|始め|出る|行く)",
            rf"(?:来週|再来週)[^。！]{{0,12}}{vocab.JA_PLAN_NOUN}",
            rf"{vocab.JA_PLAN_NOUN}[^。！]{{0,10}}(?:予定|つもり|準備)",
            rf"{vocab.JA_FAR}の[^。！]{{0,10}}{vocab.JA_PLAN_NOUN}",
        ],
        "correction": [
            r"訂正|正しくは|間違えました|間違っていました|言い間違え",
        ],
        "todo": [
            r"忘れずに",
            r"リマインド(?:して|お願い)",
            r"思い出させて",
            r"やることリスト|TODO",
        ],
        "important": [
            r"覚えて(?:おいて|ください|て)|覚えといて",
            # a flag, not an adjective: "大事な書類です", "大事なのは健康です" flag nothing
            r"(?<!そんなに)(?:重要|大事|大切)(?:です|だ|なこと)",
        ],
    },
}

# Explicit signals: how strongly the user flagged it (added to the intrinsic score).
EXPLICIT: list[tuple[str, float]] = [
    (r"记住|以后都|永远|覚えて|忘れないで|\bremember\b|\bfrom now on\b|\balways\b", 0.5),
    (r"重要|关键|务必|大事|大切|\bimportant\b|\bcritical\b|\bkey point\b", 0.3),
    (r"顺便说一下|顺便|ちなみに|ついでに|\bby the way\b|\bbtw\b", -0.2),
]
