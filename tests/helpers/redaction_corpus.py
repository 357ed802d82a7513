"""A labelled redaction corpus: secrets written the way people paste and say them, in English,
Chinese and Japanese, and ordinary sentences that must come back untouched.

Values are fabricated: provider tokens are drawn (seeded) from each format's published alphabet
and length, card numbers, IBANs and ID numbers carry valid check digits, and no value belongs to
a real account. The sentences around them are written by hand. `SECRETS` rows are
(category, language, text, secret): after redaction `secret` must be gone. `ORDINARY` lines must
come back unchanged; `locomo_turns()` adds every turn of the dev LoCoMo conversations when the
dataset is found (tests/helpers/datasets.py: shared/datasets/locomo_dev.json beside the checkout)."""

from __future__ import annotations

import json
import os
import random
import string
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import datasets

_rng = random.Random(1313)
_B62 = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _B62 + "+/"
_URLSAFE = _B62 + "-_"


def _draw(alphabet: str, n: int) -> str:
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        mixed = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
        if mixed or not any(c.isdigit() for c in alphabet):
            return value


def _luhn_complete(prefix: str, length: int) -> str:
    body = prefix + "".join(_rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        digits = body + check
        total = 0
        for i, c in enumerate(reversed(digits)):
            v = int(c) * (2 if i % 2 else 1)
            total += v - 9 if v > 9 else v
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


def _iban(country: str, bban: str) -> str:
    moved = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in moved)) % 97
    return f"{country}{check:02d}{bban}"


def _grouped(value: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(value[i : i + size] for i in range(0, len(value), size))


def _cn_id(region: str, birth: str, seq: str) -> str:
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    body = region + birth + seq
    return body + "10X98765432"[sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11]


@dataclass(frozen=True)
class Secret:
    category: str
    lang: str
    text: str
    secret: str


SECRETS: list[Secret] = []


def _add(category: str, lang: str, text: str, secret: str) -> None:
    assert secret in text, (text, secret)
    SECRETS.append(Secret(category, lang, text, secret))


# --- provider tokens ------------------------------------------------------------------------
_TOKENS_EN = [
    ("sk-proj-" + _draw(_URLSAFE, 56), "here's the openai key for the bot: {}"),
    ("sk-proj-" + _draw(_URLSAFE, 74), "OK I rotated it, new one is {} — don't share"),
    ("sk-" + _draw(_B62, 48), "old style key {} still works on the legacy project"),
    ("sk-svcacct-" + _draw(_URLSAFE, 60), "service account key for CI → {}"),
    ("sk-ant-api03-" + _draw(_URLSAFE, 93) + "AA", "claude key {}"),
    ("sk-ant-admin01-" + _draw(_URLSAFE, 80), "the anthropic admin key is {} fyi"),
    ("ghp_" + _draw(_B62, 36), "can you push with my token {} thx"),
    ("gho_" + _draw(_B62, 36), "oauth token from the github app: {}"),
    ("github_pat_11A" + _draw(_B62, 19) + "_" + _draw(_B62, 59), "fine-grained PAT: {}"),
    ("ghs_" + _draw(_B62, 36), "the actions runner printed {} in the log, oops"),
    ("glpat-" + _draw(_URLSAFE, 20), "gitlab token is {}"),
    (
        "xoxb-" + "1234567890-" + "1234567890123-" + _draw(_B62, 24),
        "slack bot token {} for #alerts",
    ),
    (
        "xoxp-" + "2222222222-" + "3333333333-" + "4444444444444-" + _draw(_HEX, 32),
        "my user token {}",
    ),
    ("AKIA" + _draw(string.ascii_uppercase + "234567", 16), "aws access key id {} (prod)"),
    ("ASIA" + _draw(string.ascii_uppercase + "234567", 16), "temporary creds: {} expires in 1h"),
    ("AIza" + _draw(_URLSAFE, 35), "Maps API key {} restricted to our domain"),
    ("sk_live_" + _draw(_B62, 99), "stripe live secret {}"),
    ("rk_live_" + _draw(_B62, 24), "restricted stripe key: {}"),
    ("SK" + _draw(_HEX, 32), "twilio api key sid {} + secret in 1password"),
    ("SG." + _draw(_URLSAFE, 22) + "." + _draw(_URLSAFE, 43), "sendgrid: {}"),
    ("npm_" + _draw(_B62, 36), "publish token npm_ one: {}"),
    ("pypi-AgEIcHlwaS5vcmc" + _draw(_URLSAFE, 80), "pypi upload token {}"),
    ("hf_" + _draw(string.ascii_letters, 34), "hugging face token {} (read only)"),
    (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + _draw(_URLSAFE, 60) + "." + _draw(_URLSAFE, 43),
        "session jwt {} copied from devtools",
    ),
    (
        "MTA" + _draw(_URLSAFE, 23) + "." + _draw(_URLSAFE, 6) + "." + _draw(_URLSAFE, 38),
        "discord bot token: {}",
    ),
    (
        "7" + "".join(_rng.choice(string.digits) for _ in range(9)) + ":AA" + _draw(_URLSAFE, 33),
        "telegram bot {}",
    ),
    ("dop_v1_" + _draw(_HEX, 64), "digitalocean token {}"),
    ("abc" + "8Q~" + _draw(_URLSAFE + "~.", 34), "azure client secret {}"),
    (_draw(_HEX, 32) + "-us21", "mailchimp key {}"),
    ("shpat_" + _draw(_HEX, 32), "shopify admin token {}"),
    ("gsk_" + _draw(_B62, 52), "groq key {}"),
    ("hvs." + _draw(_URLSAFE, 90), "vault token {} for the staging cluster"),
]
for value, template in _TOKENS_EN:
    _add("provider_token", "en", template.format(value), value)

_TOKENS_ZH = [
    ("sk-proj-" + _draw(_URLSAFE, 64), "我的 OpenAI key 是 {}，帮我配置一下"),
    ("ghp_" + _draw(_B62, 36), "GitHub 令牌：{}"),
    ("sk-" + _draw(_HEX, 32), "DeepSeek 的 key：{} 别外传"),
    ("AKIA" + _draw(string.ascii_uppercase + "234567", 16), "AWS 的访问密钥ID是{}"),
    ("xoxb-" + "1111111111-" + "2222222222222-" + _draw(_B62, 24), "slack 机器人 token {}"),
    ("sk-ant-api03-" + _draw(_URLSAFE, 95), "Claude 的密钥{}"),
    ("hf_" + _draw(string.ascii_letters, 34), "抱抱脸 token：{}"),
    ("glpat-" + _draw(_URLSAFE, 20), "公司 gitlab 的 token 是「{}」"),
    ("AIza" + _draw(_URLSAFE, 35), "谷歌地图 API key：{}。"),
    ("sk_live_" + _draw(_B62, 24), "Stripe 正式环境密钥 {}"),
]
for value, template in _TOKENS_ZH:
    _add("provider_token", "zh", template.format(value), value)

_TOKENS_JA = [
    ("sk-proj-" + _draw(_URLSAFE, 64), "OpenAIのAPIキーは{}です"),
    ("ghp_" + _draw(_B62, 36), "GitHubのトークン：{}"),
    ("sk-ant-api03-" + _draw(_URLSAFE, 95), "Anthropicのキーはこれ→{}"),
    ("AKIA" + _draw(string.ascii_uppercase + "234567", 16), "AWSアクセスキー {} を使ってください"),
    ("xoxb-" + "1212121212-" + "3434343434343-" + _draw(_B62, 24), "Slackボットのトークンは「{}」"),
    ("npm_" + _draw(_B62, 36), "npmの公開用トークン{}"),
    ("hf_" + _draw(string.ascii_letters, 34), "HFトークン: {}（読み取り専用）"),
    ("SG." + _draw(_URLSAFE, 22) + "." + _draw(_URLSAFE, 43), "SendGridのキー {} をメモしておいて"),
    ("glpat-" + _draw(_URLSAFE, 20), "GitLabのアクセストークンは{}だよ"),
    ("sk_live_" + _draw(_B62, 24), "Stripeの本番シークレット：{}"),
]
for value, template in _TOKENS_JA:
    _add("provider_token", "ja", template.format(value), value)

# --- settings: .env, shell, YAML, JSON, docker ----------------------------------------------
_v = [_draw(_B62, n) for n in (32, 24, 40, 20, 28, 16, 36, 30, 44, 18)]
_ASSIGNMENTS = [
    (f"OPENAI_API_KEY={_v[0]}", _v[0]),
    (f"export GITHUB_TOKEN={_v[1]}", _v[1]),
    (f"AWS_SECRET_ACCESS_KEY={_v[2]}", _v[2]),
    ("DB_PASSWORD=correcthorse", "correcthorse"),
    (f'MY_APP_SECRET="{_v[3]}"', _v[3]),
    (f"SLACK_SIGNING_SECRET = {_v[4]}", _v[4]),
    ("POSTGRES_PASSWORD: s3cure-pg-pass", "s3cure-pg-pass"),
    (f'{{"api_key": "{_v[5]}", "region": "eu-west-1"}}', _v[5]),
    (f"docker run -e STRIPE_SECRET_KEY={_v[6]} app", _v[6]),
    (f"stripeApiKey: '{_v[7]}'", _v[7]),
    (f"  client_secret: {_v[8]}", _v[8]),
    ("REDIS_PASSWORD='Tr1cky;pass'", "Tr1cky;pass"),
    (f"set SENTRY_AUTH_TOKEN={_v[9]}", _v[9]),
    ("MAILGUN_API_KEY=mg-" + _v[1][:20], "mg-" + _v[1][:20]),
    ("JWT_SECRET=supersecretjwtsigning", "supersecretjwtsigning"),
    ("//registry.npmjs.org/:_authToken=" + _v[0][:30], _v[0][:30]),
    ("password = Winter2024!", "Winter2024!"),
    ("ADMIN_PASS=Adm1n!pass", "Adm1n!pass"),
    ("mysql -u root -pRootPa55word mydb", "RootPa55word"),
    ("psql --password=Pgs3cret! -h db", "Pgs3cret!"),
    ("curl -u admin:Adm1nCurl! https://api.example.com/v1", "Adm1nCurl!"),
    ("Server=db;Database=app;User Id=sa;Password=Sql$erver2019;", "Sql$erver2019"),
    ("PGPASSWORD=pgpw_4f8a9c pg_dump app > app.sql", "pgpw_4f8a9c"),
    ("ENCRYPTION_KEY=" + _draw(_B64, 44), None),
    ("secret_key_base: " + _draw(_HEX, 64), None),
]
for text, secret in _ASSIGNMENTS:
    _add("env_assignment", "en", text, secret or text.split(" ", 1)[-1].split("=", 1)[-1].strip())
_add("env_assignment", "zh", f"配置文件里写着 API_KEY={_v[2][:32]} 记得改", _v[2][:32])
_add("env_assignment", "ja", "設定は DATABASE_PASSWORD=Passw0rd_jp です", "Passw0rd_jp")

# --- passwords said in sentences --------------------------------------------------------------
_PROSE_EN = [
    ("my password is hunter two", "hunter two"),
    ("the wifi password is sunflower42 so just connect", "sunflower42"),
    ("Wifi password: BlueWhale#88", "BlueWhale#88"),
    ("btw my gmail password's Kangaroo!Jump9", "Kangaroo!Jump9"),
    ("My password for the NAS is purple elephant dance", "purple elephant dance"),
    ("Netflix password is Simba2019 if you want to watch", "Simba2019"),
    ("I changed my password to MaxTheDog2021", "MaxTheDog2021"),
    ("set the router password to n3tgear-home please", "n3tgear-home"),
    ("hunter2 is my password lol", "hunter2"),
    ("use 'correct horse battery staple' as the passphrase", "correct horse battery staple"),
    ("The door code is 4471#", "4471#"),
    ("garage code 739152", "739152"),
    ("my PIN is 0420 don't tell anyone", "0420"),
    ("pin code: 8163", "8163"),
    ("The alarm code's 57391, disarm it when you get in", "57391"),
    ("passcode is 882211", "882211"),
    ("The password for the shared drive is still Autumn-Leaves-7", "Autumn-Leaves-7"),
    ("our wi-fi password is now coffeeandcake", "coffeeandcake"),
    ("admin password → Zx!9qLm2", "Zx!9qLm2"),
    ("password = 'letmein123'", "letmein123"),
    ('the password is "open sesame 42"', "open sesame 42"),
    ("My bank password was changed to Rivers&Roads88.", "Rivers&Roads88"),
    ("laptop password: tacocat99", "tacocat99"),
    ("the safe combination is 32-17-5", "32-17-5"),
    ("Mom's iCloud password is Daisy1958!", "Daisy1958!"),
    ("remember my password: mangoTango77", "mangoTango77"),
    ("Pw: Qwerty!2345", "Qwerty!2345"),
    ("I tried Summer2023! for the password and it worked", "Summer2023!"),
    ("the new passcode has been set to 135790", "135790"),
    ("FYI the VPN password is blue moon rising", "blue moon rising"),
    ("The bike lock combo is 4-8-1-5", "4-8-1-5"),
    ("Amazon password = P@ssw0rd!23", "P@ssw0rd!23"),
]
for text, secret in _PROSE_EN:
    _add("prose_password", "en", text, secret)

_PROSE_ZH = [
    ("我的密码是 qwer1234abcd", "qwer1234abcd"),
    ("密码是芝麻开门", "芝麻开门"),
    ("家里wifi密码是12345678abc", "12345678abc"),
    ("wifi密码：Home@2024", "Home@2024"),
    ("银行卡密码是 852963，别告诉别人", "852963"),
    ("支付密码123456", "123456"),
    ("口令：天王盖地虎", "天王盖地虎"),
    ("邮箱密码改成了 Mail#2023 了", "Mail#2023"),
    ("我把密码设置为 xiaoming1990", "xiaoming1990"),
    ("服务器的登录密码为 Srv_pass_88", "Srv_pass_88"),
    ("密码就是 lucky888", "lucky888"),
    ("门禁密码是 2580#", "2580#"),
    ("电脑开机密码：abc@123", "abc@123"),
    ("他的QQ密码是 qq5201314", "qq5201314"),
    ("路由器密码换成了 tplink-9527", "tplink-9527"),
    ("暗号是「月亮代表我的心」", "月亮代表我的心"),
    ("我的密碼是 Taipei101!", "Taipei101!"),
    ("验证码 836152，五分钟内有效", "836152"),
    ("管理员账号 admin，密码 Adm!n2024", "Adm!n2024"),
    ("密码：“春眠不觉晓”", "春眠不觉晓"),
]
for text, secret in _PROSE_ZH:
    _add("prose_password", "zh", text, secret)

_PROSE_JA = [
    ("パスワードは sakura2024 です", "sakura2024"),
    ("パスワードは「abc123」です", "abc123"),
    ("Wi-Fiのパスワードは hikari55 だよ", "hikari55"),
    ("暗証番号は4921です", "4921"),
    ("暗証番号を1234に変更した", "1234"),
    ("パスワード：Tokyo#2020", "Tokyo#2020"),
    ("ログインパスワードは neko-chan88 で入れます", "neko-chan88"),
    ("パスワードをmomiji77に変えました", "momiji77"),
    ("合言葉は「山と川」", "山と川"),
    ("PINコードは 7788 です", "7788"),
    ("パスワードはさくらもちです", "さくらもち"),
    ("メールのパスワード、Yuki!2023です", "Yuki!2023"),
    ("新しいパスワードは「Fuji-san3776」にしました", "Fuji-san3776"),
    ("パスコードは 246810", "246810"),
    ("ルーターのパスワードが aterm-5g-99 だった", "aterm-5g-99"),
    ("パスワード＝ramen_lover1", "ramen_lover1"),
    ("銀行の暗証番号は 0317 だから覚えておいて", "0317"),
    ("サーバーのパスワードは P@ss-w0rd-jp です", "P@ss-w0rd-jp"),
    ("パスワードってkitsune42だっけ", "kitsune42"),
    ("あいことばは「ひらけごま」", "ひらけごま"),
]
for text, secret in _PROSE_JA:
    _add("prose_password", "ja", text, secret)

# --- credentials in URLs and DSNs -----------------------------------------------------------
_URLS = [
    ("DATABASE_URL=postgres://app:pa55w0rd@db.local:5432/app", "pa55w0rd"),
    ("connect with postgresql://admin:p@ss/w0rd@10.0.0.5:5432/prod", "p@ss/w0rd"),
    ("mongodb+srv://svc:Mongo%40Pass1@cluster0.abcde.mongodb.net/test", "Mongo%40Pass1"),
    ("redis://:R3dis!secret@cache.internal:6379/0", "R3dis!secret"),
    ("git clone https://bob:ghpassword99@github.com/acme/app.git", "ghpassword99"),
    ("amqp://guest:rabbit/pw@mq:5672/", "rabbit/pw"),
    ("mysql://root:Root@2024@mysql.internal/app", "Root@2024"),
    ("ftp://upload:Ftp:pass:123@files.example.org/in", "Ftp:pass:123"),
    ("数据库连接串 postgres://dev:Dev_pw_2023@127.0.0.1/dev 已经配好", "Dev_pw_2023"),
    ("接続先は mysql://app:AppP@ss99@db.example.jp/app です", "AppP@ss99"),
    ("https://user:hunter2hunter@internal.example.com/dashboard", "hunter2hunter"),
    ("smtp://mailer:M4il/er@smtp.example.com:587", "M4il/er"),
]
for text, secret in _URLS:
    lang = "zh" if "数据库" in text else "ja" if "接続先" in text else "en"
    _add("url_credentials", lang, text, secret)

# --- private keys --------------------------------------------------------------------------
_KEY_BODY = "\n".join(_draw(_B64, 64) for _ in range(4))
_add(
    "private_key",
    "en",
    f"deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n{_KEY_BODY}\n-----END RSA PRIVATE KEY-----",
    _KEY_BODY.splitlines()[1],
)
_body2 = "\n".join(_draw(_B64, 70) for _ in range(3))
_add(
    "private_key",
    "en",
    f"-----BEGIN OPENSSH PRIVATE KEY-----\n{_body2}\n-----END OPENSSH PRIVATE KEY-----",
    _body2.splitlines()[0],
)
_body3 = _draw(_B64, 64)
_add(
    "private_key",
    "en",
    f"-----BEGIN  PRIVATE KEY-----  {_body3}  -----END PRIVATE KEY-----",
    _body3,
)
_body4 = _draw(_B64, 64)
_add("private_key", "en", f"---- BEGIN EC PRIVATE KEY ----\n{_body4}\n", _body4)
_body5 = _draw(_B64, 60)
_add(
    "private_key",
    "zh",
    f"私钥如下：\n-----BEGIN PRIVATE KEY-----\n{_body5}\n-----END PRIVATE KEY-----",
    _body5,
)
_body6 = _draw(_B64, 60)
_add(
    "private_key",
    "ja",
    f"秘密鍵です\n-----begin pgp private key block-----\n{_body6}\n-----end pgp private key block-----",
    _body6,
)

# --- payment cards -------------------------------------------------------------------------
_cards = [
    (_luhn_complete("4", 16), " ", "en", "charge my visa {}, exp 04/27"),
    (_luhn_complete("51", 16), "-", "en", "Mastercard {} cvv on the back"),
    (_luhn_complete("37", 15), " ", "en", "amex {}"),
    (_luhn_complete("6011", 16), ".", "en", "discover card {}."),
    (_luhn_complete("4", 16), "", "en", "card number: {}"),
    (_luhn_complete("2221", 16), " ", "en", "new MC 2-series card {}"),
    (_luhn_complete("35", 16), " - ", "en", "JCB {} (travel card)"),
    (_luhn_complete("62", 16), " ", "zh", "我的银行卡号是 {}"),
    (_luhn_complete("62", 19), "", "zh", "卡号{}，招商银行"),
    (_luhn_complete("4", 16), "-", "zh", "信用卡：{}"),
    (_luhn_complete("35", 16), " ", "ja", "クレジットカード番号は {} です"),
    (_luhn_complete("4", 16), "", "ja", "カード番号{}"),
    (_luhn_complete("5", 16), "\u3000", "ja", "カード：{}"),
    (_luhn_complete("4", 16), "/", "en", "visa {} expires soon"),
    (_luhn_complete("36", 14), " ", "en", "diners club {}"),
]
for number, sep, lang, template in _cards:
    shown = _grouped(number, 4, sep) if sep else number
    _add("card_number", lang, template.format(shown), shown)

# --- IBANs --------------------------------------------------------------------------------
_ibans = [
    (_iban("DE", "370400440532013000"), "en", "send it to DE account {}"),
    (_iban("GB", "WEST12345698765432"), "en", "IBAN: {}"),
    (_iban("FR", "20041010050500013M02606"), "en", "my french account {} for the rent"),
    (_iban("NL", "ABNA0417164300"), "en", "iban {} (ABN)"),
    (_iban("ES", "21000418450200051332"), "en", "transfer to {} please"),
    (_iban("CH", "00762011623852957"), "zh", "瑞士账户 IBAN {}"),
    (_iban("IT", "X0542811101000000123456"), "ja", "イタリアの口座 {} に振り込んで"),
    (_iban("BE", "539007547034"), "en", "Belgian IBAN {} thanks"),
]
for iban, lang, template in _ibans:
    shown = _grouped(iban)
    _add("iban", lang, template.format(shown), shown)
_compact = _iban("AT", "1904300234573201")
_add("iban", "en", f"my iban is {_compact.lower()}", _compact.lower())

# --- national ID numbers ------------------------------------------------------------------
_IDS = [
    ("en", "my SSN is 219-09-9998", "219-09-9998"),
    ("en", "social security number 078-05-1121", "078-05-1121"),  # a famous leaked one
    ("en", "SSN: 536 22 8745", "536 22 8745"),
    ("en", "her ssn 512-64-3371, for the tax form", "512-64-3371"),
    ("en", "passport number X12345678 expires 2031", "X12345678"),
    ("en", "NI number QQ 12 34 56 C", "QQ 12 34 56 C"),
    ("en", "national insurance: AB123456D", "AB123456D"),
    ("en", "driver's license number D1234-56789-01234", "D1234-56789-01234"),
    ("zh", f"身份证号{_cn_id('110105', '19491231', '002')}", _cn_id("110105", "19491231", "002")),
    (
        "zh",
        f"我的身份证号码是 {_cn_id('440305', '19900307', '123')}",
        _cn_id("440305", "19900307", "123"),
    ),
    (
        "zh",
        f"他身份证 {_cn_id('310104', '19851112', '456')} 复印件在抽屉里",
        _cn_id("310104", "19851112", "456"),
    ),
    ("zh", "护照号 E12345678", "E12345678"),
    ("ja", "マイナンバーは 1234 5678 9018 です", "1234 5678 9018"),
    ("ja", "個人番号：987654321098", "987654321098"),
    ("ja", "パスポート番号 TK1234567", "TK1234567"),
]
for lang, text, secret in _IDS:
    _add("national_id", lang, text, secret)
_bare_cn = _cn_id("320102", "19780815", "789")
_add("national_id", "zh", f"{_bare_cn} 是我的", _bare_cn)

# --- random-looking strings next to a secret word -----------------------------------------
_NEAR = [
    ("en", "the signing secret is {}", _draw(_B62, 32)),
    ("en", "API key: {}", _draw(_HEX, 40)),
    ("en", "here is the token for the webhook {}", _draw(_URLSAFE, 28)),
    ("en", "Twilio auth token {}", _draw(_HEX, 32)),
    ("en", "my cloudflare api key is {} ok", _draw(_URLSAFE, 40)),
    ("en", "access key {} (the secret one)", _draw(_B64, 40)),
    (
        "en",
        "license key: {}",
        "-".join(_draw(string.ascii_uppercase + string.digits, 5) for _ in range(5)),
    ),
    ("en", "client secret = {}", _draw(_URLSAFE, 36)),
    ("en", "credentials {}", _draw(_B62, 24)),
    ("zh", "密钥：{}", _draw(_B62, 32)),
    ("zh", "这是我的令牌 {}", _draw(_URLSAFE, 30)),
    ("zh", "秘钥 {} 请妥善保管", _draw(_HEX, 48)),
    ("ja", "トークンは {} です", _draw(_B62, 30)),
    ("ja", "シークレット：{}", _draw(_URLSAFE, 40)),
    ("ja", "APIキー {} をコピーして", _draw(_HEX, 32)),
    ("en", "session cookie {}", _draw(_B64, 48)),
]
for lang, template, value in _NEAR:
    _add("near_secret_word", lang, template.format(value), value)

# --- hidden characters: zero-width inside a key, full-width text --------------------------
_gh = "ghp_" + _draw(_B62, 36)
_add("obfuscated", "en", f"token {_gh[:12]}\u200b{_gh[12:]}", _gh[12:])
_sk = "sk-proj-" + _draw(_URLSAFE, 48)
_add("obfuscated", "en", f"key: {_sk[:20]}\u200d{_sk[20:]}", _sk[20:])
_add("obfuscated", "en", "pass\u200bword: Zero!Width77", "Zero!Width77")
_add("obfuscated", "en", "ｐａｓｓｗｏｒｄ：ｈｕｎｔｅｒ２０２４", "ｈｕｎｔｅｒ２０２４")
_add("obfuscated", "zh", "密码：ｑｗｅｒｔｙ１２３", "ｑｗｅｒｔｙ１２３")
_add("obfuscated", "ja", "パスワードは　ｓａｋｕｒａ９９　です", "ｓａｋｕｒａ９９")
_aw = "AKIA" + _draw(string.ascii_uppercase + "234567", 16)
_add("obfuscated", "en", f"aws key {_aw[:8]}\ufeff{_aw[8:]}", _aw[8:])
_wide_card = _luhn_complete("4", 16)
_wide = _wide_card.translate({ord(d): ord(d) + 0xFEE0 for d in string.digits})
_add("obfuscated", "ja", f"カード番号は{_grouped(_wide, 4, '　')}", _grouped(_wide, 4, "　"))
_add("obfuscated", "en", "OPENAI\u200b_API_KEY=" + _v[4], _v[4])
_add("obfuscated", "en", "my pass\u00adword is soft-hyphen-88", "soft-hyphen-88")

# --- the forms probe item 4 of issue 26 found on disk (a group of its own in bench/redaction.py,
# so its before/after shows; tests/helpers/redaction_heldback.py holds forms not used to write
# the patterns) -----------------------------------------------------------------------------------
PROBE_SECRETS: list[Secret] = []
_probe_rng = random.Random(2611)


def _probe(category: str, lang: str, text: str, secret: str) -> None:
    assert secret in text, (text, secret)
    PROBE_SECRETS.append(Secret(category, lang, text, secret))


def _probe_draw(alphabet: str, n: int) -> str:
    return "".join(_probe_rng.choice(alphabet) for _ in range(n - 2)) + "7q"


_tok, _wh = "tok_" + _probe_draw(_B62, 24), "whsec_" + _probe_draw(_B62, 32)
_probe("word_colon_assignment", "en", f"remember: API_TOKEN={_tok}", _tok)
_probe("word_colon_assignment", "en", f"prod: STRIPE_SECRET={_wh}", _wh)
_probe("word_colon_assignment", "zh", f"记住：API_TOKEN={_tok}", _tok)
_probe("word_colon_assignment", "ja", f"本番: STRIPE_SECRET={_wh}", _wh)
_aws = _probe_draw(_B62 + "/+", 40)
_probe("relation_object", "en", f"aws_secret_access_key = {_aws}", _aws)
_probe("relation_object", "en", f"deploy bot uses aws_secret_access_key = {_aws}", _aws)
_probe("cvv", "en", "cvv 123", "123")
_probe("cvv", "en", "CVV: 4567", "4567")
_probe("cvv", "en", "security code 123", "123")
_probe("cvv", "zh", "安全码 852", "852")
_probe("cvv", "ja", "セキュリティコード 852", "852")
_skb = _probe_draw(_HEX, 128)
_probe("hex_key", "en", f"SECRET_KEY_BASE={_skb}", _skb)
_probe("short_bearer", "en", "Authorization: Bearer abc123", "abc123")
_probe("short_bearer", "en", "Bearer abc123", "abc123")


def needle(item: Secret) -> str:
    """What must not appear in stored bytes: the secret, with the text before it when the
    secret alone is too short to be unique in a database full of ids and hashes."""
    if len(item.secret) >= 8:
        return item.secret
    at = item.text.index(item.secret)
    return item.text[max(0, at - 8) : at] + item.secret


# --- ordinary text -------------------------------------------------------------------------
ORDINARY_WRITTEN: list[str] = [
    "I forgot my password again, how do I reset it?",
    "The password policy requires at least 12 characters.",
    "the password is stored hashed with argon2",
    "My password is too long to type on the TV remote.",
    "The password is the same as the one for the old router.",
    "What is the wifi password?",
    "Password managers are worth it.",
    "She said the password was wrong three times.",
    "My password is expired, IT is on it.",
    "Use the Bearer scheme in the Authorization header.",
    "The eyJ prefix means base64 JSON.",
    "Deploy with ssh://deploy@example.com/srv/app (key auth, no password).",
    "The key insight is that people forget things.",
    "Key takeaways from the meeting: ship on Friday.",
    "My PIN is on a sticky note at home, I'll check.",
    "I need a new PIN for my card.",
    "The door code changed last week.",
    "Our order number is 1234 5678 9012 3456 (not a card).",
    "Call me at +81 90 1234 5678 tomorrow.",
    "ISBN 978-3-16-148410-0 is the book.",
    "Git commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f fixed it.",
    "The request id was 550e8400-e29b-41d4-a716-446655440000.",
    "The build id is 2026-11-21-0930.",
    "It cost $1,249.99 plus tax.",
    "The flight is on 2024-05-17 at 09:35.",
    "The tracking number is 1Z999AA10123456784.",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "The tokenizer splits on whitespace.",
    "Token budgets are 2000 per recall.",
    "A secret santa gift exchange is planned for December.",
    "Keep it a secret until the party!",
    "The secret to good bread is patience.",
    "He passed the exam with 98 points.",
    "The bus pass costs 45 euros a month.",
    "Tickets are 25 dollars each, 4 of us, so 100 total.",
    "My phone number changed to 415-555-0132.",
    "Room 1204, building 7, floor 12.",
    "The meeting is at 3:30pm in room B-204.",
    "Version 3.12.1 fixed the bug in 3.12.0.",
    "Lat 37.7749, long -122.4194 is San Francisco.",
    "I ran 10.5 km in 52:13 today.",
    "The API returns 429 when you send more than 60 requests per minute.",
    "Set the environment variable DEBUG=1 to see more logs.",
    "LOG_LEVEL=info and PORT=8080 are the defaults.",
    "primary_key = id in that table.",
    "sort_key: created_at",
    "The public key is fine to share; the private one is not.",
    "Use ssh-keygen to make a key pair.",
    "I lost my keys at the beach.",
    "The key to the shed is under the mat.",
    "Monkey Island is a great game.",
    "The passport office opens at 9.",
    "I renewed my passport last month.",
    "Social security benefits start at 67.",
    "我忘记密码了，怎么重置？",
    "密码至少要八位。",
    "密码是多少？",
    "我的生日是1990年5月3日,电话13800138000。",
    "订单号 2023110512345678 已发货。",
    "这个月房租是3500元。",
    "会议定在下午三点，地点在三楼会议室。",
    "我的护照下个月到期。",
    "身份证丢了要去派出所补办。",
    "他的手机号是 139 1234 5678。",
    "版本号 v2.3.1 修复了登录问题。",
    "快递单号 SF1234567890123 明天到。",
    "パスワードを忘れました。",
    "パスワードは8文字以上にしてください。",
    "パスワードは何でしたっけ？",
    "暗証番号を変更したいです。",
    "電話番号は 090-1234-5678 です。",
    "来週の会議は 2024年6月3日 10:00 から。",
    "このラーメンは 980円 でした。",
    "注文番号 A-2024-00123 を確認してください。",
    "パスポートを更新しました。",
    "マイナンバーカードを受け取りました。",
    "The password field should be masked.",
    "Passwords must not be reused.",
    "Reset your password from the settings page.",
    "The API key rotation happens every 90 days.",
    "Store tokens in the keychain, not in code.",
    "We moved secrets to Vault last quarter.",
    "The secret is out: we're engaged!",
    "Pin the tab so it doesn't close.",
    "I pinned the message in the channel.",
    "Code review is at 2pm.",
    "The code is on GitHub under acme/app.",
    "Error code 0x80070005 means access denied.",
    "HTTP status code 404 again.",
    "Zip code 94103.",
    "The combination of both approaches works best.",
    "My credit score went up to 780.",
    "The card game lasted until 2am.",
    "The invoice total is 4,532.10 EUR.",
    "Account number ending in 4432.",
    "Table 12 for 4 people at 7:30.",
    "UUID v4 looks like 123e4567-e89b-12d3-a456-426614174000.",
    "Docker image sha256:4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "The md5 of the file is d41d8cd98f00b204e9800998ecf8427e.",
    "Your verification is complete.",
    "I got a pass: 2 days at the festival.",
    "The bus pass is 45 euros a month now.",
    "My boarding pass is 12A, window seat.",
]

_FIRST = ["Melanie", "Caroline", "Jon", "Gina", "Andrew", "Audrey", "Joanna", "Nate", "Tim", "John"]
_PLACES = ["the park", "Tokyo", "the office", "Lisbon", "the gym", "grandma's house", "Shanghai"]


def _generated_ordinary() -> list[str]:
    """Look-alikes with varying numbers: ids, hashes, UUIDs, dates, prices and phone numbers
    in the sentences people write about them."""
    rng = random.Random(7)
    out: list[str] = []
    for _ in range(60):
        name = rng.choice(_FIRST)
        place = rng.choice(_PLACES)
        sha = "".join(rng.choice(_HEX) for _ in range(40))
        uuid = "-".join("".join(rng.choice(_HEX) for _ in range(n)) for n in (8, 4, 4, 4, 12))
        phone = f"+1 {rng.randint(200, 999)} {rng.randint(200, 999)} {rng.randint(1000, 9999)}"
        cn_phone = f"1{rng.randint(3, 9)}{rng.randint(0, 9)}{rng.randint(10000000, 99999999)}"
        price = f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"
        day = f"20{rng.randint(10, 30)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        order = "".join(rng.choice(string.digits) for _ in range(rng.randint(8, 12)))
        out += [
            f"{name} fixed it in commit {sha[: rng.choice([7, 12, 40])]}.",
            f"The trace id for that request is {uuid}.",
            f"Call {name} at {phone} after {rng.randint(1, 11)}pm.",
            f"{name} paid ${price} for dinner at {place}.",
            f"We're meeting {name} at {place} on {day}.",
            f"Order {order} was delivered to {place}.",
            f"{name}的电话是{cn_phone}，周末联系。",
            f"{name}さんの会議は{day}の{rng.randint(9, 18)}時からです。",
            f"The ticket number is #{rng.randint(1000, 99999)} and it's about {place}.",
            f"{name} scored {rng.randint(60, 100)} out of 100 on {day}.",
        ]
    return out


ORDINARY: list[str] = ORDINARY_WRITTEN + _generated_ordinary()


def locomo_turns(path: Path | None = None) -> list[str]:
    """Every turn's text of the dev LoCoMo conversations at `path`, else where datasets.py looks
    for them, or [] when they are not there (CC BY-NC, not part of this repository)."""
    path = path or datasets.find("locomo_dev.json", os.environ)
    if path is None:
        return []
    samples = json.loads(path.read_text("utf-8"))
    return [
        turn["text"]
        for sample in samples
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
