"""Measure what each patterns/ fixture log shows; write PATTERNS.tsv.

    python3 patterns.py                     # write logs/patterns/PATTERNS.tsv + README section
    python3 patterns.py NAME [LOG]          # print one fixture's measurements

Every number comes from the decoded event log (evlog.read_log), never from
the workload's intent: which stage holds the skewed task, how much slower
executor 1's tasks are, how long the driver ran no job, and so on.
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evlog  # noqa: E402
from common import GEN_DIR, LOGS  # noqa: E402

PATTERNS = LOGS / "patterns"
PLANS = LOGS.parent / "plans"
COLUMNS = ["name", "path", "planted", "must_fire_stage_ids", "must_fire_executor_ids", "notes"]

# name -> planted category, in PATTERNS.tsv order
PLANTED = {
    "skew-join": "skew",
    "skew-join-aqe": "healthy",
    "straggler": "straggler",
    "tiny-partitions": "partitions-tiny",
    "tiny-partitions-fixed": "healthy",
    "spill": "spill",
    "gc-pressure": "gc",
    "gc-healthy": "healthy",
    "driver-loop-serial": "driver-bound",
    "driver-loop-threadpool": "driver-bound",
    "driver-loop-fixed": "healthy",
    "executor-lost": "failure",
    "broadcast-disabled": "config",
    "healthy": "healthy",
}


# ------------------------------------------------------------------ reading

class Task:
    def __init__(self, e):
        ti, m = e["Task Info"], e.get("Task Metrics") or {}
        self.stage = e["Stage ID"]
        self.attempt = e["Stage Attempt ID"]
        self.id = ti["Task ID"]
        self.index = ti["Index"]
        self.executor = ti["Executor ID"]
        self.launch = ti["Launch Time"]
        self.finish = ti["Finish Time"]
        self.duration = self.finish - self.launch
        self.reason = e["Task End Reason"]["Reason"]
        self.end_reason = e["Task End Reason"]
        self.ok = self.reason == "Success"
        self.run_ms = m.get("Executor Run Time", 0)
        self.gc_ms = m.get("JVM GC Time", 0)
        self.mem_spill = m.get("Memory Bytes Spilled", 0)
        self.disk_spill = m.get("Disk Bytes Spilled", 0)
        self.peak_exec = m.get("Peak Execution Memory", 0)
        sr = m.get("Shuffle Read Metrics") or {}
        self.sr_bytes = sr.get("Remote Bytes Read", 0) + sr.get("Local Bytes Read", 0)
        self.sr_records = sr.get("Total Records Read", 0)
        sw = m.get("Shuffle Write Metrics") or {}
        self.sw_bytes = sw.get("Shuffle Bytes Written", 0)
        self.sw_records = sw.get("Shuffle Records Written", 0)


class Log:
    def __init__(self, path: Path):
        self.path = Path(path)
        lines, _, _, _ = evlog.read_log(self.path)
        self.events = [json.loads(ln) for ln in lines if ln.strip()]
        self.tasks = [Task(e) for e in self.events if e["Event"] == "SparkListenerTaskEnd"]
        self.stages = {}  # (stage, attempt) -> Stage Info of StageCompleted
        self.jobs = {}  # job id -> {start, end, result, stages}
        self.executors_added = []
        self.executors_removed = []
        self.app_start = self.app_end = None
        self.conf = {}
        for e in self.events:
            ev = e["Event"]
            if ev == "SparkListenerStageCompleted":
                s = e["Stage Info"]
                self.stages[(s["Stage ID"], s["Stage Attempt ID"])] = s
            elif ev == "SparkListenerJobStart":
                self.jobs[e["Job ID"]] = {"start": e["Submission Time"], "stages": e["Stage IDs"],
                                          "desc": (e.get("Properties") or {}).get("spark.job.description")}
            elif ev == "SparkListenerJobEnd":
                self.jobs[e["Job ID"]].update(end=e["Completion Time"], result=e["Job Result"]["Result"])
            elif ev == "SparkListenerExecutorAdded":
                self.executors_added.append(e)
            elif ev == "SparkListenerExecutorRemoved":
                self.executors_removed.append(e)
            elif ev == "SparkListenerApplicationStart":
                self.app_start = e["Timestamp"]
                self.app_id = e.get("App ID")
                self.app_name = e.get("App Name")
            elif ev == "SparkListenerApplicationEnd":
                self.app_end = e["Timestamp"]
            elif ev == "SparkListenerEnvironmentUpdate":
                self.conf = e.get("Spark Properties", {})

    def stage_tasks(self, stage, attempt=None, ok_only=True):
        return [t for t in self.tasks if t.stage == stage and (attempt is None or t.attempt == attempt)
                and (t.ok or not ok_only)]

    def stage_ids(self):
        return sorted({t.stage for t in self.tasks})

    def stage_name(self, stage):
        for (sid, _), s in sorted(self.stages.items()):
            if sid == stage:
                return s["Stage Name"]
        return "?"


def job_descs(log):
    """The distinct job descriptions (spark.job.description), in order."""
    out = []
    for _, j in sorted(log.jobs.items()):
        if j["desc"] and j["desc"] not in out:
            out.append(j["desc"])
    return " / ".join(out)


def med(xs):
    return statistics.median(xs) if xs else 0


def ratio(a, b):
    return a / b if b else float("inf")


def mb(n):
    """Bytes for humans (decimal units)."""
    if n >= 1e6:
        return f"{n / 1e6:.1f} MB"
    if n >= 1e3:
        return f"{n / 1e3:.1f} kB"
    return f"{n:.0f} B"


def union_ms(intervals):
    """Total length of the union of [start, end) intervals."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


# ------------------------------------------------------------------ measures

def skew_stats(log: Log):
    """The stage holding the task with the largest shuffle read: its max vs median."""
    top = max(log.tasks, key=lambda t: t.sr_bytes)
    ts = log.stage_tasks(top.stage, top.attempt)
    slow = max(ts, key=lambda t: t.duration)
    return {
        "stage": top.stage, "attempt": top.attempt, "tasks": len(ts),
        "top_task_index": top.index, "slowest_is_top": slow.id == top.id,
        "max_ms": slow.duration, "med_ms": med([t.duration for t in ts]),
        "top_ms": top.duration, "slow_index": slow.index, "slow_bytes": slow.sr_bytes,
        "slow_rank": sorted(ts, key=lambda t: (t.launch, t.id)).index(slow) + 1,
        "max_bytes": top.sr_bytes, "med_bytes": med([t.sr_bytes for t in ts]),
        "max_records": top.sr_records, "med_records": med([t.sr_records for t in ts]),
        "stage_total_bytes": sum(t.sr_bytes for t in ts),
    }


def skew_notes(s):
    return (f"stage {s['stage']} ({s['tasks']} tasks): the task with the largest shuffle read "
            f"(partition {s['top_task_index']}) read {mb(s['max_bytes'])} / {s['max_records']:,} records "
            f"vs median {mb(s['med_bytes'])} / {s['med_records']:,.0f} "
            f"({ratio(s['max_bytes'], s['med_bytes']):.1f}x bytes, "
            f"{ratio(s['max_records'], s['med_records']):.1f}x records; "
            f"{100 * s['max_bytes'] / s['stage_total_bytes']:.0f}% of the stage's shuffle read); "
            f"max task {s['max_ms']} ms vs median {s['med_ms']:.0f} ms "
            f"({ratio(s['max_ms'], s['med_ms']):.1f}x; the slowest task is partition {s['slow_index']}, "
            f"launched #{s['slow_rank']} in the stage, shuffle read {mb(s['slow_bytes'])})")


def m_skew_join(log):
    s = skew_stats(log)
    assert s["slowest_is_top"], "the skewed task is not the slowest"
    return [s["stage"]], [], ("orders JOIN customers, 60% of 5M orders on customer_id 0; AQE off, "
                              "broadcast off (SortMergeJoin), 16 shuffle partitions; " + skew_notes(s))


def m_skew_join_aqe(log):
    s = skew_stats(log)
    splits = sum(1 for t in log.stage_tasks(s["stage"], s["attempt"]))
    return [], [], ("fixed twin of skew-join (same data and query): AQE on, skewJoin.enabled, "
                    f"skewedPartitionThresholdInBytes={log.conf.get('spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes')}, "
                    f"advisoryPartitionSizeInBytes={log.conf.get('spark.sql.adaptive.advisoryPartitionSizeInBytes')}: "
                    f"the join stage has {splits} tasks (skewed partition split); " + skew_notes(s))


def executor_split(log, stage, attempt=None):
    by = defaultdict(list)
    for t in log.stage_tasks(stage, attempt):
        by[t.executor].append(t)
    return by


def m_straggler(log):
    slow_exec = "1"
    stages, parts = [], []
    for sid in log.stage_ids():
        by = executor_split(log, sid)
        if slow_exec not in by or len(by) < 2:
            continue
        others = [t for e, ts in by.items() if e != slow_exec for t in ts]
        mine = by[slow_exec]
        r = ratio(med([t.duration for t in mine]), med([t.duration for t in others]))
        if r < 3:
            continue
        stages.append(sid)
        if any(t.sr_bytes for t in mine + others):
            io = "shuffle read"
            b = lambda ts: (med([t.sr_bytes for t in ts]), med([t.sr_records for t in ts]))  # noqa: E731
        else:
            io = "shuffle write"
            b = lambda ts: (med([t.sw_bytes for t in ts]), med([t.sw_records for t in ts]))  # noqa: E731
        parts.append(
            f"stage {sid} ({len(mine) + len(others)} tasks): exec {slow_exec} ran {len(mine)} tasks, "
            f"median {med([t.duration for t in mine]):.0f} ms, vs the other executor(s) {len(others)} tasks, "
            f"median {med([t.duration for t in others]):.0f} ms ({r:.1f}x); median {io} per task "
            f"{b(mine)[0]:,.0f} B / {b(mine)[1]:,.0f} records vs {b(others)[0]:,.0f} B / "
            f"{b(others)[1]:,.0f} records")
    assert stages, "no straggler stage found"
    return stages, [slow_exec], ("uniform rows (round-robin repartition), a Python UDF that sleeps 1.2 s "
                                 "once per task on executor 1 and 0.12 s elsewhere; local-cluster[2,1,1024]; "
                                 + "; ".join(parts))


def biggest_stage(log):
    return max(log.stage_ids(), key=lambda s: len(log.stage_tasks(s)))


def m_tiny(log, fixed=False):
    parts = []
    for sid in log.stage_ids():
        ts = log.stage_tasks(sid)
        parts.append(f"stage {sid}: {len(ts)} tasks, median {med([t.duration for t in ts]):.0f} ms, "
                     f"median shuffle read {med([t.sr_bytes for t in ts]):,.0f} B")
    big = biggest_stage(log)
    ts = log.stage_tasks(big)
    if not fixed:
        assert len(ts) >= 2000 and med([t.duration for t in ts]) < 50
        span = max(t.finish for t in ts) - min(t.launch for t in ts)
        return [big], [], (f"groupBy of 100k rows into spark.sql.shuffle.partitions=2000, AQE off; "
                           f"stage {big}: {len(ts)} tasks in {span} ms wall, total shuffle read "
                           f"{sum(t.sr_bytes for t in ts):,} B; " + "; ".join(parts))
    return [], [], ("fixed twin of tiny-partitions: same query, shuffle.partitions=2000 but AQE on "
                    "(coalescePartitions); " + "; ".join(parts))


def m_spill(log):
    by = defaultdict(lambda: [0, 0, 0])
    for t in log.tasks:
        by[t.stage][0] += t.mem_spill
        by[t.stage][1] += t.disk_spill
        by[t.stage][2] += 1 if t.disk_spill else 0
    stages = sorted(s for s, v in by.items() if v[1] > 0)
    assert stages, "no spill"
    parts = [f"stage {s}: memory spilled {mb(by[s][0])}, disk spilled {mb(by[s][1])} "
             f"({by[s][2]} of {len(log.stage_tasks(s))} tasks spilled)" for s in stages]
    bm = [e["Maximum Memory"] for e in log.events if e["Event"] == "SparkListenerBlockManagerAdded"]
    peak = max(t.peak_exec for t in log.tasks)
    return stages, [], (f"{job_descs(log)}: local[1] with spark.driver.memory=512m, "
                        f"spark.memory.fraction=0.1 (block manager max memory {mb(max(bm))}; peak execution "
                        f"memory of a task {mb(peak)}), 2 shuffle partitions; " + "; ".join(parts))


def gc_by_executor(log):
    by = defaultdict(lambda: [0, 0, 0])
    for t in log.tasks:
        by[t.executor][0] += t.gc_ms
        by[t.executor][1] += t.run_ms
        by[t.executor][2] += 1
    return by


def gc_notes(log):
    by = gc_by_executor(log)
    return "; ".join(f"exec {e}: JVM GC {v[0]} ms / run {v[1]} ms = {100 * ratio(v[0], v[1]):.1f}% "
                     f"over {v[2]} tasks" for e, v in sorted(by.items())), by


def m_gc(log, healthy=False):
    notes, by = gc_notes(log)
    mem = log.conf.get("spark.executor.memory")
    stage_gc = {s: ratio(sum(t.gc_ms for t in log.stage_tasks(s)), sum(t.run_ms for t in log.stage_tasks(s)))
                for s in log.stage_ids()}
    sparts = "; ".join(f"stage {s} GC share {100 * r:.1f}%" for s, r in sorted(stage_gc.items()))
    if healthy:
        assert all(ratio(v[0], v[1]) < 0.05 for v in by.values()), notes
        return [], [], (f"healthy twin of gc-pressure: same job shape (groupBy 64 keys, 12 map tasks, "
                        f"local-cluster) without per-row string objects, twice the heap "
                        f"({job_descs(log)}; spark.executor.memory={mem}); {notes}; {sparts}")
    execs = sorted(e for e, v in by.items() if ratio(v[0], v[1]) > 0.15)
    assert execs, notes
    stages = sorted(s for s, r in stage_gc.items() if r > 0.15)
    return stages, execs, (f"{job_descs(log)} (groupBy + collect_list), local-cluster[2,1,1024], "
                           f"spark.executor.memory={mem} (the minimum); {notes}; {sparts}")


def driver_gaps(log):
    jobs = sorted((j["start"], j["end"]) for j in log.jobs.values())
    busy = union_ms(jobs)
    first, last = jobs[0][0], max(e for _, e in jobs)
    span = log.app_end - log.app_start
    inside = (last - first) - busy
    gaps, cur = [], jobs[0][1]
    for s, e in jobs[1:]:
        if s > cur:
            gaps.append(s - cur)
        cur = max(cur, e)
    points = sorted([(s, 1) for s, _ in jobs] + [(e, -1) for _, e in jobs], key=lambda p: (p[0], p[1]))
    running = overlap = 0
    for _, k in points:
        running += k
        overlap = max(overlap, running)
    return {"overlap": overlap, "jobs": len(jobs), "span": span, "busy": busy, "idle_inside": inside,
            "before": first - log.app_start, "after": log.app_end - last, "gaps": gaps,
            "window": last - first}


def driver_notes(log):
    d = driver_gaps(log)
    g = d["gaps"]
    big = [x for x in g if x >= 900]
    return (f"{d['jobs']} jobs; app {d['span']} ms; some job running {d['busy']} ms; from the first job "
            f"start to the last job end ({d['window']} ms) no job ran for {d['idle_inside']} ms "
            f"({100 * ratio(d['idle_inside'], d['window']):.0f}%) in {len(g)} gaps "
            f"(median gap {med(g):.0f} ms, max {max(g) if g else 0} ms; {len(big)} gaps >= 900 ms "
            f"totalling {sum(big)} ms); before the first job {d['before']} ms (SparkContext start, "
            f"planning), after the last {d['after']} ms; max jobs running at once {d['overlap']}"), d


def stages_of_jobs(log):
    return sorted({t.stage for t in log.tasks})


def m_driver_loop(log, mode):
    notes, d = driver_notes(log)
    what = {"serial": "24 months, one after the other: sleep(1.0) of driver-side Python, then "
                      "filter(month==m).groupBy(k).agg().write.parquet(out/month=m)",
            "threadpool": "the same 24 monthly writes submitted from ThreadPoolExecutor(max_workers=4), "
                          "each after a sleep(1.0) of driver-side Python",
            "fixed": "fixed twin: ONE groupBy(month, k) written with write.partitionBy('month'), "
                     "partitionOverwriteMode=dynamic"}[mode]
    return [], [], f"{what}; {notes}"


def m_executor_lost(log):
    removed = [(e["Executor ID"], e.get("Removed Reason", "")) for e in log.executors_removed]
    added = [e["Executor ID"] for e in log.executors_added]
    failed = [t for t in log.tasks if not t.ok]
    kinds = defaultdict(int)
    for t in failed:
        kinds[t.reason] += 1
    retried = sorted({sid for (sid, att) in log.stages if att > 0})
    lost_stage = sorted({t.stage for t in failed if t.reason == "ExecutorLostFailure"})
    fetch_stage = sorted({t.stage for t in failed if t.reason == "FetchFailed"})
    stages = sorted(set(lost_stage) | set(fetch_stage) | set(retried))
    execs = sorted({e for e, _ in removed})
    attempts = ", ".join(f"stage {s}.{a}: {len(log.stage_tasks(s, a, ok_only=False))} task ends"
                         + (f" (failed: {log.stages[(s, a)].get('Failure Reason', '').splitlines()[0][:80]})"
                            if log.stages[(s, a)].get("Failure Reason") else "")
                         for (s, a) in sorted(log.stages))
    ok_jobs = sum(1 for j in log.jobs.values() if j.get("result") == "JobSucceeded")
    return stages, execs, (
        f"local-cluster[2,1,1024]; SIGKILL to executor 1's CoarseGrainedExecutorBackend JVM during the "
        f"reduce stage; executors added {added}, removed {removed}; failed task ends: {dict(kinds)}; "
        f"stages with ExecutorLostFailure {lost_stage}, with FetchFailed {fetch_stage}, retried (attempt>0) "
        f"{retried}; {attempts}; {ok_jobs}/{len(log.jobs)} jobs succeeded")


def m_broadcast_disabled(log):
    bigw = max(log.stage_ids(), key=lambda s: sum(t.sw_bytes for t in log.stage_tasks(s)))
    bigr = max(log.stage_ids(), key=lambda s: sum(t.sr_bytes for t in log.stage_tasks(s)))
    parts = "; ".join(f"stage {s} ({len(log.stage_tasks(s))} tasks): shuffle write "
                      f"{mb(sum(t.sw_bytes for t in log.stage_tasks(s)))} / "
                      f"{sum(t.sw_records for t in log.stage_tasks(s)):,} records, shuffle read "
                      f"{mb(sum(t.sr_bytes for t in log.stage_tasks(s)))}" for s in log.stage_ids())
    return sorted({bigw, bigr}), [], (
        "2M-row fact JOIN 100-row dimension with spark.sql.autoBroadcastJoinThreshold=-1, AQE off: "
        f"SortMergeJoin shuffles the whole fact table (stage {bigw}) into the join stage {bigr}; {parts}")


def m_healthy(log):
    parts = "; ".join(f"stage {s}: {len(log.stage_tasks(s))} tasks, median "
                      f"{med([t.duration for t in log.stage_tasks(s)]):.0f} ms, max "
                      f"{max(t.duration for t in log.stage_tasks(s))} ms" for s in log.stage_ids())
    notes, _ = gc_notes(log)
    spill = sum(t.disk_spill for t in log.tasks)
    return [], [], (f"uniform 3M-row fact, broadcast join with a 1000-row dimension, groupBy; AQE on, "
                    f"local[2]; {parts}; {notes}; disk spill {spill} B; "
                    f"{sum(1 for t in log.tasks if not t.ok)} failed tasks")


MEASURES = {
    "skew-join": m_skew_join,
    "skew-join-aqe": m_skew_join_aqe,
    "straggler": m_straggler,
    "tiny-partitions": m_tiny,
    "tiny-partitions-fixed": lambda log: m_tiny(log, fixed=True),
    "spill": m_spill,
    "gc-pressure": m_gc,
    "gc-healthy": lambda log: m_gc(log, healthy=True),
    "driver-loop-serial": lambda log: m_driver_loop(log, "serial"),
    "driver-loop-threadpool": lambda log: m_driver_loop(log, "threadpool"),
    "driver-loop-fixed": lambda log: m_driver_loop(log, "fixed"),
    "executor-lost": m_executor_lost,
    "broadcast-disabled": m_broadcast_disabled,
    "healthy": m_healthy,
}
assert list(MEASURES) == list(PLANTED)


def measure(name, path: Path):
    log = Log(path)
    stages, execs, notes = MEASURES[name](log)
    return {"name": name, "path": path.relative_to(LOGS).as_posix() if path.is_relative_to(LOGS) else str(path),
            "planted": PLANTED[name], "must_fire_stage_ids": ",".join(map(str, stages)),
            "must_fire_executor_ids": ",".join(execs), "notes": notes}


def fixture_log(name) -> Path:
    hits = [p for p in (PATTERNS / name).iterdir() if not p.name.startswith(".")]
    if len(hits) != 1:
        raise SystemExit(f"expected one log in {PATTERNS / name}, found {hits}")
    return hits[0]


# ------------------------------------------------------------------ outputs

README_MARK = "<!-- patterns: written by patterns.py; manifest.py keeps it -->"


def write_tsv():
    rows = []
    for name in PLANTED:
        if not (PATTERNS / name).is_dir():
            print(f"  (no fixture {name}; skipped)")
            continue
        rows.append(measure(name, fixture_log(name)))
    with open(PATTERNS / "PATTERNS.tsv", "w") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            fh.write("\t".join(str(r[c]).replace("\t", " ").replace("\n", " ") for c in COLUMNS) + "\n")
    print(f"wrote {PATTERNS / 'PATTERNS.tsv'} ({len(rows)} rows)")
    write_readme_section(rows)
    return rows


def write_readme_section(rows):
    from patterns_readme import SECTION

    readme = GEN_DIR / "README.md"
    text = readme.read_text()
    head = text.split(README_MARK)[0].rstrip("\n")
    sizes = []
    total = 0
    for r in rows:
        p = LOGS / r["path"]
        n = p.stat().st_size
        total += n
        sizes.append(f"* `{r['path']}`: {n:,}")
    sizes.append(f"* total: {total:,}")
    table = ["| name | planted | must_fire_stage_ids | must_fire_executor_ids | file |", "|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| `{r['name']}` | {r['planted']} | {r['must_fire_stage_ids']} | "
                     f"{r['must_fire_executor_ids']} | `{r['path']}` |")
    readme.write_text(head + "\n\n" + README_MARK + "\n" + SECTION.rstrip("\n") + "\n\n" + "\n".join(table)
                      + "\n\nSizes (bytes):\n\n" + "\n".join(sizes) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 1:
        write_tsv()
    else:
        name = sys.argv[1]
        path = Path(sys.argv[2]) if len(sys.argv) > 2 else fixture_log(name)
        r = measure(name, path)
        for c in COLUMNS:
            print(f"{c}: {r[c]}")
