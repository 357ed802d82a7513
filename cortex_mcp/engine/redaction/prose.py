"""Secrets said in sentences, in English, Chinese and Japanese: "my wifi password is hunter
two", "the door code's 4471", "hunter2 is my password", "set the PIN to 0420", "密码是 qwer1234",
"支付密码123456", "口令：芝麻开门", "パスワードは「abc123」です", "暗証番号を1234に変更した"."""

from __future__ import annotations

import re

from cortex_mcp.engine.redaction.rules import LazyPattern, Refine, Rule, hinted, lazy_pattern
from cortex_mcp.engine.redaction.words import (
    ascii_run,
    has_digit_or_symbol,
    password_like,
    quoted,
    spoken_value,
)

_A = r"(?<![A-Za-z])"
# also as people disguise or shorten it: p@ssword, passw0rd, pa$$word, pswd, pword, passwd
_PASSWORD = r"(?:p[a@4][s$5]{2}\s?w[o0]rds?|passcodes?|pass\s?phrases?|pwd|pw|pswd|pword|passwd)"
_CODE = (
    r"(?:pin(?:\s?(?:code|number|no\.?))?"
    r"|(?:door|gate|garage|alarm|safe|locker|lock|entry|access|security|keypad|building|"
    r"unlock|wifi|wi-fi|bike\s?lock)\s(?:code|combo|combination|pin))"
)
_OWNER = r"(?:\s+(?:for|to|of|on|at)(?:\s+[\w.@'\-]{1,30}){1,3}?)?"
_IS = (  # the longer phrasings first: "was changed to X" must not stop at "was"
    r"(?:\s+(?:(?:has\s+been|have\s+been|was|were|got|is|been)\s+)?"
    r"(?:changed|set|reset|updated|switched)\s+(?:to|as)"
    r"|\s+(?:became|becomes|will\s+be|should\s+be)"
    r"|\s*(?:'s|’s)|\s+(?:is|was|are|=)|\s*[:=：]|\s+(?:-|–|—|->|→))"
    r"(?:\s+(?:now|still|currently|just|literally|actually|simply|basically|again))*\s*"
)
_VALUE = r"(?P<value>[^\n]{1,120})"


def _digits_required(value: str) -> tuple[int, int] | None:
    found = spoken_value(value, max_words=1)
    if found is None or not any(c.isdigit() for c in value[found[0] : found[1]]):
        return None
    return found


def _strict(value: str) -> tuple[int, int] | None:
    """A password named without a verb ("wifi password Sunflower42!"): one word with a digit
    or a symbol, or quoted."""
    inside = quoted(value)
    if inside is not None:
        return inside
    found = spoken_value(value, max_words=1)
    if found is None or not has_digit_or_symbol(value[found[0] : found[1]]):
        return None
    return found


def _mixed_word(value: str) -> tuple[int, int] | None:
    """One word of six or more characters mixing letters and digits ("Bobby1985")."""
    found = spoken_value(value, max_words=1)
    if found is None:
        return None
    word = value[found[0] : found[1]]
    mixed = any(c.isdigit() for c in word) and any(c.isalpha() for c in word)
    return found if mixed and len(word) >= 6 else None


def _rule(kind: str, pattern: str, refine: Refine) -> Rule:
    return Rule(kind, lazy_pattern(pattern, re.IGNORECASE), groups=("value",), refine=refine)


_BEFORE = (
    r"(?P<value>[\"“'][^\"”'\n]{1,60}[\"”']|[^\s\"“]{4,60})\s+(?:is|was|will\s+be|=)\s+"
    rf"(?:(?:my|the|our|his|her|their|your)\s+)?(?:new\s+|current\s+|old\s+)?(?:[\w\-]+\s+)?"
    rf"{_PASSWORD}(?![A-Za-z])"
)
_USED_AS = (
    r"(?:use|used|using|try|tried|type|typed|enter|entered)\s+"
    r"(?P<value>[\"“'][^\"”'\n]{1,60}[\"”']|[^\s\"“]{4,60})\s+(?:as|for)\s+"
    rf"(?:(?:the|my|our|your|his|her)\s+)?(?:[\w\-]+\s+)?(?:{_PASSWORD}|{_CODE})(?![A-Za-z])"
)
_SET_TO = (
    r"(?:set|setting|change|changed|changing|reset|update|updated|made|make)\s+"
    r"(?:(?:my|the|our|his|her|your|their)\s+)?(?:[\w\-]+\s+){0,2}?"
    rf"(?:{_PASSWORD}|{_CODE})\s+(?:to|as|into)\s+{_VALUE}"
)


def _whole_quoted_or_strict(value: str) -> tuple[int, int] | None:
    if quoted(value) is not None:
        return quoted(value)
    return (0, len(value)) if has_digit_or_symbol(value) and password_like(value) else None


ENGLISH: list[Rule] = [
    _rule("password", rf"{_A}{_PASSWORD}{_OWNER}{_IS}{_VALUE}", spoken_value),
    _rule("password", rf"{_A}{_CODE}{_OWNER}{_IS}{_VALUE}", _digits_required),
    _rule("password", rf"{_A}{_SET_TO}", spoken_value),
    _rule("password", rf"{_A}{_USED_AS}", _whole_quoted_or_strict),
    _rule("password", rf"(?<!\S){_BEFORE}", _whole_quoted_or_strict),
    _rule("password", rf"{_A}(?:{_PASSWORD}|{_CODE})\s+{_VALUE}", _strict),
    # "pass is Bobby1985", "pass: x9!k": the short word only before a password-shaped value
    _rule("password", rf"{_A}pass(?:\s+is|\s*[:=])\s*{_VALUE}", _mixed_word),
]

# --- Chinese ------------------------------------------------------------------------------
_ZH_LABEL = r"(?:密码|密碼|口令|暗号|暗號|PIN码|PIN碼|验证码|驗證碼|取件码|门禁码|門禁碼)"
_ZH_IS = (  # "密码是", "密码改成了", "密码我已经改成了"
    r"\s*(?:[我你他她]?(?:已经|已經|刚|剛)?(?:设为|设置为|设置成|設為|設置為|改成了|改成|改为|改為|"
    r"换成了|换成|換成了|換成)|是：|是:|是|为|為|：|:|=|＝|就是|叫做|叫|用的是|依然是|还是|還是|仍然是)\s*"
)
_ZH_NOT_A_VALUE = lazy_pattern(
    r"多少|什么|什麼|啥|哪|错|錯|对|對|正确|正確|不|没|沒|忘|一样|一樣|相同|必须|必須|需要|要|"
    r"至少|空|几|幾|加密|保存|存|在|很|太|你|我|他|她|它|怎么|怎麼|多长|位|过期|過期|弱|强|強|简单|"
    r"複雜|复杂|的|了|吗|嗎|呢|么|麼|自己|生日"
)
_ZH_WORD_END = lazy_pattern(r"[\s，。、；！？,;!?）)」”’』]|了|的|啊|呀|哦|喔|吧|呢|哈|，")


_COUNTED = lazy_pattern(r"\s*(?:文字|桁|位|个|個|字|つ|回|次|characters|chars|digits)")


def _cjk_value(
    value: str, not_a_value: LazyPattern, word_end: LazyPattern
) -> tuple[int, int] | None:
    inside = quoted(value)
    if inside is not None:
        return inside
    if value[:1].isascii():
        found = ascii_run(value)
        if found is None or found[1] < 3 or _COUNTED.match(value, found[1]):
            return None  # "8文字以上", "6位数字": a rule about the password, not one
        return found
    if not_a_value.match(value):
        return None
    end = word_end.search(value)
    stop = min(end.start() if end else len(value), 16)
    return (0, stop) if stop >= 2 else None


def _zh_value(value: str) -> tuple[int, int] | None:
    return _cjk_value(value, _ZH_NOT_A_VALUE, _ZH_WORD_END)


def _ascii_with_digit(value: str) -> tuple[int, int] | None:
    found = ascii_run(value)
    if found is None or not any(c.isdigit() for c in value[found[0] : found[1]]):
        return None
    return found if found[1] >= 4 else None


CHINESE: list[Rule] = [
    _rule("password", rf"{_ZH_LABEL}{_ZH_IS}{_VALUE}", _zh_value),
    _rule("password", rf"{_ZH_LABEL}\s*{_VALUE}", _ascii_with_digit),
]

# --- Japanese -----------------------------------------------------------------------------
_JA_LABEL = (
    r"(?:パスワード|ぱすわーど|暗証番号|パスコード|パスフレーズ|合言葉|あいことば|PINコード|"
    r"PIN番号|ピン番号|ロック解除コード)"
)
_JA_IS = r"\s*(?:は|が|：|:|=|＝|って|を|、|も|は、)\s*"
_JA_NOT_A_VALUE = lazy_pattern(
    r"何|なに|なん|忘れ|わから|分から|わかん|間違|正し|同じ|必要|変更|長|短|弱|強|ない|無い|空|不明|"
    r"どこ|いくつ|文字|設定|秘密|大文字|小文字|英数字|数字|記号|半角|全角|これ|それ|あれ|どれ|"
    r"自分|誕生日|教え|覚え|入力|メモ|どう|ちゃんと|まだ|もう|すでに|既に|いつ"
)
_JA_WORD_END = lazy_pattern(
    r"[\s、。「」！？!?）)』]|です|でした|だよ|だね|だ|に|で|よ|ね|から|ので|って|と"
)


def _ja_value(value: str) -> tuple[int, int] | None:
    return _cjk_value(value, _JA_NOT_A_VALUE, _JA_WORD_END)


JAPANESE: list[Rule] = [
    _rule("password", rf"{_JA_LABEL}{_JA_IS}{_VALUE}", _ja_value),
    _rule("password", rf"{_JA_LABEL}\s*{_VALUE}", _ascii_with_digit),
]

# --- other languages: a password's name, its owner, a verb or a colon, then a value that
# could be a password (a word with a digit or a symbol, or quoted): "la contraseña del wifi es
# X", "das Passwort lautet X", "mot de passe : X", "a senha é X", "пароль: X", "비밀번호는 X" --------
_OTHER_LABEL = (
    r"(?:password|contraseñas?|contrasenas?|clave|passw[oö]rt(?:er)?|kennw[oö]rt(?:er)?|mots?\s+de\s+passe|mdp"
    r"|senhas?|palavra-passe|parola\s+d'ordine|parola\s+chiave|wachtwoord|has[łl]o|l[öo]senord"
    r"|adgangskode|passord|salasana|şifre|sifre|heslo|jelsz[óo]|parol[ăa]|κωδικός|пароль|пароля"
    r"|비밀번호|암호|패스워드|口令|密碼|密码|パスキー|mật\s+khẩu|kata\s+sandi|पासवर्ड"
    r"|كلمة\s+(?:المرور|السر)|code\s+(?:wifi|wi-fi|d['’]acc[eè]s|de\s+la\s+porte|d['’]entr[ée]e))"
    r"[^\W\d_]{0,3}"  # an inflection: şifrem, lösenordet, Passworte
)
_OTHER_OWNER = r"(?:[\s\-]+(?!(?:es|est|ist|é|è|era|war)\b)[\w'’.\-]{1,20}){0,3}?"
_OTHER_IS = (
    r"(?:\s+(?:es|era|est|c'est|c’est|ist|lautet|war|wird|é|è|är|er|on|je|jest|это|—|–|-"
    r"|será|sera|sarà|fue|foi|là|adalah|है|هي|هو)"
    r"(?![^\W\d_])\s*[:：]?"
    r"|\s*[:：=]|\s*(?:는|은|이|가)|\s+c'est|\s+c’est)\s*"
)


def _foreign_value(value: str) -> tuple[int, int] | None:
    """A quoted value, or one word of four or more characters holding a digit or a symbol."""
    inside = quoted(value)
    if inside is not None:
        return inside
    found = ascii_run(value) if value[:1].isascii() else None
    if found is None:
        return None
    word = value[found[0] : found[1]]
    return found if len(word) >= 4 and has_digit_or_symbol(word) and password_like(word) else None


OTHER_LANGUAGES: list[Rule] = [
    _rule(
        "password",
        rf"(?<![^\W\d_]){_OTHER_LABEL}{_OTHER_OWNER}{_OTHER_IS}{_VALUE}",
        _foreign_value,
    ),
    _rule("password", rf"(?<![^\W\d_]){_OTHER_LABEL}\s+{_VALUE}", _foreign_value),
]

# --- a secret told in a clause after the word that says it is one: "Alice secret: the launch
# codename is BLUEHERON", "confidential: the gate code is 4821", "the secret phrase is X". The
# value must read as a code, not a description ("the secret to good bread is patience"): all
# capitals, a digit or a symbol, or quoted. --------------------------------------------------
_SECRET_WORD = r"(?:secret|confidential|classified|top\s+secret|机密|機密|秘密|保密)"
_CLAUSE_IS = r"\s(?:is|are|was|=|:|-)\s+|\s*[:：=]\s*|是\s*|は\s*"


def _code_value(value: str) -> tuple[int, int] | None:
    inside = quoted(value)
    if inside is not None:
        return inside
    found = spoken_value(value, max_words=1) if value[:1].isascii() else None
    if found is None:
        return None
    word = value[found[0] : found[1]]
    letters = [c for c in word if c.isalpha()]
    capitals = len(letters) >= 3 and all(c.isupper() for c in letters)
    contraction = re.fullmatch(r"[A-Za-z]+['’][A-Za-z]{1,2}", word) is not None  # "we're"
    return found if capitals or (has_digit_or_symbol(word) and not contraction) else None


SECRET_CLAUSE = _rule(
    "secret",
    rf"(?<![A-Za-z]){_SECRET_WORD}(?![A-Za-z])[^\n.!?。！？]{{0,60}}(?:{_CLAUSE_IS}){_VALUE}",
    _code_value,
)

RULES: list[Rule] = [
    *hinted(  # each word starts with its letter (a \b after it, looking back): Python's
        # re then tries the words only where their first letter stands
        r"p[a@4][s$5]|pwd|pw\b(?<=\bpw)|pswd|pword|pin\b(?<=\bpin)|codes?\b|combo|combination",
        ENGLISH,
    ),
    *hinted("密|口令|暗号|暗號|码|碼", CHINESE),
    *hinted("パス|ぱす|暗証|合言葉|あいことば|番号|ピン|コード", JAPANESE),
    *hinted(
        "contra|clave|passw|kennw|passe|mdp|senha|parola|wachtw|hasło|haslo|senord|kode|passord"
        "|salasana|ifre|heslo|jelsz|parol|κωδικ|парол|비밀번호|암호|패스워드|口令|密|パスキー"
        "|khẩu|sandi|पासवर्ड|كلمة|code w|code d",
        OTHER_LANGUAGES,
    ),
    *hinted("secret|confidential|classified|机密|機密|秘密|保密", [SECRET_CLAUSE]),
]
