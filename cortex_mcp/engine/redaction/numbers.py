"""Numbers that identify a person's money or self: payment card numbers (any separators,
Luhn-checked, a real issuer prefix), a card's security code after its name (CVV, CVC, CSC,
security code, 安全码, セキュリティコード), IBANs (country length and mod-97), US social security
numbers, Chinese resident ID numbers (with their check digit), UK National Insurance numbers,
and any ID number after a label that names it (passport, SSN, 身份证, マイナンバー, ...)."""

from __future__ import annotations

import re

from cortex_mcp.engine.redaction import checks
from cortex_mcp.engine.redaction.rules import Hint, Rule, hinted, lazy_pattern, not_inside, when

CARD = Rule(
    "card_number",
    # 13-19 digits, single or double separators of any common kind between them; a leading '+'
    # or a digit glued on either side means a phone number or a longer id
    lazy_pattern(r"(?<![\d+\-.])\d(?:[ \-.\u2013\u2014_/]{0,3}\d){12,18}(?![\d])"),
    refine=when(checks.card_number),
)

IBAN = Rule(
    "iban",
    lazy_pattern(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ \-]?[A-Za-z0-9]){11,30}"),
    refine=lambda value: (0, n) if (n := checks.iban_length(value)) else None,
)

US_SSN = Rule(
    "national_id",
    lazy_pattern(r"(?<![\d\-])\d{3}([\- ])\d{2}\1\d{4}(?![\d\-])"),
    refine=when(checks.us_ssn),
)

CHINA_ID = Rule(
    "national_id",
    lazy_pattern(r"(?<![0-9A-Za-z])[1-8]\d{16}[\dXx](?![0-9A-Za-z])"),
    refine=when(checks.china_resident_id),
)

UK_NINO = Rule(
    "national_id",
    lazy_pattern(
        r"(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
        r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
    ),
)

_ID_LABEL = (
    r"(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?|passport(?:\s+(?:number|no\.?|#))?"
    r"|national\s+(?:id|identity|insurance)(?:\s+(?:card\s+)?(?:number|no\.?|#))?"
    r"|(?:tax|personal|citizen)\s+id(?:\s+(?:number|no\.?))?|id\s+(?:card\s+)?(?:number|no\.?)"
    r"|sin|tin|nino|ni\s+(?:number|no\.?)|aadhaa?r(?:\s+(?:number|no\.?))?|driver'?s\s+licen[cs]e(?:\s+(?:number|no\.?|#))?"
    r"|身份证(?:号码|号)?|身份證(?:號碼|號)?|护照(?:号码|号)?|護照(?:號碼|號)?|社保号|"
    r"マイナンバー|個人番号|パスポート番号|免許証番号|運転免許証番号)"
)
LABELLED_ID = Rule(
    "national_id",
    lazy_pattern(
        rf"(?<![A-Za-z]){_ID_LABEL}\s*(?:is|was|:|：|=|#|是|为|為|は|:)?\s*"
        r"(?P<value>[A-Za-z0-9](?:[A-Za-z0-9]|[\- ](?=[A-Za-z0-9])){4,24})",
        re.IGNORECASE,
    ),
    groups=("value",),
    refine=lambda value: _id_number(value),
)


def _id_number(value: str) -> tuple[int, int] | None:
    """The id at the start of `value`: its run of letters, digits and separators holding at
    least five digits (the words after it are left alone)."""
    end = 0
    digits = 0
    for match in re.finditer(r"[A-Za-z0-9]+", value):
        word = match.group()
        if match.start() > end + 1:
            break
        if digits >= 5 and not any(c.isdigit() for c in word) and len(word) > 1:
            break  # the words after the number
        digits += sum(c.isdigit() for c in word)
        end = match.end()
    return (0, end) if digits >= 5 else None


_CVV_LABEL = (
    r"(?:cvv2?|cvc2?|cvn|csc|card\s+verification\s+(?:value|code|number)"
    r"|(?:card\s+)?security\s+code|安全码|安全碼|セキュリティー?コード)"
)
CARD_CODE = Rule(
    "card_cvv",
    lazy_pattern(
        rf"(?<![A-Za-z]){_CVV_LABEL}(?:\s*(?:number|no\.?|code|码|碼|番号))?\s*"
        r"(?:is|was|:|：|=|#|是|为|為|は|-)?\s*(?P<value>\d{3,4})(?![\d,.]?\d)",
        re.IGNORECASE,
    ),
    groups=("value",),
)

_NINE_DIGITS = r"\d(?:\D{0,3}+\d){8}"  # possessive: fewer non-digits leave a non-digit next
# each word starts with its first letter (a \b before it is checked looking back), so Python's
# re tries the words only where one of their first letters stands
_ID_WORDS = (
    r"ssn(?<=\bssn)|social\s+sec|passport|national\s|id\b(?<=\bid)|ni\s(?<=\bni\s)"
    r"|sin\b(?<=\bsin)|tin\b(?<=\btin)|nino|aadha|licen|身份|護照|护照|社保|マイナンバー|個人番号"
    r"|パスポート|免許"
)
# A UUID (a memory's id in an audit entry, a request id) is hex in 8-4-4-4-12 groups: about one
# in 800 random ones holds a run that passes a card's Luhn test or an IBAN's mod-97.
_UUID = lazy_pattern(
    r"(?<![0-9A-Za-z])[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}(?![0-9A-Za-z])"
)
RULES: list[Rule] = [
    *hinted(_ID_WORDS, [LABELLED_ID]),
    *hinted(
        Hint(
            r"cv[vcn]|csc|security\s+code|verification|安全[码碼]|セキュリティ",
            ("cv", "csc", "security", "verification", "安全", "セキュリティ"),
        ),
        [CARD_CODE],
    ),
    *hinted(_NINE_DIGITS, not_inside(_UUID, [CARD, IBAN, US_SSN, CHINA_ID])),
    *hinted(r"\d\d ?\d\d ?\d\d", not_inside(_UUID, [UK_NINO])),
]
