#!/usr/bin/env python3
"""Model raw_data/transport.csv from raw_data/cities.csv (all values MODELLED, not timetables).

    python3 scripts/derive_transport.py

One row per ordered city pair and served mode. Service follows the infrastructure columns of
cities.csv (airports, 12306 stations, high-speed-rail flag) and distance; fares follow published
tariff rules. Every constant is documented below and in raw_data/SOURCES.md. Output is
byte-identical on every run (fixed formatting, sorted by city_list order).
"""
import csv, math, pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent

# --- distances -------------------------------------------------------------------------
ROAD_FACTOR = 1.30   # road km / great-circle km (typical detour factor for China's expressways)
RAIL_FACTOR = 1.25   # rail km / great-circle km

# --- 飞机 (flight) ---------------------------------------------------------------------
FLIGHT_MIN_KM = 300          # no scheduled jets between airports closer than this
FLIGHT_Y_RATE = 0.75         # CAAC economy (Y) benchmark fare, CNY per passenger-km (民航国内航线运价基准 0.75元/客公里)
FLIGHT_ROUTE_FACTOR = 1.10   # air route km / great-circle km
FLIGHT_DISCOUNT = 0.60       # typical sold discount off Y fare
FLIGHT_FEE = 50              # 民航发展基金 (airport construction fee), CNY per domestic trip
FLIGHT_KMH = 750             # block speed
FLIGHT_FIXED_MIN = 35        # taxi, climb and descent

# --- 高铁 (high-speed / EMU) -------------------------------------------------------------
HSR_RATE = 0.46              # CNY per km, second class on 300-350 km/h lines (e.g. 京沪 G: 553 CNY / 1318 km = 0.42; 0.46 incl. newer lines)
HSR_KMH = 230                # average scheduled speed incl. stops
HSR_MAX_KM = 2800            # longest through G/D services (e.g. 北京-昆明)

# --- 火车 (conventional train, hard seat) -------------------------------------------------
TRAIN_RATE = 0.11            # CNY per km: 硬座 base 0.05861 CNY/km plus 快速 surcharge and fees
                             # (e.g. 北京-上海 1463 km, 硬座 156.5 CNY = 0.107 CNY/km)
TRAIN_KMH = 70
TRAIN_MAX_KM = 4500

# --- 自驾 (self-drive, cost per person with 4 occupants) ---------------------------------
DRIVE_FUEL_PER_KM = 0.65     # 8 L/100 km at ~8 CNY/L
DRIVE_TOLL_PER_KM = 0.50     # expressway toll for a passenger car (most provinces 0.45-0.55 CNY/km)
DRIVE_OCCUPANTS = 4
DRIVE_KMH = 80
DRIVE_MAX_KM = 1500          # beyond this nobody plans a self-drive leg


def km(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def main():
    cities = list(csv.DictReader(open(ROOT / "raw_data/cities.csv", encoding="utf-8")))
    rows = []
    for a in cities:
        for b in cities:
            if a is b:
                continue
            d = km((float(a["lat"]), float(a["lng"])), (float(b["lat"]), float(b["lng"])))
            road, rail = d * ROAD_FACTOR, d * RAIL_FACTOR
            if a["airports"] and b["airports"] and d >= FLIGHT_MIN_KM:
                air = d * FLIGHT_ROUTE_FACTOR
                fare = round(air * FLIGHT_Y_RATE * FLIGHT_DISCOUNT / 10) * 10 + FLIGHT_FEE
                rows.append((a["name"], b["name"], d, "飞机", round(FLIGHT_FIXED_MIN + air / FLIGHT_KMH * 60), fare))
            if a["hsr"] == "1" and b["hsr"] == "1" and rail <= HSR_MAX_KM:
                rows.append((a["name"], b["name"], d, "高铁", round(rail / HSR_KMH * 60), max(round(rail * HSR_RATE), 20)))
            if a["stations"] and b["stations"] and rail <= TRAIN_MAX_KM:
                rows.append((a["name"], b["name"], d, "火车", round(rail / TRAIN_KMH * 60), max(round(rail * TRAIN_RATE), 10)))
            if road <= DRIVE_MAX_KM:
                cost = road * (DRIVE_FUEL_PER_KM + DRIVE_TOLL_PER_KM) / DRIVE_OCCUPANTS
                rows.append((a["name"], b["name"], d, "自驾", round(road / DRIVE_KMH * 60), max(round(cost), 5)))
    tmp = ROOT / "raw_data/transport.csv.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["from", "to", "distance_km", "mode", "minutes", "fare"])
        for r in rows:
            w.writerow([r[0], r[1], f"{r[2]:.0f}", r[3], r[4], r[5]])
    tmp.replace(ROOT / "raw_data/transport.csv")
    print(f"wrote raw_data/transport.csv: {len(rows)} rows")


if __name__ == "__main__":
    main()
