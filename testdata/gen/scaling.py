"""The same workloads on 1, 2 and 4 executors, to check `sparkdiag`'s what-if prediction.

    python3 testdata/gen/scaling.py            # every workload and size (~12 min, one JVM at a time)
    python3 testdata/gen/scaling.py sleep      # one workload

Each run is master `local-cluster[N,1,1024]` (N executor JVMs of 1 core each) with zstd
event logs written to `testdata/logs/scaling/<workload>-<N>x1/`. The predictions
are made from the 1-executor log and compared with the wall clock of the others
(`tests/whatif.rs`, README "What if"). Workloads:

* `sleep`: tasks that sleep a data-dependent time (4-8 s, `Thread.sleep` through SQL's
  `reflect`, so no Python worker is involved), so their duration does not depend on how many
  cores the machine has: a map stage of 8 tasks, a shuffle into 4 reduce tasks (AQE off), and a
  second job of 4 tasks. The honest test of the simulation.
* `cpu`: a similar shape whose tasks hash rows instead: on this 2-core machine 4 executors
  contend for 2 cores, so only the direction and rough size can be right.
* `loop`: a driver loop: 6 small jobs of 2 sleeping tasks (4 s) with 5 s of driver-side work
  between them. A second executor runs each job's two tasks side by side; beyond that, more
  executors change nothing: the driver is the bound.

A run waits until its executors have registered, then runs a warm-up job (tiny tasks through the
same expressions on every executor), so every size starts the measured jobs from the same state;
the comparisons start at the first job after the warm-up.
"""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

WORKLOADS = ("sleep", "cpu", "loop")
SIZES = (1, 2, 4)
OUT = common.LOGS / "scaling"


def sleep_ms(column: str) -> str:
    """A SQL expression that sleeps 4-8 s, depending on `column`, inside the executor's JVM: no
    Python worker to start, and a duration that does not depend on how many cores the machine
    has, long enough that a task's own overhead (tenths of a second) stays small next to it."""
    return f"reflect('java.lang.Thread', 'sleep', cast(4000 + 1000 * ({column} % 5) as bigint))"


def warm_up(spark, executors: int):
    """Four tiny tasks per executor through the same expressions, so that each executor's first
    task (class loading, code generation: tens of seconds each when four JVMs share two busy
    cores) is not inside the measured jobs. The comparisons start at the first job after it."""
    sc = spark.sparkContext
    sc.setJobDescription("warm-up")
    n = 4 * executors
    (spark.range(0, n, 1, n)
        .selectExpr("id % 4 as k", "reflect('java.lang.Thread', 'sleep', cast(10 as bigint)) as r")
        .groupBy("k").agg({"r": "count"}).collect())
    spark.range(0, n, 1, n).selectExpr("sum(hash(id, id * 3))").collect()


def workload(spark, name: str):
    sc = spark.sparkContext
    if name == "loop":
        for month in range(6):
            sc.setJobDescription(f"month {month + 1}")
            spark.range(0, 2, 1, 2).selectExpr(f"{sleep_ms('0')} as r").agg({"r": "count"}).collect()
            time.sleep(5.0)  # the driver's own work between two jobs
        return
    if name == "cpu":
        # Several seconds of one core per task on an idle machine: hashing, no I/O.
        sc.setJobDescription("hash rows")
        spark.range(0, 8 * 20_000_000, 1, 8).selectExpr(
            "hash(id, id * 7, cast(id as string)) % 8 as k").groupBy("k").count().collect()
        sc.setJobDescription("second pass")
        spark.range(0, 4 * 20_000_000, 1, 4).selectExpr("sum(hash(id, id * 3))").collect()
        return
    sc.setJobDescription("map and shuffle")
    (spark.range(0, 8, 1, 8)
        .selectExpr("id % 4 as k", f"{sleep_ms('id')} as r")
        .groupBy("k").agg({"r": "count"})
        .selectExpr("k", f"{sleep_ms('k')} as r2").collect())
    sc.setJobDescription("second pass")
    spark.range(0, 4, 1, 4).selectExpr(f"{sleep_ms('id')} as r").agg({"r": "count"}).collect()


def run_app(name: str, executors: int, event_dir: Path):
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    conf = (SparkConf()
            .setMaster(f"local-cluster[{executors},1,1024]")
            .setAppName(f"scaling-{name}-{executors}x1")
            .set("spark.eventLog.enabled", "true")
            .set("spark.eventLog.dir", str(event_dir))
            .set("spark.eventLog.compress", "true")
            .set("spark.eventLog.compression.codec", "zstd")
            .set("spark.eventLog.rolling.enabled", "false")
            .set("spark.ui.enabled", "false")
            .set("spark.executor.memory", "512m")
            .set("spark.python.worker.reuse", "true")
            .set("spark.ui.showConsoleProgress", "false")
            # Eight reduce tasks, as written: AQE would coalesce them.
            .set("spark.sql.adaptive.enabled", "false")
            .set("spark.sql.shuffle.partitions", "4"))
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    sc = spark.sparkContext
    deadline = time.time() + 120
    # getExecutorMemoryStatus counts the driver too.
    while sc._jsc.sc().getExecutorMemoryStatus().size() < executors + 1:
        if time.time() > deadline:
            sys.exit(f"only {sc._jsc.sc().getExecutorMemoryStatus().size() - 1} executors registered")
        time.sleep(0.2)
    warm_up(spark, executors)
    workload(spark, name)
    spark.stop()


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--app":
        _, _, name, executors, event_dir = sys.argv
        os.environ["SPARK_HOME"] = str(common.local_cluster_home())
        run_app(name, int(executors), Path(event_dir))
        return
    names = sys.argv[1:] or WORKLOADS
    env = common.spark_env()
    env["SPARK_HOME"] = str(common.local_cluster_home())
    for name in names:
        for n in SIZES:
            target = common.fresh_dir(OUT / f"{name}-{n}x1")
            work = common.fresh_dir(common.WORK / "scaling-events")
            started = time.time()
            subprocess.run([sys.executable, __file__, "--app", name, str(n), str(work)],
                           env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            (log,) = list(work.iterdir())
            shutil.copy(log, target / log.name)
            print(f"{name} on {n} executor(s): {time.time() - started:.1f} s, {log.name}")


if __name__ == "__main__":
    main()
