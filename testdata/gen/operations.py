"""Real Spark 4.3 logs of the operations behind issue 46's findings: the stage's shape comes from
what the program did (its source, a repartition, an exact percentile, a gzip file, a Hive
insert, a library, the driver), so the fix must name that operation, not a setting.

    python3 testdata/gen/operations.py                      # every scenario, one JVM at a time
    python3 testdata/gen/operations.py source-split ...     # only some (then their table rows)
    python3 testdata/gen/operations.py --table [NAME...]    # only remeasure the committed logs

Writes testdata/logs/operations/<scenario>/<appId>.zstd (one zstd file each; a log over 500 KB
is recompressed as one zstd level-19 frame, the same events byte for byte), the table
testdata/logs/operations/OPERATIONS.tsv (what each log plants, where it shows, measured from
the log itself, and what `sparkdiag analyze` says about it today) and the logs' rows of
testdata/logs/MANIFEST.tsv. Scratch data goes to /tmp/sparkdiag-gen/operations/.

Scenarios (`-fixed` is the twin a rule must stay quiet on: the same data and output, the
operation done the way the fix says):

* source-split: on local[4], three stages whose task count comes from the source, not a
  shuffle: `spark.range(..., numPartitions=2)` hashed row by row, `sc.parallelize(data, 2)`
  through a Python map, and one 1.1 GiB CSV file read as a single split
  (`spark.sql.files.maxPartitionBytes=1280m` with `spark.sql.files.openCostInBytes=1280m`; the
  second is needed because Spark caps a split at the input's size over the default
  parallelism unless opening a file costs as much as reading one). Each is 2 or 1 long tasks
  on 4 cores; `spark.sql.shuffle.partitions` and AQE cannot change any of them.
  source-split-fixed: numPartitions=8, numSlices=8 and the default split settings.
* repartition-one-write: on local[4], 8 partitions of random text written four times through
  one task each: `repartition(1)` before a 1.1 GiB CSV write, before a Parquet write and
  before a smaller CSV write, and `coalesce(1)` (no shuffle: the one task also makes the rows)
  before a CSV write. repartition-one-write-fixed: the same four writes from the 8 partitions.
* hot-key-repartition-write: 4M flight rows, 70 % of them on one `tail_num`, written as
  Parquet after `repartition(16, "tail_num")`: one of the 16 write tasks holds 70 % of the
  rows. -fixed: the same write after `hint("rebalance", "tail_num")`, which AQE splits
  into advisory-size partitions.
* exact-percentile-oom: on local-cluster[2,1,1024] with 512 MiB executors, `median(v)` over
  30M distinct doubles: the exact percentile keeps every distinct value with its count, so
  the final aggregation's one task merges 30M entries and runs out of heap; executors exit
  (code 52), the retry fails the same way and the job fails. exact-percentile-approx: the
  same data and cluster with `percentile_approx(v, 0.5)`: it succeeds.
* collect-list-oom: the same cluster, `collect_list` of four whole groups of 3M strings
  each: every reduce task holds one group, larger than the heap, whatever the partition count.
* gzip-reread: on local[8], ten gzip CSV files (unsplittable: one task per file; on fewer
  cores Spark packs several small files into one split) read by six steps that
  each call a `load()` with `inferSchema=True` (a job of its own reading every file) and then
  query the frame: the same input read about twelve times. -fixed: the schema given, read
  once and cached.
* same-input-many-jobs: a 200 MB splittable (uncompressed) CSV read by four jobs (counts,
  distinct words, a groupBy, a filter), no cache. same-input-cached: the same four jobs on
  the frame cached first.
* late-commit: Hive support (pip PySpark ships the Hive 2.3.10 jars; an embedded Derby
  metastore in the scratch dir): `INSERT OVERWRITE TABLE ... PARTITION (p)` into a Hive
  SerDe (TEXTFILE) table of 600 dynamic partitions with
  `hive.exec.dynamic.partition.mode=nonstrict`. The write job ends, then the driver loads
  each partition into the metastore (Hive's loadDynamicPartitions) while no job runs: the SQL
  execution ends long after its last job. late-commit-datasource: the same insert into a
  datasource table (`USING parquet`, `partitionOverwriteMode=dynamic`) in the same metastore:
  Spark's own commit, then 600 partitions added to the metastore, a shorter tail of the same
  kind. late-commit-fixed: the same rows written to a folder with `partitionBy("p")`, no
  metastore.
* mllib-fit: a RandomForestClassifier, a DecisionTreeClassifier and a LinearRegression fitted
  on 20k rows: every job is MLlib's own (DecisionTreeMetadata, treeAggregate, collectAsMap
  in RandomForest.findBestSplits, ...), none the user's loop.
* driver-loop-collect: a Python loop of 100 `spark.sql(...).collect()` calls, each a small
  query over a cached table. -fixed: one query computing the 100 values at once.
* driver-sleep: a query, `time.sleep(35)` in the driver, another query.
* one-task-many-files: 200k rows over 2000 values of `p`, `repartition(1)` then
  `write.partitionBy("p").parquet`: one task writes 2000 files of a few KB.
  -fixed: partitioned by a 20-value column after `repartition("p20")`: 20 tasks, 20 files.
* window-no-partition: `row_number()` and a running sum over `Window.orderBy("v")` (no
  partitionBy) on 6M rows: Spark moves every row into one task. -fixed: the same window
  with `partitionBy("k")` (1000 keys).
* too-few-cores: local-cluster[2,1,1024] (2 cores) running a stage of 48 tasks of 2-3 s and
  a shuffle into 24 tasks of 1-2 s (`Thread.sleep` through SQL's `reflect`: their time does
  not depend on the machine's CPUs): tasks wait for a core most of the run. -fixed:
  local-cluster[2,12,1024] (24 cores) for the same tasks.
"""
import gzip
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import scenario_runs as runs  # noqa: E402
from scenario_runs import med, ms, stage_line  # noqa: E402

FOLDER = "operations"
DATA = common.WORK / FOLDER / "data"

SMALL_CLUSTER = "local-cluster[2,1,1024]"
OOM_CONF = {"spark.executor.memory": "512m", "spark.task.maxFailures": "2"}


def scratch(name):
    return common.fresh_dir(DATA / name)


def describe(spark, text):
    spark.sparkContext.setJobDescription(text)


# ------------------------------------------------------------------ workloads

def source_split(spark, fixed=False):
    from pyspark.sql import functions as F

    slices = 8 if fixed else 2
    describe(spark, f"range with numPartitions={slices}, hashed row by row")
    (spark.range(0, 4_000_000, 1, numPartitions=slices)
        .select((F.col("id") % 1000).alias("k"),
                F.sha2(F.sha2(F.sha2(F.col("id").cast("string"), 512), 512), 512).alias("h"))
        .groupBy("k").agg(F.max("h").alias("h")).agg(F.count("h")).collect())

    def work(x):
        import hashlib

        h = str(x).encode()
        for _ in range(12):
            h = hashlib.sha256(h).digest()
        return (x % 100, h[0])

    describe(spark, f"parallelize with numSlices={slices}, a Python map")
    sc = spark.sparkContext
    sc.parallelize(range(500_000), slices).map(work).reduceByKey(lambda a, b: a + b, 8).count()

    folder = DATA / "source-split-csv"
    big = folder / "events.csv"
    if not big.exists():
        folder.mkdir(parents=True, exist_ok=True)
        row = ",".join(f"{i:09d}" for i in range(11)) + "\n"
        block = row * 10_000
        with open(big, "w") as fh:
            for _ in range(1_150_000_000 // len(block)):
                fh.write(block)
    describe(spark, "one 1.1 GiB CSV file, split by spark.sql.files.maxPartitionBytes")
    df = spark.read.csv(str(folder))
    df.agg(F.sum(F.col("_c3").cast("long")), F.countDistinct(F.col("_c7"))).collect()


def repartition_one_write(spark, fixed=False):
    from pyspark.sql import functions as F

    out = scratch("repartition-one-write-fixed" if fixed else "repartition-one-write")

    def rows(n):
        return spark.range(0, n, 1, 8).select(
            "id", (F.col("id") % 97).alias("k"), F.randstr(F.lit(110), F.lit(5)).alias("text"))

    one = (lambda df: df) if fixed else (lambda df: df.repartition(1))
    describe(spark, "CSV write of 8.5M rows" + ("" if fixed else " after repartition(1)"))
    one(rows(8_500_000)).write.mode("overwrite").csv(str(out / "a_csv"))
    describe(spark, "Parquet write of 3M rows" + ("" if fixed else " after repartition(1)"))
    one(rows(3_000_000)).write.mode("overwrite").parquet(str(out / "b_parquet"))
    describe(spark, "CSV write of 2M rows" + ("" if fixed else " after repartition(1)"))
    one(rows(2_000_000)).write.mode("overwrite").csv(str(out / "c_csv"))
    describe(spark, "CSV write of 2M rows" + ("" if fixed else " after coalesce(1)"))
    (rows(2_000_000) if fixed else rows(2_000_000).coalesce(1)).write.mode("overwrite").csv(str(out / "d_csv"))


def hot_key_repartition_write(spark, fixed=False):
    from pyspark.sql import functions as F

    out = scratch("hot-key-write")
    flights = spark.range(0, 4_000_000, 1, 8).select(
        F.col("id").alias("flight_id"),
        F.when(F.col("id") % 10 < 7, F.lit("N000HOT"))
         .otherwise(F.concat(F.lit("N"), F.lpad((F.col("id") * 7919 % 2000).cast("string"), 4, "0")))
         .alias("tail_num"),
        (F.col("id") % 1440).alias("dep_minute"),
        F.randstr(F.lit(60), F.lit(3)).alias("route"))
    if fixed:
        describe(spark, "flights written after hint('rebalance', 'tail_num')")
        flights = flights.hint("rebalance", "tail_num")
    else:
        describe(spark, "flights written after repartition(16, 'tail_num')")
        flights = flights.repartition(16, "tail_num")
    flights.write.mode("overwrite").parquet(str(out / "flights"))


def percentile_data(spark):
    from pyspark.sql import functions as F

    return spark.range(0, 30_000_000, 1, 8).select((F.rand(7) * 1e12).alias("v"))


def exact_percentile_oom(spark):
    from pyspark.sql import functions as F

    describe(spark, "exact median of 30M distinct doubles")
    try:
        print("median:", percentile_data(spark).agg(F.median("v")).collect(), flush=True)
    except Exception as e:  # meant to fail
        print("failed:", str(e).splitlines()[0], flush=True)


def exact_percentile_approx(spark):
    from pyspark.sql import functions as F

    describe(spark, "percentile_approx of 30M distinct doubles")
    print("median:", percentile_data(spark).agg(F.percentile_approx("v", 0.5)).collect(), flush=True)


def collect_list_oom(spark):
    from pyspark.sql import functions as F

    describe(spark, "collect_list of four whole groups of 3M strings")
    rows = spark.range(0, 12_000_000, 1, 24).select(
        (F.col("id") % 4).alias("g"), F.randstr(F.lit(100), F.lit(9)).alias("s"))
    try:
        out = rows.groupBy("g").agg(F.collect_list("s").alias("ss")).select("g", F.size("ss"))
        print("sizes:", out.collect(), flush=True)
    except Exception as e:  # meant to fail
        print("failed:", str(e).splitlines()[0], flush=True)


GZIP_FILES = 10


def gzip_files():
    folder = DATA / "gzip-csv"
    if folder.exists() and len(list(folder.glob("*.csv.gz"))) == GZIP_FILES:
        return folder
    folder = common.fresh_dir(folder)
    rnd = random.Random(46)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    for f in range(GZIP_FILES):
        with gzip.open(folder / f"part-{f:02d}.csv.gz", "wt", compresslevel=1) as fh:
            fh.write("id,station,reading,kind,note\n")
            for i in range(150_000):
                fh.write(f"{f * 1_000_000 + i},{rnd.randrange(500)},{rnd.random() * 100:.4f},"
                         f"{rnd.choice(words)},{rnd.getrandbits(128):032x}\n")
    return folder


GZIP_STEPS = [
    ("rows per kind", lambda df, F: df.groupBy("kind").count()),
    ("mean reading per station", lambda df, F: df.groupBy("station").agg(F.avg("reading"))),
    ("high readings", lambda df, F: df.where(F.col("reading") > 99.9).select("id", "note")),
    ("distinct stations", lambda df, F: df.select("station").distinct()),
    ("max id per kind", lambda df, F: df.groupBy("kind").agg(F.max("id"))),
    ("notes starting with 'ff'", lambda df, F: df.where(F.col("note").startswith("ff")).select("id")),
]


def gzip_reread(spark, fixed=False):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    folder = str(gzip_files())
    if fixed:
        schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("station", T.IntegerType()),
                               T.StructField("reading", T.DoubleType()), T.StructField("kind", T.StringType()),
                               T.StructField("note", T.StringType())])
        describe(spark, "read the gzip CSV once, with its schema, and cache it")
        cached = spark.read.csv(folder, header=True, schema=schema).cache()
        cached.count()

        def load():
            return cached
    else:
        def load():
            # The pattern from the issue: each step loads the files again, inferring the schema.
            return spark.read.csv(folder, header=True, inferSchema=True)
    for what, step in GZIP_STEPS:
        describe(spark, what)
        step(load(), F).collect()


def same_input_csv():
    folder = DATA / "same-input-csv"
    if folder.exists() and len(list(folder.glob("*.csv"))) == 4:
        return folder
    folder = common.fresh_dir(folder)
    rnd = random.Random(47)
    words = [f"w{i:04d}" for i in range(5000)]
    for f in range(4):
        with open(folder / f"docs-{f}.csv", "w") as fh:
            for i in range(250_000):
                fh.write(f"{f * 1_000_000 + i},{rnd.randrange(40)}," + " ".join(rnd.choices(words, k=20)) + "\n")
    return folder


def same_input_many_jobs(spark, cached=False):
    from pyspark.sql import functions as F

    folder = str(same_input_csv())
    docs = spark.read.csv(folder, schema="doc_id LONG, topic INT, text STRING")
    if cached:
        describe(spark, "cache the documents")
        docs = docs.cache()
        docs.count()
    words = docs.select("doc_id", F.explode(F.split("text", " ")).alias("w"))
    describe(spark, "documents per topic")
    docs.groupBy("topic").count().collect()
    describe(spark, "document frequency of each word")
    words.distinct().groupBy("w").count().agg(F.max("count")).collect()
    describe(spark, "words per document")
    words.groupBy("doc_id").count().agg(F.avg("count")).collect()
    describe(spark, "documents mentioning w0042")
    docs.where(F.col("text").contains("w0042")).count()


HIVE_PARTITIONS = 600


def late_commit(spark, mode="hive"):
    """mode: "hive" (a Hive SerDe table), "datasource" (a `USING parquet` table in the same
    metastore) or "path" (the same rows written to a folder: no metastore at all)."""
    from pyspark.sql import functions as F

    describe(spark, f"INSERT OVERWRITE of {HIVE_PARTITIONS} dynamic partitions ({mode})")
    if mode == "path":
        (spark.range(0, 600_000, 1, 4)
            .select("id", ((F.col("id") * 37 % 1000) / 10.0).alias("amount"),
                    (F.col("id") % HIVE_PARTITIONS).cast("int").alias("p"))
            .repartition("p")
            .write.partitionBy("p").mode("overwrite").parquet(str(scratch("late-commit-path") / "sales")))
        return
    spark.sql("DROP TABLE IF EXISTS sales")
    if mode == "datasource":
        spark.sql("CREATE TABLE sales (id BIGINT, amount DOUBLE, p INT) USING parquet PARTITIONED BY (p)")
    else:
        spark.sql("CREATE TABLE sales (id BIGINT, amount DOUBLE) PARTITIONED BY (p INT) STORED AS TEXTFILE")
    # DISTRIBUTE BY p: one file per partition, as a careful writer would have it.
    spark.sql(f"""
        INSERT OVERWRITE TABLE sales PARTITION (p)
        SELECT id, (id * 37 % 1000) / 10.0 AS amount, CAST(id % {HIVE_PARTITIONS} AS INT) AS p
        FROM range(0, 600000, 1, 4)
        DISTRIBUTE BY p
    """)
    # The metastore's answer, not a job: reading 600 partitions back would be a stage of its own.
    print("partitions:", len(spark.sql("SHOW PARTITIONS sales").collect()), flush=True)


def mllib_fit(spark):
    from pyspark.ml.classification import DecisionTreeClassifier, RandomForestClassifier
    from pyspark.ml.feature import VectorAssembler
    from pyspark.ml.regression import LinearRegression
    from pyspark.sql import functions as F

    cols = [f"f{i}" for i in range(8)]
    raw = spark.range(0, 20_000, 1, 4).select(
        "id", *[(F.rand(i) * (i + 1)).alias(c) for i, c in enumerate(cols)])
    raw = raw.withColumn("label", ((F.col("f0") + F.col("f3") * 0.5 - F.col("f5") * 0.2) > 1.5).cast("double"))
    raw = raw.withColumn("y", F.col("f1") * 3 + F.col("f2") - F.col("f7") * 0.5 + F.rand(99))
    data = VectorAssembler(inputCols=cols, outputCol="features").transform(raw).cache()
    data.count()
    RandomForestClassifier(numTrees=20, maxDepth=8, seed=1).fit(data)
    DecisionTreeClassifier(maxDepth=10, seed=1).fit(data)
    LinearRegression(featuresCol="features", labelCol="y", maxIter=80, regParam=0.1,
                     elasticNetParam=0.5, solver="l-bfgs", tol=0.0).fit(data)


def driver_loop_collect(spark, fixed=False):
    from pyspark.sql import functions as F

    spark.range(0, 200_000, 1, 2).select(
        "id", (F.col("id") % 100).alias("station"), (F.col("id") * 7 % 1000).alias("reading")
    ).createOrReplaceTempView("readings")
    spark.table("readings").cache().count()
    if fixed:
        describe(spark, "max reading of every station, one query")
        spark.sql("SELECT station, max(reading) FROM readings GROUP BY station").collect()
        return
    for i in range(100):
        spark.sql(f"SELECT max(reading) FROM readings WHERE station = {i}").collect()


def driver_sleep(spark):
    from pyspark.sql import functions as F

    describe(spark, "first query")
    spark.range(0, 1_000_000, 1, 4).groupBy((F.col("id") % 10).alias("k")).count().collect()
    describe(spark, None)
    time.sleep(35)  # driver-side Python doing nothing Spark can see (a wait, a poll, an API call)
    describe(spark, "second query")
    spark.range(0, 1_000_000, 1, 4).groupBy((F.col("id") % 7).alias("k")).count().collect()


def one_task_many_files(spark, fixed=False):
    from pyspark.sql import functions as F

    out = scratch("many-files")
    rows = spark.range(0, 200_000, 1, 8).select(
        "id", (F.col("id") % 2000).alias("p"), (F.col("id") % 20).alias("p20"),
        F.sha2(F.col("id").cast("string"), 256).alias("v"))
    if fixed:
        describe(spark, "write partitioned by p20 (20 values) after repartition('p20')")
        rows.repartition("p20").write.partitionBy("p20").mode("overwrite").parquet(str(out / "t"))
    else:
        describe(spark, "write partitioned by p (2000 values) after repartition(1)")
        rows.repartition(1).write.partitionBy("p").mode("overwrite").parquet(str(out / "t"))


def window_no_partition(spark, fixed=False):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rows = spark.range(0, 6_000_000, 1, 8).select(
        "id", (F.col("id") % 1000).alias("k"), F.rand(3).alias("v"))
    w = Window.partitionBy("k").orderBy("v") if fixed else Window.orderBy("v")
    describe(spark, "row_number and running sum over " + ("partitionBy(k).orderBy(v)" if fixed else "orderBy(v)"))
    (rows.select("id", F.row_number().over(w).alias("rn"),
                 F.sum("v").over(w.rowsBetween(Window.unboundedPreceding, 0)).alias("running"))
        .write.format("noop").mode("overwrite").save())


def sleep_ms(column, base, spread):
    """Sleep inside the executor JVM for base + (column % spread) * 100 ms: no Python, and a
    duration that does not depend on how many CPUs the machine has."""
    return (f"reflect('java.lang.Thread', 'sleep', cast({base} + 100 * ({column} % {spread}) as bigint))")


def too_few_cores(spark):
    describe(spark, "48 tasks of 2-3 s, then 24 of 1-2 s")
    # Both sleeps' results are summed, so that no column pruning removes the calls.
    (spark.range(0, 48, 1, 48)
        .selectExpr("id % 24 as k", sleep_ms("id", 2000, 11) + " as r1")
        .repartition(24, "k")
        .selectExpr("r1", sleep_ms("k", 1000, 11) + " as r2")
        .groupBy().agg({"r1": "count", "r2": "count"}).collect())


# ------------------------------------------------------------------ measuring

def jobs_like(log, text):
    return sorted(j for j, v in log.jobs.items() if v["desc"] and text in v["desc"])


def stages_of(log, jobs):
    out = set()
    for j in jobs:
        out |= {s for s in log.jobs[j]["stages"] if log.stage_tasks(s)}
    return sorted(out)


def cores(log):
    return sum(e["Executor Info"]["Total Cores"] for e in log.executors_added)


def m_source_split(log, fixed=False):
    c = cores(log)
    parts, stages, jobs = [], [], []
    for what in ("range", "parallelize", "CSV file"):
        js = jobs_like(log, what.split()[0] if what != "CSV file" else "CSV file")
        src = stages_of(log, js)[0]
        jobs += js
        stages.append(src)
        parts.append(f"{what}: job {','.join(map(str, js))}, source {stage_line(log, src)}")
    conf = {k: log.conf.get(k) for k in ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")}
    return {"job_ids": jobs, "stage_ids": [] if fixed else stages,
            "notes": f"{c} cores; {conf}; " + "; ".join(parts)}


def m_one_task_writes(log, fixed=False):
    parts, stages, jobs = [], [], []
    span = (log.app_end - log.app_start)
    for j in sorted(log.jobs):
        desc = log.jobs[j]["desc"] or ""
        if "write" not in desc:
            continue
        for s in stages_of(log, [j]):
            ts = log.stage_tasks(s)
            out = sum(runs.t_output(log, t) for t in ts)
            if out:
                jobs.append(j)
                stages.append(s)
                parts.append(f"{desc}: job {j}, {stage_line(log, s)}, output {out / 1e6:,.0f} MB")
    busy = sum(log.stage_ms(s) or 0 for s in stages)
    return {"job_ids": jobs, "stage_ids": [] if fixed else stages,
            "notes": f"app {span:,} ms; the write stages {busy:,} ms wall in all; " + "; ".join(parts)}


def m_hot_key(log, fixed=False):
    s = max(log.stage_ids(), key=lambda s: sum(runs.t_output(log, t) for t in log.stage_tasks(s)))
    ts = log.stage_tasks(s)
    top = max(ts, key=lambda t: t.sr_records)
    recs = sum(t.sr_records for t in ts)
    return {"job_ids": log.job_of_stage(s), "stage_ids": [] if fixed else [s],
            "task_ids": [] if fixed else [top.id],
            "notes": (f"write {stage_line(log, s)}; its largest task {top.id} (partition {top.index}) read "
                      f"{top.sr_records:,} of {recs:,} rows ({100 * top.sr_records / max(recs, 1):.0f}%) in "
                      f"{top.duration:,} ms, median task {med([t.sr_records for t in ts]):,.0f} rows")}


def m_failed_oom(log):
    failed = [t for t in log.tasks if not t.ok]
    oom = [t for t in failed if "OutOfMemoryError" in str(t.end_reason)]
    stages = sorted({t.stage for t in oom})
    removed = [(e["Executor ID"], e.get("Removed Reason", "")[:60]) for e in log.executors_removed]
    jobs = {j: v.get("result") for j, v in log.jobs.items()}
    lines = [stage_line(log, s, a) for (s, a) in sorted(log.stage_info) if log.stage_tasks(s, a)]
    sql = [f"SQL {i} {v['desc']!r}: {v.get('end', 0) - v['start']:,} ms, error {str(v.get('error'))[:80]!r}"
           for i, v in log.sql.items() if v["jobs"]]
    return {"job_ids": sorted(j for j, r in jobs.items() if r != "JobSucceeded"), "stage_ids": stages,
            "task_ids": [t.id for t in oom], "executor_ids": sorted({t.executor for t in oom}),
            "notes": (f"jobs {jobs}; failed task attempts {len(failed)} ({len(oom)} OutOfMemoryError, "
                      f"in stages {stages}, on executors {sorted({t.executor for t in oom})}); executors removed "
                      f"{removed}; {'; '.join(sql)}; " + "; ".join(lines))}


def m_ok_job(log):
    lines = [stage_line(log, s) for s in log.stage_ids()]
    jobs = {j: v.get("result") for j, v in log.jobs.items()}
    return {"job_ids": sorted(jobs), "notes": f"jobs {jobs}; " + "; ".join(lines)}


def cached_stages(log):
    """Stages whose RDD lineage holds an RDD stored in memory or on disk (a cached frame)."""
    out = set()
    for e in log.events:
        if e["Event"] == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            if any(r["Storage Level"]["Use Memory"] or r["Storage Level"]["Use Disk"] for r in info["RDD Info"]):
                out.add(info["Stage ID"])
    return out


def m_rereads(log, planted=True):
    """Every stage whose tasks read input, grouped by the bytes they read. A stage reading the
    files reads their size on disk; one reading a cached frame counts the cache's in-memory
    size as input too, and its lineage holds the cached RDD."""
    cached = cached_stages(log)
    reads = []
    for j in sorted(log.jobs):
        for s in stages_of(log, [j]):
            ts = log.stage_tasks(s)
            b = sum(runs.t_input(log, t) for t in ts)
            if b:
                reads.append((j, s, len(ts), b, sum(t.duration for t in ts), log.jobs[j]["desc"]))
    groups = {}
    for r in reads:
        groups.setdefault((round(r[3] / 1e5), r[1] in cached), []).append(r)
    biggest = max(groups.items(), key=lambda kv: (not kv[0][1], kv[0][0]))[1] if groups else []
    lines = [f"{len(g)} stages read {g[0][3] / 1e6:.1f} MB each"
             + (" (their lineage holds a cached RDD)" if c else "")
             + f" in {g[0][2]} tasks: stages {','.join(str(r[1]) for r in g)}, {sum(r[4] for r in g):,} ms of task time"
             for (_, c), g in sorted(groups.items(), key=lambda kv: -kv[0][0])]
    jobs = "; ".join(f"job {j} stage {s} ({d}): {b / 1e6:.1f} MB in {n} tasks, {t:,} ms" for j, s, n, b, t, d in reads)
    return {"job_ids": [r[0] for r in biggest] if planted else [],
            "stage_ids": [r[1] for r in biggest] if planted else [],
            "notes": "; ".join(lines) + "; per job: " + jobs}


def m_late_commit(log, fixed=False):
    parts, jobs = [], []
    worst = None
    for i, v in sorted(log.sql.items()):
        if not v["jobs"] or "INSERT" not in (v["desc"] or "") and "insert" not in v["plan"].lower()[:400]:
            continue
        last_end = max(log.jobs[j].get("end", 0) for j in v["jobs"])
        tail = v["end"] - last_end
        jobs += v["jobs"]
        parts.append(f"SQL execution {i} ({v['desc'][:60]!r}): {v['end'] - v['start']:,} ms, jobs "
                     f"{v['jobs']}, last job ended {tail:,} ms before the execution "
                     f"({100 * tail / max(v['end'] - v['start'], 1):.0f}% of it)")
        worst = max(worst or 0, tail)
    files = sum(runs.sql_metric(log, i, "number of written files") for i in log.sql)
    dyn = sum(runs.sql_metric(log, i, "number of dynamic part") for i in log.sql)
    return {"job_ids": [] if fixed else jobs,
            "notes": f"{'; '.join(parts)}; written files {files}, dynamic partitions {dyn}; app "
                     f"{log.app_end - log.app_start:,} ms"}


def m_mllib(log):
    sites = {}
    for j, v in sorted(log.jobs.items()):
        name = None
        for e in log.events:
            if e["Event"] == "SparkListenerJobStart" and e["Job ID"] == j:
                name = e["Stage Infos"][-1]["Stage Name"] if e["Stage Infos"] else "?"
                # the job's last stage is its result stage; its name is the call site
                name = min(e["Stage Infos"], key=lambda s: -s["Stage ID"])["Stage Name"]
                break
        key = name.split(" at ")[0] + " at " + name.split(" at ")[1].split(":")[0] if " at " in name else name
        sites[key] = sites.get(key, 0) + 1
    durations = [v["end"] - v["start"] for v in log.jobs.values() if "end" in v]
    top = sorted(sites.items(), key=lambda kv: -kv[1])
    return {"job_ids": [],
            "notes": (f"{len(log.jobs)} jobs, median job {med(durations):,.0f} ms, app "
                      f"{log.app_end - log.app_start:,} ms; jobs by call site: "
                      + ", ".join(f"{k} x{n}" for k, n in top))}


def m_driver(log, planted=True):
    notes, d = runs.patterns.driver_notes(log)
    return {"job_ids": [], "notes": notes}


def m_many_files(log, fixed=False):
    parts = []
    stages = []
    for i, v in sorted(log.sql.items()):
        files = runs.sql_metric(log, i, "number of written files")
        if not files:
            continue
        for s in stages_of(log, v["jobs"]):
            ts = log.stage_tasks(s)
            if sum(runs.t_output(log, t) for t in ts):
                stages.append(s)
                parts.append(f"SQL {i}: {files} files written, {runs.sql_metric(log, i, 'number of dynamic part')} "
                             f"dynamic partitions, {runs.sql_metric(log, i, 'written output') / 1e6:.1f} MB; "
                             f"write {stage_line(log, s)}, output {sum(runs.t_output(log, t) for t in ts) / 1e3:,.0f} kB")
    return {"stage_ids": [] if fixed else stages,
            "notes": "; ".join(parts) + f"; app {log.app_end - log.app_start:,} ms"}


def m_window(log, fixed=False):
    big = max(log.stage_ids(), key=lambda s: max(t.duration for t in log.stage_tasks(s)))
    lines = [stage_line(log, s) for s in log.stage_ids()]
    ops = [v["plan"].split("\n")[0] for v in log.sql.values()]
    return {"stage_ids": [] if fixed else [big],
            "task_ids": [] if fixed else [max(log.stage_tasks(big), key=lambda t: t.duration).id],
            "notes": f"app {log.app_end - log.app_start:,} ms; " + "; ".join(lines)}


def m_cores(log, fixed=False):
    c = cores(log)
    lines = []
    waiting = 0
    for s in log.stage_ids():
        ts = log.stage_tasks(s)
        start = log.stage_info[(s, 0)]["submitted"]
        wait = [t.launch - start for t in ts]
        waiting += sum(wait)
        lines.append(f"{stage_line(log, s)}, tasks launched a median {med(wait):,.0f} ms after the stage "
                     f"started (max {max(wait):,} ms)")
    task_ms = sum(t.duration for t in log.tasks)
    return {"stage_ids": [] if fixed else log.stage_ids(),
            "notes": (f"{c} cores ({len(log.executors_added)} executors); task time {task_ms:,} ms, time tasks "
                      f"waited for a core after their stage started {waiting:,} ms; app "
                      f"{log.app_end - log.app_start:,} ms; " + "; ".join(lines))}


# ------------------------------------------------------------------ the scenarios

def S(master, run, planted, measure, about, conf=None, **kw):
    return {"master": master, "run": run, "planted": planted, "measure": measure, "about": about,
            "conf": conf or {}, **kw}


SOURCE_CONF = {"spark.sql.files.maxPartitionBytes": "1280m", "spark.sql.files.openCostInBytes": "1280m"}
HIVE_CONF = {
    "spark.hadoop.hive.exec.dynamic.partition": "true",
    "spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict",
    "spark.hadoop.hive.exec.max.dynamic.partitions": "5000",
    "spark.hadoop.hive.exec.max.dynamic.partitions.pernode": "5000",
}

SCENARIOS = {
    "source-split": S(
        "local[4]", source_split, "source-split", m_source_split,
        "local[4]: range(numPartitions=2), parallelize(numSlices=2) and a 1.1 GiB CSV read as one split "
        "(maxPartitionBytes=openCostInBytes=1280m); AQE on, shuffle.partitions 8.", SOURCE_CONF),
    "source-split-fixed": S(
        "local[4]", lambda s: source_split(s, fixed=True), "healthy", lambda l: m_source_split(l, True),
        "the same on local[4] with numPartitions=8, numSlices=8 and the default split settings."),
    "repartition-one-write": S(
        "local[4]", repartition_one_write, "one-task-write", m_one_task_writes,
        "local[4]: four writes of random text through one task each (3x repartition(1), 1x coalesce(1))."),
    "repartition-one-write-fixed": S(
        "local[4]", lambda s: repartition_one_write(s, True), "healthy", lambda l: m_one_task_writes(l, True),
        "the same four writes from their 8 partitions."),
    "hot-key-repartition-write": S(
        "local[2]", hot_key_repartition_write, "hot-key-repartition", m_hot_key,
        "local[2]: 4M rows, 70% on tail_num N000HOT, repartition(16, 'tail_num') then a Parquet write; AQE on."),
    "hot-key-repartition-write-fixed": S(
        "local[2]", lambda s: hot_key_repartition_write(s, True), "healthy", lambda l: m_hot_key(l, True),
        "the same rows written after hint('rebalance', 'tail_num'); AQE on (advisory 64 MB)."),
    "exact-percentile-oom": S(
        SMALL_CLUSTER, exact_percentile_oom, "exact-percentile-oom", m_failed_oom,
        "local-cluster[2,1,1024], 512 MiB executors, maxFailures 2: median(v) over 30M distinct doubles.",
        OOM_CONF),
    "exact-percentile-approx": S(
        SMALL_CLUSTER, exact_percentile_approx, "healthy", m_ok_job,
        "the same data and cluster with percentile_approx(v, 0.5).", OOM_CONF),
    "collect-list-oom": S(
        SMALL_CLUSTER, collect_list_oom, "collect-list-oom", m_failed_oom,
        "local-cluster[2,1,1024], 512 MiB executors, maxFailures 2: collect_list of 4 groups of 3M 100-char "
        "strings (24 map partitions).", OOM_CONF),
    "gzip-reread": S(
        "local[8]", gzip_reread, "gzip-reread", m_rereads,
        "local[8] (so that each file is a split of its own): ten gzip CSV files (150k rows each) loaded with inferSchema=True by each of six steps."),
    "gzip-reread-fixed": S(
        "local[8]", lambda s: gzip_reread(s, True), "healthy", lambda l: m_rereads(l, False),
        "the same six steps on one read with the schema given, cached."),
    "same-input-many-jobs": S(
        "local[2]", same_input_many_jobs, "same-input-many-jobs", m_rereads,
        "local[2]: four uncompressed CSV files (1M documents, ~200 MB) read by four jobs, no cache."),
    "same-input-cached": S(
        "local[2]", lambda s: same_input_many_jobs(s, True), "healthy", lambda l: m_rereads(l, False),
        "the same four jobs after docs.cache() and one count()."),
    "late-commit": S(
        "local[2]", late_commit, "late-commit", m_late_commit,
        f"local[2], Hive support (Derby metastore): INSERT OVERWRITE into a TEXTFILE Hive table, "
        f"{HIVE_PARTITIONS} dynamic partitions (DISTRIBUTE BY p: one file each) (hive.exec.dynamic.partition.mode=nonstrict).", HIVE_CONF, hive=True),
    "late-commit-datasource": S(
        "local[2]", lambda s: late_commit(s, "datasource"), "late-commit", lambda l: m_late_commit(l),
        "the same insert into a datasource table (USING parquet) in the same metastore, "
        "partitionOverwriteMode=dynamic: Spark's own commit, then the metastore told of 600 partitions.",
        {**HIVE_CONF, "spark.sql.sources.partitionOverwriteMode": "dynamic"}, hive=True),
    "late-commit-fixed": S(
        "local[2]", lambda s: late_commit(s, "path"), "healthy", lambda l: m_late_commit(l, True),
        "the same rows written to a folder with partitionBy('p') after repartition('p'), "
        "partitionOverwriteMode=dynamic, no metastore.",
        {"spark.sql.sources.partitionOverwriteMode": "dynamic"}),
    "mllib-fit": S(
        "local[2]", mllib_fit, "library-jobs", m_mllib,
        "local[2]: RandomForestClassifier(20 trees, depth 8), DecisionTreeClassifier(depth 10), "
        "LinearRegression(l-bfgs, 80 iterations: tol=0) on 20k cached rows."),
    "driver-loop-collect": S(
        "local[2]", driver_loop_collect, "driver-loop", m_driver,
        "local[2]: a Python loop of 100 spark.sql('SELECT max(reading) ... WHERE station = i').collect()."),
    "driver-loop-collect-fixed": S(
        "local[2]", lambda s: driver_loop_collect(s, True), "healthy", lambda l: m_driver(l, False),
        "one GROUP BY station query instead of the loop."),
    "driver-sleep": S(
        "local[2]", driver_sleep, "driver-idle", m_driver,
        "local[2]: a query, time.sleep(35) in the driver, a query."),
    "one-task-many-files": S(
        "local[2]", one_task_many_files, "one-task-many-files", m_many_files,
        "local[2]: 200k rows, repartition(1) then write.partitionBy('p') with 2000 values of p."),
    "one-task-many-files-fixed": S(
        "local[2]", lambda s: one_task_many_files(s, True), "healthy", lambda l: m_many_files(l, True),
        "the same rows partitioned by p20 (20 values) after repartition('p20')."),
    "window-no-partition": S(
        "local[2]", window_no_partition, "window-no-partition", m_window,
        "local[2]: row_number and a running sum over Window.orderBy('v') on 6M rows."),
    "window-no-partition-fixed": S(
        "local[2]", lambda s: window_no_partition(s, True), "healthy", lambda l: m_window(l, True),
        "the same window with partitionBy('k'), 1000 keys."),
    "too-few-cores": S(
        SMALL_CLUSTER, too_few_cores, "too-few-cores", m_cores,
        "local-cluster[2,1,1024]: 48 tasks sleeping 2-3 s, a shuffle into 24 tasks sleeping 1-2 s; AQE off.",
        {"spark.sql.adaptive.enabled": "false", "spark.executor.memory": "512m"}),
    "too-few-cores-fixed": S(
        "local-cluster[2,12,1024]", too_few_cores, "healthy", lambda l: m_cores(l, True),
        "the same tasks on local-cluster[2,12,1024] (24 cores).",
        {"spark.sql.adaptive.enabled": "false", "spark.executor.memory": "512m"}),
}

if __name__ == "__main__":
    runs.main(Path(__file__).resolve(), FOLDER, SCENARIOS, sys.modules[__name__])
