#!/usr/bin/env python3
"""Quick structural check of one region's attractions/food/hotels files (used while writing data).
Coordinates against reference data: scripts/check_coords.py.

usage: scripts/check_raw_part.py PART   (e.g. north, yangtze_a)
"""
import csv, re, sys, pathlib
root = pathlib.Path(__file__).resolve().parent.parent / "raw_data"
part = sys.argv[1]
cities = {r["name"]: r for r in csv.DictReader(open(root / "city_list.csv", encoding="utf-8"))}
ATTR_CATS = set("""博物馆 公园 自然风光 4A景区 5A景区 3A景区 寺庙 人文景观 游乐园 文物古迹 特色景点 主题公园
湿地公园 湿地 大峡谷 红色景点 湖泊河流 名山丘陵 名山大川 广场 森林公园 城市公园 生态公园
滨海公园 滨江公园 海滨沙滩 海滨浴场 海滩 观景点 纪念馆 纪念公园 名人故居 动物园 植物园
热带植物园 冰川瀑布 古镇 古镇古村 古村落 古建筑 温泉 步道 道观 天主教堂 教堂 清真寺
森林草原 特色街区 儿童乐园 园林 户外拓展 烈士陵园 购物相关场所 创意园区 溶洞 漂流""".split())
HOTEL = set("舒适型 经济型 高档型 民宿 商务酒店 豪华型 快捷酒店 旅馆 客栈 度假酒店 电竞酒店 公寓式酒店 主题酒店".split())
HM = r"([01]\d|2[0-4]):[0-5]\d-([01]\d|2[0-4]):[0-5]\d"
RULE = re.compile(r"^(\d\d-\d\d~\d\d-\d\d )?(w[1-7](-[1-7]|(,[1-7])*) )?" + HM + "(," + HM + ")*$")
errors = []
def rows(kind):
    p = root / kind / f"{part}.csv"
    if not p.exists():
        errors.append(f"{p}: missing"); return []
    out = []
    with open(p, encoding="utf-8", newline="") as f:
        r = csv.DictReader(f)
        for i, row in enumerate(r, start=2):
            if None in row or any(v is None for v in row.values()):
                errors.append(f"{p}:{i}: wrong number of fields")
                continue
            out.append((i, p, row))
    return out
count = {}
seen = set()
attractions = rows("attractions")
names = {(r["city"], r["name"]) for _, _, r in attractions}
for i, p, r in attractions:
    parent = r.get("parent") or ""
    if parent and (r["city"], parent) not in names: errors.append(f"{p}:{i}: unknown parent {parent!r}")
    if parent == r["name"]: errors.append(f"{p}:{i}: {parent!r} is its own parent")
    c = r["city"]
    if c not in cities: errors.append(f"{p}:{i}: unknown city {c!r}")
    if r["category"] not in ATTR_CATS: errors.append(f"{p}:{i}: category {r['category']!r} not in vocabulary")
    try:
        lat, lng = float(r["lat"]), float(r["lng"])
        assert 18 <= lat <= 54 and 73 <= lng <= 135
    except Exception: errors.append(f"{p}:{i}: bad lat/lng")
    h = r["hours"]
    if h not in ("always", "unknown") and not all(RULE.match(x) for x in h.split(";")):
        errors.append(f"{p}:{i}: bad hours {h!r}")
    if not r["ticket"].isdigit(): errors.append(f"{p}:{i}: ticket must be an integer")
    if not r["popularity"].isdigit() or not 1 <= int(r["popularity"]) <= 100: errors.append(f"{p}:{i}: popularity 1..100")
    if (c, r["name"]) in seen: errors.append(f"{p}:{i}: duplicate {r['name']}")
    seen.add((c, r["name"]))
    count.setdefault(c, [0, 0, 0])[0] += 1
for i, p, r in rows("food"):
    c = r["city"]
    if c not in cities: errors.append(f"{p}:{i}: unknown city {c!r}")
    if r["kind"] not in ("cuisine", "dish", "restaurant"): errors.append(f"{p}:{i}: bad kind")
    if not r["price"].isdigit(): errors.append(f"{p}:{i}: price must be an integer")
    count.setdefault(c, [0, 0, 0])[1] += 1
for i, p, r in rows("hotels"):
    c = r["city"]
    if r["category"] not in HOTEL: errors.append(f"{p}:{i}: bad hotel category {r['category']!r}")
    if not (r["price_low"].isdigit() and r["price_high"].isdigit() and int(r["price_low"]) <= int(r["price_high"])):
        errors.append(f"{p}:{i}: bad price band")
    count.setdefault(c, [0, 0, 0])[2] += 1
for c, (a, f, h) in sorted(count.items()):
    need = 50 if cities.get(c, {}).get("tier") == "1" else 20
    flag = "" if a >= need and f >= 15 and h >= 3 else "   <-- below minimum"
    print(f"{c}: attractions {a} (need {need}), food {f} (need 15), hotels {h}{flag}")
for e in errors: print("ERROR", e)
sys.exit(1 if errors else 0)
