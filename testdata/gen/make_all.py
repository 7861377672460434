"""Regenerate every fixture under testdata/logs/ (and testdata/expected/).

    python3 testdata/gen/make_all.py              # everything, in order
    python3 testdata/gen/make_all.py single/zstd manifest   # some steps
    python3 testdata/gen/make_all.py patterns               # only the patterns/* steps

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
    import shs_streaming

    shs_expectations.main()
    shs_streaming.main()


# ------------------------------------------------------------------ patterns/
# One real log per planted performance problem (or none), for the detectors:
# testdata/logs/patterns/<name>/ (single zstd file), testdata/plans/<name>.txt
# (the main query's explain(mode="formatted")), and PATTERNS.tsv (measured by
# patterns.py from the logs). Run only these with `make_all.py patterns`.

PATTERN_LOG = {"spark.eventLog.compress": "true", "spark.eventLog.compression.codec": "zstd", **SINGLE}
LOCAL_CLUSTER = "local-cluster[2,1,1024]"  # 2 executor JVMs, 1 core and 1 GB each
AQE_OFF = {"spark.sql.adaptive.enabled": "false"}
NO_BROADCAST = {"spark.sql.autoBroadcastJoinThreshold": "-1"}
PLANS = LOGS.parent / "plans"


def pattern(name, scenario, conf=None, master="local[2]", sets=None):
    """Run one pattern app; install its single zstd log in logs/patterns/NAME/."""
    ev = fresh_dir(WORK / "patterns" / name / "events")
    PLANS.mkdir(parents=True, exist_ok=True)
    plan = PLANS / f"{name}.txt"
    if plan.exists():
        plan.unlink()
    conf = {"spark.app.name": f"sparkdiag-pattern {name}", **PATTERN_LOG, **(conf or {})}
    extra = ["--plan-out", plan] + [a for k, v in (sets or {}).items() for a in ("--set", f"{k}={v}")]
    print(f"[{time.strftime('%H:%M:%S')}] patterns/{name}: running '{scenario}' on {master}", flush=True)
    t0 = time.time()
    run_app(scenario, ev, conf, master=master, extra=extra)
    log = only(ev, "*.zstd")
    if not plan.is_file():
        sys.exit(f"{scenario} wrote no plan to {plan}")
    print(f"  {time.time() - t0:.0f} s; {log.name}: {log.stat().st_size:,} bytes", flush=True)
    install(ev, LOGS / "patterns" / name)


PATTERN_STEPS = {
    "skew-join": lambda: pattern("skew-join", "skew-join", {
        **AQE_OFF, **NO_BROADCAST, "spark.sql.shuffle.partitions": "16"}),
    "skew-join-aqe": lambda: pattern("skew-join-aqe", "skew-join", {
        **NO_BROADCAST, "spark.sql.shuffle.partitions": "16",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.skewJoin.enabled": "true",
        "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "1m",
        "spark.sql.adaptive.advisoryPartitionSizeInBytes": "1m"}),
    "straggler": lambda: pattern("straggler", "straggler", master=LOCAL_CLUSTER),
    "tiny-partitions": lambda: pattern("tiny-partitions", "tiny-partitions", {
        **AQE_OFF, "spark.sql.shuffle.partitions": "2000"}),
    "tiny-partitions-fixed": lambda: pattern("tiny-partitions-fixed", "tiny-partitions", {
        "spark.sql.adaptive.enabled": "true", "spark.sql.shuffle.partitions": "2000"}),
    "spill": lambda: pattern("spill", "spill", {
        "spark.driver.memory": "512m", "spark.memory.fraction": "0.1",
        "spark.sql.shuffle.partitions": "2"}, master="local[1]"),
    # 450m: the smallest executor heap Spark accepts (1.5 x 300m reserved).
    "gc-pressure": lambda: pattern("gc-pressure", "gc", {
        **AQE_OFF, "spark.executor.memory": "450m"}, master=LOCAL_CLUSTER),
    "gc-healthy": lambda: pattern("gc-healthy", "gc", {
        **AQE_OFF, "spark.executor.memory": "1g"}, master=LOCAL_CLUSTER, sets={"GC_COUNT_ONLY": 1, "GC_ROWS": 1_000_000_000}),
    "driver-loop-serial": lambda: pattern("driver-loop-serial", "driver-loop-serial"),
    "driver-loop-threadpool": lambda: pattern("driver-loop-threadpool", "driver-loop-threadpool"),
    "driver-loop-fixed": lambda: pattern("driver-loop-fixed", "driver-loop-fixed", {
        "spark.sql.sources.partitionOverwriteMode": "dynamic"}),
    "executor-lost": lambda: pattern("executor-lost", "executor-lost", master=LOCAL_CLUSTER),
    "broadcast-disabled": lambda: pattern("broadcast-disabled", "broadcast-disabled", {
        **AQE_OFF, **NO_BROADCAST}),
    "healthy": lambda: pattern("healthy", "healthy", {"spark.sql.adaptive.enabled": "true"}),
}
for _name, _fn in PATTERN_STEPS.items():
    step(f"patterns/{_name}")(_fn)


@step("patterns/tsv")
def patterns_tsv():
    import patterns

    patterns.write_tsv()


ORDER = ["single/plain", "single/zstd", "single/lz4", "single/snappy", "single/lzf",
         "rolling/zstd", "rolling/compacted", "failed", "killed/single", "killed/lz4", "killed/rolling",
         "databricks", "multi", "archives", "manifest", "expected"]
ORDER += [f"patterns/{n}" for n in PATTERN_STEPS] + ["patterns/tsv"]
assert sorted(ORDER) == sorted(STEPS)
# Step groups: `make_all.py patterns` runs every patterns/* step, in order.
GROUPS = {"patterns": [s for s in ORDER if s.startswith("patterns/")]}


def main(argv):
    common.spark_home()  # version check
    steps = [s for a in (argv or ORDER) for s in GROUPS.get(a, [a])]
    for s in steps:
        if s not in STEPS:
            sys.exit(f"unknown step {s}; steps: {' '.join(ORDER)} (groups: {' '.join(GROUPS)})")
    LOGS.mkdir(parents=True, exist_ok=True)
    for s in steps:
        STEPS[s]()
    print("done:", " ".join(steps))


if __name__ == "__main__":
    main(sys.argv[1:])
