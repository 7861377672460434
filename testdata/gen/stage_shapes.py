"""Real Spark 4.3 logs of the stage shapes whose advice differs (issue 23): the same symptom
(one slow task, few partitions, many tiny tasks, a filter) with a cause the fix depends on.

    python3 testdata/gen/stage_shapes.py [SHAPE...]     # all shapes when none is named

Writes testdata/logs/shapes/<shape>/<appId>.zstd, one zstd file per shape:

* `groupby-and-join-skew`: 90 % of the orders on customer 0, aggregated twice: once by a
  groupBy (collect_list, so the map-side combine cannot shrink the hot key) and once through a
  sort-merge join with the customers (broadcast off). Two skewed reduce stages, one behind an
  aggregation, one behind a join.
* `input-split-skew`: a folder of four 20 MB CSV files and forty of a few KB, read and written
  to the `noop` sink: no shuffle, four splits far bigger than the others.
* `repartition-write`: a 17-partition read, `repartition(2)` and a sorted parquet write, with
  little execution memory so the two write tasks spill.
* `one-core`: `local[1]`, 120 tasks of which one sleeps 3 s (an even-data straggler) on the
  only core there is.
* `partition-discovery`: a table of 150 partition directories read back with
  `spark.sql.sources.parallelPartitionDiscovery.threshold=4`, so Spark lists it with a job of
  its own ("Listing leaf files and directories ...").
* `interactive-retyped`: a `PySparkShell` session running the same join 22 times with pauses
  of 6 s (AQE runs each join's two map stages as two jobs at once), then a job whose one task
  sleeps 4 s on even data.
* `text-filter`: a text file read with `spark.read.text` and filtered on `lower(value)`: text
  sources push no filter whatever its form.
* `small-files`: 400,000 rows written as Parquet partitioned by a 40-value column straight from
  8 read partitions, so each of the 8 write tasks writes a file into each of the 40 partition
  directories (320 files of a few KB), then the table read back and aggregated.
* `small-files-fixed`: the same write after `repartition("p")`: one task per partition value
  holds all its rows, 40 files.
* `small-files-read`: another application reading the 320-file table `small-files` wrote: the
  reader pays for the files it did not write.
"""
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession, functions as F

OUT = Path(__file__).resolve().parent.parent / "logs" / "shapes"
WORK = Path(tempfile.gettempdir()) / "sparkdiag-shapes"


def session(name, master="local[2]", **conf):
    events = Path(tempfile.mkdtemp(prefix=f"sparkdiag-{name}-"))
    builder = (
        SparkSession.builder.master(master)
        .appName(f"sparkdiag-fixture {name}")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", events.as_uri())
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
    )
    for k, v in conf.items():
        builder = builder.config(k.replace("__", "."), v)
    return builder.getOrCreate(), events


def keep(name, spark, events):
    spark.stop()
    out = OUT / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for log in events.iterdir():
        shutil.copy(log, out / log.name)
        print("wrote", out / log.name)
    shutil.rmtree(events)


def scratch(name):
    d = WORK / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def groupby_and_join_skew():
    spark, events = session(
        "groupby-and-join-skew",
        # No broadcast (a sort-merge join), and no coalescing of the 8 shuffle partitions, so
        # each skewed stage keeps enough tasks for a median.
        **{
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.adaptive.coalescePartitions.enabled": "false",
            "spark.sql.shuffle.partitions": "16",
        },
    )
    sc = spark.sparkContext
    orders = spark.range(0, 1_500_000, 1, 8).select(
        F.col("id").alias("order_id"),
        F.when(F.col("id") % 10 < 9, F.lit(0)).otherwise((F.col("id") * 7919) % 999 + 1).alias("customer_id"),
        ((F.col("id") * 37) % 1000 / 10.0).alias("amount"),
    )
    customers = spark.range(0, 1000, 1, 2).select(
        F.col("id").alias("customer_id"),
        F.concat(F.lit("customer-"), F.col("id").cast("string")).alias("name"),
        (F.col("id") % 8).alias("region"),
    )
    sc.setJobDescription("groupBy skew: every order id of a customer, sorted (90% on customer 0)")
    orders.groupBy("customer_id").agg(
        F.size(F.array_sort(F.collect_list(F.sha2(F.col("order_id").cast("string"), 256)))).alias("n")
    ).write.format("noop").mode("overwrite").save()
    sc.setJobDescription("join skew: orders x customers (90% of orders on customer 0)")
    orders.join(customers, "customer_id").groupBy("region").agg(
        # a per-row CPU cost (four SHA-512s) so the reducer with the hot key is clearly the
        # longest even on a busy machine
        F.sum(
            F.crc32(F.sha2(F.sha2(F.sha2(F.sha2(F.concat_ws(":", "name", "order_id"), 512), 512), 512), 512))
        ).alias("checksum"),
    ).collect()
    keep("groupby-and-join-skew", spark, events)


def input_split_skew():
    folder = scratch("input-split-skew")
    big_row = ",".join(["%08d" % i for i in range(12)]) + "\n"
    for i in range(4):
        with open(folder / f"big-{i}.csv", "w") as f:
            f.write(big_row * (20_000_000 // len(big_row)))
    for i in range(40):
        with open(folder / f"small-{i:02}.csv", "w") as f:
            f.write(big_row * 50)
    spark, events = session(
        "input-split-skew",
        **{"spark.sql.files.maxPartitionBytes": "24m", "spark.sql.files.openCostInBytes": "4m"},
    )
    df = spark.read.csv(str(folder), inferSchema=False)
    df.select(F.sha2(F.concat_ws(",", *df.columns), 256).alias("h")).write.format("noop").mode(
        "overwrite"
    ).save()
    keep("input-split-skew", spark, events)


def repartition_write():
    out = scratch("repartition-write")
    spark, events = session("repartition-write", **{"spark.memory.fraction": "0.05"})
    df = spark.range(0, 6_000_000, 1, 17).select(
        F.col("id"),
        F.sha2(F.col("id").cast("string"), 256).alias("h"),
        F.sha2(F.col("id").cast("string"), 512).alias("h2"),
    )
    df.repartition(2).sortWithinPartitions("h").write.mode("overwrite").parquet(str(out / "t"))
    keep("repartition-write", spark, events)


def one_core():
    spark, events = session("one-core", master="local[1]")

    def slow_once(it):
        from pyspark import TaskContext

        if TaskContext.get().partitionId() == 7:
            time.sleep(3)
        return it

    spark.sparkContext.parallelize(range(120_000), 120).mapPartitions(slow_once).count()
    spark.range(0, 200_000, 1, 4).groupBy((F.col("id") % 100).alias("k")).count().collect()
    keep("one-core", spark, events)


def partition_discovery():
    out = scratch("partition-discovery")
    spark, events = session(
        "partition-discovery", **{"spark.sql.sources.parallelPartitionDiscovery.threshold": "4"}
    )
    spark.range(0, 6000, 1, 2).select(F.col("id"), (F.col("id") % 150).alias("p")).write.partitionBy("p").parquet(
        str(out / "t")
    )
    spark.read.parquet(str(out / "t")).where(F.col("id") > 10).write.format("noop").mode("overwrite").save()
    keep("partition-discovery", spark, events)


def text_filter():
    folder = scratch("text-filter")
    with open(folder / "lines.txt", "w") as f:
        for i in range(200_000):
            f.write(f"{i} {'ERROR' if i % 97 == 0 else 'INFO'} message number {i}\n")
    spark, events = session("text-filter")
    # lower() keeps the predicate from being translated into a source filter at all, so the plan
    # shows the Filter above a scan with nothing but IsNotNull pushed, as with any source.
    spark.read.text(str(folder)).filter(F.lower(F.col("value")).contains("error")).write.format("noop").mode(
        "overwrite"
    ).save()
    keep("text-filter", spark, events)


def interactive_retyped():
    """An interactive session (app name PySparkShell, as `pyspark` names it) where someone runs
    the same join again and again, thinking 6 s between tries; AQE runs each join's two shuffle
    map stages as two jobs at once. Then one job with a real straggler (one task sleeps 4 s)."""
    spark, events = session(
        "interactive-retyped",
        **{"spark.app.name": "PySparkShell", "spark.sql.autoBroadcastJoinThreshold": "-1"},
    )
    spark.sparkContext.setLogLevel("ERROR")
    left = spark.range(0, 20_000, 1, 2).select((F.col("id") % 50).alias("k"), F.col("id").alias("a"))
    right = spark.range(0, 2_000, 1, 2).select((F.col("id") % 50).alias("k"), F.col("id").alias("b"))
    for _ in range(22):
        left.join(right, "k").groupBy("k").count().collect()
        time.sleep(6)

    def slow_once(it):
        from pyspark import TaskContext

        if TaskContext.get().partitionId() == 3:
            time.sleep(4)
        return it

    spark.sparkContext.parallelize(range(10_000), 10).mapPartitions(slow_once).count()
    keep("interactive-retyped", spark, events)


def small_files(fixed=False):
    """A dynamic-partition write: without a shuffle by the partition column every write task
    writes a file into every partition directory it has rows for."""
    name = "small-files-fixed" if fixed else "small-files"
    folder = scratch(name)
    spark, events = session(name)
    rows = spark.range(0, 400_000, 1, 8).select(
        "id", (F.col("id") % 40).alias("p"), F.sha2(F.col("id").cast("string"), 256).alias("v"))
    if fixed:
        rows = rows.repartition("p")
    spark.sparkContext.setJobDescription("write events partitioned by p")
    rows.write.partitionBy("p").mode("overwrite").parquet(str(folder / "events"))
    spark.sparkContext.setJobDescription("read events back")
    spark.read.parquet(str(folder / "events")).groupBy("p").agg(F.count("v")).collect()
    keep(name, spark, events)
    if not fixed:
        spark, events = session("small-files-read")
        spark.sparkContext.setJobDescription("read the small files another job wrote")
        spark.read.parquet(str(folder / "events")).groupBy("p").agg(F.count("v")).collect()
        keep("small-files-read", spark, events)


SHAPES = {
    "interactive-retyped": interactive_retyped,
    "groupby-and-join-skew": groupby_and_join_skew,
    "input-split-skew": input_split_skew,
    "repartition-write": repartition_write,
    "one-core": one_core,
    "partition-discovery": partition_discovery,
    "text-filter": text_filter,
    "small-files": small_files,
    "small-files-fixed": lambda: small_files(fixed=True),
}

if __name__ == "__main__":
    for name in sys.argv[1:] or list(SHAPES):
        SHAPES[name]()
