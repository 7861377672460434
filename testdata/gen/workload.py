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
