"""Streaming and Spark Connect fixtures: `logs/streaming/<scenario>/`.

Each scenario is one real Spark 4.3.0 application under `local[2]`, run in its own process,
writing a zstd event log. A minute or less of micro-batches each, so the logs stay small.

    python3 testdata/gen/streaming.py                 # every scenario
    python3 testdata/gen/streaming.py behind healthy  # only some

Structured Streaming (the `StreamingQueryListener$Query*Event` lines are logged by Spark's
listener bus without any setting):
* `behind`: a rate source at 10 rows/s through a Python UDF that sleeps 240 ms a row (about
  8 rows/s on two cores), on a 1 s trigger: every batch takes longer than its trigger, reads
  more rows than the last, and the input outruns processing.
* `healthy`: 20 rows/s, a projection to the `noop` sink every 2 s.
* `state_no_watermark`: a streaming `groupBy(value).count()` (update mode) without a
  watermark: the state holds every key ever seen.
* `tiny_200`: a streaming `groupBy(value % 5).count()` with the default 200 shuffle partitions
  on batches of a few rows.
* `tiny_fixed`: the same query after its fix, 2 shuffle partitions on a new checkpoint: the
  pair `sparkdiag diff` compares batch for batch.
* `late_rows`: a windowed count with a 10 s watermark where one row in ten claims to be two
  minutes old: those rows are dropped behind the watermark.
* `behind_files`: a JSON file source fed four files of 20 rows a second by a thread of the
  program, read through a UDF that sleeps 120 ms a row (about 17 rows/s on two cores), with
  `maxFilesPerTrigger=8`: the files arrive faster than the batches take them.
* `idle`: a file source given one file, then nothing, on a 1 s trigger for 70 s: every
  trigger after the first finds no new data (`QueryIdleEvent`).
* `stopped`: a `foreachBatch` whose job runs a UDF that sleeps 1.5 s a row; the program calls
  `query.stop()` 1.5 s after the second batch reported, while the third runs (its job is
  cancelled).
* `failed_udf`: a UDF that raises `ValueError` once `value` reaches 60 (about the sixth batch);
  the query terminates with the exception.
DStreams:
* `dstreams`: a `queueStream` of small RDDs on a 1 s batch interval whose map sleeps, so the
  batches queue up; the program stops the `StreamingContext` while a batch runs.
Spark Connect:
* `connect`: a local Spark Connect server (`SparkSession.builder.remote("local[2]")` starts one
  in the client's process) serving two client sessions, then shut down. Needs
  `pip install grpcio grpcio-status protobuf googleapis-common-protos zstandard pandas pyarrow`
  (in `target/venv-connect`, made with `--system-site-packages`, is where this script looks).
* `connect_clients`: the same server serving two other client processes at once, `alice` and
  `bob` (`sc://localhost:15002/;user_id=...`), whose queries interleave on the server; then shut
  down.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LOGS, WORK, fresh_dir, spark_env  # noqa: E402

OUT = LOGS / "streaming"
SCENARIOS = ["behind", "behind_files", "healthy", "state_no_watermark", "tiny_200", "tiny_fixed", "late_rows", "idle",
             "stopped", "failed_udf", "dstreams", "connect", "connect_clients"]


def event_log_conf(event_dir):
    """Every fixture's event log: one zstd file in `event_dir`, no UI."""
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(event_dir),
            "spark.eventLog.compress": "true", "spark.eventLog.compression.codec": "zstd",
            "spark.eventLog.rolling.enabled": "false", "spark.ui.enabled": "false"}


def session(event_dir, name, conf=None):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master("local[2]").appName(name)
    for k, v in {**event_log_conf(event_dir),
                 "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true", **(conf or {})}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def checkpoint(name):
    path = WORK / "checkpoints" / name
    if path.exists():
        import shutil
        shutil.rmtree(path)
    return str(path)


def run_for(query, seconds):
    query.awaitTermination(seconds)
    query.stop()


def slow_udf(spark, seconds):
    """A UDF that sleeps `seconds` a row, its Python workers started first (they are reused),
    so the first batch is not the warm-up."""
    from pyspark.sql.functions import udf

    @udf("long")
    def slow(v):
        import time as t
        t.sleep(seconds)
        return v

    spark.range(0, 4, 1, 2).select(slow("id")).collect()
    return slow


def behind(event_dir):
    spark = session(event_dir, "streaming-behind", {"spark.sql.shuffle.partitions": "2"})
    slow = slow_udf(spark, 0.24)
    df = spark.readStream.format("rate").option("rowsPerSecond", 10).load()
    q = (df.select(slow("value").alias("v")).writeStream.format("noop")
         .queryName("slow_rate").trigger(processingTime="1 second")
         .option("checkpointLocation", checkpoint("behind")).start())
    run_for(q, 90)
    spark.stop()


def behind_files(event_dir):
    import json as js
    import shutil
    import threading
    spark = session(event_dir, "streaming-behind-files", {"spark.sql.shuffle.partitions": "2"})
    slow = slow_udf(spark, 0.12)
    inbox = WORK / "behind-files-inbox"
    if inbox.exists():
        shutil.rmtree(inbox)
    inbox.mkdir(parents=True)
    stop = threading.Event()

    def feed():
        n = 0
        while not stop.is_set():
            for _ in range(4):
                tmp = inbox / f".part-{n:06}.json"
                tmp.write_text("".join(js.dumps({"n": n * 20 + i}) + "\n" for i in range(20)))
                tmp.rename(inbox / f"part-{n:06}.json")
                n += 1
            stop.wait(1.0)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    df = spark.readStream.schema("n long").option("maxFilesPerTrigger", 8).json(str(inbox))
    q = (df.select(slow("n").alias("v")).writeStream.format("noop")
         .queryName("slow_files").trigger(processingTime="1 second")
         .option("checkpointLocation", checkpoint("behind_files")).start())
    run_for(q, 75)
    stop.set()
    spark.stop()


def healthy(event_dir):
    spark = session(event_dir, "streaming-healthy", {"spark.sql.shuffle.partitions": "2"})
    df = spark.readStream.format("rate").option("rowsPerSecond", 20).load()
    q = (df.selectExpr("value * 2 AS doubled", "timestamp").writeStream.format("noop")
         .queryName("doubling").trigger(processingTime="2 seconds")
         .option("checkpointLocation", checkpoint("healthy")).start())
    run_for(q, 40)
    spark.stop()


def state_no_watermark(event_dir):
    spark = session(event_dir, "streaming-state-no-watermark", {"spark.sql.shuffle.partitions": "2"})
    df = spark.readStream.format("rate").option("rowsPerSecond", 100).load()
    q = (df.groupBy("value").count().writeStream.format("noop").outputMode("update")
         .queryName("count_by_value").trigger(processingTime="2 seconds")
         .option("checkpointLocation", checkpoint("state")).start())
    run_for(q, 45)
    spark.stop()


def count_mod5(event_dir, app_name, conf, checkpoint_name):
    """A streaming `groupBy(value % 5).count()` on a 10 s trigger for 300 s: the query of the
    `tiny_200` / `tiny_fixed` pair."""
    spark = session(event_dir, app_name, conf)
    df = spark.readStream.format("rate").option("rowsPerSecond", 3).load()
    q = (df.selectExpr("value % 5 AS k").groupBy("k").count().writeStream.format("noop")
         .outputMode("update").queryName("count_mod5").trigger(processingTime="10 seconds")
         .option("checkpointLocation", checkpoint(checkpoint_name)).start())
    run_for(q, 300)
    spark.stop()


def tiny_200(event_dir):
    count_mod5(event_dir, "streaming-tiny-200", None, "tiny")


def tiny_fixed(event_dir):
    """`tiny_200`'s query after its fix: 2 shuffle partitions, on a new checkpoint (a stateful
    query keeps the partition count of its checkpoint). The pair is what `diff` compares."""
    count_mod5(event_dir, "streaming-tiny-fixed", {"spark.sql.shuffle.partitions": "2"},
               "tiny-fixed")


def late_rows(event_dir):
    from pyspark.sql.functions import window
    spark = session(event_dir, "streaming-late-rows", {"spark.sql.shuffle.partitions": "2"})
    df = spark.readStream.format("rate").option("rowsPerSecond", 20).load()
    # One row in ten claims to be two minutes old: behind a 10 s watermark, so it is dropped.
    events = df.selectExpr(
        "CASE WHEN value % 10 = 0 THEN timestamp - INTERVAL 2 MINUTES ELSE timestamp END AS ts",
        "value")
    counts = (events.withWatermark("ts", "10 seconds")
              .groupBy(window("ts", "5 seconds")).count())
    q = (counts.writeStream.format("noop").outputMode("update").queryName("windowed_counts")
         .trigger(processingTime="2 seconds")
         .option("checkpointLocation", checkpoint("late")).start())
    run_for(q, 50)
    spark.stop()


def idle(event_dir):
    import json as js
    spark = session(event_dir, "streaming-idle", {"spark.sql.shuffle.partitions": "2"})
    inbox = WORK / "idle-inbox"
    if inbox.exists():
        import shutil
        shutil.rmtree(inbox)
    inbox.mkdir(parents=True)
    (inbox / "first.json").write_text(js.dumps({"n": 1}) + "\n")
    df = spark.readStream.schema("n long").json(str(inbox))
    q = (df.writeStream.format("noop").queryName("mostly_idle")
         .trigger(processingTime="1 second")
         .option("checkpointLocation", checkpoint("idle")).start())
    run_for(q, 70)
    spark.stop()


def stopped(event_dir):
    spark = session(event_dir, "streaming-stopped", {"spark.sql.shuffle.partitions": "2"})

    def slow_batch(batch, batch_id):
        from pyspark.sql.functions import udf

        @udf("long")
        def slow(v):
            import time as t
            t.sleep(1.5)
            return v
        # The sum needs every UDF value, so the batch's job runs for seconds.
        batch.select(slow("value").alias("v")).groupBy().sum("v").collect()

    df = spark.readStream.format("rate").option("rowsPerSecond", 2).load()
    q = (df.writeStream.foreachBatch(slow_batch).queryName("slow_sink")
         .trigger(processingTime="1 second")
         .option("checkpointLocation", checkpoint("stopped")).start())
    # Wait until the third batch is running, then stop the query under it.
    while q.lastProgress is None or q.lastProgress["batchId"] < 1:
        time.sleep(0.2)
    time.sleep(1.5)
    q.stop()
    spark.stop()


def failed_udf(event_dir):
    from pyspark.sql.functions import udf
    spark = session(event_dir, "streaming-failed-udf", {"spark.sql.shuffle.partitions": "2"})

    @udf("long")
    def checked(v):
        if v >= 60:
            raise ValueError(f"value {v} is out of range")
        return v

    df = spark.readStream.format("rate").option("rowsPerSecond", 10).load()
    q = (df.select(checked("value").alias("v")).writeStream.format("noop")
         .queryName("checked_values").trigger(processingTime="1 second")
         .option("checkpointLocation", checkpoint("failed")).start())
    try:
        q.awaitTermination(60)
    except Exception as e:  # the query's own exception, expected
        print("query failed as intended:", type(e).__name__)
    spark.stop()


def dstreams(event_dir):
    from pyspark import SparkConf, SparkContext
    from pyspark.streaming import StreamingContext

    conf = (SparkConf().setMaster("local[2]").setAppName("dstreams-queue")
            .set("spark.eventLog.enabled", "true").set("spark.eventLog.dir", str(event_dir))
            .set("spark.eventLog.compress", "true")
            .set("spark.eventLog.compression.codec", "zstd").set("spark.ui.enabled", "false")
            .set("spark.eventLog.rolling.enabled", "false"))
    sc = SparkContext(conf=conf)
    sc.setLogLevel("WARN")
    ssc = StreamingContext(sc, 1)

    def slow(x):
        import time as t
        t.sleep(0.3)
        return x

    rdds = [sc.parallelize(range(i * 10, i * 10 + 10), 2) for i in range(60)]
    ssc.queueStream(rdds, oneAtATime=True).map(slow).count().pprint()
    ssc.start()
    time.sleep(30.5)
    ssc.stop(stopSparkContext=True, stopGraceFully=False)


def local_connect_server(event_dir, app_name):
    """A Spark Connect server started in this process (`remote("local[2]")`, port 15002) logging
    to `event_dir`, and this process's client session on it."""
    from pyspark.sql import SparkSession

    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    b = SparkSession.builder.remote("local[2]").appName(app_name)
    for k, v in {**event_log_conf(event_dir), "spark.sql.shuffle.partitions": "4"}.items():
        b = b.config(k, v)
    return b.getOrCreate()


def connect(event_dir):
    first = local_connect_server(event_dir, "connect-server")
    # A second client session on the same server: a new session id.
    second = first.newSession()
    first.range(0, 200000, 1, 4).selectExpr("id % 97 AS k").groupBy("k").count().collect()
    second.range(0, 50000, 1, 2).selectExpr("id % 7 AS k", "id").groupBy("k").sum("id").collect()
    first.range(0, 2000000, 1, 4).selectExpr("sum(id)").collect()
    second.range(0, 1000).count()
    first.stop()


def connect_clients(event_dir):
    server = local_connect_server(event_dir, "connect-clients")
    server.range(1).count()  # the server is up before the clients dial in
    clients = [subprocess.Popen([sys.executable, __file__, "--client", user]) for user in ("alice", "bob")]
    codes = [c.wait() for c in clients]
    if any(codes):
        raise SystemExit(f"a client failed: {codes}")
    server.stop()


def client(user):
    """One client process of `connect_clients`: three queries of its own on the shared server."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.remote(f"sc://localhost:15002/;user_id={user}").getOrCreate()
    rows = 400000 if user == "alice" else 100000
    for i in range(3):
        spark.range(0, rows, 1, 4).selectExpr(f"id % {7 + i} AS k", "id").groupBy("k").sum("id").collect()
    spark.stop()


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--client":
        client(sys.argv[2])
        return
    if len(sys.argv) >= 3 and sys.argv[1] == "--run":
        name, event_dir = sys.argv[2], Path(sys.argv[3])
        globals()[name](event_dir)
        return
    chosen = sys.argv[1:] or SCENARIOS
    for name in chosen:
        event_dir = fresh_dir(OUT / name)
        out = WORK / f"streaming-{name}.out"
        out.parent.mkdir(parents=True, exist_ok=True)
        python = sys.executable
        venv = Path(__file__).resolve().parents[2] / "target" / "venv-connect" / "bin" / "python"
        if name.startswith("connect") and venv.exists():
            python = str(venv)
        print(f"{name}: running (output in {out})", flush=True)
        with open(out, "w") as fh:
            proc = subprocess.run(["nice", "-n", "10", python, __file__, "--run", name, str(event_dir)],
                                  env=spark_env(), stdout=fh, stderr=subprocess.STDOUT)
        files = sorted(p.name for p in event_dir.iterdir())
        print(f"{name}: rc={proc.returncode} files={files}", flush=True)


if __name__ == "__main__":
    main()
