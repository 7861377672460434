"""Out-of-memory fixtures and their fixes: `testdata/logs/memory/<scenario>/<appId>.zstd`.

    python3 testdata/gen/memory.py                   # every scenario, one JVM at a time
    python3 testdata/gen/memory.py heap-oom-wide ... # only some
    python3 testdata/gen/memory.py heap-oom-wide --conf k=v ... --as NAME
                                                     # one scenario with extra settings, saved
                                                     # as NAME (how the *-fixed reruns are made)

Every scenario runs on `local-cluster[2,1,W]` (two executor JVMs, one core each, separate from
the driver), so an executor can run out of its own heap and die as on a cluster. Each log is
written by real Spark (pyspark 4.3); nothing is edited.

* heap-oom-wide: 96 groups of 2,000 strings of 400 bytes (about 77 MB of text) gathered with
  `collect_list` into only `spark.sql.shuffle.partitions=2` partitions on 512 MiB executors.
  ObjectHashAggregate holds every group of a partition in the heap at once (up to 128 keys
  before it falls back to sorting), so each task holds half the data as Java objects:
  `java.lang.OutOfMemoryError: Java heap space`, the executor exits (code 52), the retry dies
  the same way and the job fails. The cause is the partition count, not the data.
* heap-oom-wide-healthy: the same script and settings with a quarter of the groups: it fits.
* heap-oom-hot-key: the same total data and 64 partitions, but one key holds 80 % of the rows,
  shuffled by key (`repartition("k")`) before the `collect_list`: the one task that reads that
  key runs out of heap; more partitions would not help.
* driver-max-result: `collect()` of about 12 MB of rows with `spark.driver.maxResultSize=4m`:
  the driver aborts the job ("Total size of serialized results ... is bigger than
  spark.driver.maxResultSize").
* python-worker-memory: a Python `mapPartitions` that builds a 400 MB list under
  `spark.executor.pyspark.memory=128m`: the worker's address-space limit raises `MemoryError`.
* corrupt-parquet: a Parquet folder holding one file that is not Parquet: the task fails in a
  wrapper exception whose innermost `Caused by:` names the file (not memory: the failure chain).
* metaspace: forty distinct wide queries (60 computed columns each, their own generated classes)
  on executors whose JVMs cap class metadata at `-XX:MaxMetaspaceSize=56m`: tasks fail with
  `java.lang.OutOfMemoryError: Metaspace`, the executors exit with code 52 (which alone reads as
  the heap), the retries on fresh executors get through and no job fails. `metaspace-fixed` is
  its rerun with the cap sparkdiag recommends (`-XX:MaxMetaspaceSize=112m`).
* overprovisioned: 4 GiB executors (`local-cluster[2,1,4608]`) for a few small aggregations
  that peak at tens of MiB of heap, with process-tree metrics on.
* overprovisioned-standalone: a real standalone cluster (a Master and a Worker started here
  with `spark-class` on loopback, so `spark.master` is `spark://...`, where sparkdiag can name
  `spark.cores.max`): four 4 GiB executors of one core each for aggregations whose stages have
  two tasks each, so two of the four cores and almost all the heap sit idle. sparkdiag's one
  `--conf` list lowers both; `overprovisioned-standalone-fixed` is the rerun with that list.

Logs over 500 KB are recompressed as one zstd level-19 frame (the same events byte for byte).

The `-fixed` folders are the same scripts rerun with exactly the settings `sparkdiag analyze`
recommended for the log beside them (see README, "Proving the memory advice").
"""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

OUT = common.LOGS / "memory"

BASE = {
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.eventLog.rolling.enabled": "false",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
    "spark.task.maxFailures": "2",
    "spark.sql.execution.pythonUDF.arrow.enabled": "false",
}

SMALL = "local-cluster[2,1,1024]"
# A standalone cluster of one Worker started by this script (see `standalone_cluster`).
STANDALONE = "standalone"
BIG = "local-cluster[2,1,4608]"

SCENARIOS = {
    "heap-oom-wide": (SMALL, {
        "spark.executor.memory": "512m",
        "spark.sql.shuffle.partitions": "2",
    }),
    "heap-oom-wide-healthy": (SMALL, {
        "spark.executor.memory": "512m",
        "spark.sql.shuffle.partitions": "2",
    }),
    "heap-oom-hot-key": (SMALL, {
        "spark.executor.memory": "512m",
        "spark.sql.shuffle.partitions": "64",
    }),
    "driver-max-result": (SMALL, {
        "spark.executor.memory": "512m",
        "spark.driver.maxResultSize": "4m",
        "spark.sql.shuffle.partitions": "8",
    }),
    "python-worker-memory": (SMALL, {
        "spark.executor.memory": "512m",
        "spark.executor.pyspark.memory": "128m",
        "spark.executor.processTreeMetrics.enabled": "true",
    }),
    "corrupt-parquet": (SMALL, {
        "spark.executor.memory": "512m",
    }),
    "metaspace": (SMALL, {
        "spark.executor.memory": "512m",
        # The JVM's own cap on class metadata, far under what Spark's classes and the queries'
        # generated code take: the heap has room, the metaspace does not.
        "spark.executor.extraJavaOptions": "-XX:MaxMetaspaceSize=56m",
        "spark.sql.adaptive.enabled": "false",
    }),
    "overprovisioned-standalone": (STANDALONE, {
        "spark.executor.memory": "4g",
        "spark.executor.cores": "1",
        "spark.cores.max": "4",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.adaptive.enabled": "false",
        "spark.executor.processTreeMetrics.enabled": "true",
    }),
    "overprovisioned": (BIG, {
        "spark.executor.memory": "4g",
        "spark.sql.shuffle.partitions": "8",
        "spark.executor.processTreeMetrics.enabled": "true",
        "spark.eventLog.logStageExecutorMetrics": "true",
    }),
}

ROWS_PER_GROUP = 5000
TEXT = 2000


def groups(spark, n_groups, hot_share=None):
    """n_groups * ROWS_PER_GROUP rows (key, 400-byte string); with hot_share, that share of the
    rows has key 0 and the rest spread over the other keys."""
    from pyspark.sql import functions as F

    rows = n_groups * ROWS_PER_GROUP
    df = spark.range(0, rows, 1, 8)
    if hot_share is None:
        key = F.col("id") % n_groups
    else:
        cut = int(rows * hot_share)
        key = F.when(F.col("id") < cut, F.lit(0)).otherwise(1 + F.col("id") % (n_groups - 1))
    # Random letters, so the shuffle's compression does not shrink a partition to nothing.
    text = F.concat(F.col("id").cast("string"), F.lit("-"), F.randstr(F.lit(TEXT), F.lit(7)))
    return df.select(key.alias("k"), text.alias("v"))


def gather(spark, n_groups, hot_share=None):
    from pyspark.sql import functions as F

    spark.sparkContext.setJobGroup("gather", "collect_list of every group's strings")
    rows = groups(spark, n_groups, hot_share)
    if hot_share is not None:
        # Shuffled by key before the aggregation, so that the hot key's rows all meet in one
        # reduce task (without it the map side's partial aggregation holds them first).
        rows = rows.repartition("k")
    out = (rows.groupBy("k")
           .agg(F.collect_list("v").alias("vs"))
           .select("k", F.size("vs").alias("n")))
    try:
        print("rows gathered:", out.agg(F.sum("n")).collect()[0][0], flush=True)
    except Exception as e:  # the failing scenarios are meant to fail
        print("failed:", str(e).splitlines()[0], flush=True)


def heap_oom_wide(spark):
    gather(spark, 96)


def heap_oom_wide_healthy(spark):
    gather(spark, 24)


def heap_oom_hot_key(spark):
    gather(spark, 96, hot_share=0.8)


def driver_max_result(spark):
    from pyspark.sql import functions as F

    rows = spark.range(0, 30_000, 1, 4).select(
        "id", F.randstr(F.lit(400), F.lit(3)).alias("v"))
    try:
        print("rows:", len(rows.collect()), flush=True)
    except Exception as e:
        print("failed:", str(e).splitlines()[0], flush=True)


def python_worker_memory(spark):
    sc = spark.sparkContext

    def hoard(it):
        keep = []
        for x in it:
            keep.append(bytearray(4 << 20))  # 4 MiB a row, kept
            if len(keep) >= 100:
                break
        yield len(keep)

    try:
        print("hoarded:", sc.parallelize(range(200), 2).mapPartitions(hoard).collect(), flush=True)
    except Exception as e:
        print("failed:", str(e).splitlines()[0], flush=True)


def metaspace(spark):
    """Forty distinct wide queries: each compiles its own generated classes on the executors,
    and class metadata lives in the metaspace, outside the heap."""
    from pyspark.sql import functions as F

    base = spark.range(0, 20_000, 1, 4)
    spark.sparkContext.setJobGroup("codegen", "forty queries, each with classes of its own")
    try:
        for i in range(40):
            cols = [((F.col("id") * (i + 1) + j) % (97 + i)).alias(f"c{j}") for j in range(60)]
            print(i, base.select(*cols).agg(*[F.sum(f"c{j}") for j in range(60)]).collect()[0][0],
                  flush=True)
    except Exception as e:
        print("failed:", str(e).splitlines()[0], flush=True)


def overprovisioned(spark):
    from pyspark.sql import functions as F

    facts = spark.range(0, 2_000_000, 1, 8).select(
        "id", (F.col("id") % 1000).alias("k"), (F.col("id") % 7).alias("d"))
    # Enough rounds that each executor runs tasks for over a minute: a peak means something
    # only over real work (GC002's guard).
    for i in range(40):
        facts.groupBy("k").agg(F.sum("id"), F.countDistinct("d")).collect()
        facts.where(F.col("d") == i % 7).groupBy("d").count().collect()


def overprovisioned_standalone(spark):
    from pyspark.sql import functions as F

    # Two partitions at every step: two tasks a stage, whatever the cores. The hashing keeps
    # each task busy for seconds with almost no heap, so every executor runs tasks for over a
    # minute (GC002's guard) while two of the four cores wait.
    facts = spark.range(0, 16_000_000, 1, 2).select(
        "id", (F.col("id") % 1000).alias("k"), (F.col("id") % 7).alias("d"))
    for i in range(12):
        facts.groupBy("k").agg(
            F.sum(F.length(F.sha2(F.col("id").cast("string"), 256))),
            F.countDistinct("d")).collect()
        facts.where(F.col("d") == i % 7).groupBy("d").count().collect()


def corrupt_parquet(spark):
    """A Parquet folder with one file that is not Parquet: the task fails in a wrapper
    exception whose `Caused by:` names the file."""
    import os

    path = os.path.join(str(common.WORK), "memory", "corrupt-parquet-data")
    spark.range(0, 1000, 1, 2).write.mode("overwrite").parquet(path)
    with open(os.path.join(path, "part-99999-broken.parquet"), "wb") as fh:
        fh.write(b"this is not a parquet file" * 100)
    try:
        print("rows:", spark.read.parquet(path).count(), flush=True)
    except Exception as e:
        print("failed:", str(e).splitlines()[0], flush=True)


WORKLOADS = {
    "heap-oom-wide": heap_oom_wide,
    "heap-oom-wide-healthy": heap_oom_wide_healthy,
    "heap-oom-hot-key": heap_oom_hot_key,
    "driver-max-result": driver_max_result,
    "python-worker-memory": python_worker_memory,
    "metaspace": metaspace,
    "overprovisioned": overprovisioned,
    "overprovisioned-standalone": overprovisioned_standalone,
    "corrupt-parquet": corrupt_parquet,
}


def run_one(name, event_dir, extra):
    """In this process: one Spark application writing its log to event_dir."""
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    master, conf = SCENARIOS[name]
    conf = {**BASE, **conf, **extra, "spark.app.name": f"sparkdiag-fixture memory {name}",
            "spark.eventLog.dir": Path(event_dir).resolve().as_uri()}
    if master == STANDALONE:
        master = os.environ["SPARKDIAG_STANDALONE_MASTER"]
    elif "spark.executor.memory" in extra:
        # The standalone worker must offer at least what an executor asks for.
        mib = int(common_memory_mib(extra["spark.executor.memory"])) + 512
        master = f"local-cluster[2,1,{max(mib, 1024)}]"
    b = SparkSession.builder.master(master)
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    start = time.time()
    WORKLOADS[name](spark)
    print(f"workload seconds: {time.time() - start:.1f}", flush=True)
    spark.stop()


def common_memory_mib(text):
    text = text.strip().lower().rstrip("b")
    scale = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1 << 20}
    if text[-1] in scale:
        return float(text[:-1]) * scale[text[-1]]
    return float(text)


def repack(log):
    """The log's bytes; a large zstd log recompressed as one level-19 frame (the same events
    byte for byte: Spark writes many small level-1 frames, 2 MB where 265 KB will do)."""
    data = log.read_bytes()
    if log.suffix != ".zstd" or len(data) < 500_000 or not shutil.which("zstd"):
        return data
    plain = subprocess.run(["zstd", "-dc", str(log)], capture_output=True, check=True).stdout
    return subprocess.run(["zstd", "-19", "-q", "-c"], input=plain, capture_output=True,
                          check=True).stdout


def wait_for(ready, what, daemon, log, seconds=120):
    """Polls `ready` until it holds; fails naming what it waited for and the daemon's log, at
    once if the daemon has exited."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if daemon.poll() is not None:
            sys.exit(f"the daemon exited (code {daemon.returncode}) before {what}; see {log}")
        with contextlib.suppress(OSError, ValueError):
            if ready():
                return
        time.sleep(0.5)
    sys.exit(f"gave up after {seconds} s waiting for {what}; see {log}")


def listening(port):
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def worker_alive(ui_port):
    """The master's web UI lists its workers and their states at /json."""
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json", timeout=2) as page:
        return any(w.get("state") == "ALIVE" for w in json.load(page).get("workers", []))


@contextlib.contextmanager
def standalone_cluster(env, log_dir):
    """A standalone Master and one Worker (4 cores, 18 GiB to offer) on loopback, started with
    Spark's own `spark-class` and stopped afterwards; yields the master URL."""
    port, ui_port = common.free_port(), common.free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(common.local_cluster_home() / "bin" / "spark-class")
    daemons = []
    try:
        for name, args in (
            ("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                        "--port", str(port), "--webui-port", str(ui_port)]),
            ("worker", ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                        "--cores", "4", "--memory", "18g", "--webui-port", str(common.free_port()),
                        "--work-dir", str(common.fresh_dir(log_dir / "worker-work"))]),
        ):
            out = open(log_dir / f"{name}.out", "w")
            daemons.append(subprocess.Popen(["nice", "-n", "10", spark_class, *args], env=env,
                                            stdout=out, stderr=subprocess.STDOUT))
            # The worker needs the master listening; the application needs the worker
            # registered, or it starts with no executor to run on.
            if name == "master":
                wait_for(lambda: listening(port), "the standalone master listened",
                         daemons[-1], log_dir / "master.out")
        wait_for(lambda: worker_alive(ui_port), "a worker was ALIVE on the master's /json page",
                 daemons[-1], log_dir / "worker.out")
        yield url
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.wait(timeout=20)
            if daemon.poll() is None:
                daemon.kill()


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--run":
        extra = dict(a.split("=", 1) for a in args[3:])
        run_one(args[1], args[2], extra)
        return
    extra, names, save_as = {}, [], None
    while args:
        a = args.pop(0)
        if a == "--conf":
            k, v = args.pop(0).split("=", 1)
            extra[k] = v
        elif a == "--as":
            save_as = args.pop(0)
        else:
            names.append(a)
    names = names or list(SCENARIOS)
    for name in names:
        label = save_as or name
        events = common.fresh_dir(common.WORK / "memory" / label)
        env = common.spark_env()
        env["SPARK_HOME"] = str(common.local_cluster_home())
        out = events.parent / f"{label}.out"
        cluster = (standalone_cluster(env, events.parent) if SCENARIOS[name][0] == STANDALONE
                   else contextlib.nullcontext(None))
        with open(out, "w") as fh, cluster as master_url:
            if master_url:
                env["SPARKDIAG_STANDALONE_MASTER"] = master_url
            cmd = ["nice", "-n", "10", sys.executable, __file__, "--run", name, str(events)]
            cmd += [f"{k}={v}" for k, v in extra.items()]
            rc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            sys.exit(f"{label} failed (rc={rc}); see {out}")
        dest = common.fresh_dir(OUT / label)
        for log in events.iterdir():
            (dest / log.name).write_bytes(repack(log))
            print("wrote", dest / log.name, flush=True)


if __name__ == "__main__":
    main()
