"""Regenerate every fixture under testdata/logs/ (and testdata/expected/).

    python3 testdata/gen/make_all.py              # everything, in order
    python3 testdata/gen/make_all.py single/zstd manifest   # some steps

Each step deletes and recreates its own output. Every event log is written
by a real Spark 4.3.0 (pip install pyspark==4.3.0) running one app at a time
on master local[2]; the only files made here are re-packagings of those
logs (Databricks layout, archives), MANIFEST.tsv and README.md.
"""
import io
import shutil
import sys
import tarfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import databricks_layout  # noqa: E402
from common import LOGS, WORK, fresh_dir, run_app  # noqa: E402

SINGLE = {"spark.eventLog.rolling.enabled": "false"}
ROLLING = {"spark.eventLog.rolling.enabled": "true", "spark.eventLog.compress": "true",
           "spark.eventLog.compression.codec": "zstd", "spark.eventLog.rolling.maxFileSize": "10m"}
PLAIN = {"spark.eventLog.compress": "false", **SINGLE}

DATABRICKS_CLUSTER = "0101-123456-abcdefgh"
DATABRICKS_CONF = {
    "spark.databricks.clusterUsageTags.sparkVersion": "15.4.x-scala2.12",
    "spark.databricks.clusterUsageTags.clusterId": DATABRICKS_CLUSTER,
    "spark.databricks.clusterUsageTags.clusterName": "nightly-etl",
}
DATABRICKS_CONTEXT = (Path("databricks") / DATABRICKS_CLUSTER / "eventlog"
                      / f"{DATABRICKS_CLUSTER}_10_0_0_1" / "5123456789012345678")

STEPS = {}


def step(name):
    def deco(fn):
        STEPS[name] = fn
        return fn
    return deco


def run(name, scenario, conf, master="local[2]", check=True):
    """Run one app into a fresh temp event dir; return that dir."""
    ev = fresh_dir(WORK / name.replace("/", "_") / "events")
    conf = {"spark.app.name": f"sparkdiag-fixture {name}", **conf}
    print(f"[{time.strftime('%H:%M:%S')}] {name}: running '{scenario}' on {master}", flush=True)
    run_app(scenario, ev, conf, master=master, check=check)
    return ev


def install(ev: Path, dest: Path, keep=None):
    """Move what Spark wrote (including its hidden .crc files) into dest."""
    fresh_dir(dest)
    for p in sorted(ev.iterdir()):
        if keep is None or keep(p):
            shutil.move(str(p), dest / p.name)
    return dest


def only(dir_: Path, pattern: str) -> Path:
    hits = [p for p in dir_.glob(pattern) if not p.name.startswith(".")]
    if len(hits) != 1:
        sys.exit(f"expected one {pattern} in {dir_}, found {[h.name for h in hits]}")
    return hits[0]


# ------------------------------------------------------------------ steps

@step("single/plain")
def single_plain():
    install(run("single/plain", "main", PLAIN), LOGS / "single/plain")


def single_codec(codec):
    ev = run(f"single/{codec}", "main", {"spark.eventLog.compress": "true",
                                         "spark.eventLog.compression.codec": codec, **SINGLE})
    only(ev, f"local-*.{codec}")
    install(ev, LOGS / "single" / codec)


for _codec in ("zstd", "lz4", "snappy", "lzf"):
    step(f"single/{_codec}")(lambda c=_codec: single_codec(c))


@step("rolling/zstd")
def rolling_zstd():
    ev = run("rolling/zstd", "many-tasks", ROLLING)
    d = only(ev, "eventlog_v2_*")
    n = len(list(d.glob("events_*")))
    if n < 3:
        sys.exit(f"rolling dir has only {n} event files; raise the task count in workload.py")
    install(ev, LOGS / "rolling/zstd")


@step("rolling/compacted")
def rolling_compacted():
    """Let the History Server compact a copy of rolling/zstd (maxFilesToRetain=1)."""
    from shs import HistoryServer

    src = only(LOGS / "rolling/zstd", "eventlog_v2_*")
    app_id = src.name[len("eventlog_v2_"):]
    logdir = fresh_dir(WORK / "compact" / "logs")
    dst = logdir / src.name
    shutil.copytree(src, dst)
    conf = {"spark.history.fs.eventLog.rolling.maxFilesToRetain": "1"}
    with HistoryServer(logdir, conf, name="shs-compact") as shs:
        shs.wait_for_apps([app_id])
        deadline = time.time() + 90
        while time.time() < deadline:
            compact = list(dst.glob("events_*.compact"))
            if compact and len(list(dst.glob("events_*"))) == 2:
                break
            time.sleep(1)
        else:
            sys.exit(f"no compaction after 90 s in {dst}: {sorted(p.name for p in dst.iterdir())}")
        time.sleep(2)  # let the SHS finish deleting the compacted originals
    out = fresh_dir(LOGS / "rolling/compacted")
    shutil.copytree(dst, out / dst.name)


@step("failed")
def failed():
    # local[2,2]: two threads, spark.task.maxFailures=2 (one retry).
    install(run("failed", "failing", PLAIN, master="local[2,2]"), LOGS / "failed")


@step("killed/single")
def killed_single():
    # A 1 KiB output buffer, so the task ends written after the last flush
    # reach the zstd stream (and some of them the disk) before the kill.
    ev = run("killed/single", "killed", {"spark.eventLog.compress": "true",
                                          "spark.eventLog.compression.codec": "zstd",
                                          "spark.eventLog.buffer.kb": "1", **SINGLE}, check=False)
    only(ev, "local-*.zstd.inprogress")
    install(ev, LOGS / "killed/single")


@step("killed/lz4")
def killed_lz4():
    # Extra: the same kill with lz4 (LZ4Block) and the default 100 KiB buffer.
    ev = run("killed/lz4", "killed", {"spark.eventLog.compress": "true",
                                       "spark.eventLog.compression.codec": "lz4", **SINGLE}, check=False)
    only(ev, "local-*.lz4.inprogress")
    install(ev, LOGS / "killed/lz4")


@step("killed/rolling")
def killed_rolling():
    ev = run("killed/rolling", "killed", ROLLING, check=False)
    d = only(ev, "eventlog_v2_*")
    only(d, "appstatus_*.inprogress")
    install(ev, LOGS / "killed/rolling")


@step("databricks")
def databricks():
    ev = run("databricks", "main", {**PLAIN, **DATABRICKS_CONF})
    src = only(ev, "local-*")
    out = fresh_dir(LOGS / "databricks")
    databricks_layout.write_layout(src, LOGS / DATABRICKS_CONTEXT)
    shutil.copy(src, WORK / "databricks-source.jsonl")  # kept outside testdata, for reference
    return out


@step("multi")
def multi():
    dest = fresh_dir(LOGS / "multi")
    ev = run("multi/a", "small", {"spark.eventLog.compress": "true",
                                   "spark.eventLog.compression.codec": "zstd", **SINGLE})
    for p in ev.iterdir():
        shutil.move(str(p), dest / p.name)
    ev = run("multi/b", "small", ROLLING)
    for p in ev.iterdir():
        shutil.move(str(p), dest / p.name)


def _tarinfo(ti: tarfile.TarInfo):
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    ti.mtime = 1_700_000_000
    return ti


@step("archives")
def archives():
    out = fresh_dir(LOGS / "archives")
    # The Databricks cluster folder as a user downloads it (a zip whose top
    # folder is the cluster id).
    cluster = LOGS / "databricks" / DATABRICKS_CLUSTER
    with zipfile.ZipFile(out / f"{DATABRICKS_CLUSTER}.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(cluster.rglob("*")):
            arc = p.relative_to(cluster.parent).as_posix()
            zi = zipfile.ZipInfo(arc + ("/" if p.is_dir() else ""), date_time=(2026, 11, 29, 12, 0, 0))
            if p.is_dir():
                z.writestr(zi, b"")
            else:
                zi.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(zi, p.read_bytes())
    # The rolling dir as a tar.gz (top folder eventlog_v2_<appId>/).
    src = only(LOGS / "rolling/zstd", "eventlog_v2_*")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        t.add(src, arcname=src.name, filter=_tarinfo)
    import gzip

    (out / f"{src.name}.tar.gz").write_bytes(gzip.compress(buf.getvalue(), mtime=0))


@step("manifest")
def manifest():
    import manifest as m

    m.write_manifest()


@step("expected")
def expected():
    import shs_expectations

    shs_expectations.main()


ORDER = ["single/plain", "single/zstd", "single/lz4", "single/snappy", "single/lzf",
         "rolling/zstd", "rolling/compacted", "failed", "killed/single", "killed/lz4", "killed/rolling",
         "databricks", "multi", "archives", "manifest", "expected"]
assert sorted(ORDER) == sorted(STEPS)


def main(argv):
    common.spark_home()  # version check
    steps = argv or ORDER
    for s in steps:
        if s not in STEPS:
            sys.exit(f"unknown step {s}; steps: {' '.join(ORDER)}")
    LOGS.mkdir(parents=True, exist_ok=True)
    for s in steps:
        STEPS[s]()
    print("done:", " ".join(steps))


if __name__ == "__main__":
    main(sys.argv[1:])
