"""Write testdata/logs/MANIFEST.tsv and the fixture table in gen/README.md.

Every count comes from evlog.py reading the committed files themselves
(decompressed JSON lines), never from Spark's own bookkeeping.
"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evlog  # noqa: E402
from common import GEN_DIR, LOGS  # noqa: E402

COLUMNS = ["path", "layout", "codec", "app_id", "spark_version", "jobs", "failed_jobs", "stages",
           "tasks", "failed_tasks", "executors", "complete", "notes"]

# What each fixture is, by path prefix (first match wins).
DESCRIPTIONS = [
    ("single/plain/", "main workload; uncompressed single file"),
    ("single/zstd/", "main workload; single file, zstd (one frame per flush)"),
    ("single/lz4/", "main workload; single file, lz4-java LZ4Block framing"),
    ("single/snappy/", "main workload; single file, xerial snappy framing"),
    ("single/lzf/", "main workload; single file, ning LZF (Spark 4.3 default: parallel PLZFOutputStream, "
                    "so chunks only at 64 KiB boundaries, not per flush)"),
    ("rolling/zstd/", "main workload + 12 jobs x 500 tiny tasks; Spark 4 default layout "
                      "(rolling, zstd, maxFileSize=10m)"),
    ("rolling/compacted/", "copy of rolling/zstd after the History Server compacted it "
                           "(maxFilesToRetain=1): events_2 .compact (one zstd frame per line) + events_3"),
    ("failed/", "1 ok job, then a Python UDF raises on order_id 1234: task fails twice "
                "(local[2,2] => maxFailures=2), job 2 fails, 1 sibling task TaskKilled; app ends normally"),
    ("killed/single/", "SIGKILL to the JVM during a 48-task stage (spark.eventLog.buffer.kb=1): "
                       ".inprogress, no ApplicationEnd, last zstd frame cut, last line cut"),
    ("killed/lz4/", "same kill, single lz4 file (default 100 KiB buffer): .inprogress, no ApplicationEnd"),
    ("killed/rolling/", "same kill, rolling dir (default buffer): appstatus_*.inprogress, "
                        "last zstd frame cut, last line cut"),
    ("databricks/", "main workload with spark.databricks.clusterUsageTags.* confs, re-laid as "
                    "Databricks log delivery: 2 .gz roll files (the 2nd = 2 gzip members) + plain "
                    "'eventlog'; SparkListenerLogStart removed"),
    ("multi/local-", "second small app (1 SQL query); single zstd file"),
    ("multi/eventlog_v2_", "third small app (same query); rolling zstd dir"),
    ("archives/0101-", "zip of the databricks/0101-123456-abcdefgh cluster folder"),
    ("archives/eventlog_v2_", "tar.gz of the rolling/zstd eventlog_v2_ dir"),
    ("operations/", "issue 46's operation shapes (operations.py); what each plants: operations/OPERATIONS.tsv"),
    ("slowness/", "issue 47's slow-task shapes (slowness.py); what each plants: slowness/SLOWNESS.tsv"),
]


def describe(rel: str) -> str:
    for prefix, text in DESCRIPTIONS:
        if rel.startswith(prefix):
            return text
    return ""


# logs/patterns/ (the planted-problem fixtures) has its own PATTERNS.tsv,
# written by patterns.py, and logs/streaming/ is described by streaming.py's docstring:
# neither is part of MANIFEST.tsv.
SKIP = {"patterns", "streaming"}


def units(root: Path = LOGS):
    """Each app log under root: a single file, a rolling dir, a Databricks
    context dir, or an archive. Hidden files (.crc) are skipped, and so is
    logs/patterns/."""
    out = []

    def walk(d: Path):
        for p in sorted(d.iterdir()):
            if p.name.startswith(".") or p.suffix in (".tsv", ".md") or (d == root and p.name in SKIP):
                continue
            if p.is_dir():
                if p.name.startswith("eventlog_v2_") or (p / "eventlog").is_file():
                    out.append(p)
                else:
                    walk(p)
            else:
                out.append(p)

    walk(root)
    return out


def row(p: Path):
    rel = p.relative_to(LOGS).as_posix() + ("/" if p.is_dir() else "")
    lines, codecs, notes, layout = evlog.read_log(p)
    c = evlog.count(lines)
    extra = []
    frames = [n for n in notes if "frames" in n or "chunks" in n or "blocks" in n or "members" in n
              or "truncated" in n or "ends inside" in n]
    extra += [re.sub(r"^[^:]*: ", "", n) if len(frames) == 1 else n for n in frames]
    if c["bad_lines"]:
        extra.append(f"last line cut short ({c['bad_lines']} unparsable)")
    if c["version_from"] != "SparkListenerLogStart":
        extra.append(f"no SparkListenerLogStart; version from {c['version_from'] or 'nowhere'}")
    extra.append(f"{c['events']} events")
    codec = "+".join(sorted(set(codecs)))
    return {
        "path": rel, "layout": layout, "codec": codec, "app_id": c["app_id"],
        "spark_version": c["spark_version"], "jobs": c["jobs"], "failed_jobs": c["failed_jobs"],
        "stages": c["stages"], "tasks": c["tasks"], "failed_tasks": c["failed_tasks"],
        "executors": c["executors"], "complete": c["complete"],
        "notes": describe(rel) + "; " + "; ".join(extra),
    }


README_HEAD = """# testdata/gen: how the fixtures are made

Every event log under `testdata/logs/` was written by a real Apache Spark **4.3.0**
(`pip install pyspark==4.3.0`, Java 17, master `local[2]`); nothing in an event was written or
edited by hand. The only files made by these scripts are re-packagings of real Spark lines
(the Databricks layout and the archives), `logs/MANIFEST.tsv` and this README's table.
`testdata/expected/` holds what the Spark History Server 4.3.0 itself serves for the logs
(REST API JSON), made by `shs_expectations.py`.

## Regenerate

```
pip install pyspark==4.3.0 zstandard lz4 python-snappy   # the last three only for counting
python3 testdata/gen/make_all.py                          # everything (~5 min, one JVM at a time)
python3 testdata/gen/make_all.py single/zstd manifest     # only some steps
python3 testdata/gen/make_all.py patterns                 # only the patterns/* steps (last section)
python3 testdata/gen/shs_expectations.py                  # only testdata/expected/
```

Steps, in order: `single/plain single/zstd single/lz4 single/snappy single/lzf rolling/zstd
rolling/compacted failed killed/single killed/lz4 killed/rolling databricks multi archives
manifest expected`, then the `patterns/*` steps (see the last section). Each step deletes and
recreates its own output. Spark scratch output goes to `/tmp/sparkdiag-gen` (override with
`SPARKDIAG_GEN_WORK`).

A rerun gives logs of the same *shape* (same jobs, stages, tasks and partition counts: fixed
data, `spark.sql.shuffle.partitions=8`, fixed partition counts), but **new app ids, timestamps
and durations**: Spark's local app id is `local-<epoch ms>` and cannot be set. So file names
change; tests should find a fixture by its folder (e.g. `single/zstd/*.zstd`) or read
`MANIFEST.tsv`, not hard-code an app id. The killed fixtures vary the most (how many tasks
reach the disk before the kill depends on timing).

## Files

| file | what |
|---|---|
| `make_all.py` | runs every step; one Spark app per fixture, each in its own process |
| `app.py` | one fixture app: `python3 app.py SCENARIO --event-dir D [--master M] [--conf k=v]` |
| `workload.py` | the deterministic workloads (`main`, `small`, `many-tasks`, `failing`, `killed`, and the pattern workloads of the last section) |
| `databricks_layout.py` | splits a real plain log into the Databricks delivery layout |
| `shs.py` | starts/stops the History Server (loopback, free port, in-memory store) |
| `shs_expectations.py` | saves the History Server's REST answers to `testdata/expected/` |
| `evlog.py` | independent Python decoder (zstd frames, LZ4Block, xerial snappy, LZF, gzip members) and event counter; `python3 evlog.py PATH...` prints counts |
| `manifest.py` | writes `logs/MANIFEST.tsv` and the table below |
| `common.py` | paths, Java/Spark environment, run-an-app helper |
| `patterns.py` | measures the `logs/patterns/` fixtures and writes `logs/patterns/PATTERNS.tsv` and the last section of this README |
| `patterns_readme.py` | the text of that section |

## The workloads

* `main`: orders (5000 rows, 4 partitions) and customers (97 rows, 2 partitions) from
  `spark.range`; a groupBy, a broadcast join + groupBy, a SQL query with a `MERGE` hint
  (sort-merge join), an RDD `reduceByKey` (Python). AQE on (default). 16 jobs, 17 stage
  attempts submitted (the rest are skipped), 34 tasks.
* `many-tasks` (rolling): `main`, then 12 x `spark.range(0, 500, 1, 500).count()`: about
  25 MB of uncompressed JSON, so it rolls into 3 files at `maxFileSize=10m`.
* `failing`: a good job, then `udf(checked_double)` raising `ValueError` on `order_id` 1234
  under master `local[2,2]` (2 attempts per task), then one more good job.
* `killed`: a warm-up job, then 48 one-row tasks (40 quick, 8 sleep 2 s); the driver
  SIGKILLs its own JVM once 42 of them have finished.
* `small`: one `GROUP BY` over `range(0, 1000, 1, 2)`.

## Counts (from `evlog.py` over the decompressed JSON lines)

Columns: jobs = `SparkListenerJobStart`; failed jobs = `JobEnd` whose result is not
`JobSucceeded`; stages = `SparkListenerStageSubmitted` (stage attempts); tasks =
`SparkListenerTaskEnd` (every ended attempt); failed tasks = `Task End Reason` neither `Success`
nor `TaskKilled`; executors = `SparkListenerExecutorAdded` (local mode: the driver, 1);
complete = a `SparkListenerApplicationEnd` is present. The same table is
`testdata/logs/MANIFEST.tsv`. The lz4/snappy/lzf files are decoded directly (no plain-twin
shortcut was needed).

"""

README_TAIL = """
## What the bytes look like (observed in these files)

* **zstd**: a sequence of standard frames, one per Spark flush (`closeFrameOnFlush`); the
  History Server's compacted file has one frame per *line* (so it is larger than the files
  it replaced held for the same events).
* **rolling**: `rolling/zstd` has 3 event files (`events_1..3`); only `events_1` starts with
  `SparkListenerLogStart`, the others start wherever the 10 MiB roll fell (mid-stage).
* **killed zstd** (`killed/single`, `killed/rolling`): the file ends **inside** a frame (a
  zstd block was emitted but the frame never closed); decoding that partial frame yields text
  that ends mid-line in a `SparkListenerTaskEnd`. Both have no `SparkListenerApplicationEnd`.
  The rolling one keeps `appstatus_<appId>.inprogress`.
* **killed lz4** (`killed/lz4`): ends exactly at the end of an `LZ4Block` block, with no end
  mark (blocks are only emitted at 32 KiB, never on flush); the decoded text ends mid-line.
* **lz4**: `LZ4Block` blocks of <= 32 KiB, one end mark at the close.
* **snappy**: one chunk per flush after the 16-byte `\\x82SNAPPY\\0` header.
* **lzf**: Spark 4.3 turns `spark.io.compression.lzf.parallel.enabled` on by default, so
  the writer is ning's `PLZFOutputStream`: every chunk but the last is a full 65535-byte
  `ZV\\x01` chunk; flushes do not cut chunks (an in-progress `.lzf` log would lag by up to
  64 KiB).
* **Hidden `.crc` files**: Hadoop's local file system writes `.<name>.crc` next to the rolling
  dirs' `appstatus_*` files; they are kept as Spark left them (readers must skip dot files).
* **Databricks**: roll files are gzip (`mtime=0`), the second one two concatenated members;
  no `SparkListenerLogStart`; the version is in
  `spark.databricks.clusterUsageTags.sparkVersion` (`15.4.x-scala2.12`).
"""


def write_manifest():
    rows = [row(p) for p in units()]
    with open(LOGS / "MANIFEST.tsv", "w") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            fh.write("\t".join(str(r[c]).replace("\t", " ") for c in COLUMNS) + "\n")
    table = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = [f"`{r['path']}`"] + [str(r[c]).replace("|", "\\|") for c in COLUMNS[1:]]
        table.append("| " + " | ".join(cells) + " |")
    sizes = ["", "Sizes (bytes on disk, including hidden files):", ""]
    total = 0
    for p in units():
        n = sum(f.stat().st_size for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())
        total += n
        sizes.append(f"* `{p.relative_to(LOGS).as_posix()}`: {n:,}")
    skipped = [LOGS / n for n in SKIP]
    sizes.append(f"* total under `testdata/logs/` (without `patterns/`): "
                 f"{sum(f.stat().st_size for f in LOGS.rglob('*') if f.is_file() and not any(f.is_relative_to(d) for d in skipped)):,}")
    readme = GEN_DIR / "README.md"
    # Keep the patterns section (written by patterns.py) as it is.
    from patterns import README_MARK

    kept = ""
    if readme.exists() and README_MARK in readme.read_text():
        kept = "\n" + README_MARK + readme.read_text().split(README_MARK, 1)[1]
    readme.write_text(README_HEAD + "\n".join(table) + "\n" + "\n".join(sizes) + "\n" + README_TAIL + kept)
    print(f"wrote {LOGS / 'MANIFEST.tsv'} ({len(rows)} rows) and {GEN_DIR / 'README.md'}")


if __name__ == "__main__":
    write_manifest()
