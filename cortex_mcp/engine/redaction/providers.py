"""Provider credentials recognised by their published formats (prefix, alphabet, length).

The list, for the README: private keys (PEM/OpenSSH/PGP/PuTTY, any spacing in the armour);
OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-) and OpenAI-compatible sk- keys; Anthropic
(sk-ant-); GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_); GitLab (glpat-, gldt-, glrt-, glcbt-,
...); Slack (xoxb-/xoxp-/xoxa-/xoxe-..., xapp-, webhooks); AWS access key ids (AKIA, ASIA, ABIA,
ACCA); Google (AIza API keys, ya29. OAuth tokens, GOCSPX- client secrets); Stripe (sk_live_,
sk_test_, rk_live_, whsec_); Twilio (AC/SK ids); SendGrid (SG.); npm (npm_); PyPI (pypi-AgE);
Hugging Face (hf_, api_org_); JWTs; Discord bot tokens and webhooks; Telegram bot tokens;
Azure (storage AccountKey, SharedAccessKey, SAS sig=, Entra client secrets with Q~);
DigitalOcean (dop_v1_, doo_v1_, dor_v1_); Mailchimp (-usN); Square (sq0atp-, sq0csp-, EAAA);
Shopify (shpat_, shpca_, shppa_, shpss_); Groq (gsk_); Replicate (r8_); Perplexity (pplx-);
xAI (xai-); Linear (lin_api_); Notion (ntn_, secret_); Postman (PMAK-); Atlassian (ATATT3);
Doppler (dp.pt., dp.st.); HashiCorp Vault (hvs.); Databricks (dapi); Mailgun (key-); Figma (figd_);
Grafana (glsa_, glc_); Supabase (sbp_); Sentry (sntrys_); age (AGE-SECRET-KEY-1); New Relic
(NRAK-, NRII-, NRJS-, NRAA-, ...NRAL license keys); Tencent Cloud (AKID); Alibaba Cloud (LTAI);
OpenRouter (sk-or-v1-); LangSmith (lsv2_pt_, lsv2_sk_); Mapbox secret tokens (sk.eyJ); Terraform
Cloud (.atlasv1.); Netlify (nfp_); Fireworks (fw_); Firebase Cloud Messaging server keys (AAAA…:APA91b);
Dropbox (sl.); Airtable (pat….); Cloudflare Origin CA keys (v1.0-); Bitbucket app passwords (ATBB)."""

from __future__ import annotations

import re

from cortex_mcp.engine.redaction.rules import Hint, Rule, hinted, lazy_pattern, when

_START = r"(?<![A-Za-z0-9_\-])"  # a token starts after a separator, not inside a word
_END = r"(?![A-Za-z0-9_\-])"


def _token(kind: str, *alternatives: str, flags: int = 0) -> Rule:
    """A format's match runs on to the end of its token: a longer one (a format grown, a
    paste with more) is cut whole, not down to the length the format gives."""
    body = "|".join(alternatives)
    return Rule(kind, lazy_pattern(rf"{_START}(?:{body})[A-Za-z0-9_\-]*", flags))


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


PRIVATE_KEY = Rule(
    "private_key",
    lazy_pattern(
        r"-{3,}\s*BEGIN\s+(?:[A-Z0-9]+\s+)*PRIVATE\s+KEY(?:\s+BLOCK)?\s*-{3,}.*?"
        r"(?:-{3,}\s*END\s+(?:[A-Z0-9]+\s+)*PRIVATE\s+KEY(?:\s+BLOCK)?\s*-{3,}|\Z)"
        r"|PuTTY-User-Key-File-\d:.*?(?:Private-MAC:\s*\S+|\Z)",
        re.DOTALL | re.IGNORECASE,
    ),
)

_TOKENS: list[Rule] = [
    _token("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
    Rule(
        "openai_key",
        lazy_pattern(
            rf"{_START}sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{{20,}}|[A-Za-z0-9]{{20,}}{_END})"
        ),
        refine=when(_mixed),
    ),
    _token(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{30,255}",
        r"github_pat_[A-Za-z0-9_]{22,255}",
    ),
    _token(
        "gitlab_token",
        r"(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-[A-Za-z0-9_\-]{20,}",
        r"GR1348941[A-Za-z0-9_\-]{20,}",
    ),
    Rule(
        "slack_token",
        lazy_pattern(
            rf"{_START}(?:xox[abposrec]-[A-Za-z0-9\-]{{10,}}|xapp-\d-[A-Za-z0-9\-]{{10,}})"
            r"|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}"
        ),
    ),
    Rule(
        "aws_access_key",
        lazy_pattern(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
    ),
    _token(
        "google_key",
        r"AIza[0-9A-Za-z_\-]{35}",
        r"ya29\.[0-9A-Za-z_\-]{20,}",
        r"GOCSPX-[A-Za-z0-9_\-]{24,}",
        r"1//0[A-Za-z0-9_\-]{40,}",
    ),
    _token("stripe_key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}", r"whsec_[A-Za-z0-9]{20,}"),
    Rule("twilio_key", lazy_pattern(rf"{_START}(?:SK|AC)[0-9a-f]{{32}}{_END}")),
    _token("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}"),
    _token("npm_token", r"npm_[A-Za-z0-9]{36}"),
    _token("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    _token("huggingface_token", r"hf_[A-Za-z0-9]{30,}", r"api_org_[A-Za-z0-9]{30,}"),
    _token("jwt", r"eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
    Rule(
        "discord_token",
        lazy_pattern(
            rf"{_START}[MNO][A-Za-z0-9_\-]{{23,27}}\.[A-Za-z0-9_\-]{{6}}\.[A-Za-z0-9_\-]{{27,40}}{_END}"
            r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,}"
        ),
    ),
    Rule(
        "telegram_token",
        lazy_pattern(r"(?<![A-Za-z0-9_\-:])\d{8,10}:[A-Za-z0-9_\-]{35}(?![A-Za-z0-9_\-])"),
    ),
    Rule(
        "azure_key",
        lazy_pattern(
            r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*(?P<value>[A-Za-z0-9+/]{40,}={0,2})"
            r"|[?&]sig=(?P<sig>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})"
            rf"|{_START}(?P<entra>[A-Za-z0-9_~.\-]{{3}}\dQ~[A-Za-z0-9_~.\-]{{31,34}}){_END}"
        ),
        groups=("value", "sig", "entra"),
    ),
    _token("digitalocean_token", r"do[por]_v1_[a-f0-9]{64}"),
    Rule("mailchimp_key", lazy_pattern(rf"{_START}[0-9a-f]{{32}}-us\d{{1,2}}{_END}")),
    _token("square_token", r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}", r"EAAA[A-Za-z0-9_\-+=]{60,}"),
    _token("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    Rule(
        "newrelic_key",
        lazy_pattern(
            rf"{_START}(?:NRAK-[A-Z0-9]{{27}}|NRII-[A-Za-z0-9_\-]{{32}}|NRJS-[a-f0-9]{{19}}"
            rf"|NRAA-[a-f0-9]{{27}}|[a-f0-9]{{36}}NRAL){_END}"
        ),
    ),
    Rule("tencent_key", lazy_pattern(rf"{_START}AKID[A-Za-z0-9]{{32}}{_END}")),
    Rule(
        "alibaba_key", lazy_pattern(rf"{_START}LTAI[A-Za-z0-9]{{12,20}}{_END}"), refine=when(_mixed)
    ),
    _token(
        "api_token",
        r"gsk_[A-Za-z0-9]{48,}",
        r"r8_[A-Za-z0-9]{37,}",
        r"pplx-[A-Za-z0-9]{40,}",
        r"xai-[A-Za-z0-9]{60,}",
        r"lin_api_[A-Za-z0-9]{40,}",
        r"ntn_[A-Za-z0-9]{40,}",
        r"secret_[A-Za-z0-9]{43}",
        r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        r"ATATT3[A-Za-z0-9_\-=]{100,}",
        r"dp\.(?:pt|st|ct|sa|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,}",
        r"hvs\.[A-Za-z0-9_\-]{24,}",
        r"dapi[a-f0-9]{32}",
        r"key-[0-9a-f]{32}",
        r"figd_[A-Za-z0-9_\-]{40,}",
        r"glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}",
        r"glc_[A-Za-z0-9+/]{32,}={0,2}",
        r"sbp_[a-f0-9]{40}",
        r"sntrys_[A-Za-z0-9+/=_]{50,}",
        r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
        r"sk-or-v1-[a-f0-9]{64}",
        r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
        r"sk\.eyJ[A-Za-z0-9_\-]{40,}\.[A-Za-z0-9_\-]{20,}",
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}",
        r"nfp_[A-Za-z0-9]{36}",
        r"fw_[A-Za-z0-9]{24,}",
        r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{120,}",
        r"sl\.(?:u\.)?[A-Za-z0-9_\-]{130,}",
        r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
        r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
        r"ATBB[A-Za-z0-9]{32}",
    ),
]

# Every provider format is a run of at least 16 token characters.
TOKEN_RUN = Hint(r"[a-z0-9_\-.+/=:%~]{16}")
RULES: list[Rule] = [
    *hinted(r"private|putty", [PRIVATE_KEY]),
    *hinted(TOKEN_RUN, _TOKENS),
]
