"""Run one fixture app: python3 app.py SCENARIO --event-dir DIR [--master M] [--conf k=v ...]

Started by make_all.py in a fresh process per fixture, so that each app has
its own JVM and its own event-log settings.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workload  # noqa: E402

SCENARIOS = {
    "main": workload.main_workload,
    "small": workload.small_workload,
    "many-tasks": workload.many_tasks_workload,
    "failing": workload.failing_workload,
    "killed": workload.killed_workload,
    # patterns/ (see patterns.py)
    "skew-join": workload.skew_join_workload,
    "straggler": workload.straggler_workload,
    "tiny-partitions": workload.tiny_partitions_workload,
    "spill": workload.spill_workload,
    "gc": workload.gc_workload,
    "driver-loop-serial": workload.driver_loop_serial_workload,
    "driver-loop-threadpool": workload.driver_loop_threadpool_workload,
    "driver-loop-fixed": workload.driver_loop_fixed_workload,
    "executor-lost": workload.executor_lost_workload,
    "broadcast-disabled": workload.broadcast_disabled_workload,
    "healthy": workload.healthy_workload,
}

# Settings shared by every fixture app (each may be overridden with --conf).
BASE_CONF = {
    "spark.eventLog.enabled": "true",
    "spark.sql.shuffle.partitions": "8",
    "spark.default.parallelism": "4",
    # Plain pickled Python UDFs (BatchEvalPython): no pandas/pyarrow needed.
    "spark.sql.execution.pythonUDF.arrow.enabled": "false",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.python.worker.reuse": "true",
    "spark.ui.showConsoleProgress": "false",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--event-dir", required=True)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--conf", action="append", default=[])
    ap.add_argument("--plan-out", help="write the main query's explain(mode='formatted') here")
    ap.add_argument("--set", action="append", default=[],
                    help="NAME=INT: override a workload.py constant (e.g. GC_ROWS=2000000)")
    a = ap.parse_args()
    workload.PLAN_OUT = a.plan_out
    for kv in a.set:
        k, v = kv.split("=", 1)
        if not hasattr(workload, k):
            sys.exit(f"workload.py has no {k}")
        setattr(workload, k, int(v))

    if a.master.startswith("local-cluster"):
        import os

        import common

        # Keep the standalone worker's SPARK_HOME/work out of site-packages.
        os.environ["SPARK_HOME"] = str(common.local_cluster_home())

    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    # Ship workload's UDFs and lambdas by value: the Python workers do not
    # have gen/ on their path.
    cloudpickle.register_pickle_by_value(workload)

    conf = dict(BASE_CONF)
    conf["spark.eventLog.dir"] = Path(a.event_dir).resolve().as_uri()
    for kv in a.conf:
        k, v = kv.split("=", 1)
        conf[k] = v
    b = SparkSession.builder.master(a.master)
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print("app id:", spark.sparkContext.applicationId, flush=True)
    SCENARIOS[a.scenario](spark)
    spark.stop()


if __name__ == "__main__":
    main()
