"""Real Spark 4.3 logs of why a task was slow (issue 47): its data, a cold start, a late or a
slow executor, retries, a driver that halted; each on a real multi-executor cluster.

    python3 testdata/gen/slowness.py                      # every scenario, one JVM at a time
    python3 testdata/gen/slowness.py slow-host ...        # only some (then their table rows)
    python3 testdata/gen/slowness.py --table [NAME...]    # only remeasure the committed logs

Writes testdata/logs/slowness/<scenario>/<appId>.zstd, the table
testdata/logs/slowness/SLOWNESS.tsv (what each log plants, where it shows, the executors, task
localities and the figures a test would assert, measured from the log, and what `sparkdiag
analyze` says about it today) and the logs' rows of testdata/logs/MANIFEST.tsv.

The clusters. "standalone" is a real standalone Master and two Workers started here with
Spark's `spark-class` (scenario_runs.standalone_cluster), each Worker on its own loopback
address (127.0.0.1 and 127.0.0.2), so the two executors have two hosts as on a real cluster:
locality (NODE_LOCAL against ANY) and a slow host are per host. The others run on
`local-cluster[2,1,1024]` (two executor JVMs of one core, one host). The scenarios whose shape
is a ratio of CPU speeds wait until the machine's load average is under 3 before they start
(scenario_runs.wait_for_quiet): on a machine shared with compilers a healthy executor is
slowed as much as a throttled one.

* slow-host: the second Worker (127.0.0.2) and everything it starts run in a cgroup with a
  CPU quota of 0.1 CPU (the kernel's CFS bandwidth control: cgroup v2 `cpu.max`, or here the
  v1 `cpu` controller's `cpu.cfs_quota_us` = 1000 per `cpu.cfs_period_us` = 10000; the Worker's
  `sh` wrapper writes its own pid to the cgroup's `cgroup.procs` and then execs the Worker,
  so the executor JVM it launches inherits the quota). Both executors register before the
  first job (`spark.scheduler.minRegisteredResourcesRatio=1`) and warm up; then a stage of
  2000 short tasks (healthy median under 50 ms), six short two-stage jobs of 40 tasks, and a
  stage of 16 one-second tasks where the throttled executor finishes only about 3.
  slow-host-healthy: the same cluster and jobs with no quota: no host is slow.
* late-executor: dynamic allocation with shuffle tracking on the standalone cluster
  (initialExecutors=1, maxExecutors=2, schedulerBacklogTimeout=1s): the first executor runs
  the first join's map stages alone while the second is requested and starts; the join's 200
  reduce tasks (AQE and broadcast off) prefer the first executor's host (its map output:
  NODE_LOCAL), and the second executor gets ANY-locality tasks only when the 3 s locality wait
  runs out, running its first ones cold. Three rounds of the join. No host is slow.
* cold-first-wave: the standalone cluster with two 2-core executors; the first job is
  submitted as the application starts, so its stage's first tasks start as each executor
  registers and pay for class loading, code generation and the JIT; later waves and a second
  identical job run warm.
* empty-partitions: local-cluster[2,1,1024], AQE and broadcast off, 2000 shuffle partitions:
  5M fact rows over 1000 keys sort-merge joined with a 1000-row dimension and aggregated by
  key: about 60 % of the 2000 reduce tasks read nothing, so the median task reads 0 bytes.
  No key is hot. empty-partitions-skew: the same with 1M rows over the 1000 keys plus ten hot
  keys of 400,000 rows each.
* retries: local-cluster[2,1,1024]: a Python UDF that sleeps 10 s and raises on the first
  attempt of each of a stage's 4 tasks (`TaskContext.get().attemptNumber() == 0`); the
  retries succeed in about a second. 4 of 8 attempts fail, wasting about 40 s of executor time
  in a short application.
* driver-halts: local-cluster[2,1,1024]: two jobs, then the driver JVM gets SIGKILL 3 s after
  the last one ended: no SparkListenerApplicationEnd, nothing running (`.inprogress` file).
* hot-key-oom: not a new log: `memory/heap-oom-hot-key` (memory.py) already is an
  out-of-memory whose cause is a hot key: 80 % of the rows on key 0, `repartition("k")` and a
  `collect_list` per key on 512 MiB executors; the task reading key 0's partition runs out of
  heap. Its row here is measured from that log.
"""
import os
import signal
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import scenario_runs as runs  # noqa: E402
from scenario_runs import STANDALONE, med, stage_line  # noqa: E402

FOLDER = "slowness"
SMALL_CLUSTER = "local-cluster[2,1,1024]"
SLOW_HOST = "127.0.0.2"
QUOTA = 0.1

TWO_HOSTS = [{"host": "127.0.0.1", "cores": 1, "memory": "2g"},
             {"host": SLOW_HOST, "cores": 1, "memory": "2g"}]
THROTTLED = [TWO_HOSTS[0], {**TWO_HOSTS[1], "cpu_quota": QUOTA}]
TWO_HOSTS_2_CORES = [{**w, "cores": 2} for w in TWO_HOSTS]

STANDALONE_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.executor.memory": "512m",
    "spark.executor.cores": "1",
    "spark.cores.max": "2",
}


def describe(spark, text):
    spark.sparkContext.setJobDescription(text)


def hashed(spark, tasks, rows_per_task, rounds=2):
    """A stage of `tasks` tasks, each hashing its rows `rounds` times: CPU work only."""
    from pyspark.sql import functions as F

    h = F.col("id").cast("string")
    for _ in range(rounds):
        h = F.sha2(h, 512)
    return spark.range(0, tasks * rows_per_task, 1, tasks).select((F.col("id") % 40).alias("k"), h.alias("h"))


# ------------------------------------------------------------------ workloads

def slow_host(spark):
    from pyspark.sql import functions as F

    describe(spark, "warm-up")
    hashed(spark, 8, 2000).agg(F.count("h")).collect()
    describe(spark, "2000 short tasks")
    hashed(spark, 2000, 2500).agg(F.count("h")).collect()
    for i in range(6):
        describe(spark, f"short job {i}: 40 tasks, then a shuffle")
        hashed(spark, 40, 15_000).groupBy("k").agg(F.count("h")).collect()
    describe(spark, "16 one-second tasks")
    hashed(spark, 16, 120_000, rounds=3).agg(F.count("h")).collect()


def late_executor(spark):
    from pyspark.sql import functions as F

    left = spark.range(0, 3_000_000, 1, 4).select((F.col("id") % 100_000).alias("k"), F.col("id").alias("a"))
    right = spark.range(0, 300_000, 1, 2).select((F.col("id") % 100_000).alias("k"), (F.col("id") * 3).alias("b"))
    for i in range(3):
        describe(spark, f"join round {i}")
        (left.join(right, "k").groupBy("k").agg(F.sum("a").alias("a"), F.sum("b").alias("b"))
            .agg(F.count("k"), F.sum("a"), F.sum("b")).collect())


def cold_first_wave(spark):
    from pyspark.sql import functions as F

    for i in range(2):
        describe(spark, f"24 tasks, {'cold' if i == 0 else 'warm'}")
        rows = spark.range(0, 24 * 60_000, 1, 24)
        s = F.sha2(F.col("id").cast("string"), 256)
        (rows.select(F.regexp_replace(s, "[0-9]+", "#").alias("a"), F.upper(F.reverse(s)).alias("b"),
                     F.conv(F.substring(s, 1, 8), 16, 10).alias("c"))
            .agg(F.count_distinct(F.length("a")), F.max("b"), F.sum(F.col("c").cast("long"))).collect())


def empty_partitions(spark, skew=False):
    from pyspark.sql import functions as F

    dim = spark.range(0, 1000, 1, 2).select(
        F.col("id").alias("key"), F.concat(F.lit("name-"), F.col("id").cast("string")).alias("name"))
    if skew:
        base = spark.range(0, 1_000_000, 1, 8).select((F.col("id") % 1000).alias("key"), F.col("id").alias("v"))
        hot = spark.range(0, 4_000_000, 1, 8).select(((F.col("id") % 10) * 97 + 3).alias("key"),
                                                     F.col("id").alias("v"))
        facts = base.unionByName(hot)
        describe(spark, "5M facts (ten hot keys of 400,000 rows) joined by key into 2000 partitions")
    else:
        facts = spark.range(0, 5_000_000, 1, 8).select((F.col("id") % 1000).alias("key"), F.col("id").alias("v"))
        describe(spark, "5M facts over 1000 keys joined by key into 2000 partitions")
    (facts.join(dim, "key").groupBy("key").agg(F.count("v").alias("n"), F.sum("v").alias("s"), F.max("name"))
        .agg(F.sum("n"), F.sum("s")).collect())


def flaky_double(x):
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx.attemptNumber() == 0:
        time.sleep(10)
        raise RuntimeError(f"flaky source: attempt 0 of partition {ctx.partitionId()} fails")
    time.sleep(0.25)
    return float(x) * 2


def retries(spark):
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType

    describe(spark, "4 tasks whose first attempts fail after 10 s")
    f = F.udf(flaky_double, DoubleType())
    print(spark.range(0, 4, 1, 4).select(f("id").alias("v")).agg(F.sum("v")).collect(), flush=True)


def driver_halts(spark):
    from pyspark.sql import functions as F

    describe(spark, "groupBy")
    spark.range(0, 1_000_000, 1, 4).groupBy((F.col("id") % 100).alias("k")).count().collect()
    describe(spark, "join")
    a = spark.range(0, 200_000, 1, 4).select((F.col("id") % 1000).alias("k"), F.col("id").alias("a"))
    b = spark.range(0, 1000, 1, 2).select(F.col("id").alias("k"), (F.col("id") * 2).alias("b"))
    a.join(b, "k").agg(F.sum("a"), F.sum("b")).collect()
    time.sleep(3)  # the last job's events reach the file
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    print(f"SIGKILL to the driver JVM pid {pid}", flush=True)
    os.kill(pid, signal.SIGKILL)
    time.sleep(2)
    os._exit(0)


# ------------------------------------------------------------------ measuring

def executors(log):
    """Executor id -> (host, cores, ms after the application started)."""
    return {e: (log.host(e), a["Executor Info"]["Total Cores"], a["Timestamp"] - log.app_start)
            for e, a in sorted(log.executor_added.items())}


def exec_line(log):
    return "executors " + ", ".join(f"{e} on {h} ({c} core{'s' if c > 1 else ''}, added at +{t:,} ms)"
                                    for e, (h, c, t) in executors(log).items())


def per_executor(log, stage, attempt=0):
    by = defaultdict(list)
    for t in log.stage_tasks(stage, attempt):
        by[t.executor].append(t.duration)
    return by


def split_line(log, stage, attempt=0):
    by = per_executor(log, stage, attempt)
    return ", ".join(f"exec {e}: {len(d)} tasks, median {med(d):,.0f} ms" for e, d in sorted(by.items()))


def locality_line(log, stage=None):
    c = runs.locality_counts(log, stage)
    by = defaultdict(dict)
    for (e, loc), n in c.items():
        by[e][loc] = n
    return "; ".join(f"exec {e} " + " ".join(f"{loc} {n}" for loc, n in sorted(d.items()))
                     for e, d in sorted(by.items()))


def slow_executor_of(log):
    return next((e for e, (h, _, _) in executors(log).items() if h == SLOW_HOST), None)


def m_slow_host(log, healthy=False):
    slow = slow_executor_of(log)
    parts, stages = [exec_line(log)], []
    mine_all, others_all = [], []
    for s in log.stage_ids():
        by = per_executor(log, s)
        ts = log.stage_tasks(s)
        if len(ts) < 2 or len(by) < 2:
            continue
        mine = by.get(slow, [])
        others = [d for e, ds in by.items() if e != slow for d in ds]
        mine_all += mine
        others_all += others
        r = med(mine) / max(med(others), 1)
        if r >= 2:
            stages.append(s)
        parts.append(f"stage {s} ({len(ts)} tasks, median {med([t.duration for t in ts]):,.0f} ms): "
                     f"{split_line(log, s)} ({r:.1f}x)")
    parts.insert(1, f"over the stages both ran: exec {slow} {len(mine_all)} tasks, median "
                    f"{med(mine_all):,.0f} ms, the other {len(others_all)} tasks, median {med(others_all):,.0f} ms "
                    f"({med(mine_all) / max(med(others_all), 1):.1f}x)")
    return {"stage_ids": [] if healthy else stages, "executor_ids": [] if healthy else [slow],
            "notes": "; ".join(parts)}


def m_late(log):
    ex = executors(log)
    first_job = min(v["start"] for v in log.jobs.values()) - log.app_start
    late = max(ex, key=lambda e: ex[e][2])
    parts = [exec_line(log) + f"; first job at +{first_job:,} ms; late executor {late}"]
    first = sorted((t for t in log.tasks if t.executor == late and t.ok), key=lambda t: t.launch)[:4]
    parts.append(f"exec {late}'s first tasks: " + ", ".join(
        f"task {t.id} (stage {t.stage}, {log.locality[t.id]}) {t.duration:,} ms" for t in first))
    for s in log.stage_ids():
        ts = log.stage_tasks(s)
        if len(ts) < 100:
            continue
        parts.append(f"stage {s} ({len(ts)} tasks, median {med([t.duration for t in ts]):,.0f} ms, max "
                     f"{max(t.duration for t in ts):,}): {split_line(log, s)}; locality {locality_line(log, s)}")
    parts.append(f"all tasks' locality: {locality_line(log)}")
    return {"executor_ids": [late], "notes": "; ".join(parts)}


def m_cold(log):
    parts = [exec_line(log)]
    stages = []
    for s in log.stage_ids():
        ts = sorted(log.stage_tasks(s), key=lambda t: t.launch)
        if len(ts) < 8:
            continue
        cores = {e: c for e, (_, c, _) in executors(log).items()}
        seen, wave, rest = defaultdict(int), [], []
        for t in ts:
            seen[t.executor] += 1
            (wave if seen[t.executor] <= cores[t.executor] else rest).append(t)
        start = log.stage_info[(s, 0)]["submitted"]
        r = med([t.duration for t in wave]) / max(med([t.duration for t in rest]), 1)
        if r >= 3:
            stages.append(s)
        parts.append(f"stage {s} ({len(ts)} tasks, submitted at +{start - log.app_start:,} ms): first wave "
                     + ", ".join(f"task {t.id} exec {t.executor} launched +{t.launch - log.app_start:,} ms "
                                 f"{t.duration:,} ms" for t in wave)
                     + f"; the other {len(rest)} tasks median {med([t.duration for t in rest]):,.0f} ms, max "
                       f"{max(t.duration for t in rest):,} ms ({r:.1f}x)")
    return {"stage_ids": stages, "notes": "; ".join(parts)}


def m_empty(log, skew=False):
    s = max(log.stage_ids(), key=lambda s: len(log.stage_tasks(s)))
    ts = log.stage_tasks(s)
    empty = [t for t in ts if t.sr_records == 0]
    full = [t for t in ts if t.sr_records > 0]
    top = sorted(ts, key=lambda t: -t.sr_records)[:10]
    slowest = sorted(ts, key=lambda t: -t.duration)[:3]
    notes = (f"stage {s}: {len(ts)} tasks, {len(empty)} read 0 records (median shuffle read "
             f"{med([t.sr_bytes for t in ts]):,.0f} B, median task {med([t.duration for t in ts]):,.0f} ms); the "
             f"{len(full)} non-empty tasks: median {med([t.sr_records for t in full]):,.0f} records / "
             f"{med([t.sr_bytes for t in full]):,.0f} B, median {med([t.duration for t in full]):,.0f} ms; the ten "
             f"largest: " + ", ".join(f"task {t.id} (partition {t.index}) {t.sr_records:,} rec {t.duration:,} ms"
                                     for t in top)
             + "; the slowest: " + ", ".join(f"task {t.id} {t.duration:,} ms {t.sr_records:,} rec exec {t.executor}"
                                            for t in slowest)
             + f"; {exec_line(log)}")
    return {"stage_ids": [s] if skew else [], "task_ids": [t.id for t in top] if skew else [], "notes": notes}


def m_retries(log):
    failed = [t for t in log.tasks if not t.ok]
    ok = [t for t in log.tasks if t.ok]
    app = log.app_end - log.app_start
    wasted = sum(t.duration for t in failed)
    first_job = min(v["start"] for v in log.jobs.values())
    jobs = {j: v.get("result") for j, v in log.jobs.items()}
    return {"stage_ids": sorted({t.stage for t in failed}), "task_ids": [t.id for t in failed],
            "notes": (f"{len(log.tasks)} task attempts, {len(failed)} failed "
                      f"({', '.join(sorted({str(t.end_reason.get('Class Name', t.reason)) for t in failed}))}), "
                      f"wasting {wasted:,} ms of executor time; the successful {len(ok)} took "
                      f"{sum(t.duration for t in ok):,} ms; app {app:,} ms (from the first job {log.app_end - first_job:,} ms); "
                      f"jobs {jobs}; failed attempts: "
                      + ", ".join(f"task {t.id} partition {t.index} exec {t.executor} {t.duration:,} ms" for t in failed)
                      + f"; {exec_line(log)}")}


def m_halt(log):
    last_end = max(v.get("end", 0) for v in log.jobs.values())
    running = [j for j, v in log.jobs.items() if "end" not in v]
    last = log.events[-1]
    last_t = max((e.get("Timestamp") or e.get("time") or e.get("Completion Time") or 0) for e in log.events[-5:])
    return {"job_ids": sorted(log.jobs),
            "notes": (f"{len(log.jobs)} jobs, all ended ({ {j: v.get('result') for j, v in log.jobs.items()} }); "
                      f"jobs running at the end: {running}; last job ended at +{last_end - log.app_start:,} ms; "
                      f"the log's last event {last['Event']} (latest timestamp +{last_t - log.app_start:,} ms); "
                      f"SparkListenerApplicationEnd: {'yes' if log.app_end else 'no'}; {exec_line(log)}")}


def m_hot_oom(log):
    failed = [t for t in log.tasks if not t.ok]
    oom = [t for t in failed if "OutOfMemoryError" in str(t.end_reason)]
    stage = oom[0].stage if oom else None
    parts = []
    for (s, a), info in sorted(log.stage_info.items()):
        ts = log.stage_tasks(s, a)
        if ts and any(t.sr_bytes for t in ts):
            big = max(ts, key=lambda t: t.sr_bytes)
            parts.append(f"stage {s}.{a}: {len(ts)} successful tasks, largest shuffle read {big.sr_bytes / 2**20:,.1f} MiB "
                         f"(task {big.id}), median {med([t.sr_bytes for t in ts]) / 2**20:,.1f} MiB")
    removed = sorted({e["Executor ID"] for e in log.executors_removed})
    return {"job_ids": sorted(j for j, v in log.jobs.items() if v.get("result") != "JobSucceeded"),
            "stage_ids": sorted({t.stage for t in oom}), "task_ids": [t.id for t in oom],
            "executor_ids": sorted({t.executor for t in oom}),
            "notes": (f"{len(oom)} OutOfMemoryError task ends (tasks {[t.id for t in oom]}, first in stage {stage}, "
                      f"on executors {sorted({t.executor for t in oom})}); executors removed {removed}; "
                      + "; ".join(parts))}


# ------------------------------------------------------------------ the scenarios

def S(master, run, planted, measure, about, conf=None, **kw):
    return {"master": master, "run": run, "planted": planted, "measure": measure, "about": about,
            "conf": conf or {}, **kw}


SLOW_CONF = {**STANDALONE_CONF, "spark.scheduler.minRegisteredResourcesRatio": "1",
             "spark.scheduler.maxRegisteredResourcesWaitingTime": "300s",
             "spark.sql.adaptive.enabled": "false"}
LATE_CONF = {**STANDALONE_CONF,
             "spark.dynamicAllocation.enabled": "true",
             "spark.dynamicAllocation.shuffleTracking.enabled": "true",
             "spark.dynamicAllocation.initialExecutors": "1",
             "spark.dynamicAllocation.minExecutors": "1",
             "spark.dynamicAllocation.maxExecutors": "2",
             "spark.dynamicAllocation.schedulerBacklogTimeout": "1s",
             "spark.sql.adaptive.enabled": "false",
             "spark.sql.autoBroadcastJoinThreshold": "-1",
             "spark.sql.shuffle.partitions": "200"}
EMPTY_CONF = {"spark.sql.adaptive.enabled": "false", "spark.sql.autoBroadcastJoinThreshold": "-1",
              "spark.sql.shuffle.partitions": "2000", "spark.executor.memory": "512m"}

SCENARIOS = {
    "slow-host": S(
        STANDALONE, slow_host, "slow-host", m_slow_host,
        f"standalone, two 1-core workers on 127.0.0.1 and {SLOW_HOST}; the second's process tree in a cgroup "
        f"with a CPU quota of {QUOTA} CPU; warm-up, a 2000-task stage, six 40-task jobs, a 16-task stage of ~1 s.",
        SLOW_CONF, workers=THROTTLED, quiet=True),
    "slow-host-healthy": S(
        STANDALONE, slow_host, "healthy", lambda l: m_slow_host(l, True),
        "the same cluster and jobs without the quota.", SLOW_CONF, workers=TWO_HOSTS, quiet=True),
    "late-executor": S(
        STANDALONE, late_executor, "healthy", m_late,
        "standalone, two 1-core workers on 127.0.0.1 and 127.0.0.2; dynamic allocation (shuffle tracking, "
        "initial 1, max 2, backlog timeout 1 s); three rounds of a sort-merge join into 200 partitions; "
        "AQE off; locality wait 3 s (default).", LATE_CONF, workers=TWO_HOSTS, quiet=True),
    "cold-first-wave": S(
        STANDALONE, cold_first_wave, "cold-start", m_cold,
        "standalone, two 2-core workers on 127.0.0.1 and 127.0.0.2; the first job (24 tasks of string "
        "functions) submitted as the application starts, then the same job again.",
        {**STANDALONE_CONF, "spark.executor.cores": "2", "spark.cores.max": "4"}, workers=TWO_HOSTS_2_CORES,
        quiet=True),
    "empty-partitions": S(
        SMALL_CLUSTER, empty_partitions, "healthy", m_empty,
        "local-cluster[2,1,1024]; 5M facts over 1000 keys sort-merge joined with 1000 dimension rows and "
        "aggregated by key in 2000 shuffle partitions; AQE off.", EMPTY_CONF),
    "empty-partitions-skew": S(
        SMALL_CLUSTER, lambda s: empty_partitions(s, skew=True), "skew", lambda l: m_empty(l, True),
        "the same with 1M facts over the 1000 keys plus ten hot keys (3, 100, 197, ..., 876) of 400,000 rows.",
        EMPTY_CONF),
    "retries": S(
        SMALL_CLUSTER, retries, "retries", m_retries,
        "local-cluster[2,1,1024]; a Python UDF sleeping 10 s then raising on attempt 0 of each of 4 tasks.",
        {"spark.executor.memory": "512m"}),
    "driver-halts": S(
        SMALL_CLUSTER, driver_halts, "driver-halted", m_halt,
        "local-cluster[2,1,1024]; a groupBy job, a join job, then SIGKILL to the driver JVM 3 s later.",
        {"spark.executor.memory": "512m"}, may_fail=True),
    "hot-key-oom": S(
        None, None, "hot-key-oom", m_hot_oom,
        "memory/heap-oom-hot-key reused (memory.py): 80% of 480k 2 kB strings on key 0, repartition('k') and "
        "collect_list per key, local-cluster[2,1,1024] with 512 MiB executors.",
        reuse="memory/heap-oom-hot-key"),
}

if __name__ == "__main__":
    runs.main(Path(__file__).resolve(), FOLDER, SCENARIOS, sys.modules[__name__])
