#!/usr/bin/env python3
"""The table of scripts/bench-llm-engine.sh: one row per run (granularity, concurrency), every
count per accepted task (a task published in test.jsonl, or, when the build stopped, an attempt
the gates accepted), then the issue's goal: computed prompt tokens per accepted task of
per-member generation against per-task generation at the same concurrency.

    bench_llm_engine_table.py DIR RUN...      (RUN: member:2, task:1, ...)
"""
import json
import os
import sys


def read(d, name):
    """A one-line file the benchmark script wrote for a run, or "-"."""
    path = os.path.join(d, name)
    return open(path).read().strip() if os.path.exists(path) else "-"


def metrics(d):
    """The server's counters of a run (llama.cpp /metrics), for a run stopped before its report."""
    out = {}
    path = os.path.join(d, "metrics.txt")
    for line in open(path) if os.path.exists(path) else []:
        if line.startswith("llamacpp:"):
            name, _, value = line.partition(" ")
            out[name[len("llamacpp:"):]] = float(value)
    return out


def from_metrics(d):
    """A report built from the server's counters: requests, tokens; nothing of the checks."""
    m = metrics(d)
    computed = int(m.get("prompt_tokens_total", 0))
    cached = int(m.get("prompt_tokens_cached_total", 0))
    return {
        "requests": {"sent": int(read(d, "requests")) if read(d, "requests").isdigit() else 0},
        "replies": {"rejected": 0, "corrections": 0, "template_messages": 0, "attempts_ok": 0},
        "rejections_by_reason": {},
        "tokens": {"this_run": {"prompt": computed + cached, "prompt_cached": cached, "prompt_computed": computed,
                                "completion": int(m.get("tokens_predicted_total", 0))}},
    }


def row(root, run):
    g, c = run.split(":")[:2]
    d = os.path.join(root, f"{g}-c{c}")
    path = os.path.join(d, "validation_reports", "llm_report.json")
    report = json.load(open(path)) if os.path.exists(path) else from_metrics(d)
    test = os.path.join(d, "output", "test.jsonl")
    published = os.path.exists(test)
    accepted = (
        sum(1 for _ in open(test)) if published else report["replies"]["attempts_ok"]
    )
    per = max(accepted, 1)
    t = report["tokens"]["this_run"]
    return {
        "run": f"{g} c{c}",
        "exit": read(d, "exit"),
        "validate": read(d, "validate"),
        "accepted": accepted,
        "requests": report["requests"]["sent"] / per,
        "rejected": report["replies"]["rejected"] / per,
        "by_reason": {k: round(v / per, 2) for k, v in sorted(report["rejections_by_reason"].items())},
        "corrections": report["replies"]["corrections"] / per,
        # opening lines written from the templates (per member: each member's own)
        "template": sum(t.get("template_lines", 0) for t in report.get("tasks", {}).values()) / per,
        "sent": t["prompt"] / per,
        "computed": t["prompt_computed"] / per,
        "cached": t["prompt_cached"] / per,
        "completion": t["completion"] / per,
        "wall": float(read(d, "wall")) / per if read(d, "wall") != "-" else float("nan"),
        "strategy_share": report["rejections_by_reason"].get("strategy", 0)
        / max(report["requests"]["sent"], 1),
    }


def main():
    root, runs = sys.argv[1], sys.argv[2:]
    rows = [row(root, r) for r in runs]
    head = "| run | exit | validate | accepted | requests | rejected | corrections | template lines | prompt sent | computed | cached | completion | wall s | strategy rejections / replies |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        print(
            f"| {r['run']} | {r['exit']} | {r['validate']} | {r['accepted']} | {r['requests']:.1f} | {r['rejected']:.1f} | {r['corrections']:.1f} | {r['template']:.1f} | {r['sent']:,.0f} | {r['computed']:,.0f} | {r['cached']:,.0f} | {r['completion']:,.0f} | {r['wall']:.0f} | {r['strategy_share']:.1%} |"
        )
    print("\nrejections by reason, per accepted task:")
    for r in rows:
        print(f"  {r['run']}: {r['by_reason']}")
    print("\ncomputed prompt tokens per accepted task, per member against per task (goal: at least 30 % below):")
    by = {r["run"]: r for r in rows}
    for c in sorted({r.split(":")[1] for r in runs}):
        m, t = by.get(f"member c{c}"), by.get(f"task c{c}")
        if m and t and 0 in (m["accepted"], t["accepted"]):
            print(f"  concurrency {c}: no comparison: {m['accepted']} vs {t['accepted']} tasks accepted")
        elif m and t and t["computed"] > 0:
            print(f"  concurrency {c}: {m['computed']:,.0f} vs {t['computed']:,.0f}: {1 - m['computed'] / t['computed']:+.1%} below")


if __name__ == "__main__":
    main()
