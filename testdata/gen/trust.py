"""Real Spark 4.3 logs for what the other projects' logs lack (issue: findings to trust).

    python3 testdata/gen/trust.py                 # every scenario, one JVM at a time
    python3 testdata/gen/trust.py rdd-only ...    # only some

Writes testdata/logs/trust/<scenario>/<appId>.zstd (one zstd file each):

* dynamic-allocation: local-cluster[3,1,1024] with dynamic allocation and shuffle tracking; a
  job on every executor, then 12 s of nothing (the executors idle out and are released), then a
  small job. No task fails: every removal is a release, none is a loss.
* fetch-failed: local-cluster[2,1,1024]; executor 1's JVM gets SIGKILL during a shuffle's reduce
  stage, with spark.stage.maxConsecutiveAttempts=1 so the fetch failure aborts the job: the chain
  executor lost -> FetchFailed -> job failed.
* rdd-only: local[2]; only RDD operations (no DataFrame, no SQL): a reduceByKey over 400 tiny
  partitions.
* interactive: local[2], app name PySparkShell; four small queries with 15 s of "thinking"
  between them, as a person at a shell.
* cascade: local[2]; a long job runs in a thread while another job fails in a UDF (ValueError);
  the driver then stops the SparkContext, which cancels the long job "because SparkContext was
  shut down": the first failure is the cause, the cancelled job its consequence.
* spark-3.5: the same SQL aggregation and join with AQE off and the default 200 shuffle
  partitions, written by pyspark 3.5 (run with a Python that has it:
  `python3 -m venv /tmp/venv35 && /tmp/venv35/bin/pip install "pyspark==3.5.*"`, then
  `/tmp/venv35/bin/python testdata/gen/trust.py spark-3.5`); every other scenario is pyspark 4.3.
* spark-4.3-twin: the spark-3.5 job and settings again on pyspark 4.3, under the same application
  name: the pair `sparkdiag diff` names a Spark version change on.
"""
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402

OUT = common.LOGS / "trust"
LOCAL_CLUSTER_3 = "local-cluster[3,1,1024]"
LOCAL_CLUSTER_2 = "local-cluster[2,1,1024]"

BASE = {
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.eventLog.rolling.enabled": "false",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "1g",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.execution.pythonUDF.arrow.enabled": "false",
}

SCENARIOS = {
    "dynamic-allocation": (LOCAL_CLUSTER_3, {
        "spark.app.name": "sparkdiag-fixture dynamic-allocation",
        "spark.dynamicAllocation.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.timeout": "1s",
        "spark.dynamicAllocation.minExecutors": "0",
        "spark.dynamicAllocation.initialExecutors": "3",
        "spark.dynamicAllocation.maxExecutors": "3",
        "spark.dynamicAllocation.executorIdleTimeout": "2s",
        "spark.executor.memory": "512m",
    }),
    "fetch-failed": (LOCAL_CLUSTER_2, {
        "spark.app.name": "sparkdiag-fixture fetch-failed",
        "spark.stage.maxConsecutiveAttempts": "1",
        "spark.executor.memory": "512m",
    }),
    "rdd-only": ("local[2]", {"spark.app.name": "sparkdiag-fixture rdd-only"}),
    "interactive": ("local[2]", {"spark.app.name": "PySparkShell"}),
    "spark-3.5": ("local[2]", {"spark.app.name": "sparkdiag-fixture spark-3.5",
                               "spark.sql.adaptive.enabled": "false",
                               "spark.sql.shuffle.partitions": "200"}),
    "spark-4.3-twin": ("local[2]", {"spark.app.name": "sparkdiag-fixture spark-3.5",
                                    "spark.sql.adaptive.enabled": "false",
                                    "spark.sql.shuffle.partitions": "200"}),
    "cascade": ("local[2]", {"spark.app.name": "sparkdiag-fixture cascade",
                             "spark.task.maxFailures": "1"}),
}


def dynamic_allocation(spark):
    sc = spark.sparkContext
    sc.parallelize(range(60), 6).map(lambda x: (time.sleep(0.5), x)[1]).sum()
    time.sleep(12)  # every executor idles out and is released
    sc.parallelize(range(10), 1).sum()


def executor_pids(app_id, exec_id):
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    pids = []
    for line in ps.splitlines():
        pid, _, args = line.strip().partition(" ")
        a = args.split()
        if ("org.apache.spark.executor.CoarseGrainedExecutorBackend" in a and app_id in a
                and "--executor-id" in a and a[a.index("--executor-id") + 1] == exec_id):
            pids.append(int(pid))
    return pids


def fetch_failed(spark):
    from pyspark.sql import functions as F

    sc = spark.sparkContext

    def slow(x):
        time.sleep(0.02)
        return x

    rows = (sc.parallelize(range(4000), 4).map(lambda x: (x % 8, x))
            .partitionBy(8).map(lambda kv: (kv[0], slow(kv[1]))).reduceByKey(lambda a, b: a + b))
    result = {}

    def run():
        sc.setJobGroup("lost", "shuffle; executor 1 is killed during the reduce stage")
        try:
            result["rows"] = rows.collect()
        except Exception as e:  # the job is meant to fail
            result["error"] = str(e).splitlines()[0]

    t = threading.Thread(target=run)
    t.start()
    tracker = sc.statusTracker()
    killed = []
    deadline = time.time() + 90
    while time.time() < deadline and t.is_alive() and not killed:
        for jid in tracker.getJobIdsForGroup("lost"):
            info = tracker.getJobInfo(jid)
            for sid in (info.stageIds if info else []):
                st = tracker.getStageInfo(sid)
                if st is not None and st.numTasks == 8 and st.numCompletedTasks >= 1 \
                        and st.numActiveTasks > 0:
                    for pid in executor_pids(sc.applicationId, "1"):
                        print(f"SIGKILL to executor 1 pid {pid}", flush=True)
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                    break
        time.sleep(0.05)
    t.join()
    if not killed:
        raise RuntimeError("no executor was killed")
    print("result:", result, flush=True)
    spark.range(0, 100, 1, 2).agg(F.sum("id")).collect()


def rdd_only(spark):
    sc = spark.sparkContext
    pairs = sc.parallelize(range(40_000), 400).map(lambda x: (x % 100, x))
    pairs.reduceByKey(lambda a, b: a + b, 400).collect()


def interactive(spark):
    from pyspark.sql import functions as F

    for i in range(4):
        spark.range(0, 10_000, 1, 2).groupBy((F.col("id") % 10).alias("k")).count().collect()
        if i < 3:
            time.sleep(15)  # a person reading the result and typing the next command


def bad_row(x):
    if x == 1234:
        raise ValueError(f"bad row {x}")
    return x


def cascade(spark):
    sc = spark.sparkContext

    def long_job():
        try:
            sc.parallelize(range(4), 1).map(lambda x: (time.sleep(30), x)[1]).collect()
        except Exception as e:  # cancelled when the context stops
            print("long job:", str(e).splitlines()[0], flush=True)

    t = threading.Thread(target=long_job)
    t.start()
    time.sleep(3)
    try:
        sc.parallelize(range(2000), 1).map(bad_row).sum()
    except Exception as e:
        print("failed:", str(e).splitlines()[0], flush=True)
    spark.stop()  # the long job is still running: it is cancelled
    t.join()


def spark35(spark, version="3.5"):
    import pyspark
    from pyspark.sql import functions as F

    if not pyspark.__version__.startswith(version):
        raise RuntimeError(f"this scenario needs pyspark {version}, found {pyspark.__version__}")
    facts = spark.range(0, 2_000_000, 1, 4).select(
        F.col("id"), (F.col("id") % 1000).alias("k"), (F.col("id") % 7).alias("d"))
    dims = spark.range(0, 7, 1, 1).select(F.col("id").alias("d"), (F.col("id") * 10).alias("w"))
    facts.groupBy("k").agg(F.sum("id")).collect()
    facts.join(dims, "d").groupBy("w").count().collect()


WORKLOADS = {
    "dynamic-allocation": dynamic_allocation,
    "fetch-failed": fetch_failed,
    "rdd-only": rdd_only,
    "interactive": interactive,
    "cascade": cascade,
    "spark-3.5": spark35,
    "spark-4.3-twin": lambda spark: spark35(spark, "4.3"),
}


def run_one(name, event_dir):
    """In this process: one Spark application writing its log to event_dir."""
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    master, conf = SCENARIOS[name]
    b = SparkSession.builder.master(master)
    for k, v in {**BASE, **conf, "spark.eventLog.dir": Path(event_dir).resolve().as_uri()}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    WORKLOADS[name](spark)
    spark.stop()  # a second stop (after cascade's own) does nothing


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--run":
        run_one(sys.argv[2], sys.argv[3])
        return
    names = sys.argv[1:] or list(SCENARIOS)
    for name in names:
        master = SCENARIOS[name][0]
        events = common.fresh_dir(common.WORK / "trust" / name)
        env = common.spark_env()
        if master.startswith("local-cluster"):
            env["SPARK_HOME"] = str(common.local_cluster_home())
        out = events.parent / f"{name}.out"
        with open(out, "w") as fh:
            rc = subprocess.run([sys.executable, __file__, "--run", name, str(events)],
                                env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            sys.exit(f"{name} failed (rc={rc}); see {out}")
        dest = common.fresh_dir(OUT / name)
        for log in events.iterdir():
            (dest / log.name).write_bytes(log.read_bytes())
            print("wrote", dest / log.name, flush=True)


if __name__ == "__main__":
    main()
