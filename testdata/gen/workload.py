"""The deterministic workloads that the fixture apps run.

Fixed data (spark.range + arithmetic), fixed partition counts, and
spark.sql.shuffle.partitions=8 (set by app.py), so the shape of every log
(jobs, stages, tasks) is the same from one run to the next; only timings,
ids and timestamps change.
"""
import time

from pyspark.sql import functions as F
from pyspark.sql.functions import udf
from pyspark.sql.types import LongType


def tables(spark):
    """orders: 5000 rows in 4 partitions; customers: 97 rows in 2 partitions."""
    orders = spark.range(0, 5000, 1, 4).select(
        F.col("id").alias("order_id"),
        (F.col("id") % 97).alias("customer_id"),
        ((F.col("id") * 37) % 1000 / 10.0).alias("amount"),
    )
    customers = spark.range(0, 97, 1, 2).select(
        F.col("id").alias("customer_id"),
        F.concat(F.lit("c"), F.col("id").cast("string")).alias("name"),
        (F.col("id") % 5).alias("region"),
    )
    return orders, customers


def main_workload(spark):
    """A groupBy, a (broadcast) join, a SQL sort-merge join, and an RDD shuffle."""
    sc = spark.sparkContext
    orders, customers = tables(spark)

    sc.setJobDescription("groupBy customer_id")
    orders.groupBy("customer_id").agg(
        F.sum("amount").alias("total"), F.count("*").alias("n")
    ).orderBy("customer_id").collect()

    sc.setJobDescription("join customers, groupBy region")
    orders.join(customers, "customer_id").groupBy("region").agg(
        F.round(F.sum("amount"), 1).alias("total")
    ).orderBy("region").collect()

    orders.createOrReplaceTempView("orders")
    customers.createOrReplaceTempView("customers")
    sc.setJobDescription("SQL: sort-merge join by region")
    spark.sql(
        """
        SELECT /*+ MERGE(o) */ c.region, count(*) AS n, round(sum(o.amount), 1) AS total
        FROM orders o JOIN customers c ON o.customer_id = c.customer_id
        WHERE o.amount > 10
        GROUP BY c.region
        ORDER BY c.region
        """
    ).collect()

    sc.setJobDescription("RDD reduceByKey")
    sc.parallelize(range(2000), 4).map(lambda x: (x % 10, x)).reduceByKey(lambda a, b: a + b).collect()
    sc.setJobDescription(None)


def small_workload(spark):
    """A second, smaller app (the multi/ fixture)."""
    sc = spark.sparkContext
    sc.setJobDescription("SQL: count by key")
    spark.sql("SELECT id % 3 AS k, count(*) AS n FROM range(0, 1000, 1, 2) GROUP BY k ORDER BY k").collect()
    sc.setJobDescription(None)


def many_tasks_workload(spark, jobs=12, tasks=500):
    """The main workload, then JOBS jobs of TASKS tiny tasks each: enough
    uncompressed event bytes (about 4.5 KB per task) to roll past 10 MiB
    files several times. Many small jobs rather than a few big ones, so that
    few tasks are still "live" at a roll point (the History Server's
    compaction keeps those)."""
    main_workload(spark)
    sc = spark.sparkContext
    for i in range(jobs):
        sc.setJobDescription(f"{tasks} tiny tasks #{i + 1}")
        spark.range(0, tasks, 1, tasks).count()
    sc.setJobDescription(None)


BAD_ROW = 1234


def checked_double(x):
    if x == BAD_ROW:
        raise ValueError(f"bad row {x}: refusing to double it")
    return x * 2


def failing_workload(spark):
    """One successful job, then a job whose Python UDF raises on one row.

    With master local[2,2] a task may fail twice (spark.task.maxFailures=2),
    so the task is retried once, the stage aborts and the job fails. The app
    catches the error and ends normally."""
    sc = spark.sparkContext
    orders, _ = tables(spark)
    sc.setJobDescription("ok: count per customer")
    orders.groupBy("customer_id").count().collect()

    sc.setJobDescription(f"fails: UDF raises on order_id {BAD_ROW}")
    try:
        orders.select(udf(checked_double, LongType())("order_id").alias("v")).agg(F.sum("v")).collect()
    except Exception as e:  # noqa: BLE001 - the failure is the point
        print("expected failure:", type(e).__name__, str(e).splitlines()[0][:200], flush=True)
    sc.setJobDescription(None)

    sc.setJobDescription("ok: after the failure")
    spark.range(0, 100, 1, 2).selectExpr("sum(id)").collect()
    sc.setJobDescription(None)


def slow_identity(x):
    """Rows below SLOW_FROM are quick; the rest take 2 s each."""
    time.sleep(2.0 if x >= SLOW_FROM else 0.05)
    return x


SLOW_FROM = 40


def killed_workload(spark, kill_after_tasks=SLOW_FROM + 2):
    """A quick job, then a job of 48 one-row tasks: 40 quick ones, then 8
    slow ones. The JVM is SIGKILLed from here once KILL_AFTER_TASKS tasks of
    that stage have finished (all the quick ones and a couple of slow ones),
    so the log holds many task ends written after the last flush point
    (JobStart), and no ApplicationEnd. This function never returns."""
    import os
    import signal
    import threading

    sc = spark.sparkContext
    sc.setJobDescription("warm-up groupBy")
    spark.range(0, 1000, 1, 4).groupBy((F.col("id") % 10).alias("k")).count().collect()
    sc.setJobDescription(None)

    def slow_job():
        sc.setJobGroup("slow", "slow UDF (the JVM is killed during it)")
        try:
            spark.range(0, 48, 1, 48).select(
                udf(slow_identity, LongType())("id").alias("v")
            ).agg(F.sum("v")).collect()
        except Exception:  # noqa: BLE001 - the JVM dies under it
            pass

    t = threading.Thread(target=slow_job, daemon=True)
    t.start()
    tracker = sc.statusTracker()
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    deadline = time.time() + 300
    done = 0
    while time.time() < deadline:
        for jid in tracker.getJobIdsForGroup("slow"):
            info = tracker.getJobInfo(jid)
            if info is None:
                continue
            stages = [tracker.getStageInfo(s) for s in info.stageIds]
            done = max([s.numCompletedTasks for s in stages if s is not None and s.numTasks == 48] + [0])
        if done >= kill_after_tasks:
            break
        time.sleep(0.05)
    time.sleep(0.3)
    print(f"SIGKILL to JVM pid {jvm_pid} after {done} tasks of the 48-task stage finished", flush=True)
    os.kill(jvm_pid, signal.SIGKILL)
    time.sleep(2)
    os._exit(0)


# =================================================================== patterns
# Workloads for testdata/logs/patterns/: each plants one performance problem
# (or none) for sparkdiag's detectors. make_all.py's patterns/* steps run
# them; patterns.py measures what each log shows and writes PATTERNS.tsv.

PLAN_OUT = None  # set by app.py --plan-out: where save_plan() writes


def save_plan(df):
    """Write df.explain(mode="formatted") (the printed text) to PLAN_OUT."""
    import contextlib
    import io
    from pathlib import Path

    if PLAN_OUT is None:
        return
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain(mode="formatted")
    Path(PLAN_OUT).write_text(buf.getvalue())


def scratch_dir(name):
    """A fresh scratch folder for a workload's own output files."""
    import os
    import shutil
    from pathlib import Path

    d = Path(os.environ.get("SPARKDIAG_GEN_WORK", "/tmp/sparkdiag-gen")) / "pattern-out" / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


SKEW_ROWS = 5_000_000
SKEW_SHARE = 6  # tenths of the orders that belong to customer 0


def skew_tables(spark):
    """orders: SKEW_ROWS rows in 16 partitions, 60% of them on customer_id 0,
    the rest spread over customers 1..999; customers: 1000 rows."""
    orders = spark.range(0, SKEW_ROWS, 1, 16).select(
        F.col("id").alias("order_id"),
        F.when(F.col("id") % 10 < SKEW_SHARE, F.lit(0))
        .otherwise((F.col("id") * 7919) % 999 + 1).alias("customer_id"),
        ((F.col("id") * 37) % 1000 / 10.0).alias("amount"),
    )
    customers = spark.range(0, 1000, 1, 2).select(
        F.col("id").alias("customer_id"),
        F.concat(F.lit("customer-"), F.col("id").cast("string")).alias("name"),
        (F.col("id") % 8).alias("region"),
    )
    return orders, customers


def skew_join_workload(spark):
    """orders JOIN customers ON customer_id (a sort-merge join when broadcast
    is off), then a per-row hash and a groupBy region. The reducer that gets
    customer 0 reads ~60% of the orders."""
    sc = spark.sparkContext
    orders, customers = skew_tables(spark)
    df = orders.join(customers, "customer_id").groupBy("region").agg(
        F.count("*").alias("n"),
        F.round(F.sum("amount"), 1).alias("total"),
        # a per-row CPU cost (two SHA-512s) so the skewed reducer is clearly the longest
        F.sum(F.crc32(F.sha2(F.sha2(F.concat_ws(":", "name", "order_id"), 512), 512))).alias("checksum"),
    )
    sc.setJobDescription("skewed join: orders x customers (60% of orders on customer 0)")
    df.collect()
    save_plan(df)
    sc.setJobDescription(None)


STRAGGLER_EXECUTOR = "1"
_stall_seen = {}


def executor_id():
    """The id of the executor this Python worker belongs to. A standalone
    worker starts the executor JVM with SPARK_LOG_URL_STDERR=...&executorId=N
    and cwd work/<app>/<N>; Python workers inherit both. "driver" in local mode."""
    import os
    import re

    m = re.search(r"executorId=([^&]+)", os.environ.get("SPARK_LOG_URL_STDERR", ""))
    if m:
        return m.group(1)
    base = os.path.basename(os.getcwd())
    return base if base.isdigit() else "driver"


def stall_once_per_task(x):
    """Identity UDF that sleeps once per task: 1.2 s on the straggler
    executor, 0.12 s elsewhere (same rows, same bytes)."""
    from pyspark import TaskContext

    tid = TaskContext.get().taskAttemptId()
    if _stall_seen.get("task") != tid:
        _stall_seen["task"] = tid
        time.sleep(1.2 if executor_id() == STRAGGLER_EXECUTOR else 0.12)
    return x


def straggler_workload(spark):
    """Uniform rows (round-robin repartition) through a UDF that is 10x slower
    on executor 1, in the map stage and in the reduce stage."""
    sc = spark.sparkContext
    stall = udf(stall_once_per_task, LongType())
    base = spark.range(0, 64_000, 1, 16).select(
        stall(F.col("id")).alias("id"),
        F.sha2(F.col("id").cast("string"), 256).alias("payload"),
    )
    df = base.repartition(16).select(
        stall(F.col("id")).alias("id"), "payload"
    ).agg(F.count("*").alias("n"), F.sum("id").alias("ids"), F.sum(F.length("payload")).alias("bytes"))
    sc.setJobDescription("uniform rows; executor 1 is 10x slower")
    df.collect()
    save_plan(df)
    sc.setJobDescription(None)


def tiny_partitions_workload(spark):
    """A small groupBy (100k rows, 5000 keys) into spark.sql.shuffle.partitions
    reducers (2000 in the fixture)."""
    sc = spark.sparkContext
    df = spark.range(0, 100_000, 1, 4).groupBy((F.col("id") % 5000).alias("k")).agg(
        F.count("*").alias("n"), F.sum("id").alias("s"))
    sc.setJobDescription("small groupBy into many shuffle partitions")
    df.collect()
    save_plan(df)
    sc.setJobDescription(None)


SPILL_ROWS = 400_000


def spill_workload(spark):
    """A global sort of SPILL_ROWS wide rows (~200 B each) with very little
    execution memory: the sorters spill to disk."""
    sc = spark.sparkContext
    df = spark.range(0, SPILL_ROWS, 1, 4).select(
        F.col("id"),
        ((F.col("id") * 2654435761) % 1_000_003).alias("key"),
        F.sha2(F.col("id").cast("string"), 512).alias("wide1"),
        F.sha2(F.col("id").cast("string"), 256).alias("wide2"),
    ).orderBy("key")
    sc.setJobDescription(f"global sort of {SPILL_ROWS} wide rows in little memory")
    # A noop write (not an aggregate, which would let the optimizer drop the
    # sort) so that the sort, and its spill, really happens.
    df.write.format("noop").mode("overwrite").save()
    save_plan(df)
    sc.setJobDescription(None)


GC_ROWS = 6_000_000
GC_KEYS = 64
GC_PARTS = 12
GC_COUNT_ONLY = 0  # 1: the healthy twin: counts and sums only, no string objects


def gc_workload(spark, rows=None, keys=None):
    """groupBy + collect_list of ~130-char strings over 64 keys (below the
    ObjectHashAggregate sort fallback): every map task holds all of its
    500k strings as JVM objects in aggregation buffers until it ends. With
    a 450m executor heap G1 spends ~20% of the task time collecting."""
    sc = spark.sparkContext
    rows = rows or GC_ROWS
    keys = keys or GC_KEYS
    if GC_COUNT_ONLY:
        # Same shape (64 keys, GC_PARTS map tasks), but codegen'd counts and
        # sums of longs: next to no garbage however many rows.
        df = spark.range(0, rows, 1, GC_PARTS).groupBy((F.col("id") % keys).alias("k")).agg(
            F.count("*").alias("n"), F.sum((F.col("id") * 7919) % 1_000_003).alias("h"))
        sc.setJobDescription(f"count + sum of {rows} longs over {keys} keys (no strings)")
    else:
        df = spark.range(0, rows, 1, GC_PARTS).select(
            (F.col("id") % keys).alias("k"),
            F.concat(F.lit("x" * 120), F.col("id").cast("string")).alias("s"),
        ).groupBy("k").agg(F.collect_list("s").alias("ss")).select("k", F.size("ss").alias("n"))
        sc.setJobDescription(f"collect_list of {rows} wide strings over {keys} keys")
    df.collect()
    save_plan(df)
    sc.setJobDescription(None)


MONTHS = 24
DRIVER_WORK_S = 1.0  # driver-side "Python work" per month


def monthly_source(spark):
    """240k rows; month = id % 24."""
    return spark.range(0, 240_000, 1, 4).select(
        (F.col("id") % MONTHS).alias("month"),
        (F.col("id") % 50).alias("k"),
        ((F.col("id") * 37) % 1000 / 10.0).alias("amount"),
    )


def month_query(df, m):
    return df.filter(F.col("month") == m).groupBy("k").agg(
        F.count("*").alias("n"), F.round(F.sum("amount"), 1).alias("total"))


def write_month(spark, df, out, m):
    spark.sparkContext.setJobDescription(f"month {m:02d}: filter + groupBy + write")
    month_query(df, m).write.mode("overwrite").parquet(str(out / f"month={m:02d}"))


def driver_loop_serial_workload(spark):
    """The seed case: one filter + aggregation + parquet write per month, one
    month after the other, with a second of driver-side Python between jobs."""
    out = scratch_dir("driver-loop-serial")
    df = monthly_source(spark)
    save_plan(month_query(df, 0))
    for m in range(MONTHS):
        time.sleep(DRIVER_WORK_S)  # "prepare the month" on the driver
        write_month(spark, df, out, m)
    spark.sparkContext.setJobDescription(None)


def driver_loop_threadpool_workload(spark):
    """The same 24 monthly jobs submitted from a ThreadPoolExecutor(4): jobs
    of different months overlap, but each still waits on driver work."""
    from concurrent.futures import ThreadPoolExecutor

    out = scratch_dir("driver-loop-threadpool")
    df = monthly_source(spark)
    save_plan(month_query(df, 0))

    def one(m):
        time.sleep(DRIVER_WORK_S)
        write_month(spark, df, out, m)
        return m

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, range(MONTHS)))
    spark.sparkContext.setJobDescription(None)


def driver_loop_fixed_workload(spark):
    """The same output in ONE job: groupBy(month, k) and
    write.partitionBy("month") (spark.sql.sources.partitionOverwriteMode=dynamic
    is set by the fixture step)."""
    out = scratch_dir("driver-loop-fixed")
    df = monthly_source(spark).groupBy("month", "k").agg(
        F.count("*").alias("n"), F.round(F.sum("amount"), 1).alias("total"))
    save_plan(df)
    spark.sparkContext.setJobDescription("all months: groupBy + write.partitionBy(month)")
    df.write.partitionBy("month").mode("overwrite").parquet(str(out))
    spark.sparkContext.setJobDescription(None)


LOST_EXECUTOR = "1"


def stall_reduce_task(x):
    """Identity UDF that sleeps 1.5 s once per task."""
    from pyspark import TaskContext

    tid = TaskContext.get().taskAttemptId()
    if _stall_seen.get("task") != tid:
        _stall_seen["task"] = tid
        time.sleep(1.5)
    return x


def executor_pids(app_id, exec_id):
    """pids of the CoarseGrainedExecutorBackend JVMs of this app's executor."""
    import subprocess

    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    pids = []
    for line in ps.splitlines():
        pid, _, args = line.strip().partition(" ")
        a = args.split()
        if ("org.apache.spark.executor.CoarseGrainedExecutorBackend" in a
                and app_id in a and "--executor-id" in a
                and a[a.index("--executor-id") + 1] == exec_id):
            pids.append(int(pid))
    return pids


def executor_lost_workload(spark):
    """A shuffle whose reduce stage is slow (1.5 s per task); once a few of its
    tasks are done, executor 1's JVM gets SIGKILL. Spark loses the running
    task and the map outputs on that executor, re-runs them (FetchFailed /
    resubmitted stage attempts) and the worker launches a new executor."""
    import os
    import signal
    import threading

    sc = spark.sparkContext
    stall = udf(stall_reduce_task, LongType())
    df = spark.range(0, 400_000, 1, 4).select(
        F.col("id"), F.sha2(F.col("id").cast("string"), 256).alias("payload"),
    ).repartition(8).select(stall(F.col("id")).alias("id"), "payload").agg(
        F.count("*").alias("n"), F.sum("id").alias("ids"), F.sum(F.length("payload")).alias("bytes"))

    result = {}

    def run():
        sc.setJobGroup("lost", "shuffle; executor 1 is killed during the reduce stage")
        result["rows"] = df.collect()

    t = threading.Thread(target=run)
    t.start()
    tracker = sc.statusTracker()
    deadline = time.time() + 90
    killed = []
    while time.time() < deadline and t.is_alive() and not killed:
        for jid in tracker.getJobIdsForGroup("lost"):
            info = tracker.getJobInfo(jid)
            stages = [tracker.getStageInfo(s) for s in (info.stageIds if info else [])]
            # the reduce stage (8 tasks; the map stage has 4), 2 of its tasks done
            for st in stages:
                if st is not None and st.numTasks == 8 and st.numCompletedTasks >= 2 \
                        and st.numActiveTasks > 0:
                    for pid in executor_pids(sc.applicationId, LOST_EXECUTOR):
                        print(f"SIGKILL to executor {LOST_EXECUTOR} JVM pid {pid} "
                              f"(stage {st.stageId}: {st.numCompletedTasks} tasks done)", flush=True)
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    break
        time.sleep(0.1)
    t.join()
    if not killed:
        raise RuntimeError("no executor was killed")
    print("result:", result.get("rows"), flush=True)
    save_plan(df)
    sc.setJobDescription(None)


def broadcast_disabled_workload(spark):
    """A 2M-row fact table joined with a 100-row dimension, with broadcast
    joins switched off (spark.sql.autoBroadcastJoinThreshold=-1, set by the
    step): a sort-merge join that shuffles the whole fact table."""
    sc = spark.sparkContext
    fact = spark.range(0, 2_000_000, 1, 8).select(
        F.col("id").alias("sale_id"),
        (F.col("id") % 100).alias("product_id"),
        ((F.col("id") * 37) % 1000 / 10.0).alias("amount"),
        F.sha2(F.col("id").cast("string"), 256).alias("ref"),
    )
    dim = spark.range(0, 100, 1, 1).select(
        F.col("id").alias("product_id"),
        (F.col("id") % 7).alias("category"),
    )
    df = fact.join(dim, "product_id").groupBy("category").agg(
        F.count("*").alias("n"), F.round(F.sum("amount"), 1).alias("total"),
        F.max("ref").alias("max_ref"))
    sc.setJobDescription("fact x 100-row dimension without broadcast")
    df.collect()
    save_plan(df)
    sc.setJobDescription(None)


def healthy_workload(spark):
    """Uniform data, a broadcast join and a groupBy, AQE on, enough memory,
    tasks of a few hundred ms."""
    sc = spark.sparkContext
    fact = spark.range(0, 3_000_000, 1, 4).select(
        F.col("id").alias("sale_id"),
        (F.col("id") % 1000).alias("product_id"),
        ((F.col("id") * 37) % 1000 / 10.0).alias("amount"),
    )
    dim = spark.range(0, 1000, 1, 1).select(
        F.col("id").alias("product_id"), (F.col("id") % 20).alias("category"))
    df = fact.join(dim, "product_id").groupBy("category").agg(
        F.count("*").alias("n"), F.round(F.sum("amount"), 1).alias("total"),
        F.sum(F.crc32(F.col("sale_id").cast("string"))).alias("checksum"))
    sc.setJobDescription("uniform fact x small dimension (broadcast), groupBy")
    df.collect()
    save_plan(df)
    sc.setJobDescription(None)
