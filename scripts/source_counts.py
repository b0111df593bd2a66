#!/usr/bin/env python3
"""Write the row counts of every raw_data table into raw_data/SOURCES.md.

    python3 scripts/source_counts.py          # rewrites the block between the counts markers
    python3 scripts/source_counts.py --check  # exit 1 when the block disagrees with the files

For every `*.csv` under raw_data/ (sorted by path): its data rows, the distinct values of its
`city` column (blank when it has none) and, for tables with a `basis_kind` column, how many rows
are `cited` and how many `general_knowledge`; then the same for the named hotels and the named
restaurants together. tests/it/raw_data.rs computes the same block from the files and fails when
SOURCES.md disagrees, so no count in SOURCES.md is written by hand.
"""
import csv, pathlib, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RAW = ROOT / "raw_data"
SOURCES = RAW / "SOURCES.md"
BEGIN = "<!-- counts: begin (scripts/source_counts.py writes this block) -->"
END = "<!-- counts: end -->"
GROUPS = [("hotels/named_*.csv", "hotels/named_"), ("food/named_*.csv", "food/named_")]


def table(path):
    """(rows, set of cities or None, cited or None, general_knowledge or None)"""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
        header = rows[0].keys() if rows else []
    cities = {r["city"].strip() for r in rows if r["city"].strip()} if "city" in header else None
    if "basis_kind" in header:
        kinds = [r["basis_kind"].strip() for r in rows]
        return len(rows), cities, kinds.count("cited"), kinds.count("general_knowledge")
    return len(rows), cities, None, None


def line(name, rows, cities, cited, general):
    cell = lambda v: "" if v is None else str(v)
    n_cities = None if cities is None else len(cities)
    return f"| {name} | {rows} | {cell(n_cities)} | {cell(cited)} | {cell(general)} |"


def block():
    files = sorted(p.relative_to(RAW).as_posix() for p in RAW.rglob("*.csv"))
    tables = {name: table(RAW / name) for name in files}
    out = [
        BEGIN,
        "| table | rows | cities | cited | general_knowledge |",
        "|---|---:|---:|---:|---:|",
    ]
    out += [line(f"`{name}`", *t) for name, t in tables.items()]
    for label, prefix in GROUPS:
        group = [t for name, t in tables.items() if name.startswith(prefix)]
        cities = set().union(*(t[1] for t in group))
        sums = [sum(t[i] for t in group) for i in (0, 2, 3)]
        out.append(line(f"`{label}` together", sums[0], cities, sums[1], sums[2]))
    out.append(END)
    return "\n".join(out)


def main():
    text = SOURCES.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"{SOURCES}: the markers {BEGIN!r} ... {END!r} are missing")
    new = text[:start] + block() + text[end + len(END):]
    if "--check" in sys.argv[1:]:
        if new != text:
            sys.exit(f"{SOURCES}: the counts disagree with the files; run scripts/source_counts.py")
        return
    tmp = SOURCES.with_suffix(".md.tmp")  # atomic: a reader never sees half a file
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(SOURCES)


if __name__ == "__main__":
    main()
