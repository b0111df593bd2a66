#!/usr/bin/env python3
"""Find attraction rows whose coordinates look wrong, and 5A sites the inventory lacks.

usage: scripts/check_coords.py [--km 5] [--far 150] [--five-a] [--ref DIR]

Reads raw_data/attractions/*.csv, raw_data/cities.csv and raw_data/aliases.csv, and compares
them with the cross-check reference data (default $GTB_SHARED/reference_data, else
../shared/reference_data next to the repository). It only *reports*: corrected values written
into raw_data/ must come from public knowledge of the place, never from these reference rows.

Reports:
* rows more than --km from the same place in ChinaTravel (10 cities; GCJ-02, converted to
  WGS-84 here) or from a reliable point of the 5A list (LetMeTryAI coordinates are rough; the
  rule of `reliable` below is the one tests/poi.rs applies),
* rows more than --far km from their city's centre whose nearest county seat (cpca) lies in
  another prefecture (a row filed under the wrong city; far rows of a large prefecture such as
  日喀则 or 甘孜 are expected),
* with --all: also the 5A comparisons against unreliable points or reference errors already
  reviewed, and the far rows that are in their prefecture (or listed in FAR_BUT_HOME), tagged,
* with --five-a: 5A sites of a destination city that no row or alias resolves.
Reliable 5A points that tests/poi.rs lists in REFERENCE_ERRORS were checked against public
knowledge of the site (the reference is wrong there) and are not reported again.
"""
import argparse
import csv
import math
import os
import pathlib
import re
import sys
import unicodedata

ROOT = pathlib.Path(__file__).resolve().parent.parent
RAW = ROOT / "raw_data"

CHINATRAVEL_CITIES = {
    "beijing": "北京市", "shanghai": "上海市", "nanjing": "南京市", "suzhou": "苏州市",
    "hangzhou": "杭州市", "shenzhen": "深圳市", "chengdu": "成都市", "wuhan": "武汉市",
    "guangzhou": "广州市", "chongqing": "重庆市",
}

# generic tails of official scenic-area names; the Rust resolver uses the same list
# (src/validate/names.rs, GENERIC_SUFFIXES)
GENERIC_SUFFIXES = [
    "世界文化遗产旅游区", "世界遗产旅游区", "文化旅游景区", "生态旅游景区", "旅游度假区", "文化旅游区",
    "生态旅游区", "风景名胜区", "历史文化街区", "国家森林公园", "国家地质公园", "国家湿地公园",
    "风景旅游区", "旅游景区", "风景区", "旅游区", "景区", "景点",
]


# reference rows that name another place than our row of the same name (not coordinate errors)
OTHER_PLACE = {
    ("重庆市", "慈云寺"): "ChinaTravel's is another 慈云寺",
    ("成都市", "人民公园"): "ChinaTravel's is another 人民公园",
    ("上海市", "滨江大道"): "ChinaTravel's is another 滨江大道, not the 陆家嘴 riverside",
    ("上海市", "上海博物馆"): "ChinaTravel's is the 东馆 branch in 浦东",
    ("杭州市", "浙江省博物馆"): "ChinaTravel's is the 之江 branch",
    ("广州市", "珠江夜游"): "ChinaTravel's pier is 海心沙, ours 天字码头",
}
# rows far from their city's centre whose nearest county seat is across a border, each checked:
# the place does belong to the city it is filed under
FAR_BUT_HOME = {
    ("海西蒙古族藏族自治州", "沱沱河"): "唐古拉山镇, administered by 格尔木",
    ("海西蒙古族藏族自治州", "俄博梁雅丹"): "茫崖 (冷湖), 海西",
    ("海西蒙古族藏族自治州", "冷湖火星营地"): "茫崖 (冷湖), 海西",
    ("海西蒙古族藏族自治州", "冷湖石油基地遗址"): "茫崖 (冷湖), 海西",
    ("海西蒙古族藏族自治州", "南八仙雅丹"): "茫崖/大柴旦, 海西",
    ("阿坝藏族羌族自治州", "格尔底寺"): "阿坝县, 阿坝州",
    ("鄂尔多斯市", "萨拉乌苏遗址"): "乌审旗, 鄂尔多斯",
    ("林芝市", "米堆冰川"): "波密县, 林芝",
    ("甘南藏族自治州", "阿万仓湿地"): "玛曲县, 甘南",
    ("承德市", "御道口草原森林风景区"): "围场县, 承德",
    ("延边朝鲜族自治州", "长白山天池"): "reached from 二道白河 (安图县, 延边) on the north slope",
    ("延边朝鲜族自治州", "长白瀑布"): "north slope, reached from 二道白河 (安图县, 延边)",
}
# 5A entries that are no site name of ours (a whole district, a list typo) or span several rows
NOT_A_SITE = {"神农架林区", "噶尔老城景区", "普拉措森林公园景区", "吴中太湖旅游区"}


def ref_dir(arg):
    if arg:
        return pathlib.Path(arg)
    shared = os.environ.get("GTB_SHARED")
    base = pathlib.Path(shared) if shared else ROOT.parent / "shared"
    return base / "reference_data"


def normalize(s):
    s = unicodedata.normalize("NFKC", s).lower()
    while True:
        m = re.match(r"^(.+)\([^()]*\)\s*$", s)
        if not m:
            break
        s = m.group(1)
    return re.sub(r"[\s·•\-－—]", "", s)


def core(s, city_words):
    """Official long name -> its core (the rule of validate::names::core_name): generic tails
    off; then, only if a tail was removed, leading place names while 3+ characters remain."""
    def strip_suffixes(s):
        while True:
            for suf in GENERIC_SUFFIXES:
                if s.endswith(suf) and len(s) - len(suf) >= 2:
                    s = s[: -len(suf)]
                    break
            else:
                return s
    n = normalize(s)
    s = strip_suffixes(n)
    if s == n:
        return s
    while True:
        w = next((w for w in city_words if s.startswith(w)), None)
        if w is None or len(s) - len(w) < 3:
            return s
        s = strip_suffixes(s[len(w):])


def gcj_to_wgs(lat, lng):
    """Approximate inverse of the GCJ-02 offset (one iteration, ~1 m)."""
    a, ee = 6378245.0, 0.00669342162296594323

    def tlat(x, y):
        r = -100 + 2 * x + 3 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * math.sqrt(abs(x))
        r += (20 * math.sin(6 * x * math.pi) + 20 * math.sin(2 * x * math.pi)) * 2 / 3
        r += (20 * math.sin(y * math.pi) + 40 * math.sin(y / 3 * math.pi)) * 2 / 3
        r += (160 * math.sin(y / 12 * math.pi) + 320 * math.sin(y * math.pi / 30)) * 2 / 3
        return r

    def tlng(x, y):
        r = 300 + x + 2 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * math.sqrt(abs(x))
        r += (20 * math.sin(6 * x * math.pi) + 20 * math.sin(2 * x * math.pi)) * 2 / 3
        r += (20 * math.sin(x * math.pi) + 40 * math.sin(x / 3 * math.pi)) * 2 / 3
        r += (150 * math.sin(x / 12 * math.pi) + 300 * math.sin(x / 30 * math.pi)) * 2 / 3
        return r

    dlat = tlat(lng - 105, lat - 35)
    dlng = tlng(lng - 105, lat - 35)
    rad = lat / 180 * math.pi
    magic = 1 - ee * math.sin(rad) ** 2
    sq = math.sqrt(magic)
    dlat = dlat * 180 / ((a * (1 - ee)) / (magic * sq) * math.pi)
    dlng = dlng * 180 / (a / sq * math.cos(rad) * math.pi)
    return lat - dlat, lng - dlng


def km(a, b):
    (la1, lo1), (la2, lo2) = a, b
    p1, p2 = math.radians(la1), math.radians(la2)
    h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lo2 - lo1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def load_inventory():
    rows = []
    for p in sorted((RAW / "attractions").glob("*.csv")):
        with open(p, encoding="utf-8", newline="") as f:
            for i, r in enumerate(csv.DictReader(f), start=2):
                r["_where"] = f"{p.relative_to(ROOT)}:{i}"
                r["_pos"] = (float(r["lat"]), float(r["lng"]))
                rows.append(r)
    return rows


def load_aliases():
    p = RAW / "aliases.csv"
    out = {}
    if p.exists():
        with open(p, encoding="utf-8", newline="") as f:
            for r in csv.DictReader(f):
                out.setdefault(r["city"], {})[normalize(r["alias"])] = r["name"]
    return out


class Resolver:
    """The rules of src/validate/names.rs, enough to pair reference names with rows."""

    def __init__(self, rows, aliases, cities):
        self.by_city = {}
        for r in rows:
            self.by_city.setdefault(r["city"], {})[normalize(r["name"])] = r
        self.aliases = aliases
        self.cities = cities

    def words(self, city):
        c = self.cities[city]
        short = re.sub(r"(市|县|地区|林区|自治州|.族.*自治州)$", "", city)
        prov = re.sub(r"(省|市|自治区|壮族自治区|回族自治区|维吾尔自治区)$", "", c["province"])
        return sorted({city, short, c["province"], prov}, key=len, reverse=True)

    def resolve(self, city, name):
        inv = self.by_city.get(city, {})
        n = normalize(name)
        if n in inv:
            return inv[n], "exact"
        k = core(name, self.words(city))
        canon = self.aliases.get(city, {}).get(n) or self.aliases.get(city, {}).get(k)
        if canon and normalize(canon) in inv:
            return inv[normalize(canon)], "alias"
        if k in inv:
            return inv[k], "core"
        best = None
        for key, r in inv.items():
            kc = core(key, self.words(city))
            if len(kc) >= 2 and (kc in k or k in kc):
                ratio = min(len(kc), len(k)) / max(len(kc), len(k))
                if ratio >= 0.3 and (best is None or ratio > best[0]):
                    best = (ratio, r)
        if best:
            return best[1], f"contains {best[0]:.2f}"
        return None, None


def chinatravel_pairs(ref, resolver):
    for eng, city in CHINATRAVEL_CITIES.items():
        p = ref / "chinatravel_db" / "attractions" / f"{eng}.csv"
        if not p.exists():
            continue
        with open(p, encoding="utf-8", newline="") as f:
            for r in csv.DictReader(f):
                row, how = resolver.resolve(city, r["Name"])
                if row and how in ("exact", "alias", "core") and (city, row["name"]) not in OTHER_PLACE:
                    pos = gcj_to_wgs(float(r["Latitude"]), float(r["Longitude"]))
                    yield row, f"chinatravel {r['Name']}", pos


def five_a(ref):
    p = ref / "scenic_5a" / "5a_merged_with_coords.csv"
    with open(p, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def load_seats(ref):
    """cpca county, prefecture and province rows with a position."""
    with open(ref / "cpca_adcodes" / "adcodes_hierarchy.csv", encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["name"] != "市辖区" and r["lat"]]
    for r in rows:
        r["_pos"] = (float(r["lat"]), float(r["lng"]))
    return rows


def region(seat):
    """The prefecture a cpca row belongs to (the municipality for 北京, 重庆, ...)."""
    if seat["level"] == "province" or seat["prefecture"] in ("市辖区", "县"):
        return seat["province"]
    return seat["name"] if seat["level"] == "prefecture" else seat["prefecture"]


def prefecture_of(seats):
    """county or prefecture name -> its prefecture name (cpca hierarchy)."""
    out = {}
    for r in seats:
        if r["level"] == "county":
            out.setdefault(r["name"], region(r))
        else:
            out[r["name"]] = region(r)
    return out


def nearest(pos, seats):
    return min(seats, key=lambda s: km(pos, s["_pos"]))


def reliable(entry, address, seats):
    """The 5A point, when it can be trusted (the rule of tests/poi.rs `reliable`): a sound merge
    (match_score >= 0.6 and LetMeTryAI's name holds the site's core name), a second source that
    agrees (the county 5a-express's address names is the county whose seat is nearest, or its
    seat is within 25 km), and no placeholder (more than 4 km from every county or prefecture
    seat)."""
    if not entry["lat"] or float(entry["match_score"] or 0) < 0.6:
        return None
    if core(entry["name"], []) not in normalize(entry["coord_source_name"]):
        return None
    pos = (float(entry["lat"]), float(entry["lng"]))
    counties = [s for s in seats if s["level"] == "county"]
    named = [s for s in counties if s["province"] == entry["province"] and s["name"] in address]
    if not named:
        return None
    named = max(named, key=lambda s: len(s["name"]))
    if nearest(pos, counties) is not named and km(pos, named["_pos"]) > 25.0:
        return None
    return pos if km(pos, nearest(pos, seats)["_pos"]) > 4.0 else None


def destination_cities_of(five_a_city, cities, pref):
    """Our destination cities in the 5A entry's city: (the city itself when it is one of ours,
    every destination inside it, e.g. 峨眉山市 in 乐山市)."""
    base = re.sub(r"(市|州|地区)$", "", five_a_city)
    same = [c for c in cities if c == five_a_city or c.startswith(base)]
    inside = [c for c in cities if (pref.get(cities[c].get("cpca_name") or c) or "").startswith(base)]
    return sorted(set(same)), sorted(set(same + inside))


def reviewed_reference_errors():
    """5A names of reliable reference points known to be wrong: the REFERENCE_ERRORS list of
    tests/poi.rs (one list, with a reason each, which the test keeps honest)."""
    text = (ROOT / "tests" / "poi.rs").read_text(encoding="utf-8")
    m = re.search(r"const REFERENCE_ERRORS[^=]*=\s*\[(.*?)\n\];", text, re.S)
    return set(re.findall(r'\(\s*"([^"]+)",', m.group(1))) if m else set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--km", type=float, default=5.0)
    ap.add_argument("--far", type=float, default=150.0)
    ap.add_argument("--five-a", action="store_true")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--ref")
    a = ap.parse_args()
    ref = ref_dir(a.ref)
    if not ref.exists():
        sys.exit(f"reference data not found at {ref} (set GTB_SHARED)")
    cities = {r["name"]: r for r in csv.DictReader(open(RAW / "cities.csv", encoding="utf-8"))}
    for r in csv.DictReader(open(RAW / "city_list.csv", encoding="utf-8")):
        cities[r["name"]]["cpca_name"] = r["cpca_name"]
    rows = load_inventory()
    resolver = Resolver(rows, load_aliases(), cities)
    suspects = []
    for row, what, pos in chinatravel_pairs(ref, resolver):
        d = km(row["_pos"], pos)
        if d > a.km:
            suspects.append((d, row, what))
    seats = load_seats(ref)
    pref = prefecture_of(seats)
    known_wrong = reviewed_reference_errors()
    with open(ref / "scenic_5a" / "5a_express_scenes.csv", encoding="utf-8", newline="") as f:
        addresses = {r["id"]: r["address"] for r in csv.DictReader(f)}
    missing = []
    for r in five_a(ref):
        same, dests = destination_cities_of(r["city"], cities, pref)
        found = [(c, *resolver.resolve(c, r["name"])) for c in dests]
        found = [f for f in found if f[1]]
        if not found:
            # missing only where the 5A city is a destination itself (a county-level
            # destination such as 凤凰县 need not hold every 5A site of its prefecture)
            if same and r["name"] not in NOT_A_SITE:
                missing.append((r["city"], r["name"], dests))
            continue
        pos = reliable(r, addresses.get(r["id"], ""), seats)
        if pos is None and not (a.all and r["lat"]):
            continue
        c, row, how = found[0]
        d = km(row["_pos"], pos or (float(r["lat"]), float(r["lng"])))
        if r["name"] in known_wrong and not a.all:
            continue
        if d > a.km:
            tag = "" if pos else ", unreliable point"
            tag += ", reference wrong: tests/poi.rs" if r["name"] in known_wrong else ""
            suspects.append((d, row, f"5A {r['name']} ({how}, score {r['match_score']}{tag})"))
    for row in rows:
        c = cities.get(row["city"])
        if c:
            d = km(row["_pos"], (float(c["lat"]), float(c["lng"])))
            if d <= a.far:
                continue
            seat = nearest(row["_pos"], [s for s in seats if s["level"] == "county"])
            ours = pref.get(c.get("cpca_name") or row["city"])
            home = FAR_BUT_HOME.get((row["city"], row["name"]))
            if region(seat) != ours and not home:
                where = f"nearest county seat {seat['name']} is in {region(seat)}, not {ours}"
            elif a.all:
                where = home or f"in {ours} (nearest county seat {seat['name']})"
            else:
                continue
            suspects.append((d, row, f"{d:.0f} km from the centre of {row['city']}; {where}"))
    seen = set()
    for d, row, what in sorted(suspects, key=lambda s: -s[0]):
        key = (row["_where"], what)
        if key in seen:
            continue
        seen.add(key)
        print(f"{d:7.1f} km  {row['_where']}  {row['city']} {row['name']}  <- {what}")
    if a.five_a:
        for city, name, dests in missing:
            print(f"5A missing: {city} {name} (looked in {'/'.join(dests)})")
    print(f"{len(seen)} suspect row(s), {len(missing)} unresolved 5A site(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
