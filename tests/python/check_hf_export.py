"""Load a `gtb export --format hf` folder with the Hugging Face `datasets` library and check it
against the JSONL files it was made from (run by tests/export_datasets.rs).

    check_hf_export.py EXPORT_DIR SPLIT=FILE.jsonl [SPLIT=FILE.jsonl ...]

Checks: the card's YAML has license, language zh, task_categories and one config whose
data_files name every split; `load_dataset(EXPORT_DIR)` finds those splits with the source's
row counts; every row's `task_json` is its source line, and `json.loads` of it serialises back
to that line (the task round-trips); the typed and JSON columns agree with the task.
"""
import json
import sys

from datasets import load_dataset
from huggingface_hub import DatasetCard


def check_card(out, splits):
    meta = DatasetCard.load(f"{out}/README.md").data.to_dict()
    for key in ("license", "language", "task_categories", "configs", "size_categories"):
        assert meta.get(key), f"the card has no {key}"
    assert meta["language"] == ["zh"], meta["language"]
    named = {f["split"] for c in meta["configs"] for f in c["data_files"]}
    assert named == set(splits), (named, splits)


def check_split(rows, path):
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    assert rows.num_rows == len(lines), (rows.num_rows, len(lines))
    for row, line in zip(rows, lines):
        assert row["task_json"] == line, row["task_id"]
        task = json.loads(row["task_json"])
        assert json.dumps(task, ensure_ascii=False) == line, "the task does not round-trip"
        assert row["task_id"] == task["task_id"]
        assert row["cities"] == task["metadata"]["cities"]
        assert row["users"] == list(task["user_preferences"])
        assert json.loads(row["user_preferences"]) == task["user_preferences"]
        assert json.loads(row["initial_messages"]) == task["initial_messages"]
        assert row["difficulty_score"] == task["difficulty_score"]
    return len(lines)


def main():
    out = sys.argv[1]
    splits = dict(arg.split("=", 1) for arg in sys.argv[2:])
    check_card(out, splits)
    ds = load_dataset(out)
    assert set(ds) == set(splits), (set(ds), splits)
    counts = {name: check_split(ds[name], path) for name, path in splits.items()}
    print("datasets loaded", out, counts)


if __name__ == "__main__":
    main()
