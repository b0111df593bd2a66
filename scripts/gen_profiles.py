#!/usr/bin/env python3
"""Sample raw_data/profiles.csv once from published 2020 census marginals.

    python3 scripts/gen_profiles.py          # deterministic: fixed seed, Python's Mersenne Twister

Marginals (rounded figures from the Seventh National Population Census, 2020, written from the
published tables; see raw_data/SOURCES.md):
  * AGE_SEX: 《中国人口普查年鉴-2020》 table 1-7 "全国分年龄、性别的人口", 5-year groups, millions.
  * PROVINCE: 第七次全国人口普查公报（第三号）"地区人口情况", 10,000 persons.
  * NEVER_MARRIED / DIVORCED / WIDOWED: 年鉴-2020 table 5-1 "全国分年龄、性别、婚姻状况的15岁及以上人口",
    shares by age group and sex (rounded).
  * PARENT: share of ever-married persons with at least one child by age, derived from 年鉴-2020
    table 6-4 (women by age and number of children ever born), applied to both sexes.
Each profile is an anonymous draw: no person is described. Ids are stable (P00001..).
"""
import bisect, csv, pathlib, random

ROOT = pathlib.Path(__file__).resolve().parent.parent
N = 4000
SEED = 20201101  # census reference day

AGE_SEX = [  # (lo, hi, male millions, female millions)
    (0, 4, 41.0, 36.8), (5, 9, 48.3, 42.6), (10, 14, 45.0, 40.0), (15, 19, 38.0, 34.0),
    (20, 24, 39.9, 35.0), (25, 29, 47.2, 44.0), (30, 34, 64.1, 60.0), (35, 39, 50.6, 48.3),
    (40, 44, 48.2, 46.3), (45, 49, 58.6, 56.0), (50, 54, 62.7, 61.5), (55, 59, 51.7, 50.9),
    (60, 64, 36.5, 37.0), (65, 69, 36.6, 38.0), (70, 74, 24.0, 25.6), (75, 79, 15.0, 16.6),
    (80, 84, 8.0, 10.0),
]
PROVINCE = {
    "广东省": 12601, "山东省": 10153, "河南省": 9937, "江苏省": 8475, "四川省": 8367, "河北省": 7461,
    "湖南省": 6644, "浙江省": 6457, "安徽省": 6103, "湖北省": 5775, "广西壮族自治区": 5013,
    "云南省": 4721, "江西省": 4519, "辽宁省": 4259, "福建省": 4154, "陕西省": 3953, "贵州省": 3856,
    "山西省": 3492, "重庆市": 3205, "黑龙江省": 3185, "新疆维吾尔自治区": 2585, "甘肃省": 2502,
    "上海市": 2487, "吉林省": 2407, "内蒙古自治区": 2405, "北京市": 2189, "天津市": 1387,
    "海南省": 1008, "宁夏回族自治区": 720, "青海省": 592, "西藏自治区": 365,
}
# by age-group lower bound: (male, female) shares
NEVER_MARRIED = {15: (0.99, 0.98), 20: (0.90, 0.80), 25: (0.52, 0.36), 30: (0.21, 0.10), 35: (0.09, 0.04),
                 40: (0.05, 0.02), 45: (0.04, 0.01), 50: (0.03, 0.01), 55: (0.03, 0.01), 60: (0.03, 0.01),
                 65: (0.02, 0.01), 70: (0.02, 0.01), 75: (0.02, 0.01), 80: (0.02, 0.01)}
DIVORCED = {25: 0.01, 30: 0.03, 35: 0.04, 40: 0.05, 45: 0.05, 50: 0.04, 55: 0.03, 60: 0.03, 65: 0.02, 70: 0.02, 75: 0.01, 80: 0.01}
WIDOWED = {40: (0.005, 0.01), 45: (0.01, 0.02), 50: (0.01, 0.03), 55: (0.02, 0.05), 60: (0.04, 0.08),
           65: (0.06, 0.13), 70: (0.10, 0.22), 75: (0.16, 0.34), 80: (0.25, 0.50)}
PARENT = {15: 0.30, 20: 0.55, 25: 0.70, 30: 0.86, 35: 0.93, 40: 0.95, 45: 0.96, 50: 0.96, 55: 0.97}


def pick(rng, items, weights):
    acc, cum = 0.0, []
    for w in weights:
        acc += w
        cum.append(acc)
    return items[bisect.bisect(cum, rng.random() * acc)]


def main():
    rng = random.Random(SEED)
    cells = [(lo, hi, sex) for lo, hi, m, f in AGE_SEX for sex in ("男", "女")]
    weights = [w for _, _, m, f in AGE_SEX for w in (m, f)]
    provs = list(PROVINCE)
    rows = []
    for i in range(1, N + 1):
        lo, hi, sex = pick(rng, cells, weights)
        age = rng.randint(lo, hi)
        g = lo if lo < 80 else 80
        fem = sex == "女"
        marital, parenting = "未婚", "无子女"
        if age >= 18:
            nm = NEVER_MARRIED.get(g, (1.0, 1.0))[fem]
            wd = WIDOWED.get(g, (0.0, 0.0))[fem]
            dv = DIVORCED.get(g, 0.0)
            marital = pick(rng, ["未婚", "已婚", "离婚", "丧偶"], [nm, max(0.0, 1 - nm - wd - dv), dv, wd])
            if marital != "未婚" and rng.random() < PARENT.get(min(g, 55), 0.97):
                parenting = "有子女"
        rows.append([f"P{i:05d}", age, sex, marital, parenting, pick(rng, provs, [PROVINCE[p] for p in provs])])
    tmp = ROOT / "raw_data/profiles.csv.tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["id", "age", "gender", "marital", "parenting", "home_province"])
        w.writerows(rows)
    tmp.replace(ROOT / "raw_data/profiles.csv")
    print(f"wrote raw_data/profiles.csv: {len(rows)} profiles")


if __name__ == "__main__":
    main()
