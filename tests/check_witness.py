#!/usr/bin/env python3
"""Independent checker of witness plans (stdlib only), from the task file alone.

    python3 tests/check_witness.py TASKS.jsonl PLANS.jsonl [--poi all_poi_by_city.json] [--require-all]

It shares no code with gtb: it re-reads the release's plan format (the agent prompt's JSON)
and checks, for every line with a plan, the witness contract of docs/PLANS.md:

* structure: segment and activity types, required fields, HH:MM times running forward,
  participants ("All" or the task's members, never empty, never on hotels), nobody in two
  overlapping activities, each member's day running forward, a hotel as the last activity of
  every day but the last, a transfer between any two places (and first thing after arriving
  in a city), avg_cost on food, hotel and intercity transport;
* dates: as many days as the task's date phrase, numbered 1.., dated from the task's `time`;
* cities: out from the departure city and back, blocks only in the task's cities, in order,
  each intercity trip leaving the city the group is in;
* hard constraints of every member, after the compromises the line declares (only members
  marked compromisable, at most two each, paths relative to `preference`): budget (intercity,
  hotels and the member's own meals), max_poi_per_day and max_active_hours (attraction and
  transfer minutes), transport must (at least one trip by one of its modes) and reject (no
  trip by one), must_visit items appearing in a location the member visits in that city and
  no reject_visit item appearing in one; must_eat: a meal of theirs in that city names the
  item, or (with --poi) resolves in the POI table to a venue the release scores the item at;
  reject_eat: no meal of theirs names it, nor (with --poi) is scored as it.
* with --poi (the release's all_poi_by_city.json layout, as `gtb poi-table` writes it):
  every attraction resolved in the table is inside its opening hours on the plan's date.

Names resolve as the release's evaluator resolves them: per city, the exact name, else the
stored name that contains the location with the best length ratio (the first on ties).

Exit status 1 and one line per problem when anything fails. A line without a plan is
reported (an error with --require-all).
"""
import datetime
import json
import re
import sys

PHRASE_DAYS = {"两天一夜": 2, "三天两夜": 3, "四天三夜": 4, "五天四夜": 5, "六天五夜": 6, "七天六夜": 7}
INTERCITY_MODES = {"高铁", "飞机", "火车", "自驾"}
INTRACITY_MODES = {"公共交通", "骑车", "步行", "自驾", "打车", "地铁"}
ACTIVITY_FIELDS = {
    "attraction": ("location", "start_time", "end_time", "participants"),
    "food": ("location", "start_time", "end_time", "participants", "avg_cost"),
    "hotel": ("location", "start_time", "end_time", "avg_cost"),
    "intracity_transport": ("transport_mode", "from", "to", "start_time", "end_time", "participants"),
    "rest": ("start_time", "end_time", "participants"),
}
TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def minutes(s):
    m = TIME.match(s) if isinstance(s, str) else None
    return int(m.group(1)) * 60 + int(m.group(2)) if m else None


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0


def load_poi(path):
    """The release's POI table: city -> (name -> POI, names in file order)."""
    table = json.load(open(path, encoding="utf-8"))
    out = {}
    for city, pois in table.items():
        by_name = {}
        for p in pois:
            by_name[p["name"]] = p  # a later duplicate wins, as in the release
        out[city] = (by_name, [p["name"] for p in pois])
    return out


def resolve(poi, name, city):
    """Exact name, else the stored name containing it with the best length ratio."""
    if poi is None or city not in poi or not name:
        return None
    by_name, names = poi[city]
    if name in by_name:
        return by_name[name]
    best, ratio = None, 0.0
    for n in names:
        if name in n and len(name) / len(n) > ratio:
            best, ratio = by_name[n], len(name) / len(n)
    return best


def poi_category(poi, name, city):
    """The resolved food category (the release's fallbacks), or None when nothing resolves."""
    p = resolve(poi, name, city)
    if p is None:
        return None
    c = p.get("custom_category") or ""
    return "中餐" if c in ("", "食堂", "米粉") else c


def food_terms(food, loc, category):
    """The release's rule for one restaurant: the first list item its name contains decides;
    else the category (must and reject both, prefer / avoid only when neither). A location the
    table does not resolve scores nothing."""
    if category is None:
        return []
    lists = [("must_eat", food.get("must_eat", [])), ("reject_eat", food.get("reject_eat", [])),
             ("prefer_eat", food.get("prefer_eat", [])), ("avoid_eat", food.get("avoid_eat", []))]
    for field, items in lists:
        for x in items:
            if x in loc:
                return [(field, x)]
    out = [(field, category) for field, items in lists[:2] if category in items]
    if not out:
        for field, items in lists[2:]:
            if category in items:
                return [(field, category)]
    return out


def open_then(poi, city, act, date):
    """Whether an attraction resolved in the table is open for the whole visit on `date` (the
    first rule whose date range holds decides; a weekday outside it means closed)."""
    p = resolve(poi, act.get("location", ""), city)
    hours = p.get("opening_hours") if p else None
    if not hours or hours.get("always_open") or not hours.get("rules") or not date:
        return True
    day = datetime.date.fromisoformat(date)
    mmdd = f"{day.month:02d}-{day.day:02d}"
    for r in hours["rules"]:
        dr = r.get("date_range")
        if dr:
            s, e = dr["start"], dr["end"]
            inside = s <= mmdd <= e if s <= e else (mmdd >= s or mmdd <= e)
            if not inside:
                continue
        weekdays = r.get("weekdays")
        if day.isoweekday() not in (range(1, 8) if weekdays is None else weekdays):
            return False
        windows = r.get("time_windows") or []
        if windows:
            return any(act["start_time"] >= w["open"] and act["end_time"] <= w["close"] for w in windows)
    return True


def apply_compromises(task, compromises, problems):
    """The effective preferences: each compromise's value replaces the field at its path."""
    prefs = {u: json.loads(json.dumps(e["preference"])) for u, e in task["user_preferences"].items()}
    count = {}
    for c in compromises:
        user, path, value = c.get("user"), c.get("path"), c.get("value")
        entry = task["user_preferences"].get(user)
        if entry is None:
            problems.append(f"compromise by {user!r}, not a member")
            continue
        if not entry.get("compromisable"):
            problems.append(f"compromise by {user}, who is not compromisable ({path})")
            continue
        count[user] = count.get(user, 0) + 1
        if count[user] > 2:
            problems.append(f"{user} makes more than two compromises")
            continue
        node = prefs[user]
        keys = path.split(".") if isinstance(path, str) else []
        for k in keys[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
        if not keys or not isinstance(node, dict) or keys[-1] not in node:
            problems.append(f"compromise path {path!r} of {user} does not name a field")
            continue
        node[keys[-1]] = value
    return prefs


def check_line(task, line, poi=None):
    problems = []
    plan = line.get("plan")
    users = list(task["user_preferences"].keys())
    everyone = set(users)
    if not isinstance(plan, dict) or not isinstance(plan.get("days"), list) or not plan["days"]:
        return ["the plan has no days"]
    days = plan["days"]

    # ---- dates -------------------------------------------------------------------------
    want = PHRASE_DAYS.get(task["metadata"]["date"])
    if len(days) != want:
        problems.append(f"{len(days)} days, the task has {want}")
    start = datetime.date.fromisoformat(task["time"])
    for i, d in enumerate(days):
        if d.get("day") != i + 1:
            problems.append(f"day {i + 1} is numbered {d.get('day')!r}")
        if d.get("date") != (start + datetime.timedelta(days=i)).isoformat():
            problems.append(f"day {i + 1} is dated {d.get('date')!r}")

    # ---- structure, cities, per-member bookkeeping ------------------------------------------
    home = task["metadata"]["departure_city"]
    cities = task["metadata"]["cities"]
    here = home
    seen = []
    cost = {u: 0.0 for u in users}
    modes = []
    # per member: (city, location) of attractions and meals they take part in
    visits = {u: [] for u in users}
    meals = {u: [] for u in users}
    segs_all = []
    for i, d in enumerate(days):
        segs = d.get("city_segments")
        if not isinstance(segs, list) or not segs:
            problems.append(f"day {i + 1}: no city_segments")
            continue
        segs_all.extend(segs)
        day_items = {u: [] for u in users}  # (start, end, what) for the timeline
        pois = {u: 0 for u in users}
        active = {u: 0 for u in users}
        where = {u: None for u in users}  # None: unknown (day start), "ARRIVED" after a trip
        for k, s in enumerate(segs):
            if s.get("type") == "intercity_transport":
                if k > 0 and segs[k - 1].get("type") == "intercity_transport":
                    problems.append(f"day {i + 1}: two intercity trips in a row")
                for f in ("from_city", "to_city", "transport_mode", "start_time", "end_time", "avg_cost"):
                    if f not in s:
                        problems.append(f"day {i + 1}: intercity trip without {f}")
                if s.get("transport_mode") not in INTERCITY_MODES:
                    problems.append(f"day {i + 1}: intercity mode {s.get('transport_mode')!r}")
                if s.get("from_city") != here:
                    problems.append(f"day {i + 1}: a trip leaves {s.get('from_city')} while the group is in {here}")
                here = s.get("to_city")
                a, b = minutes(s.get("start_time")), minutes(s.get("end_time"))
                if a is None or b is None:
                    problems.append(f"day {i + 1}: intercity times {s.get('start_time')!r}-{s.get('end_time')!r}")
                if not is_number(s.get("avg_cost")):
                    problems.append(f"day {i + 1}: intercity avg_cost {s.get('avg_cost')!r}")
                else:
                    for u in users:
                        cost[u] += s["avg_cost"]
                modes.append(s.get("transport_mode"))
                for u in users:
                    if a is not None and b is not None:
                        day_items[u].append((a, b if b > a else 24 * 60, "intercity"))
                    where[u] = "ARRIVED"
                continue
            city = s.get("city")
            acts = s.get("activities")
            if city is None or not isinstance(acts, list) or not acts:
                problems.append(f"day {i + 1}: a segment that is neither a trip nor a city block with activities")
                continue
            if city != here:
                problems.append(f"day {i + 1}: a block in {city} while the group is in {here}")
            if city not in cities:
                problems.append(f"day {i + 1}: {city} is not a city of the task")
            elif not seen or seen[-1] != city:
                seen.append(city)
            for n, act in enumerate(acts):
                t = act.get("type")
                if t not in ACTIVITY_FIELDS:
                    problems.append(f"day {i + 1} {city}: activity type {t!r}")
                    continue
                for f in ACTIVITY_FIELDS[t]:
                    if f not in act:
                        problems.append(f"day {i + 1} {city}: {t} without {f}")
                if t == "hotel":
                    if "participants" in act:
                        problems.append(f"day {i + 1} {city}: a hotel with participants")
                    who = users
                else:
                    p = act.get("participants")
                    if not isinstance(p, list) or not p or any(x != "All" and x not in everyone for x in p):
                        problems.append(f"day {i + 1} {city}: {t} participants {p!r}")
                        continue
                    who = users if p == ["All"] else p
                a, b = minutes(act.get("start_time")), minutes(act.get("end_time"))
                if a is None or b is None:
                    problems.append(f"day {i + 1} {city}: {t} times {act.get('start_time')!r}-{act.get('end_time')!r}")
                    continue
                if t != "hotel" and b <= a:
                    problems.append(f"day {i + 1} {city}: {t} ends at {act['end_time']} before it starts")
                if t == "intracity_transport" and act.get("transport_mode") not in INTRACITY_MODES:
                    problems.append(f"day {i + 1} {city}: intracity mode {act.get('transport_mode')!r}")
                if t in ("food", "hotel"):
                    if not is_number(act.get("avg_cost")):
                        problems.append(f"day {i + 1} {city}: {t} avg_cost {act.get('avg_cost')!r}")
                    else:
                        for u in who:
                            cost[u] += act["avg_cost"]
                for u in who:
                    if t != "hotel":
                        day_items[u].append((a, b, t))
                    if t == "attraction":
                        pois[u] += 1
                        active[u] += b - a
                        visits[u].append((city, act.get("location", "")))
                        if u == who[0] and not open_then(poi, city, act, d.get("date")):
                            problems.append(f"day {i + 1} {city}: {act.get('location')} is closed at {act['start_time']}-{act['end_time']}")
                    elif t == "intracity_transport":
                        active[u] += b - a
                    elif t == "food":
                        meals[u].append((city, act.get("location", "")))
                    # continuity: a change of place only by a transfer
                    if t == "rest":
                        continue
                    start_at = act.get("from") if t == "intracity_transport" else act.get("location")
                    end_at = act.get("to") if t == "intracity_transport" else act.get("location")
                    if where[u] == "ARRIVED" and t != "intracity_transport":
                        problems.append(f"day {i + 1} {city}: {u} starts at {start_at!r} without a transfer from the station")
                    elif where[u] not in (None, "ARRIVED") and where[u] != start_at and t != "intracity_transport":
                        problems.append(f"day {i + 1} {city}: {u} goes from {where[u]!r} to {start_at!r} without a transfer")
                    elif where[u] not in (None, "ARRIVED") and t == "intracity_transport" and where[u] != start_at:
                        problems.append(f"day {i + 1} {city}: {u}'s transfer starts at {start_at!r}, not at {where[u]!r}")
                    where[u] = end_at
        # hotel as the last activity of the last block, every day but the last
        if i + 1 < len(days):
            blocks = [s for s in segs if s.get("type") != "intercity_transport" and isinstance(s.get("activities"), list)]
            if not blocks or not blocks[-1]["activities"] or blocks[-1]["activities"][-1].get("type") != "hotel":
                problems.append(f"day {i + 1}: the day does not end with a hotel")
        for u in users:
            items = day_items[u]
            for x in range(1, len(items)):
                if items[x][0] < items[x - 1][1]:
                    problems.append(f"day {i + 1}: {u} starts {items[x][2]} at {items[x][0] // 60:02d}:{items[x][0] % 60:02d} before the previous activity ends")
        d["_pois"], d["_active"] = pois, active
    if not segs_all or segs_all[0].get("type") != "intercity_transport" or segs_all[0].get("from_city") != home:
        problems.append(f"the trip does not start with a trip from {home}")
    if not segs_all or segs_all[-1].get("type") != "intercity_transport" or segs_all[-1].get("to_city") != home:
        problems.append(f"the trip does not end with a trip back to {home}")
    if seen != cities:
        problems.append(f"cities visited {seen}, the task's are {cities}")

    # ---- hard constraints after the compromises -------------------------------------------
    prefs = apply_compromises(task, line.get("compromises") or [], problems)
    for u in users:
        g = prefs[u]["global_constraints"]
        budget = g.get("avg_budget") or 0
        if budget and cost[u] > budget:
            problems.append(f"{u} pays {cost[u]:g}, over the budget {budget}")
        cap_poi = g.get("intensity", {}).get("max_poi_per_day") or 0
        cap_h = g.get("intensity", {}).get("max_active_hours") or 0
        for i, d in enumerate(days):
            if "_pois" not in d:
                continue
            if cap_poi and d["_pois"][u] > cap_poi:
                problems.append(f"day {i + 1}: {u} visits {d['_pois'][u]} sights, over {cap_poi}")
            if cap_h and d["_active"][u] > cap_h * 60:
                problems.append(f"day {i + 1}: {u} is active {d['_active'][u]} minutes, over {cap_h} h")
        tr = g.get("transport", {})
        if tr.get("must") and not any(m in tr["must"] for m in modes):
            problems.append(f"{u} must travel by {tr['must']} at least once; no trip is by one")
        for m in modes:
            if m in (tr.get("reject") or []):
                problems.append(f"{u} rejects {m}, a trip is by it")
        for city, cp in prefs[u].get("city_specific_preferences", {}).items():
            mine_v = [loc for c, loc in visits[u] if c == city]
            mine_f = [loc for c, loc in meals[u] if c == city]
            a, f = cp.get("attractions", {}), cp.get("food", {})
            for x in a.get("must_visit", []):
                if not any(x in loc for loc in mine_v):
                    problems.append(f"{u} must visit {x} in {city}; the plan does not take them there")
            for x in a.get("reject_visit", []):
                if any(x in loc for loc in mine_v):
                    problems.append(f"{u} rejects {x} in {city}; the plan takes them there")
            scored = [t for loc in mine_f for t in food_terms(f, loc, poi_category(poi, loc, city))]
            for x in f.get("must_eat", []):
                if not any(x in loc for loc in mine_f) and ("must_eat", x) not in scored:
                    problems.append(f"{u} must eat {x} in {city}; no meal of theirs there names it or is scored as it")
            for x in f.get("reject_eat", []):
                if any(x in loc for loc in mine_f) or ("reject_eat", x) in scored:
                    problems.append(f"{u} rejects {x} in {city}; a meal of theirs names it or is scored as it")
    for d in days:
        d.pop("_pois", None)
        d.pop("_active", None)
    return problems


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    require_all = "--require-all" in argv
    poi = load_poi(argv[argv.index("--poi") + 1]) if "--poi" in argv else None
    tasks = {}
    for n, line in enumerate(open(argv[1], encoding="utf-8"), 1):
        if line.strip():
            t = json.loads(line)
            tasks[t["task_id"]] = t
    failures, plans, missing = 0, 0, []
    seen = set()
    for n, raw in enumerate(open(argv[2], encoding="utf-8"), 1):
        if not raw.strip():
            continue
        line = json.loads(raw)
        tid = line.get("task_id")
        seen.add(tid)
        if tid not in tasks:
            print(f"{argv[2]}:{n}: task {tid!r} is not in {argv[1]}")
            failures += 1
            continue
        if line.get("plan") is None:
            missing.append(tid)
            continue
        plans += 1
        for p in check_line(tasks[tid], line, poi):
            print(f"{tid}: {p}")
            failures += 1
    missing.extend(t for t in tasks if t not in seen)
    if missing:
        print(f"{len(missing)} task(s) without a plan: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}")
        if require_all:
            failures += len(missing)
    print(f"checked {plans} plan(s) of {len(tasks)} task(s): {failures} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
