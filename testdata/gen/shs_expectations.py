"""Save what the Spark History Server 4.3.0 itself reports for the fixtures.

    python3 testdata/gen/shs_expectations.py

Copies the fixtures into a temp log directory, starts the History Server
(pyspark's spark-class, loopback, free port, in-memory store), waits until
/api/v1/applications lists every app, and saves, per fixture, under
testdata/expected/<name>/:
  application.json   /api/v1/applications/<id>
  jobs.json          /api/v1/applications/<id>/jobs
  stages.json        /api/v1/applications/<id>/stages
  allexecutors.json  /api/v1/applications/<id>/allexecutors
  taskSummary_<stage>_<attempt>.json   /stages/<s>/<a>/taskSummary (default quantiles; 404s skipped)
JSON is pretty-printed with sorted keys. rolling/compacted has the same app
id as rolling/zstd, so it is served by a second History Server run.
"""
import json
import shutil
import sys
import urllib.error
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evlog  # noqa: E402
from common import EXPECTED, LOGS, WORK, fresh_dir  # noqa: E402
from shs import HistoryServer  # noqa: E402

# expected/<name>  <-  logs/<glob> (exactly one match)
FIXTURES = [
    ("single-plain", "single/plain/local-*"),
    ("single-zstd", "single/zstd/local-*.zstd"),
    ("single-lz4", "single/lz4/local-*.lz4"),
    ("single-snappy", "single/snappy/local-*.snappy"),
    ("single-lzf", "single/lzf/local-*.lzf"),
    ("rolling-zstd", "rolling/zstd/eventlog_v2_*"),
    ("failed", "failed/local-*"),
    ("killed-single", "killed/single/local-*.inprogress"),
    ("killed-lz4", "killed/lz4/local-*.inprogress"),
    ("killed-rolling", "killed/rolling/eventlog_v2_*"),
    ("multi-single", "multi/local-*.zstd"),
    ("multi-rolling", "multi/eventlog_v2_*"),
    # The Databricks layout is not something the SHS reads; it is given the
    # same lines (decoded from the committed .gz + plain files) as one plain file.
    ("databricks", "databricks/*/eventlog/*/*"),
]
SECOND_PASS = [("rolling-compacted", "rolling/compacted/eventlog_v2_*")]


def one(pattern: str) -> Path:
    hits = [p for p in LOGS.glob(pattern) if not p.name.startswith(".")]
    if len(hits) != 1:
        sys.exit(f"expected one match for {pattern}, found {hits}")
    return hits[0]


def stage_into(logdir: Path, name: str, src: Path) -> str:
    """Copy one fixture into the SHS log dir; return its app id."""
    lines, _, _, layout = evlog.read_log(src)
    app_id = evlog.count(lines)["app_id"]
    if layout == "databricks":
        (logdir / app_id).write_text("".join(ln + "\n" for ln in lines if ln.strip()))
    elif src.is_dir():
        shutil.copytree(src, logdir / src.name)
    else:
        shutil.copy2(src, logdir / src.name)
    return app_id


def dump(path: Path, obj):
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def save_app(shs: HistoryServer, name: str, app_id: str, src: Path):
    out = fresh_dir(EXPECTED / name)
    base = f"/api/v1/applications/{app_id}"
    dump(out / "application.json", shs.get(base))
    dump(out / "jobs.json", shs.get(base + "/jobs"))
    stages = shs.get(base + "/stages")
    dump(out / "stages.json", stages)
    dump(out / "allexecutors.json", shs.get(base + "/allexecutors"))
    saved = 0
    for st in sorted(stages, key=lambda s: (s["stageId"], s["attemptId"])):
        s, a = st["stageId"], st["attemptId"]
        try:
            summary = shs.get(f"{base}/stages/{s}/{a}/taskSummary")
        except urllib.error.HTTPError as e:
            if e.code == 404:
                continue
            raise
        dump(out / f"taskSummary_{s}_{a}.json", summary)
        saved += 1
    print(f"  {name}: {app_id} ({src.relative_to(LOGS)}): {len(stages)} stages, {saved} task summaries")
    return {"name": name, "app_id": app_id, "log": src.relative_to(LOGS).as_posix()}


def serve(fixtures, tag):
    logdir = fresh_dir(WORK / f"shs-{tag}" / "logs")
    staged = []
    for name, pattern in fixtures:
        src = one(pattern)
        staged.append((name, stage_into(logdir, name, src), src))
    with HistoryServer(logdir, name=f"shs-{tag}") as shs:
        shs.wait_for_apps([a for _, a, _ in staged])
        version = shs.get("/api/v1/version")["spark"]
        return [save_app(shs, n, a, s) for n, a, s in staged], version


def main():
    EXPECTED.mkdir(parents=True, exist_ok=True)
    for p in EXPECTED.iterdir():
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    index, version = serve(FIXTURES, "main")
    more, _ = serve(SECOND_PASS, "compacted")
    index += more
    lines = ["name\tapp_id\tlog"] + [f"{r['name']}\t{r['app_id']}\t{r['log']}" for r in index]
    (EXPECTED / "INDEX.tsv").write_text("\n".join(lines) + "\n")
    (EXPECTED / "README.md").write_text(
        f"# What the Spark History Server {version} reports for testdata/logs\n\n"
        "Made by `testdata/gen/shs_expectations.py` (see that file's docstring): the REST API\n"
        "answers of a real History Server, pretty-printed with sorted keys. `INDEX.tsv` maps each\n"
        "folder to its app id and log. Notes:\n\n"
        "* `databricks/` was served from the same lines as the Databricks layout, written as one\n"
        "  plain file (the SHS cannot read that layout); it has no `SparkListenerLogStart`, so\n"
        "  `appSparkVersion` is empty.\n"
        "* `rolling-compacted/` comes from a second SHS run (same app id as `rolling-zstd/`).\n"
        "* `killed-*` are in-progress apps (`completed: false`); their numbers are what the\n"
        "  SHS makes of a log that ends mid-line.\n"
        "* `taskSummary_<stage>_<attempt>.json` exists only where the SHS answered (not 404).\n")
    print(f"wrote {len(index)} fixtures to {EXPECTED}")


if __name__ == "__main__":
    main()
