"""Lay a real Spark event log out as Databricks cluster-log delivery does.

    python3 databricks_layout.py SRC_PLAIN_LOG CONTEXT_DIR

CONTEXT_DIR is <cluster>/eventlog/<cluster>_<ip>/<spark-context-id>/. It gets
  eventlog-2026-11-29--10-00.gz   the oldest lines (one gzip member)
  eventlog-2026-11-29--11-00.gz   the next lines, as TWO concatenated gzip members
  eventlog                        the newest lines, plain (the live file)
The lines are the source's own, in order, split only at line boundaries;
the SparkListenerLogStart line is dropped (Databricks logs may lack it).
Nothing inside an event is changed.
"""
import gzip
import json
import shutil
import sys
from pathlib import Path

ROLL_NAMES = ("eventlog-2026-11-29--10-00.gz", "eventlog-2026-11-29--11-00.gz")


def split_points(n):
    """First roll file: lines [0, a); second: [a, c) as members [a, b) + [b, c); live: [c, n)."""
    a, b, c = n * 2 // 5, n * 3 // 5, n * 4 // 5
    return a, b, c


def write_layout(src: Path, context_dir: Path):
    raw = Path(src).read_bytes()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [ln + b"\n" for ln in lines]
    kept = [ln for ln in lines if json.loads(ln).get("Event") != "SparkListenerLogStart"]
    assert len(kept) == len(lines) - 1, "expected exactly one SparkListenerLogStart"
    a, b, c = split_points(len(kept))
    if context_dir.exists():
        shutil.rmtree(context_dir)
    context_dir.mkdir(parents=True)
    (context_dir / ROLL_NAMES[0]).write_bytes(gzip.compress(b"".join(kept[:a]), mtime=0))
    (context_dir / ROLL_NAMES[1]).write_bytes(
        gzip.compress(b"".join(kept[a:b]), mtime=0) + gzip.compress(b"".join(kept[b:c]), mtime=0))
    (context_dir / "eventlog").write_bytes(b"".join(kept[c:]))
    return context_dir


if __name__ == "__main__":
    write_layout(Path(sys.argv[1]), Path(sys.argv[2]))
