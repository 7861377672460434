"""Before/after pairs for `sparkdiag diff`: real Spark runs of the same job, slow and fixed.

    python3 testdata/gen/diff.py            # every run (~3 min, one JVM at a time)
    python3 testdata/gen/diff.py fixed      # only some runs

Writes testdata/logs/diff/<run>/<appId>.zstd (one zstd file each; the killed run's is
`.zstd.inprogress`). Every run of the month story reads the same parquet input (made first,
without an event log) and writes to the SAME destination, so the diff can compare rows
written per destination:

* loop-threadpool: 24 monthly `filter + groupBy + write.parquet(dest/month=MM)` jobs
  submitted from ThreadPoolExecutor(4), each after a second of driver-side Python (the story's
  "before");
* loop-serial: the same 24 jobs one after the other;
* loop-killed: the serial loop, its JVM SIGKILLed once KILLED_AFTER months are written (a run
  stopped by hand: no ApplicationEnd, `.inprogress`);
* fixed: ONE `groupBy(month, k)` written with `partitionBy("month")` and
  partitionOverwriteMode=dynamic, AQE on (the story's "after"): the same 600 rows;
* fixed-unpartitioned: the same 600 rows as ONE unpartitioned write to the destination (no
  month directories: a diff cannot count the loop's iterations from partitions);
* fixed-drops-rows: the fix with a changed filter (`k < 48`) that silently drops 24 of the
  600 rows; the diff must flag it;
* tables: catalog writes (saveAsTable, overwrite, insertInto, SQL INSERT, a partitioned
  saveAsTable, a static-partition INSERT OVERWRITE): Spark 4 wraps saveAsTable in nested
  executions whose commands carry no metrics;
* partitions-default / partitions-aqe: a small aggregation into the default 200 shuffle
  partitions with AQE off, and the same query with AQE coalescing.

Spark runs with the same settings as the patterns (app.py's BASE_CONF: local[2], 8 shuffle
partitions unless a run says otherwise).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
from common import LOGS, WORK, fresh_dir  # noqa: E402

OUT = LOGS / "diff"
SOURCE = WORK / "diff-in" / "sales"
DEST = WORK / "diff-out" / "sales_by_month"
MONTHS = 24
DRIVER_WORK_S = 1.0
KILLED_AFTER = 8
APP_NAME = "sales-by-month"

LOG_CONF = {
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.eventLog.rolling.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.default.parallelism": "4",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.ui.showConsoleProgress": "false",
}

# run name -> (app name, extra conf)
RUNS = {
    "source": (None, {}),
    "loop-threadpool": (APP_NAME, {}),
    "loop-serial": (APP_NAME, {}),
    "loop-killed": (APP_NAME, {}),
    "fixed": (APP_NAME, {"spark.sql.sources.partitionOverwriteMode": "dynamic",
                         "spark.sql.adaptive.enabled": "true"}),
    "fixed-unpartitioned": (APP_NAME, {"spark.sql.adaptive.enabled": "true"}),
    "fixed-drops-rows": (APP_NAME, {"spark.sql.sources.partitionOverwriteMode": "dynamic",
                                    "spark.sql.adaptive.enabled": "true"}),
    "tables": ("catalog-writes", {"spark.sql.warehouse.dir": str(WORK / "diff-out" / "warehouse")}),
    "partitions-default": ("key-totals", {"spark.sql.adaptive.enabled": "false",
                                          "spark.sql.shuffle.partitions": "200"}),
    "partitions-aqe": ("key-totals", {"spark.sql.adaptive.enabled": "true",
                                      "spark.sql.shuffle.partitions": "200"}),
}


# ------------------------------------------------------------------ workloads (in the app)

def month_query(spark, m):
    from pyspark.sql import functions as F

    return (spark.read.parquet(str(SOURCE)).filter(F.col("month") == m).groupBy("k")
            .agg(F.count("*").alias("n"), F.round(F.sum("amount"), 1).alias("total")))


def write_month(spark, m):
    spark.sparkContext.setJobDescription(f"month {m:02d}: filter + groupBy + write")
    month_query(spark, m).write.mode("overwrite").parquet(str(DEST / f"month={m:02d}"))


def w_source(spark):
    """The input every month run reads: 240k rows, month = id % 24, k = id % 50."""
    from pyspark.sql import functions as F

    (spark.range(0, 240_000, 1, 4)
     .select((F.col("id") % MONTHS).alias("month"), (F.col("id") % 50).alias("k"),
             ((F.col("id") * 37) % 1000 / 10.0).alias("amount"))
     .write.mode("overwrite").parquet(str(SOURCE)))


def w_loop_threadpool(spark):
    from concurrent.futures import ThreadPoolExecutor

    def one(m):
        time.sleep(DRIVER_WORK_S)  # "prepare the month" on the driver
        write_month(spark, m)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, range(MONTHS)))


def w_loop_serial(spark):
    for m in range(MONTHS):
        time.sleep(DRIVER_WORK_S)
        write_month(spark, m)


def w_loop_killed(spark):
    """The serial loop in a thread; the JVM is SIGKILLed once KILLED_AFTER months are written,
    as when someone stops a run by hand. Never returns."""
    done = []

    def loop():
        try:
            for m in range(MONTHS):
                time.sleep(DRIVER_WORK_S)
                write_month(spark, m)
                done.append(m)
        except Exception:  # noqa: BLE001 - the JVM dies under it
            pass

    threading.Thread(target=loop, daemon=True).start()
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    deadline = time.time() + 300
    while len(done) < KILLED_AFTER and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # into the next month's driver work
    print(f"SIGKILL to JVM pid {jvm_pid} after {len(done)} months", flush=True)
    os.kill(jvm_pid, signal.SIGKILL)
    time.sleep(2)
    os._exit(0)


def fixed_query(spark, keep=None):
    from pyspark.sql import functions as F

    df = spark.read.parquet(str(SOURCE))
    if keep is not None:
        df = df.filter(keep)
    return df.groupBy("month", "k").agg(F.count("*").alias("n"),
                                        F.round(F.sum("amount"), 1).alias("total"))


def w_fixed(spark):
    spark.sparkContext.setJobDescription("all months: groupBy + write.partitionBy(month)")
    fixed_query(spark).write.partitionBy("month").mode("overwrite").parquet(str(DEST))


def w_fixed_unpartitioned(spark):
    spark.sparkContext.setJobDescription("all months: groupBy + write")
    fixed_query(spark).write.mode("overwrite").parquet(str(DEST))


def w_fixed_drops_rows(spark):
    from pyspark.sql import functions as F

    spark.sparkContext.setJobDescription("all months: groupBy + write.partitionBy(month)")
    # The "fix" also changed a filter: k 48 and 49 vanish from every month that has them.
    (fixed_query(spark, F.col("k") < 48).write.partitionBy("month").mode("overwrite")
     .parquet(str(DEST)))


def w_tables(spark):
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    for t in ("t1", "t2"):
        spark.sql(f"DROP TABLE IF EXISTS {t}")
    df = spark.range(0, 1000, 1, 2).select((F.col("id") % 7).alias("m"), F.col("id"))
    sc.setJobDescription("saveAsTable")
    df.write.saveAsTable("t1")
    sc.setJobDescription("saveAsTable overwrite")
    df.write.mode("overwrite").saveAsTable("t1")
    sc.setJobDescription("insertInto")
    df.write.insertInto("t1")
    sc.setJobDescription("SQL INSERT")
    spark.sql("INSERT INTO t1 SELECT id % 7, id FROM range(500)")
    sc.setJobDescription("partitioned saveAsTable")
    df.write.partitionBy("m").saveAsTable("t2")
    sc.setJobDescription("static partition INSERT OVERWRITE")
    spark.sql("INSERT OVERWRITE t2 PARTITION (m=3) SELECT id FROM range(10)")


def key_totals(spark):
    from pyspark.sql import functions as F

    spark.sparkContext.setJobDescription("key totals")
    (spark.range(0, 200_000, 1, 4).groupBy((F.col("id") % 1000).alias("k"))
     .agg(F.sum("id").alias("s")).collect())


WORKLOADS = {
    "source": w_source,
    "loop-threadpool": w_loop_threadpool,
    "loop-serial": w_loop_serial,
    "loop-killed": w_loop_killed,
    "fixed": w_fixed,
    "fixed-unpartitioned": w_fixed_unpartitioned,
    "fixed-drops-rows": w_fixed_drops_rows,
    "tables": w_tables,
    "partitions-default": key_totals,
    "partitions-aqe": key_totals,
}


def run_in_app(name, event_dir):
    from pyspark.sql import SparkSession

    app_name, extra = RUNS[name]
    conf = dict(LOG_CONF)
    if app_name is None:  # the input is made without an event log
        conf["spark.eventLog.enabled"] = "false"
    else:
        conf["spark.app.name"] = app_name
        conf["spark.eventLog.dir"] = Path(event_dir).resolve().as_uri()
    conf.update(extra)
    b = SparkSession.builder.master("local[2]")
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print("app id:", spark.sparkContext.applicationId, flush=True)
    WORKLOADS[name](spark)
    spark.sparkContext.setJobDescription(None)
    spark.stop()


# ------------------------------------------------------------------ driver

def run(name):
    ev = fresh_dir(WORK / "diff" / name / "events")
    out = ev.parent / "app.out"
    t0 = time.time()
    print(f"[{time.strftime('%H:%M:%S')}] diff/{name}", flush=True)
    with open(out, "w") as fh:
        proc = subprocess.run([sys.executable, __file__, "--run", name, "--event-dir", str(ev)],
                              env=common.spark_env(), stdout=fh, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        sys.exit(f"diff/{name} failed (rc={proc.returncode}); see {out}")
    if name == "source":
        return
    logs = [p for p in ev.iterdir() if not p.name.startswith(".")]
    if len(logs) != 1:
        sys.exit(f"diff/{name}: expected one log in {ev}, found {[p.name for p in logs]}")
    dest = fresh_dir(OUT / name)
    shutil.move(str(logs[0]), dest / logs[0].name)
    print(f"  {time.time() - t0:.0f} s; {logs[0].name}: {(dest / logs[0].name).stat().st_size:,} bytes",
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="*", help=f"some of {', '.join(RUNS)} (default: all)")
    ap.add_argument("--run", help=argparse.SUPPRESS)
    ap.add_argument("--event-dir", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run:
        run_in_app(a.run, a.event_dir)
        return
    common.spark_home()  # checks the pyspark version
    names = a.runs or list(RUNS)
    for n in names:
        if n not in RUNS:
            sys.exit(f"no run {n}; runs: {', '.join(RUNS)}")
    if not SOURCE.exists() and "source" not in names:
        names = ["source"] + names
    for n in names:
        run(n)


if __name__ == "__main__":
    main()
