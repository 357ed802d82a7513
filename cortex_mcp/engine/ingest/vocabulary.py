"""The word lists the fast channel's patterns (`signals.py`) are built from: relatives, pets,
hobbies, plan nouns, time horizons and future forms, per language, as regex fragments."""

from __future__ import annotations

EN_ADVERB = (
    r"(?:(?:really|truly|absolutely|just|still|also|totally|definitely|especially|genuinely|"
    r"kinda|kind of|sort of|do|so|generally|usually|always|much|strongly|particularly) )*"
)
EN_RELATIVE = (
    r"(?:wife|husband|partner|son|daughter|kids?|children|child|boy|girl|brother|sister|"
    r"mom|mum|mother|dad|father|parents|grandma|grandmother|grandpa|grandfather|aunt|uncle|"
    r"cousin|niece|nephew|fianc[eé]e?|boyfriend|girlfriend|family|fam|dog|cat|puppy|pup|"
    r"kitten|pet|turtles?|best friend|twins?)"
)
EN_PET = r"(?:puppy|pup|dog|kitten|cat|pet|turtle|rabbit|bunny|parrot|hamster|horse)"
EN_HOBBY_VERB = (
    r"(?:volunteering|going to|taking|learning|practi[cs]ing|training|teaching|coaching|"
    r"mentoring|attending|studying|playing|running|swimming|surfing|dancing|painting|hiking|"
    r"climbing|cycling|boxing|knitting|cooking|baking|gardening|skating|skiing|singing|"
    r"drawing|sculpting|fishing|camping|meditating|journaling)"
)
EN_PLAN_NOUN = (
    r"(?:(?:trip|vacation|holiday|tour|tournament|competition|comp|contest|championship|"
    r"exhibition|concert|festival|wedding|conference|interview|exam|career|degree|marathon|"
    r"race|recital|audition|retreat|graduation|surgery)s?|move to|moving (?:to|house|out)|"
    r"relocat\w+)"
)
EN_HORIZON = (
    r"(?:\bnext (?:month|year|summer|spring|fall|autumn|winter|semester|season)\b"
    r"|\bin the (?:next|coming) (?:few )?(?:weeks|months|years)\b"
    r"|\bthis (?:coming )?(?:summer|fall|autumn|winter|spring|year)\b"
    r"|\bin (?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december)\b|\bcoming up\b|\bafter (?:graduation|college|school)\b)"
)
EN_FUTURE = (
    r"(?:\b(?:i'm|i am|we're|we are) (?:\w+ ){0,2}(?:planning|thinking (?:of|about)|"
    r"looking into|looking at|aiming|hoping|getting ready for|preparing for|putting together|"
    r"organi[sz]ing|training for|going|heading|moving|flying|travel+ing|starting|applying)"
    r"|\b(?:i|we)(?:'ll| will| plan to| want to| intend to| hope to)\b|\bgonna\b|\bgoing to\b"
    r"|^(?:planning|thinking of|looking into)\b)"
)
# A time ahead beyond the coming days, that a plan in the present progressive may name
# ("Next month I'm having an art show").
EN_AHEAD = (
    r"(?:\bnext (?:month|year|summer|spring|fall|autumn|winter|semester|season)\b"
    r"|\bin the (?:next|coming) (?:few )?(?:weeks|months|years)\b"
    r"|\blater this (?:month|year)\b|\bin (?:january|february|march|april|may|june|july|"
    r"august|september|october|november|december)\b)"
)
# Intent with a concrete step in one's life as its object: "we're considering adopting a rescue
# dog", "I hope to build my own family", "I'm gonna stay in Galway". A purchase is a step only
# for a home or a vehicle, a stay only in a named place.
EN_INTENT = (
    r"\b(?:i|we)(?:'m|'re| am| are)? (?:\w+ )?(?:considering|thinking (?:of|about)|planning "
    r"(?:on|to)|hoping to|hope to|plan to|intend to|aim(?:ing)? to|gonna|going to)"
)
EN_LIFE_STEP = (
    r"(?:adopt(?:ing)?|buy(?:ing)?(?= (?:a|an|my|our) (?:new |first |own |\w+ )?(?:car|house|"
    r"home|apartment|condo|flat|truck|boat|motorcycle|farm|cabin)\b)|mov(?:e|ing) (?:to|back)|"
    r"start(?:ing)?|open(?:ing)?|join(?:ing)?(?! (?:a|the) (?:call|meeting|chat)\b)|build(?:ing)?|"
    r"launch(?:ing)?|found(?:ing)?|marry(?:ing)?|get(?:ting)? married|hav(?:e|ing) a baby|"
    r"go(?:ing)? back to|apply(?:ing)? (?:to|for)|enroll(?:ing)? in|"
    r"(?:stay(?:ing)?|settl(?:e|ing)) in(?= (?-i:[A-Z]))|run(?:ning)? for|retir(?:e|ing))"
)
EN_DATE = (
    r"(?:\bnext (?:week|\w+day)\b|\bthis (?:coming )?\w+day\b|\bon (?:mon|tues|wednes|thurs|"
    r"fri|satur|sun)day\b|\bin (?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)\b)"
)
# Having something is a plan only with a date beyond the coming days ("a game next month").
EN_HAVE = r"(?:\b(?:i|we)(?:'ve| have)? got (?:a|an|my)\b|\b(?:i|we) have (?:a|an|my)\b)"

# What an agent does for the speaker, that a standing instruction asks of it ("Never use emojis",
# "Always put the summary first"): not "be", "give up" or "forget", which make mottos.
EN_AGENT_ACT = (
    r"(?:use|reply|answer|write|respond|call|show|put|format|include|add|start|end|keep|cite|"
    r"suggest|recommend|send|schedule|book|ask|explain|list|mention|spell|sign|address|"
    r"translate|summari[sz]e|round|convert|quote|label|name|sort|number|indent|comment|"
    r"give me|give (?:the|your|all|dates|times|prices|answers|examples|code))"
)

ZH_RELATIVE = (
    r"(?:女儿|儿子|孩子|闺女|老婆|老公|妻子|丈夫|爱人|男朋友|女朋友|对象|未婚[夫妻]|爸爸|妈妈|"
    r"爸妈|父母|父亲|母亲|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|家那位|猫咪|猫|"
    r"狗狗|狗|宠物)"
)
ZH_NUMBER = r"[\d一二三四五六七八九十两百]"
ZH_FAR = rf"(?:下个?月|明年|后年|年底|年末|下半年|暑假|寒假|{ZH_NUMBER}+月份?|春天|夏天|秋天|冬天)"
ZH_PLAN_NOUN = (
    r"(?:旅行|旅游|出差|比赛|考试|面试|婚礼|结婚|搬家|搬到|搬回|留学|读研|考研|报到|演出|"
    r"展览|会议|马拉松|手术|毕业|创业|开店)"
)
JA_RELATIVE = (
    r"(?:娘|息子|子供|子ども|妻|夫|嫁|旦那|彼氏|彼女|婚約者|母|父|両親|兄|姉|弟|妹|祖母|祖父|"
    r"おばあちゃん|おじいちゃん|うちの(?:猫|犬|子|ペット))"
)
JA_FAR = (
    r"(?:来月|来年|再来年|年末|年明け|春に|夏に|秋に|冬に|今年の(?:春|夏|秋|冬)|"
    r"[\d一二三四五六七八九十]+月(?:から|に))"
)
JA_PLAN_NOUN = (
    r"(?:旅行|出張|大会|コンクール|試験|面接|結婚式|引っ越|移転|留学|受験|発表会|手術|卒業|"
    r"開業|起業)"
)
