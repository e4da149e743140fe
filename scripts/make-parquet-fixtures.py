#!/usr/bin/env python3
"""The Parquet copies of the fixture dataset that the tests read (tests/it/parquet.rs), made by
pyarrow as the Hugging Face Hub makes the Parquet copy of a JSONL dataset: the JSONL read by
pyarrow's JSON reader, written by pyarrow's Parquet writer.

    python3 -m venv /tmp/pa && /tmp/pa/bin/pip install pyarrow
    /tmp/pa/bin/python scripts/make-parquet-fixtures.py

Writes, beside fixtures/dataset/fixtures.jsonl:
- fixtures.parquet: the records as published (FAIL_TO_PASS and PASS_TO_PASS are JSON text), in
  two row groups, Snappy-compressed (pyarrow's default, and the Hub's);
- fixtures-lists.parquet: the same records with FAIL_TO_PASS and PASS_TO_PASS as lists of
  strings (as SWE-bench's datasets store them), Zstandard-compressed;
- bad-row.parquet: the same records with the second one's instance_id null (a bad row between
  good ones).
"""
import json
import os

import pyarrow as pa
import pyarrow.json as paj
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATASET = os.path.join(ROOT, "fixtures", "dataset")


def main():
    src = os.path.join(DATASET, "fixtures.jsonl")
    table = paj.read_json(src)
    pq.write_table(table, os.path.join(DATASET, "fixtures.parquet"), row_group_size=2)

    rows = []
    with open(src, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
                if isinstance(rec.get(key), str):
                    rec[key] = json.loads(rec[key])
            rows.append(rec)
    keys = list(dict.fromkeys(k for rec in rows for k in rec))
    lists = pa.Table.from_pylist([{k: rec.get(k) for k in keys} for rec in rows])
    pq.write_table(lists, os.path.join(DATASET, "fixtures-lists.parquet"), compression="zstd")

    ids = table.column("instance_id").to_pylist()
    ids[1] = None
    bad = table.set_column(0, "instance_id", pa.array(ids, pa.string()))
    pq.write_table(bad, os.path.join(DATASET, "bad-row.parquet"))


if __name__ == "__main__":
    main()
