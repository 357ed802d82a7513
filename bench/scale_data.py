"""A synthetic memory database of any size, built once and cached on disk (for recall_scale.py).

    python bench/scale_data.py --size 1000000            # builds (or finds) the cache
    python bench/scale_data.py --size 10000 --no-vectors

Text: English drawn from the word frequencies of the LoCoMo dev conversations (their stop words
included, as real text has them) plus a long tail of rarer made-up words, Chinese and Japanese
from word lists, every word Zipf-distributed; each memory leans on one of 200 topics. Six agents
of very different sizes are interleaved in time, as a shared server sees them; some memories are
shared, forgotten or superseded, in every layer. Vectors (384 dims) come from `ScaleEmbedder`, a
deterministic bag-of-tokens model with topic structure (clustered like real embeddings, not
uniform noise); the benchmark embeds its queries with the same model in-process.

Rows are written in batches of 10,000 straight through the store's `Database.write` (the
schema, migrations and FTS text are the real ones); the file lands in
$CORTEX_SCALE_CACHE (default /tmp/cortex-scale) and is reused until the generator changes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.locomo_data import find_dataset, load_dataset  # noqa: E402
from cortex_mcp.models import new_id, to_iso  # noqa: E402
from cortex_mcp.store.database import Database  # noqa: E402
from cortex_mcp.tokenize import content_hash, index_text  # noqa: E402

GENERATOR_VERSION = 1  # bump when the data changes: the cache key includes it
DIM = 384
MODEL = "scale-384"
TOPICS = 200
BATCH = 10_000
AGENTS = [  # (agent, share of all memories)
    ("main", 0.55),
    ("team", 0.25),
    ("ops", 0.12),
    ("research", 0.06),
    ("travel", 0.015),
    ("tiny", 0.005),
]
NAMES = (
    "Alice Bob Caroline Melanie Harry Mei Kenji Sofia Omar Priya Lukas Ana Tom Yuki Chen Li"
    " Wang Sato Tanaka Jon Maria Ivan Fatima Noah Emma Liam Olivia Ravi Zoe Hana"
).split()
ZH_WORDS = (
    "投资 房产 股票 服务器 防火墙 会议 预算 旅行 猫 狗 医生 医院 学校 老师 学生 公司 项目 经理 客户"
    " 合同 价格 市场 银行 账户 工资 房租 电脑 手机 软件 数据 数据库 网络 密码 邮件 日历 周末 早上 晚上"
    " 生日 礼物 朋友 家人 父母 孩子 妻子 丈夫 哥哥 妹妹 咖啡 茶 米饭 面条 饺子 火锅 北京 上海 深圳 杭州"
    " 成都 广州 香港 台北 飞机 火车 地铁 酒店 护照 签证 天气 下雨 健身 跑步 游泳 篮球 足球 音乐 电影"
    " 小说 画画 摄影 吉他 钢琴 考试 作业 论文 研究 实验 报告 计划 目标 问题 方案 决定 喜欢 讨厌 担心"
    " 开心 生病 感冒 过敏 药 牙医 体检 保险 贷款 基金 利率 汇率 税务 发票 快递 外卖 超市 搬家 装修"
    " 家具 冰箱 空调 洗衣机 停车 汽车 自行车 驾照 部署 上线 回滚 测试 代码 接口 日志 监控 报警 备份"
).split()
JA_WORDS = (
    "東京 大阪 京都 品川 新宿 渋谷 横浜 会議 予算 旅行 猫 犬 病院 医者 学校 先生 学生 会社 部長"
    " 課長 取引先 契約 値段 銀行 口座 給料 家賃 パソコン 携帯 ソフト データ サーバー ネットワーク"
    " パスワード メール 予定 週末 朝 夜 誕生日 プレゼント 友達 家族 両親 子供 妻 夫 兄 妹 コーヒー"
    " お茶 ご飯 ラーメン 寿司 天ぷら 電車 新幹線 飛行機 ホテル パスポート 天気 雨 ジム ランニング"
    " 水泳 野球 サッカー 音楽 映画 小説 写真 ギター ピアノ 試験 宿題 論文 研究 実験 報告 計画 目標"
    " 問題 決定 好き 嫌い 心配 嬉しい 風邪 アレルギー 薬 歯医者 健康診断 保険 ローン 投資 利回り"
    " 税金 請求書 宅配 コンビニ 引っ越し 家具 冷蔵庫 エアコン 車 自転車 免許 デプロイ リリース"
    " テスト コード ログ 監視 バックアップ"
).split()
ZH_GLUE = "的 了 在 是 我 和 也 都 要 去 有 很".split()
JA_GLUE = "は を に で が の と も です ました ません".split()
_TOKEN = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff]")
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def tokens(text: str) -> list[str]:
    """What ScaleEmbedder sees: Latin words, and CJK one character at a time."""
    return _TOKEN.findall(text.lower())


def _seed(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")


class ScaleEmbedder:
    """A deterministic embedding model: a token's vector is its topic's centre plus its own
    noise; a text's vector is the normalised sum of its tokens' vectors. An in-process
    provider (the shape of cortex_mcp's providers): no HTTP, so recall time is our own."""

    name = "scale-embedder"
    model_key = MODEL

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim
        rng = np.random.default_rng(2024)
        centres = rng.standard_normal((TOPICS, dim)).astype(np.float32)
        self.centres = centres / np.linalg.norm(centres, axis=1, keepdims=True)
        self._cache: dict[str, np.ndarray] = {}

    def ready(self) -> bool:
        return True

    def topic(self, token: str) -> int:
        return _seed(token) % TOPICS

    def token_vector(self, token: str) -> np.ndarray:
        vector = self._cache.get(token)
        if vector is None:
            seed = _seed(token)
            noise = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            vector = 0.7 * self.centres[seed % TOPICS] + noise / np.sqrt(self.dim)
            self._cache[token] = vector
        return vector

    def vector(self, text: str) -> np.ndarray:
        found = tokens(text)
        total = np.zeros(self.dim, dtype=np.float32)
        for token in found:
            total += self.token_vector(token)
        norm = float(np.linalg.norm(total))
        return total / norm if norm else total

    async def embed(self, texts: list[str]) -> np.ndarray:
        return np.vstack([self.vector(t) for t in texts])


class Vocabulary:
    """Words by language, each list in Zipf order, with per-topic sub-lists."""

    def __init__(self, embedder: ScaleEmbedder, rng: np.random.Generator) -> None:
        english = _locomo_words()
        english += _made_up_words(rng, 40_000, set(english))
        self.lists = {"en": english, "zh": ZH_WORDS, "ja": JA_WORDS}
        self.probs = {lang: _zipf(len(words)) for lang, words in self.lists.items()}
        self.by_topic = {lang: _by_topic(words, embedder) for lang, words in self.lists.items()}

    def words(self, lang: str, topic: int, n: int, rng: np.random.Generator) -> list[str]:
        words = self.lists[lang]
        picked = [words[i] for i in rng.choice(len(words), size=n, p=self.probs[lang])]
        own = self.by_topic[lang].get(topic)
        if own:  # about half the content words come from the memory's topic
            extra = rng.choice(len(own), size=max(n // 2, 1), p=_zipf(len(own)))
            picked[1::2] = [own[i] for i in extra][: len(picked[1::2])]
        return picked


def _locomo_words() -> list[str]:
    counts: Counter[str] = Counter()
    try:
        path = find_dataset(None, ROOT)
        for conversation in load_dataset(path, "dev"):
            for turn in conversation.turns.values():
                counts.update(re.findall(r"[a-z]+", turn.split(": ", 1)[-1].lower()))
    except Exception as exc:  # the made-up tail alone still gives a Zipf vocabulary
        print(f"LoCoMo vocabulary unavailable ({exc}); made-up words only", file=sys.stderr)
    return [w for w, _ in counts.most_common() if len(w) > 1 or w in ("a", "i")]


def _made_up_words(rng: np.random.Generator, n: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    seen = set(taken)
    while len(out) < n:
        word = "".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 5))))
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def _zipf(n: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** 1.05
    return weights / weights.sum()


def _by_topic(words: list[str], embedder: ScaleEmbedder) -> dict[int, list[str]]:
    topics: dict[int, list[str]] = {}
    for word in words[200:]:  # the most frequent words belong to no topic
        topics.setdefault(embedder.topic(tokens(word)[0]), []).append(word)
    return topics


def memory_text(vocab: Vocabulary, rng: np.random.Generator, topic: int) -> str:
    roll = rng.random()
    name = NAMES[int(rng.integers(len(NAMES)))]
    if roll < 0.75:
        words = vocab.words("en", topic, int(rng.integers(8, 30)), rng)
        return f"{name}: {' '.join(words)}"
    if roll < 0.9:
        words = vocab.words("zh", topic, int(rng.integers(4, 12)), rng)
        glue = rng.choice(ZH_GLUE, size=len(words))
        return f"{name}：" + "".join(w + g for w, g in zip(words, glue, strict=True)) + "。"
    words = vocab.words("ja", topic, int(rng.integers(4, 12)), rng)
    glue = rng.choice(JA_GLUE, size=len(words))
    return f"{name}：" + "".join(w + g for w, g in zip(words, glue, strict=True)) + "。"


def cache_path(size: int, vectors: bool, seed: int = 1) -> Path:
    import os

    root = Path(os.environ.get("CORTEX_SCALE_CACHE", "/tmp/cortex-scale"))
    suffix = "vec" if vectors else "text"
    return root / f"scale-v{GENERATOR_VERSION}-{size}-{suffix}-s{seed}.db"


def _rows(
    vocab: Vocabulary, embedder: ScaleEmbedder, rng: np.random.Generator, n: int, start: datetime
) -> tuple[list[tuple], list[tuple], list[str]]:
    agents = [a for a, _ in AGENTS]
    shares = np.array([s for _, s in AGENTS])
    owner = rng.choice(len(agents), size=n, p=shares / shares.sum())
    memories, fts, contents = [], [], []
    for i in range(n):
        topic = int(rng.integers(TOPICS))
        content = memory_text(vocab, rng, topic)
        created = start + timedelta(minutes=float(rng.random() * 2 * 365 * 24 * 60))
        roll = rng.random()
        layer = "core" if roll < 0.1 else "working" if roll < 0.3 else "archive"
        expires = to_iso(created + timedelta(hours=48)) if layer == "working" else None
        forgotten = to_iso(created + timedelta(days=3)) if rng.random() < 0.01 else None
        shared = int(rng.random() < 0.002)
        memory_id = new_id()
        memories.append(
            (
                memory_id,
                agents[owner[i]],
                layer,
                "fact",
                content,
                content_hash(content),
                "scale-bench",
                float(round(rng.random(), 2)),
                to_iso(created),
                to_iso(created),
                expires,
                forgotten,
                shared,
            )
        )
        fts.append(index_text(content))
        contents.append(content)
    return memories, fts, contents


async def build(path: Path, size: int, *, vectors: bool, seed: int = 1) -> dict[str, float]:
    """Write `size` memories (and their vectors) into a new database at `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    rng = np.random.default_rng(seed)
    embedder = ScaleEmbedder()
    vocab = Vocabulary(embedder, rng)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    started = time.perf_counter()
    written = 0
    async with Database(partial) as db:
        while written < size:
            n = min(BATCH, size - written)
            memories, fts, contents = _rows(vocab, embedder, rng, n, start)
            blobs = [embedder.vector(c).tobytes() for c in contents] if vectors else []
            written += await db.transact(
                lambda conn, m=memories, f=fts, b=blobs: _insert(conn, m, f, b)
            )
            if written % 100_000 < BATCH:
                rate = written / (time.perf_counter() - started)
                print(f"  {written:,} memories ({rate:,.0f}/s)", file=sys.stderr)
        await db.transact(lambda conn: conn.execute("PRAGMA optimize"))
        await db.checkpoint()
    partial.rename(path)
    seconds = time.perf_counter() - started
    meta = {"size": written, "seconds": seconds, "vectors": vectors, "seed": seed}
    path.with_suffix(".json").write_text(json.dumps(meta))
    return meta


def _insert(conn, memories: list[tuple], fts: list[str], blobs: list[bytes]) -> int:
    """One batch in four statements, one transaction on the database thread."""
    first = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memories").fetchone()[0]
    conn.executemany(
        "INSERT OR IGNORE INTO memories (id, agent_id, layer, category, content,"
        " content_hash, source, importance, created_at, updated_at, expires_at,"
        " forgotten_at, shared) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        memories,
    )
    cursor = conn.execute("SELECT id, seq FROM memories WHERE seq > ?", (first,))
    seqs = {str(memory_id): int(seq) for memory_id, seq in cursor.fetchall()}
    kept = [i for i, row in enumerate(memories) if row[0] in seqs]
    conn.executemany(
        "INSERT INTO memories_fts(rowid, text) VALUES (?, ?)",
        [(seqs[memories[i][0]], fts[i]) for i in kept],
    )
    if blobs:
        now = to_iso(datetime.now(UTC))
        conn.executemany(
            "INSERT INTO memory_vectors (memory_id, model, dim, vector, updated_at)"
            " VALUES (?, ?, ?, ?, ?)",
            [(memories[i][0], MODEL, DIM, blobs[i], now) for i in kept],
        )
    return len(kept)


async def ensure(size: int, *, vectors: bool, seed: int = 1) -> Path:
    """The cached database of this size, built first if missing."""
    path = cache_path(size, vectors, seed)
    if not path.exists():
        print(f"building {path} ({size:,} memories, vectors={vectors})...", file=sys.stderr)
        meta = await build(path, size, vectors=vectors, seed=seed)
        print(f"  built in {meta['seconds']:.0f} s", file=sys.stderr)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--no-vectors", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(asyncio.run(ensure(args.size, vectors=not args.no_vectors, seed=args.seed)))


if __name__ == "__main__":
    main()
