"""Planted causes for `sparkdiag diff` and a history of nights for `sparkdiag batch` (issue 26).

    python3 testdata/gen/causes.py              # every run (~10 min, one JVM at a time)
    python3 testdata/gen/causes.py base grow    # only some runs
    python3 testdata/gen/causes.py nights       # only the history of nights

One job, `orders-nightly`: read `orders` (parquet: id, customer, day, amount, a 40-character
note), broadcast-join the 1000 `customers`, keep each customer's three largest orders
(a window partitioned by customer) and total the amounts per region and day; two parquet
writes. Every run reads the same path and writes to the same destinations.

`causes/base` runs it on `local-cluster[2,1,1024]` (two executor JVMs of one core each, so that
"one executor instead of two" is a real cluster change). Each other run differs from `base` by
exactly one planted cause:

* rerun: nothing (an identical rerun: natural noise only);
* grow: 4x the input (1,200,000 orders instead of 300,000; the same keys, so the same output
  rows);
* partitions: `spark.sql.shuffle.partitions` 8 -> 2000 with
  `spark.sql.adaptive.coalescePartitions.enabled=false`;
* broadcast: `spark.sql.autoBroadcastJoinThreshold=-1`, so the broadcast hash join becomes a
  sort-merge join;
* one-executor: `local-cluster[1,1,1024]`.

`causes/still-base` and `causes/still-broadcast` are a pair whose planted cause moves nothing:
10x the orders with AQE's partition coalescing off, then the same with the broadcast disabled,
run on a quiet machine. The sort-merge join's extra shuffle costs less than the run's own noise
(JVM start-up and driver time are half of it), so `diff` must say nothing material changed and
still name the setting and the plan that did change.

`causes/wait-base` and `causes/wait-skew` are the skew pair (one key holding half the rows):
another job,
`orders-scoring`, scores the orders after `repartition(8, "customer")`, every 10th waiting 1 ms
on a remote lookup (`java_method('java.lang.Thread', 'sleep', 1)`), on
`local-cluster[2,4,1024]` (eight task slots). Waiting needs no core, so the eight slots run
in parallel even on a two-core machine, as they would on eight; `wait-skew` reads the orders
in which customer 0 holds half, so one task of the eight waits for half the orders. (On
`orders-nightly`'s two slots, a key holding half the rows would cost no wall time: the hot
task is half the work, and the other slot does the other half in the same time.)

The input variants are made first without an event log; before a run its variant is renamed to
the one path the job reads, and back afterwards.

`nights/<date>/` is the same job run again and again on `local[2]`, one run per "night"
(2026-11-01 ...): natural noise on a shared machine, and one real regression on NIGHT_REGRESSION
(4x the input). `sparkdiag batch --date DATE` over each folder in turn builds the history.

Logs: testdata/logs/causes/<run>/<appId>.zstd and testdata/logs/nights/<date>/<appId>.zstd.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from common import LOGS, WORK, fresh_dir  # noqa: E402

APP_NAME = "orders-nightly"
SCORING_APP = "orders-scoring"
SCORING_CLUSTER = "local-cluster[2,4,1024]"
INPUT = WORK / "causes-in"
ORDERS = INPUT / "orders"
CUSTOMERS = INPUT / "customers"
DEST = WORK / "causes-out"
ROWS = 300_000
CLUSTER = "local-cluster[2,1,1024]"

NIGHTS = [f"2026-11-{d:02d}" for d in range(1, 9)]
NIGHT_REGRESSION = "2026-11-07"

BASE_CONF = {
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.eventLog.rolling.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
    "spark.executor.memory": "768m",
}

# run -> (master, input variant, extra conf)
RUNS = {
    "base": (CLUSTER, "1x", {}),
    "rerun": (CLUSTER, "1x", {}),
    "grow": (CLUSTER, "4x", {}),
    "partitions": (CLUSTER, "1x", {"spark.sql.shuffle.partitions": "2000",
                                   "spark.sql.adaptive.coalescePartitions.enabled": "false"}),
    "broadcast": (CLUSTER, "1x", {"spark.sql.autoBroadcastJoinThreshold": "-1"}),
    "one-executor": ("local-cluster[1,1,1024]", "1x", {}),
    "still-base": (CLUSTER, "10x", {"spark.sql.adaptive.coalescePartitions.enabled": "false"}),
    "still-broadcast": (CLUSTER, "10x", {"spark.sql.adaptive.coalescePartitions.enabled": "false",
                                         "spark.sql.autoBroadcastJoinThreshold": "-1"}),
    "wait-base": (SCORING_CLUSTER, "1x", {"spark.app.name": SCORING_APP}),
    "wait-skew": (SCORING_CLUSTER, "skew", {"spark.app.name": SCORING_APP}),
}


# ------------------------------------------------------------------ in the app

def make_inputs(spark):
    from pyspark.sql import functions as F

    (spark.range(0, 1000, 1, 1)
     .select(F.col("id").alias("customer"), (F.col("id") % 7).alias("region"))
     .write.mode("overwrite").parquet(str(CUSTOMERS)))

    def orders(rows, hot):
        customer = F.col("id") % 1000
        if hot:  # every other order is customer 0's
            customer = F.when(F.col("id") % 2 == 0, F.lit(0)).otherwise(customer)
        return (spark.range(0, rows, 1, 4)
                .select(F.col("id"), customer.alias("customer"), (F.col("id") % 30).alias("day"),
                        ((F.col("id") * 7919) % 100_000 / 100.0).alias("amount"),
                        F.sha1(F.col("id").cast("string")).substr(1, 40).alias("note")))

    orders(ROWS, False).write.mode("overwrite").parquet(str(INPUT / "orders-1x"))
    orders(4 * ROWS, False).write.mode("overwrite").parquet(str(INPUT / "orders-4x"))
    orders(ROWS, True).write.mode("overwrite").parquet(str(INPUT / "orders-skew"))
    orders(10 * ROWS, False).write.mode("overwrite").parquet(str(INPUT / "orders-10x"))


def job(spark):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    orders = spark.read.parquet(str(ORDERS))
    customers = spark.read.parquet(str(CUSTOMERS))
    joined = orders.join(customers, "customer")
    sc.setJobDescription("top orders per customer")
    w = Window.partitionBy("customer").orderBy(F.col("amount").desc(), F.col("id"))
    (joined.withColumn("rank", F.row_number().over(w)).filter(F.col("rank") <= 3)
     .write.mode("overwrite").parquet(str(DEST / "top_orders")))
    sc.setJobDescription("totals per region and day")
    (joined.groupBy("region", "day").agg(F.round(F.sum("amount"), 2).alias("total"),
                                         F.count("*").alias("orders"))
     .write.mode("overwrite").parquet(str(DEST / "daily_totals")))
    sc.setJobDescription(None)


def scoring_job(spark):
    sc = spark.sparkContext
    sc.setJobDescription("score orders per customer")
    # Every 10th order waits 1 ms on Thread.sleep, standing for a remote lookup: waiting, not
    # computing, and in the JVM, so no Python worker's start-up blurs the task times.
    lookup = ("CASE WHEN id % 10 = 0 THEN java_method('java.lang.Thread', 'sleep', "
              "CAST(1 AS BIGINT)) END")
    (spark.read.parquet(str(ORDERS)).repartition(8, "customer")
     .selectExpr("*", f"{lookup} AS lookup", "amount * 1.1 AS score")
     .write.mode("overwrite").parquet(str(DEST / "scored")))
    sc.setJobDescription(None)


def run_in_app(master, event_dir, conf):
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master(master)
    for k, v in conf.items():
        b = b.config(k, v)
    if event_dir:
        b = b.config("spark.eventLog.dir", Path(event_dir).resolve().as_uri())
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print("app id:", spark.sparkContext.applicationId, flush=True)
    if event_dir and conf.get("spark.app.name") == SCORING_APP:
        scoring_job(spark)
    elif event_dir:
        job(spark)
    else:
        make_inputs(spark)
    spark.stop()


# ------------------------------------------------------------------ driver

def spark(master, event_dir, conf, label):
    env = common.spark_env()
    env["SPARK_HOME"] = str(common.local_cluster_home())
    out = WORK / "causes" / f"{label}.out"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["nice", "-n", "10", sys.executable, __file__, "--run", master, str(event_dir or "")]
    cmd += [f"{k}={v}" for k, v in conf.items()]
    with open(out, "w") as fh:
        rc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        sys.exit(f"{label} failed (rc={rc}); see {out}")


def with_input(variant, run):
    """Runs `run` with the input variant at the one path the job reads."""
    src = INPUT / f"orders-{variant}"
    os.replace(src, ORDERS)
    try:
        run()
    finally:
        os.replace(ORDERS, src)


def keep_log(events, dest):
    logs = [p for p in events.iterdir() if not p.name.startswith(".")]
    if len(logs) != 1:
        sys.exit(f"expected one log in {events}, found {[p.name for p in logs]}")
    dest = fresh_dir(dest)
    shutil.move(str(logs[0]), dest / logs[0].name)
    print(f"  {dest / logs[0].name}: {(dest / logs[0].name).stat().st_size:,} bytes", flush=True)


def conf_of(extra):
    return {**BASE_CONF, "spark.app.name": APP_NAME, **extra}


def run(name):
    master, variant, extra = RUNS[name]
    events = fresh_dir(WORK / "causes" / name / "events")
    t0 = time.time()
    print(f"[{time.strftime('%H:%M:%S')}] causes/{name}", flush=True)
    with_input(variant, lambda: spark(master, events, conf_of(extra), name))
    print(f"  {time.time() - t0:.0f} s", flush=True)
    keep_log(events, LOGS / "causes" / name)


def nights():
    for date in NIGHTS:
        events = fresh_dir(WORK / "nights" / date / "events")
        variant = "4x" if date == NIGHT_REGRESSION else "1x"
        print(f"[{time.strftime('%H:%M:%S')}] nights/{date} ({variant})", flush=True)
        with_input(variant, lambda: spark("local[2]", events, conf_of({}), f"night-{date}"))
        keep_log(events, LOGS / "nights" / date)


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--run":
        conf = dict(a.split("=", 1) for a in args[3:])
        run_in_app(args[1], args[2], conf)
        return
    common.spark_home()  # checks the pyspark version
    names = args or [*RUNS, "nights"]
    for n in names:
        if n not in RUNS and n != "nights":
            sys.exit(f"no run {n}; runs: {', '.join(RUNS)}, nights")
    if not (INPUT / "orders-10x").exists():
        print("making the inputs", flush=True)
        spark("local[2]", None, {**BASE_CONF, "spark.eventLog.enabled": "false"}, "inputs")
    for n in names:
        if n == "nights":
            nights()
        else:
            run(n)


if __name__ == "__main__":
    main()
