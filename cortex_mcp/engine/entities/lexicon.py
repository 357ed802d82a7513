"""The word tables the linking rules read: what is never a name, which words introduce one, and
the few places and brands a rule can tell without a model. Built once at import, as frozensets.

Kept small on purpose: each table holds the words a careful reader would list, not a dictionary.
A word missing here costs a missed or a wrong mention; a word wrongly here hides a name."""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# --- English -------------------------------------------------------------------------------

MONTHS = _words(
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
)
# Months that are also given names: a name unless a date or a calendar preposition says month.
MONTH_NAMES = frozenset({"April", "May", "June", "August"})
WEEKDAYS = _words(
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mon Tue Tues Wed Thu Thur Thurs Fri "
    "Sat Sun Weekend Mondays Tuesdays Wednesdays Thursdays Fridays Saturdays Sundays Weekends"
)
HOLIDAYS = _words(
    "Christmas Xmas Easter Thanksgiving Halloween Hanukkah Diwali Ramadan Eid Valentine "
    "Valentine's Valentines Year Year's Eve Day Birthday Anniversary Holidays Holiday"
)
# Words before a holiday word that belong to the holiday: "New Year", "Mother's Day".
HOLIDAY_LEADS = _words(
    "New Mother's Father's Mothers Fathers Valentine's Independence Labor Labour Memorial Boxing "
    "Groundhog Election Saint St Patrick's Veterans Presidents Christmas"
)
# Languages, nationalities and other capitalised adjectives: never an entity on their own.
LANGUAGES = _words(
    "English Spanish French Italian German Chinese Japanese Korean Russian Portuguese Dutch "
    "Greek Turkish Arabic Hindi Thai Vietnamese Swedish Norwegian Danish Polish Irish Scottish "
    "Welsh British American Canadian Mexican Australian Indian African European Asian Latin "
    "Brazilian Cuban Jewish Christian Muslim Buddhist Catholic Hispanic Asian-American Western "
    "Eastern Northern Southern Cantonese Mandarin Taiwanese Thai Filipino Persian Swiss Austrian "
    "Belgian Egyptian Moroccan Peruvian Argentinian Argentine Colombian Chilean Nigerian Kenyan"
)
# Words that start sentences or greet: capitalised for grammar, not because they name someone.
COMMON = _words(
    # pronouns, determiners, conjunctions, prepositions, question words
    "I Me My Mine Myself We Us Our Ours You Your Yours He Him His She Her Hers It Its They Them "
    "Their Theirs This That These Those There Here A An The Some Any All Each Every Both Either "
    "Neither No None Nothing Everything Something Anything Everyone Someone Anyone Nobody "
    "Everybody Somebody Anybody One Ones Another Other Others Such And But Or Nor So Yet For If "
    "Then Than Because Since As While When Whenever Where Wherever What Whatever Which Who Whom "
    "Whose Why How After Before Until Till Unless Although Though Once About Above Across Against "
    "Along Among Around At Behind Below Beside Besides Between Beyond By Despite Down During "
    "Except From In Inside Into Like Near Of Off On Onto Out Outside Over Past Per Through "
    "Throughout To Toward Towards Under Up Upon Via With Within Without "
    # auxiliaries and very common verbs at the start of a sentence
    "Am Is Are Was Were Be Been Being Do Does Did Done Have Has Had Having Can Could Will Would "
    "Shall Should Must Might Let Lets Get Got Go Going Gone Went Come Came Coming Make Made Take "
    "Took Taking Give Gave Keep Kept See Saw Seen Look Looks Looking Looked Check Try Tried Trying "
    "Tell Told Ask Asked Say Said Says Think Thought Know Knew Feel Felt Feels Seem Seems Seemed "
    "Sound Sounds Sounded Mean Means Remind Reminds Need Needs Want Wants Wanted Guess Wish "
    "Remember Imagine Wait Stay Enjoy Enjoyed Hope Hoped Hoping Love Loved Loving Like Liked "
    "Glad Happy Sad Proud Excited Busy Ready Thank Thanks Thankful Grateful Appreciate "
    "Appreciated Agreed Agree Reminded Started Starting Finished Just Been Saying "
    # adverbs and discourse words
    "Also Too Very Really Actually Basically Honestly Seriously Literally Definitely Totally "
    "Absolutely Exactly Certainly Surely Indeed Maybe Perhaps Probably Possibly Hopefully "
    "Luckily Unfortunately Fortunately Sadly Finally Eventually Recently Lately Currently "
    "Already Still Always Never Sometimes Often Usually Again Anyway Anyways Besides However "
    "Otherwise Instead Meanwhile Now Today Tonight Tomorrow Yesterday Later Soon Earlier Last "
    "Next First Second Third Lastly Well Even Only Almost Especially Speaking Plus Not "
    "Yes Yeah Yep Yup Yea No Nope Nah Okay Ok OK Alright Right Sure True Fine Cool Nice Great "
    "Good Awesome Amazing Wonderful Fantastic Beautiful Lovely Perfect Wow Whoa Woah Oh Ooh Ah "
    "Aw Aww Awww Haha Hahaha Hehe Lol Omg Ugh Hmm Hm Um Uh Oops Yay Hooray Phew Gosh Geez Jeez "
    "Damn Dang Darn Yikes Hey Hi Hello Hiya Howdy Yo Bye Goodbye Cheers Welcome Congrats "
    "Congratulations Sorry Please Pardon Dear Morning Evening Afternoon Night Goodnight "
    "Greetings Regards Best Merry Same Wanna Gonna Gotta Kinda Btw Fyi Thx Ty Np "
    # common nouns that start sentences in chat
    "Life Family Friends Friend Kids Kid People Person Everyone Things Thing Time Times Work "
    "School Home Music Art Books Book Nature Love Hugs Hug Fun Sweet Cute Congratulation "
    "Mr Mrs Ms Miss Dr Prof Sir Madam Mister Saint St God Jesus Internet Web Wifi "
    "Photo Pic Picture Video Note Update Edit Re Fwd PS Todo Tip Q A Yours Sincerely "
    # more interjections and sentence adverbs seen in chat
    "Together Woohoo Woo Whoo Oof Man Dude Bro Overall Anytime Yum Yummy Ouch Bummer Mm Mmm "
    "Super Pretty Lucky Hard Tough Crazy Believe Count Hang Care Spill Gather Create Show Most "
    "Little Small Young Strong Rock Thoughts Ever Talk Long Way Catch Chat Bet Thankfully "
    "Gratefully Weirdly Funnily Interestingly Surprisingly Ironically Admittedly Obviously "
    "Clearly Apparently Personally Generally Normally Originally Ultimately Frankly Truly "
    "Naturally Additionally Similarly Importantly Speaking Shure Sup Welp Meh Boo Yikes Bravo "
    "Kudos Ahh Ahem Eh Huh Ha Hah Ooh Oooh Uhh Umm Jk Brb Idk Tbh Imo Omw "
    "Companion Assistant Bot User Friend Buddy Museum Renaissance"
)
# Common words that are also given or pet names: inside a sentence, capitalised, they are names
# ("I met Will", "our dog Lucky"); at a sentence start they are the word ("Will you ...?").
NAME_LIKE = _words(
    "Will Hope Art Lucky Buddy Rock Chase Joy Bill Mark Pat Dean Faith Ray Jack Sunny"
)
# Words that are part of a name ("The Lord of the Rings", "Lady Gaga") but no name alone ("Oh Lord").
NOT_ALONE = _words("Lord Lady King Queen Prince Princess Captain Uncle Aunt")
# Titles before a surname: "Mrs. Patel" names Patel.
TITLES = _words("Mr Mrs Ms Miss Mx Dr Prof Professor Sir Madam Aunt Uncle Auntie Grandma Grandpa")
# Family words written capitalised as a name: a reference to the speaker's own family.
FAMILY_AS_NAME = _words(
    "Mom Mum Mommy Mummy Mama Momma Dad Daddy Papa Pa Ma Grandma Grandpa Granny Nana Nan Grandad "
    "Granddad Gramps Auntie"
)
# Lowercase words allowed inside a name: "Lord of the Rings", "Leonardo da Vinci".
CONNECTORS = _words("of the de da di van von der del la le du")
# The last word of a capitalised run that says what it is.
PLACE_SUFFIXES = _words(
    "Street St Road Rd Avenue Ave Boulevard Blvd Lane Drive Square Park Bridge Lake River "
    "Mountain Mountains Mount Mt Beach Island Islands Bay Valley Canyon City Town Village County "
    "State Province Hills Falls Forest Station Airport Harbor Harbour Coast Tower Castle Museum "
    "Zoo Stadium Mall Market Plaza Hall Cathedral Church Temple"
)
ORGANIZATION_SUFFIXES = _words(
    "Inc Inc. Corp Corporation Company Co Ltd LLC Group University College School Academy "
    "Institute Club Foundation Bank Hospital Clinic Association Society Team Studio Studios "
    "Agency Department Labs Records"
)
# A capitalised run starting with a brand names a product, not a person ("Ford Mustang").
BRANDS = _words(
    "Ford Honda Toyota Tesla BMW Audi Mercedes Volkswagen VW Nissan Subaru Mazda Kia Hyundai "
    "Chevy Chevrolet Jeep Porsche Ferrari Volvo Apple iPhone iPad MacBook Samsung Google Pixel "
    "Microsoft Xbox Sony PlayStation Nintendo Switch Nike Adidas Canon Nikon Fitbit Kindle "
    "Amazon Netflix Spotify Instagram Facebook TikTok YouTube Twitter Lego Starbucks IKEA Ikea "
    "Disney Marvel Harley"
)
# Words before a capitalised run that make it a place: "in Paris", "moved to Milan".
PLACE_CUES = (
    "in",
    "through",
    "across",
    "around",
    "to",
    "from",
    "near",
    "at",
    "visit",
    "visited",
    "visiting",
)
# A cue word alone is not enough for these: "talked to Anna", "a gift from Anna", "at Anna's".
WEAK_PLACE_CUES = frozenset({"to", "from", "at"})
PLACE_VERBS = _words(
    "moved move moving moves live lives lived living went go goes going gone flew fly flying "
    "drove drive driving travel traveled travelled traveling travelling trip trips back been "
    "arrived arrive born based headed heading off stay stayed staying vacation holiday vacationed "
    "relocated relocate return returned returning tour touring road"
)

# Places an English rule can tell without a cue: countries, US states, big and famous cities.
# A multi-word place is listed by its words joined with a space ("New York").
EN_PLACES = frozenset(
    """Afghanistan Albania Algeria Argentina Armenia Australia Austria Azerbaijan Bahamas
    Bangladesh Belarus Belgium Belize Bolivia Bosnia Botswana Brazil Bulgaria Cambodia Cameroon
    Canada Chile China Colombia Croatia Cuba Cyprus Czechia Denmark Ecuador Egypt England Estonia
    Ethiopia Fiji Finland France Germany Ghana Greece Guatemala Haiti Honduras Hungary Iceland
    India Indonesia Iran Iraq Ireland Israel Italy Jamaica Japan Jordan Kazakhstan Kenya Korea
    Kuwait Laos Latvia Lebanon Libya Lithuania Luxembourg Madagascar Malaysia Maldives Mali Malta
    Mexico Moldova Monaco Mongolia Montenegro Morocco Mozambique Myanmar Namibia Nepal Netherlands
    Nicaragua Nigeria Norway Oman Pakistan Panama Paraguay Peru Philippines Poland Portugal Qatar
    Romania Russia Rwanda Scotland Senegal Serbia Singapore Slovakia Slovenia Somalia Spain
    Sudan Sweden Switzerland Syria Taiwan Tanzania Thailand Tunisia Turkey Uganda Ukraine
    Uruguay Uzbekistan Venezuela Vietnam Wales Yemen Zambia Zimbabwe Europe Asia Africa
    Antarctica Oceania Scandinavia Caribbean Midwest Alabama Alaska Arizona Arkansas California
    Colorado Connecticut Delaware Florida Georgia Hawaii Idaho Illinois Indiana Iowa Kansas
    Kentucky Louisiana Maine Maryland Massachusetts Michigan Minnesota Mississippi Missouri
    Montana Nebraska Nevada Ohio Oklahoma Oregon Pennsylvania Tennessee Texas Utah Vermont
    Virginia Washington Wisconsin Wyoming Amsterdam Athens Atlanta Austin Bali Bangkok Barcelona
    Beijing Berlin Boston Brooklyn Brussels Budapest Cairo Chicago Copenhagen Dallas Denver
    Detroit Dubai Dublin Edinburgh Florence Glasgow Hamburg Helsinki Honolulu Houston Istanbul
    Jakarta Jerusalem Kyoto Lagos Lisbon London Madrid Manchester Manhattan Melbourne Miami Milan
    Montreal Moscow Mumbai Munich Nairobi Naples Nashville Oslo Osaka Oxford Paris Philadelphia
    Phoenix Portland Prague Reykjavik Rome Seattle Seoul Shanghai Stockholm Sydney Tokyo Toronto
    Vancouver Venice Vienna Warsaw Zurich Cambridge Hollywood Vegas Orlando Tampa Sacramento
    Brisbane Auckland Cancun Havana Lima Santiago Bogota Marrakech Kathmandu Delhi Hanoi Manila
    Taipei Sichuan Hunan Guangdong Fujian Yunnan Tibet Xinjiang Hainan Shenzhen Guangzhou
    Hangzhou Chengdu Chongqing Nanjing Suzhou Wuhan Tianjin Qingdao Xiamen Guilin Lijiang Harbin
    Kunming Sanya Macau Huangshan Zhangjiajie Yangshuo Taishan Hokkaido Okinawa Nagoya Yokohama
    Kobe Sapporo Fukuoka Hiroshima Nara Busan Jeju Phuket Hanoi""".split()
) | frozenset(
    {
        "New York",
        "New Jersey",
        "New Mexico",
        "New Hampshire",
        "New Zealand",
        "North Carolina",
        "South Carolina",
        "North Dakota",
        "South Dakota",
        "West Virginia",
        "Rhode Island",
        "Los Angeles",
        "San Francisco",
        "San Diego",
        "San Jose",
        "Las Vegas",
        "New Orleans",
        "Hong Kong",
        "Mexico City",
        "Cape Town",
        "Buenos Aires",
        "Rio de Janeiro",
        "Costa Rica",
        "Puerto Rico",
        "Sri Lanka",
        "South Africa",
        "South Korea",
        "North Korea",
        "Saudi Arabia",
        "United States",
        "United Kingdom",
        "Czech Republic",
        "Dominican Republic",
        "New York City",
        "Salt Lake City",
        "St. Louis",
        "East Coast",
        "West Coast",
        "Pacific Northwest",
    }
)
# Kinship and role nouns that introduce a person: "my sister Anna", "Anna, my sister".
PERSON_ROLES = _words(
    "sister brother sis bro mom mother mum mommy dad father daddy son daughter wife husband "
    "partner spouse boyfriend girlfriend fiance fiancé fiancee fiancée friend bestie buddy pal "
    "cousin aunt auntie uncle niece nephew grandma grandmother grandpa grandfather granny nana "
    "grandson granddaughter grandchild grandkid kid child baby twin sibling stepmom stepmother "
    "stepdad stepfather stepson stepdaughter stepsister stepbrother mother-in-law father-in-law "
    "sister-in-law brother-in-law son-in-law daughter-in-law boss manager supervisor coworker "
    "co-worker colleague teammate classmate roommate flatmate housemate neighbor neighbour "
    "teacher coach mentor tutor student doctor therapist dentist landlord landlady assistant "
    "ex girl guy"
)
PET_ROLES = _words(
    "dog dogs puppy puppies pup pups doggo cat cats kitten kittens kitty bunny bunnies rabbit "
    "rabbits hamster hamsters parrot parrots bird birds horse horses pony turtle turtles tortoise "
    "fish goldfish pig pigs snake snakes lizard gecko iguana ferret chinchilla hedgehog pet pets canary "
    "cockatiel budgie mouse rat rats"
) | frozenset({"guinea pig", "guinea pigs"})
# Roles and pets a speaker has one of, so that "the kitten" after "my kitten Luna" is Luna (and
# "my landlord" is "the landlord"); not roles many people have (friend, teacher, guy, kid).
OWN_ROLES = _words(
    "sister brother mom mother mum dad father wife husband fiance fiancé fiancee fiancée son daughter "
    "boyfriend girlfriend aunt uncle niece nephew grandma grandmother grandpa grandfather granny "
    "boss manager supervisor landlord landlady flatmate roommate housemate therapist "
    "dog puppy pup kitten cat bunny rabbit hamster parrot bird horse pony turtle tortoise "
    "goldfish ferret hedgehog budgie"
)
# Words said with "!" that are no name ("Impressive! You …", "Brilliant! Did you …").
EXCLAMATIONS = _words(
    "Impressive Incredible Amazing Awesome Brilliant Perfect Fantastic Wonderful Beautiful Lovely "
    "Gorgeous Sweet Cute Nice Cool Great Exactly Absolutely Totally Seriously Really Indeed Yay "
    "Hooray Bravo Whoa Woah Wow Yikes Damn Gosh Jeez Congrats Congratulations Cheers Nope Yup Yep "
    "Sure Right Wait Hello Hi Hey Oh Ah Aw Aww Omg Haha Lol Yes No Okay Ok Thanks Agreed Done "
    "Deal Sorry Oops Ouch Ugh Hmm Welcome Cheers Definitely Certainly Precisely Fair True"
)
# Adjectives allowed between the possessive and the role: "my older sister Anna".
ROLE_ADJECTIVES = _words(
    "best older younger elder little big baby twin late new old dear oldest youngest eldest "
    "beloved lovely sweet adorable cute rescue first second third other favorite favourite "
    "close good childhood"
)
# Possessives whose kinship phrase is an alias of the speaker's own people.
FIRST_PERSON = frozenset({"my", "our"})

# --- Chinese -------------------------------------------------------------------------------

# Common single- and double-character surnames (the top ~150 cover most of the population), less
# the few that are far more often a common word than a surname (和, 向, 于, 全, 时, 常, ...).
ZH_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛"
    "郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦"
    "俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房"
    "滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应"
    "臧闵苟邬边卞姬和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
) - frozenset("和向于应尤连席管祝简全易时常") | frozenset(
    {"欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "令狐", "慕容", "夏侯", "司徒"}
)
# A title after a surname makes a name of its own: 张老师, 王总, 李阿姨.
ZH_TITLES = (
    "老师",
    "阿姨",
    "叔叔",
    "先生",
    "女士",
    "小姐",
    "医生",
    "大夫",
    "经理",
    "老板",
    "教授",
    "师傅",
    "大爷",
    "大妈",
    "奶奶",
    "爷爷",
    "总",
    "姐",
    "哥",
)
# Kinship and role words, longest first so 表弟 wins over 弟.
ZH_PERSON_ROLES = (
    "男朋友",
    "女朋友",
    "好朋友",
    "老朋友",
    "表哥",
    "表姐",
    "表弟",
    "表妹",
    "堂哥",
    "堂姐",
    "堂弟",
    "堂妹",
    "哥哥",
    "姐姐",
    "弟弟",
    "妹妹",
    "爸爸",
    "妈妈",
    "父亲",
    "母亲",
    "老爸",
    "老妈",
    "爷爷",
    "奶奶",
    "外公",
    "外婆",
    "姥姥",
    "姥爷",
    "舅舅",
    "舅妈",
    "叔叔",
    "阿姨",
    "姑姑",
    "姨妈",
    "伯伯",
    "儿子",
    "女儿",
    "孙子",
    "孙女",
    "老公",
    "老婆",
    "丈夫",
    "妻子",
    "太太",
    "先生",
    "未婚夫",
    "未婚妻",
    "朋友",
    "闺蜜",
    "同事",
    "同学",
    "室友",
    "邻居",
    "老师",
    "上司",
    "领导",
    "老板",
    "经理",
    "师傅",
    "医生",
    "教练",
    "学生",
    "搭档",
    "对象",
    "哥",
    "姐",
    "弟",
    "妹",
)
ZH_PET_ROLES = (
    "小猫",
    "小狗",
    "猫咪",
    "狗狗",
    "兔子",
    "仓鼠",
    "鹦鹉",
    "宠物",
    "乌龟",
    "金鱼",
    "猫",
    "狗",
)
# Roles a speaker has one of (family, partner, superior): alone at a clause's start they are the
# speaker's own (舅舅以前是…, 领导说…); not roles many have (朋友, 同事, 老师, 阿姨 said to strangers).
ZH_OWN_ROLES = frozenset(
    "表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹 哥哥 姐姐 弟弟 妹妹 爸爸 妈妈 父亲 母亲 老爸 老妈 爷爷 奶奶 "
    "外公 外婆 姥姥 姥爷 舅舅 舅妈 姑姑 姨妈 伯伯 儿子 女儿 孙子 孙女 老公 老婆 丈夫 妻子 太太 未婚夫 "
    "未婚妻 男朋友 女朋友 上司 领导 老板 经理 师傅".split()
)
# Characters no given name said alone holds: interjections and particles (好呀，, 哇塞，, 嗯嗯，).
ZH_NOT_IN_GIVEN_NAMES = frozenset("呀啊哇哦嗯哈嘿呢吧啦嘛呗哎唉诶喔噢耶塞咦嗨喂好真太对行")
# Family words a speaker uses alone for their own family (妈妈 = my mother).
ZH_BARE_FAMILY = frozenset(
    {"爸爸", "妈妈", "父亲", "母亲", "老爸", "老妈", "爷爷", "奶奶", "外公", "外婆", "姥姥", "老公"}
    | {"老婆", "哥哥", "姐姐", "弟弟", "妹妹"}
)
# Characters that follow a name and are almost never the last character of a given name: they
# end the name ("张伟在深圳" -> 张伟). Verbs and particles, not a dictionary.
ZH_AFTER_NAME = frozenset(
    "在是的了和跟与说要会也都很就还又去来把被给对从向到让叫最已正刚下上这那个们今昨每经总不没常"
    "特真非年以可能应得将才只邀推告喜觉认帮送问带买做打想请开回过现曾当约拍考退结生住搬工读学"
    "吃喝看听玩写发拿用"
    "，。！？；：、…（）“”\"' \n\t,.!?;:()"
)
# The first given character is never one of these (a particle or punctuation follows a surname
# used alone); the wider ZH_AFTER_NAME would refuse given names such as 陈刚 or 王明.
ZH_NOT_GIVEN = frozenset(
    "你我他她它您咱的了在是和跟与说要会也都很就还又去来把被给对从向到让叫这那个们，。！？；：、…（）“” ,.!?;:"
)
# Words that start right after a one-character given name: 张伟明天 -> 张伟, 陈刚周末 -> 陈刚.
ZH_TIME_WORDS = (
    "明天",
    "今天",
    "昨天",
    "后天",
    "前天",
    "每天",
    "天天",
    "周末",
    "上周",
    "下周",
    "最近",
    "今晚",
    "昨晚",
    "晚上",
    "早上",
    "上午",
    "下午",
    "中午",
    "平时",
    "一直",
    "一起",
    "已经",
    "经常",
    "刚刚",
    "刚才",
)
ZH_PLACE_SUFFIXES = ("公园", "广场", "大学", "医院", "博物馆", "商场", "机场", "车站", "寺", "湖")
# Greetings and words of address before a name said to the other speaker.
ZH_ADDRESS = (
    "你好",
    "您好",
    "嗨",
    "哈喽",
    "谢谢你",
    "谢谢",
    "感谢",
    "抱歉",
    "对不起",
    "早上好",
    "早安",
    "中午好",
    "下午好",
    "午安",
    "晚上好",
    "晚安",
    "亲爱的",
    "再见",
    "拜拜",
    "不用谢",
    "不客气",
)
# Two- and three-character words that start with a surname and are no name.
ZH_NOT_NAMES = frozenset(
    "周末 周一 周二 周三 周四 周五 周六 周日 周年 周围 高兴 安全 安静 常常 文化 万一 时间 时候 方便 "
    "方面 方法 方向 江湖 马上 石头 金钱 金额 明天 明白 明年 明星 黄色 白色 白天 林子 成功 成绩 "
    "成为 许多 任何 任务 何时 向前 向上 于是 程度 宁愿 全部 全家 全国 全天 安排 关心 关系 司机 "
    "包括 易于 景色 童年 和平 和好 连续 齐全 尤其 应该 华丽 毛衣 祝福 管理 路上 时光 朱红 简单 "
    "曾经 杨树 柏树 柳树 梅花 兰花 米饭 水果 龙虾 牛奶 牛肉 牛排 钱包 车子 车站 房子 房间 席子 "
    "小米 小马 小吴 老虎 老鼠 老马 小白 小黄 小黑 小花 老乡 小宋 老乔 小乔 老万 老孔 小费 小车 小麦 "
    "小牛 老牛 小康 小龙 老龙 小金 老金 小时 老师 小方 老方 小路 老路 小程 小关 老关".split()
)
# After 阿 these make a word, not a familiar name: 阿姨 (auntie), 阿婆, 阿爸, 阿拉 (we, in
# Shanghai), 阿门 (amen), 阿里 (Alibaba), 阿根廷, 阿尔卑斯, 阿富汗, 阿联酋, 阿胶, 阿司匹林.
ZH_NOT_AFTER_A = frozenset("姨婆公爸妈哥姐叔伯嫂爷奶拉门里根尔富联胶司弥斯米塞莫卡")
# Characters before 张 that make it a measure word (一张照片) rather than a surname.
ZH_MEASURE_BEFORE = frozenset("一二两三四五六七八九十几每这那哪某整半多好")

# --- Japanese ------------------------------------------------------------------------------

JA_HONORIFICS = ("ちゃん", "さま", "さん", "くん", "様", "君", "氏", "先輩", "先生")
# Job titles written after a name (佐藤部長, 山田先生): the name is the person, the title an alias.
JA_NAME_TITLES = (
    "部長",
    "課長",
    "係長",
    "社長",
    "店長",
    "先生",
    "先輩",
    "監督",
    "教授",
    "選手",
    "会長",
)
# Roles and family words: before の they introduce a name (上司の田中さん); with さん or alone
# they are a role reference (部長さん, 母).
JA_PERSON_ROLES = (
    "お母さん",
    "お父さん",
    "お兄さん",
    "お姉さん",
    "おばあちゃん",
    "おじいちゃん",
    "幼なじみ",
    "ルームメイト",
    "クラスメート",
    "ボーイフレンド",
    "ガールフレンド",
    "彼氏",
    "上司",
    "部下",
    "同僚",
    "先輩",
    "後輩",
    "友達",
    "友人",
    "親友",
    "同級生",
    "部長",
    "課長",
    "係長",
    "社長",
    "専務",
    "店長",
    "店員",
    "先生",
    "医者",
    "お医者",
    "看護師",
    "大家",
    "隣人",
    "主人",
    "旦那",
    "祖母",
    "祖父",
    "息子",
    "娘",
    "母",
    "父",
    "兄",
    "姉",
    "弟",
    "妹",
    "夫",
    "妻",
    "嫁",
    "叔母",
    "叔父",
    "伯母",
    "伯父",
    "いとこ",
    "従兄弟",
    "従姉妹",
    "甥",
    "姪",
    "孫",
    "子供",
)
# Jobs: "恵子は看護師です" says what she does, not who she is to the speaker.
JA_JOBS = frozenset(
    {
        "看護師",
        "医者",
        "お医者",
        "先生",
        "店員",
        "部長",
        "課長",
        "係長",
        "社長",
        "専務",
        "店長",
        "大家",
    }
)
JA_PET_ROLES = (
    "子猫",
    "子犬",
    "猫",
    "犬",
    "ペット",
    "うさぎ",
    "ウサギ",
    "ハムスター",
    "インコ",
    "金魚",
)
# Jobs and roles: with さん or 様 after them they name a role, not a person (部長さん, 店員さん).
JA_ROLE_WORDS = frozenset(JA_PERSON_ROLES) | frozenset(
    {"運転手", "駅員", "警察官", "お巡り", "大工", "お客", "奥", "お嬢", "お坊", "お医者", "先生"}
)
# Family words written in kana (or 赤 of 赤ちゃん) before an honorific: with it, one word that
# refers to a relative or a baby, never a name (おばあちゃん, おじさん, ねえちゃん).
JA_FAMILY_KANA = frozenset(
    "おばあ おじい おば おじ おかあ おとう おねえ おにい ばあ じい かあ とう ねえ にい "
    "ばぁ じぃ 赤 あか".split()
)
JA_ADDRESS = (
    "おはよう",
    "おはようございます",
    "こんにちは",
    "こんばんは",
    "ありがとう",
    "ありがとうございます",
    "ごめん",
    "ごめんね",
    "すみません",
    "おやすみ",
    "またね",
    "ねえ",
    "やあ",
    "お疲れ様",
    "お疲れさま",
)
# Nouns often after の that are no name: 友達の家, 母の日.
JA_NOT_NAMES = frozenset(
    "家 日 誕生日 結婚式 仕事 会社 学校 部屋 話 写真 子供 病気 車 店 名前 趣味 料理 声 顔 手 "
    "ため 方 こと もの 時 頃 前 後 中 上 下 人 皆 みんな 全員 一人 二人 家族 実家 彼女 彼 "
    "パーティー プレゼント たく みな 皆 みんな".split()
)
# Common one-kanji given names: after a family word they need no honorific (息子の翔が).
JA_ONE_KANJI_NAMES = frozenset(
    "翔 蓮 陸 樹 葵 凛 誠 学 茜 楓 舞 光 恵 薫 忍 唯 愛 望 結 蒼 湊 匠 聡 剛 明 歩 優 渚 遥 梓".split()
)
# Family words: after one of them and の, a single kanji before a particle is a given name (妹の綾が,
# 父の正が) unless it is one of the common one-kanji nouns below (母の日, 兄の車, 父の腰).
JA_FAMILY_ROLES = frozenset(
    "祖母 祖父 息子 娘 母 父 兄 姉 弟 妹 夫 妻 嫁 叔母 叔父 伯母 伯父 いとこ 従兄弟 従姉妹 甥 姪 孫 "
    "主人 旦那".split()
)
JA_ONE_KANJI_NOUNS = frozenset(
    "日 家 車 声 顔 手 足 目 耳 鼻 口 歯 髪 首 肩 腕 腰 背 胸 腹 膝 指 "
    "喉 頭 体 心 肌 骨 血 熱 咳 傷 病 薬 本 服 靴 鞄 傘 鍵 机 皿 箱 花 "
    "絵 歌 夢 字 癖 味 音 色 形 名 金 物 事 件 話 案 方 側 横 隣 奥 外 "
    "内 裏 表 先 元 職 役 技 力 気 命 墓 式 礼 約 嘘 罪 恋 友 客 子 親 "
    "店 国 町 村 駅 道 庭 畑 山 川 海 池 島 犬 猫 鳥 魚 虫 肉 米 茶 酒 "
    "水 湯 火 石 紙 糸 布 朝 夜 昼 晩 春 夏 秋 冬 年 月 週 歳 代 分 時 "
    "番 席 部 課 会 社 校 窓 門 壁 床 棚 箸 鍋 帽 袋 財 額 税 株 票 旅 "
    "宿 便 荷 品 類 用 為 中 前 後 上 下 間 所 人 者 点 線 数 量 型 説 "
    "言 文 詩 書 版 図 像 映 画 曲 劇 芸".split()
)
# What a kanji word ends with when it is a thing or an event, not a name: after a role word and
# の (課長の送別会, 看護師の試験, 部長の机) such a word is no person.
JA_NOT_NAME_ENDINGS = tuple("会式験議題件話書品料際席車服物声顔店館校社局症病事業務金機器類費")
# Leading words glued to a name in a kanji run (今日田中さんが): dropped from the name.
JA_TIME_PREFIXES = ("今日", "昨日", "明日", "先日", "毎日", "今朝", "昨夜", "今度", "今年", "去年")

# --- Places a rule can tell without a model (Chinese and Japanese share the kanji forms) -----

CJK_PLACES = frozenset(
    "北京 上海 广州 深圳 杭州 成都 重庆 南京 武汉 西安 天津 苏州 长沙 郑州 青岛 厦门 大连 沈阳 "
    "哈尔滨 昆明 合肥 福州 济南 宁波 无锡 东莞 佛山 珠海 三亚 拉萨 桂林 丽江 香港 澳门 台北 台湾 "
    "新疆 西藏 云南 海南 四川 广东 浙江 江苏 山东 河南 湖南 湖北 黄山 泰山 峨眉山 张家界 九寨沟 "
    "长城 故宫 颐和园 西湖 中国 美国 英国 法国 德国 日本 韩国 俄罗斯 意大利 西班牙 葡萄牙 加拿大 "
    "澳大利亚 新西兰 泰国 新加坡 马来西亚 越南 印度 巴西 墨西哥 埃及 希腊 瑞士 荷兰 冰岛 纽约 "
    "伦敦 巴黎 东京 大阪 京都 首尔 洛杉矶 旧金山 悉尼 曼谷 罗马 柏林 "
    "東京 京都 大阪 北海道 沖縄 福岡 名古屋 横浜 神戸 札幌 仙台 広島 奈良 鎌倉 箱根 渋谷 新宿 "
    "池袋 銀座 原宿 秋葉原 浅草 上野 品川 六本木 博多 金沢 長野 静岡 千葉 埼玉 熊本 鹿児島 "
    "日本 中国 韓国 台湾 アメリカ イギリス フランス ドイツ イタリア スペイン カナダ "
    "オーストラリア タイ ハワイ パリ ロンドン ニューヨーク ソウル 上海 北京 香港".split()
)

# A general word for one's superior and the titles a superior is called by: "上司の田中さん" and
# later "部長は…" are one person when the speaker has one 上司; likewise 我领导刘洋 … 经理. Only
# the general word and a title meet: two titles (部長, 課長) are two people.
SUPERIOR_TITLES = {
    "上司": frozenset(
        "部長 課長 係長 社長 専務 常務 店長 支店長 所長 室長 本部長 次長 局長 主任 リーダー"
        " マネージャー チーフ ボス 经理 主任 总监 主管 组长 部长 处长 科长 局长 老总".split()
    ),
    "领导": frozenset(
        "经理 主任 总监 主管 组长 部长 处长 科长 局长 老总 老板 总经理 董事长".split()
    ),
    "老板": frozenset("经理 老总 总经理 董事长".split()),
}

# Family and partner words that say whether the person is a woman or a man: a pronoun of the
# other gender never stands for them ("My manager Derek ..." then "He gave me ..." then "She fell
# ..." is not Derek).
FEMALE_WORDS = frozenset(
    "sister mother mom mum mommy grandmother grandma granny aunt auntie wife girlfriend daughter"
    " niece fiancee fiancée stepmother stepsister"
    " 姐姐 妹妹 姐 妹 表姐 表妹 堂姐 堂妹 妈妈 妈 母亲 老妈 奶奶 外婆 姥姥 阿姨 姑姑 姨妈 舅妈 女儿 孙女"
    " 老婆 妻子 太太 女朋友 未婚妻 闺蜜 嫂子"
    " 姉 妹 母 お母さん お姉さん おばあちゃん 祖母 叔母 伯母 妻 嫁 娘 姪 彼女 ガールフレンド".split()
)
MALE_WORDS = frozenset(
    "brother father dad daddy grandfather grandpa uncle husband boyfriend son nephew fiance"
    " stepfather stepbrother"
    " 哥哥 弟弟 哥 弟 表哥 表弟 堂哥 堂弟 爸爸 爸 父亲 老爸 爷爷 外公 姥爷 叔叔 舅舅 伯伯 儿子 孙子 老公"
    " 丈夫 男朋友 未婚夫"
    " 兄 弟 父 お父さん お兄さん おじいちゃん 祖父 叔父 伯父 夫 旦那 主人 息子 甥 彼氏 ボーイフレンド".split()
)
