"""A store of many memories of realistic variety for the lifecycle at scale (issue 16).

Several agents of uneven size; working memories of the last three days (expired or about to),
core memories over six months, archive memories over a year (most past the archive TTL, so the
first run compresses them by month). Texts come from templates in English, Chinese and Japanese
with slots from small vocabularies and numbers, so most are distinct and some are alike by
chance. A known share of core memories gets a planted near-duplicate (a filler word or a changed
detail, Dice >= 0.86 with its original, never the same content hash), which the run should merge.
With `dim`, every non-archive memory gets a vector near its template's and slot's direction; a
planted near-duplicate's vector is its original's with a little noise (cosine ~0.97).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from cortex_mcp.engine.lifecycle.similarity import dice, shingles
from cortex_mcp.models import to_iso

WHO = [
    "The user",
    "Harry",
    "Mei",
    "Ken",
    "Aiko",
    "the team",
    "my sister",
    "our landlord",
    "Dr. Sato",
]
THINGS = [
    "green tea", "oat milk", "window seats", "paper notebooks", "dark mode", "early flights",
    "mechanical keyboards", "spicy ramen", "jazz playlists", "standing desks", "e-books",
]  # fmt: skip
PROJECTS = ["router migration", "tax return", "Kyoto trip", "home server", "novel draft",
            "garden shed", "Rust course", "solar panels", "wedding speech", "photo archive"]  # fmt: skip
PLACES = ["Shinagawa", "Yokohama", "Kyoto station", "the office", "Osaka", "the gym", "Ikea"]
FOODS = ["peanuts", "shellfish", "gluten", "kiwi", "sesame", "lactose"]
TASKS = ["renew the passport", "call the dentist", "back up the NAS", "pay the water bill",
         "water the plants", "book the ryokan", "update the resume", "return the library books"]  # fmt: skip
FACTS = ["the VPS reboots every Sunday at 4am", "the bike needs new brake pads",
         "the lease ends in March", "the cat gets her shots in May",
         "IPv6 breaks the old printer", "the bank changed its transfer fee"]  # fmt: skip
ZH_WHO = ["用户", "小明", "妈妈", "老王", "同事李华"]
ZH_DRINK = ["乌龙茶", "美式咖啡", "豆浆", "绿茶", "柠檬水"]
ZH_PLACE = ["家里", "公司楼下", "星巴克", "图书馆", "机场"]
ZH_TIME = ["早上", "下午三点", "周末", "加班的时候", "下雨天"]
JA_WHO = ["ユーザー", "田中さん", "母", "佐藤先生"]
JA_PLACE = ["渋谷", "横浜", "京都", "会社"]
JA_EVENT = ["歯医者の予約", "引っ越し", "面接", "同窓会", "健康診断"]
FILLERS = ["really", "also", "still", "now", "definitely", "usually"]
DETAIL = """apple anchor basket beacon bridge butter candle canyon carpet castle cedar chalk cherry
    cipher circle cloud cobalt copper coral cotton crystal dagger delta desert diamond dragon
    eagle ember engine falcon feather fern fiddle forest fossil garnet ginger glacier granite
    harbor hazel helmet hollow honey island ivory jasper jungle kettle lagoon lantern lemon
    lilac linen lotus magnet maple marble meadow mirror moss nectar needle nickel oasis ocean
    olive onyx orbit orchid oyster paddle palace pepper pebble pigeon pillow pine planet
    plum prism quartz quill rabbit radar raven reef ribbon river rocket saddle saffron salmon
    satin scarlet shadow silver sparrow spruce star stone summit sunset tiger timber topaz
    tulip tunnel velvet violet walnut willow winter yarrow zebra zenith""".split()
ZH_DETAIL = "苹果 桥梁 蜡烛 峡谷 城堡 樱桃 云朵 钻石 森林 琥珀 海港 岛屿 灯笼 柠檬 枫叶 草原 镜子 橄榄 星球 河流 银河".split()

TEMPLATES = [
    ("preference", "{who} prefers {thing} over {thing2} when working on the {project}"),
    ("decision", "{who} decided to move the {project} deadline to {date} after talking to {who2}"),
    ("fact", "{who} bought {thing} for {price} yen at {place} on {date}"),
    ("fact", "For the {project}: {fact}, noted on {date} (ticket {num})"),
    ("identity", "{who} is allergic to {food} and carries medicine since {year}"),
    ("context", "Meeting with {who2} about the {project} on {date} at {place}, room {num}"),
    ("todo", "Remember to {task} before {date}; {who} will check on {date2}"),
    ("insight", "{who} learned that {fact} while sorting out the {project}"),
    ("skill", "{who} can configure the {project} setup in about {num} minutes now"),
    ("preference", "{zwho}喜欢在{zplace}喝{zdrink}，尤其是{ztime}，已经{num}年了"),
    ("decision", "{zwho}决定{date}之前完成{project}的第{num}部分"),
    ("context", "{jwho}は{date}に{jplace}で{jevent}がある（{num}番）"),
]


@dataclass
class Dataset:
    memories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by agent
    planted: list[tuple[str, str]] = field(default_factory=list)  # (original, near-duplicate)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return sum(len(rows) for rows in self.memories.values())


def _slots(rng: random.Random, now: datetime) -> dict[str, Any]:
    day = now - timedelta(days=rng.randrange(400))
    return {
        "who": rng.choice(WHO), "who2": rng.choice(WHO), "thing": rng.choice(THINGS),
        "thing2": rng.choice(THINGS), "project": rng.choice(PROJECTS), "place": rng.choice(PLACES),
        "food": rng.choice(FOODS), "task": rng.choice(TASKS), "fact": rng.choice(FACTS),
        "date": day.date().isoformat(),
        "date2": (day + timedelta(days=rng.randrange(1, 30))).date().isoformat(),
        "price": rng.randrange(100, 90000), "num": rng.randrange(1, 5000),
        "year": rng.randrange(1990, 2026), "zwho": rng.choice(ZH_WHO),
        "zdrink": rng.choice(ZH_DRINK), "zplace": rng.choice(ZH_PLACE),
        "ztime": rng.choice(ZH_TIME), "jwho": rng.choice(JA_WHO),
        "jplace": rng.choice(JA_PLACE), "jevent": rng.choice(JA_EVENT),
    }  # fmt: skip


def _detail(rng: random.Random, pattern: str) -> str:
    """A few words of its own, as real notes have: alike templates stay distinct texts."""
    if "{zwho}" in pattern or "{jwho}" in pattern:
        return "，" + "".join(rng.sample(ZH_DETAIL, 3))
    return " (" + " ".join(rng.sample(DETAIL, 3)) + ")"


def near_duplicate(text: str, rng: random.Random) -> str | None:
    """A rewording the lifecycle should merge: a filler word or an added trailing detail."""
    words = text.split(" ")
    for _ in range(6):
        if len(words) > 4 and rng.random() < 0.7:
            at = rng.randrange(1, len(words) - 1)
            variant = " ".join([*words[:at], rng.choice(FILLERS), *words[at:]])
        else:
            variant = text + rng.choice(["（确认）", " again", " as well", "（再確認）"])
        if dice(shingles(text), shingles(variant)) >= 0.86:
            return variant
    return None


def _row(
    agent: str, layer: str, category: str, content: str, created: datetime, now: datetime,
    rng: random.Random,
) -> dict[str, Any]:  # fmt: skip
    accessed = rng.random() < 0.4
    updated = created if layer != "archive" else created + timedelta(days=rng.uniform(0, 30))
    updated = min(updated, now)
    return {
        "id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "agent_id": agent,
        "layer": layer,
        "category": category,
        "content": content,
        "source": "bench",
        "importance": round(rng.uniform(0.2, 0.95), 2),
        "confidence": 0.8,
        "decay_score": 1.0,
        "access_count": int(rng.expovariate(0.7)) if accessed else 0,
        "last_accessed": to_iso(min(now, created + timedelta(days=rng.uniform(0, 60))))
        if accessed
        else None,
        "created_at": to_iso(created),
        "updated_at": to_iso(updated),
        "expires_at": to_iso(created + timedelta(hours=48)) if layer == "working" else None,
        "superseded_by": None,
        "forgotten_at": None,
        "metadata": {"high_signal": True} if category in ("identity", "preference") else {},
        "shared": False,
    }


def build(
    n: int, now: datetime, *, agents: int = 5, duplicates: float = 0.05, dim: int = 0, seed: int = 7
) -> Dataset:
    """`n` memories (planted near-duplicates included) over `agents` agents."""
    rng = random.Random(seed)
    shares = [0.5 / (2**i) for i in range(agents)]
    names = [f"agent-{i}" for i in range(agents)]
    data = Dataset(memories={name: [] for name in names})
    directions = _directions(dim, rng) if dim else {}
    noise = np.random.default_rng(seed)
    while data.count < n:
        agent = rng.choices(names, weights=shares)[0]
        template = rng.randrange(len(TEMPLATES))
        category, pattern = TEMPLATES[template]
        slots = _slots(rng, now)
        content = pattern.format(**slots) + _detail(rng, pattern)
        layer = rng.choices(["working", "core", "archive"], weights=[10, 25, 65])[0]
        age = {"working": 3.0, "core": 180.0, "archive": 365.0}[layer]
        created = now - timedelta(days=rng.uniform(0.1, age))
        row = _row(agent, layer, category, content, created, now, rng)
        data.memories[agent].append(row)
        if dim and layer != "archive":
            data.vectors[row["id"]] = _vector(directions, template, slots, noise)
        if layer == "core" and rng.random() < duplicates and data.count < n:
            variant = near_duplicate(content, rng)
            if variant is not None:
                later = min(now, created + timedelta(days=rng.uniform(0, 30)))
                twin = _row(agent, layer, category, variant, later, now, rng)
                data.memories[agent].append(twin)
                data.planted.append((row["id"], twin["id"]))
                if dim:
                    jitter = noise.normal(0, 0.01, dim).astype(np.float32)
                    data.vectors[twin["id"]] = _unit(data.vectors[row["id"]] + jitter)
    return data


def _directions(dim: int, rng: random.Random) -> dict[str, np.ndarray]:
    generator = np.random.default_rng(rng.randrange(2**32))
    words = [*PROJECTS, *THINGS, *WHO, *TASKS, *FACTS, *[str(t) for t in range(len(TEMPLATES))]]
    return {w: generator.standard_normal(dim).astype(np.float32) for w in words}


def _vector(
    directions: dict[str, np.ndarray],
    template: int,
    slots: dict[str, Any],
    noise: np.random.Generator,
) -> np.ndarray:
    """Alike texts point alike: the template's direction, its slots', and noise of its own."""
    parts = [directions[str(template)] * 1.5]
    parts += [directions[slots[k]] for k in ("project", "thing", "who", "task", "fact")]
    own = noise.normal(0, 1.2, len(parts[0])).astype(np.float32)
    return _unit(np.sum(parts, axis=0) + own)


def _unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)
