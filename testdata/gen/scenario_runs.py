"""What operations.py and slowness.py share: run one Spark application per scenario in its own
process (on `local[N]`, `local-cluster[...]` or a standalone cluster started here), keep its
log, measure it, and write the folder's table with what `sparkdiag analyze` says today.

A scenario is a dict:

    master    "local[4]", "local-cluster[2,1,1024]", or STANDALONE (see `standalone_cluster`)
    workers   for STANDALONE: one dict per Worker, {"host": "127.0.0.2", "cores": 1,
              "memory": "2g", "cpu_quota": 0.15 (optional: a cgroup CPU quota, in cores)}
    conf      Spark settings on top of BASE
    run       fn(spark) -> None, the workload (runs in the child process)
    planted   what the log shows ("healthy" for a twin a rule must stay quiet on)
    measure   fn(Log) -> {"job_ids", "stage_ids", "task_ids", "executor_ids", "notes"}
    about     one sentence: what the script did (the table's first words)
"""
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402
import evlog  # noqa: E402
import manifest  # noqa: E402
import memory  # noqa: E402
import patterns  # noqa: E402

STANDALONE = "standalone"
# The applications run at this niceness (SPARKDIAG_GEN_NICE, default 0). At nice 10 on a
# machine whose compilers run at 0, a driver gets a tenth of their share and spends a minute
# starting before its first job, which the log then shows as driver time.
NICE = ["nice", "-n", os.environ.get("SPARKDIAG_GEN_NICE", "0")]
REPO = common.TESTDATA.parent
SPARKDIAG = REPO / "target" / "debug" / "sparkdiag"

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

COLUMNS = ["name", "path", "planted", "job_ids", "stage_ids", "task_ids", "executor_ids", "notes",
           "sparkdiag_today"]


# ------------------------------------------------------------------ running

def child(module, scenarios, name, event_dir):
    """In the child process: one Spark application writing its log to event_dir."""
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession

    cloudpickle.register_pickle_by_value(module)
    sc_def = scenarios[name]
    master = sc_def["master"]
    if master == STANDALONE:
        master = os.environ["SPARKDIAG_STANDALONE_MASTER"]
    conf = {**BASE, **sc_def.get("conf", {}), "spark.eventLog.dir": Path(event_dir).resolve().as_uri()}
    conf.setdefault("spark.app.name", f"sparkdiag-fixture {name}")
    b = SparkSession.builder.master(master)
    if sc_def.get("hive"):
        b = b.enableHiveSupport()
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    start = time.time()
    sc_def["run"](spark)
    print(f"workload seconds: {time.time() - start:.1f}", flush=True)
    spark.stop()


def run_all(script, folder, scenarios, names):
    """Run each named scenario (all when none) in its own process, one at a time, and keep its
    log under testdata/logs/<folder>/<name>/."""
    for name in names or list(scenarios):
        if name not in scenarios:
            sys.exit(f"no scenario {name}; known: {' '.join(scenarios)}")
        sc_def = scenarios[name]
        if sc_def.get("reuse"):
            print(f"{name}: reuses {sc_def['reuse']} (nothing to run)", flush=True)
            continue
        if sc_def.get("quiet"):
            wait_for_quiet(name)
        scratch = common.fresh_dir(common.WORK / folder / name)
        events = common.fresh_dir(scratch / "events")
        env = common.spark_env()
        env["SPARK_HOME"] = str(common.local_cluster_home())
        out = scratch / "app.out"
        cluster = (standalone_cluster(env, scratch, sc_def["workers"]) if sc_def["master"] == STANDALONE
                   else contextlib.nullcontext(None))
        print(f"[{time.strftime('%H:%M:%S')}] {folder}/{name}: running on {sc_def['master']}", flush=True)
        with open(out, "w") as fh, cluster as master_url:
            if master_url:
                env["SPARKDIAG_STANDALONE_MASTER"] = master_url
            cmd = [*NICE, sys.executable, str(script), "--run", name, str(events)]
            rc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                cwd=scratch).returncode
        if rc != 0 and not sc_def.get("may_fail"):
            sys.exit(f"{name} failed (rc={rc}); see {out}")
        dest = common.fresh_dir(common.LOGS / folder / name)
        logs = [p for p in events.iterdir() if not p.name.startswith(".")]
        if len(logs) != 1:
            sys.exit(f"{name}: expected one event log in {events}, found {[p.name for p in logs]}")
        (dest / logs[0].name).write_bytes(repack(logs[0]))
        print(f"wrote {dest / logs[0].name} ({(dest / logs[0].name).stat().st_size:,} bytes)", flush=True)


QUIET_LOAD = 3.0


def wait_for_quiet(name, minutes=45):
    """Wait (up to `minutes`) until the machine's 1-minute load average is under QUIET_LOAD.
    The scenarios whose shape is a ratio of CPU speeds (a throttled executor against a healthy
    one, a cold wave against warm ones) need the healthy side to get a core: on a machine
    shared with compilers the healthy executor is slowed as much as the throttled one."""
    deadline = time.time() + 60 * minutes
    while os.getloadavg()[0] >= QUIET_LOAD and time.time() < deadline:
        time.sleep(15)
    print(f"{name}: load average {os.getloadavg()[0]:.1f} at the start", flush=True)


def repack(log):
    """The log's bytes; a zstd log over 100 KB recompressed as one level-19 frame (the same
    events byte for byte: Spark writes a small level-1 frame per flush)."""
    data = log.read_bytes()
    if log.suffix != ".zstd" or len(data) < 100_000 or not shutil.which("zstd"):
        return data
    plain = subprocess.run(["zstd", "-dc", str(log)], capture_output=True, check=True).stdout
    return subprocess.run(["zstd", "-19", "-q", "-c"], input=plain, capture_output=True, check=True).stdout


def cgroup_dir(name):
    """A cgroup (v2 when mounted as such, else the v1 `cpu` controller) for CPU throttling."""
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").exists():
        return root / name, "cpu.max"
    return root / "cpu" / name, "cpu.cfs_quota_us"


@contextlib.contextmanager
def cpu_quota(name, cores):
    """A cgroup whose processes together get at most `cores` CPUs: the kernel's CFS bandwidth
    control (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`). A process
    moved into it takes its children along (the executor JVM a Worker starts, and that JVM's
    Python workers). A 10 ms period keeps the throttling fine-grained, so a task of 30 ms is
    slowed as much as one of 3 s."""
    path, knob = cgroup_dir(name)
    period = 10_000
    quota = max(1000, int(period * cores))
    if path.exists():
        release(path)
    path.mkdir()
    try:
        if knob == "cpu.max":
            (path / "cpu.max").write_text(f"{quota} {period}")
        else:
            (path / "cpu.cfs_period_us").write_text(str(period))
            (path / "cpu.cfs_quota_us").write_text(str(quota))
        yield path
    finally:
        release(path)


def release(path):
    """Move whatever is left in the cgroup back to the root, then remove it."""
    parent = path.parent
    procs = (path / "cgroup.procs")
    for _ in range(50):
        pids = procs.read_text().split() if procs.exists() else []
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                (parent / "cgroup.procs").write_text(pid)
        time.sleep(0.1)
    with contextlib.suppress(OSError):
        path.rmdir()


def alive_workers(ui_port):
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json", timeout=2) as page:
        return sum(1 for w in json.load(page).get("workers", []) if w.get("state") == "ALIVE")


@contextlib.contextmanager
def standalone_cluster(env, log_dir, workers):
    """A standalone Master on 127.0.0.1 and one Worker per entry of `workers`, each on its own
    loopback address (127.0.0.1, 127.0.0.2, ...: Linux routes all of 127/8 to `lo`), so that
    every executor has a host of its own, as on a real cluster: task locality (NODE_LOCAL
    against ANY) and a slow host are per host. Started with Spark's own `spark-class`, stopped
    afterwards (a Worker kills its executors when it stops). A worker with `cpu_quota` runs in
    a cgroup of that many CPUs from its first instruction (`sh` moves itself into the cgroup,
    then execs the Worker), so its executor JVM and Python workers inherit the quota."""
    port, ui_port = common.free_port(), common.free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(common.local_cluster_home() / "bin" / "spark-class")
    daemons, quotas = [], contextlib.ExitStack()
    try:
        out = open(log_dir / "master.out", "w")
        daemons.append(subprocess.Popen(
            [*NICE, spark_class, "org.apache.spark.deploy.master.Master",
             "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)],
            env=env, stdout=out, stderr=subprocess.STDOUT))
        memory.wait_for(lambda: memory.listening(port), "the standalone master listened",
                        daemons[-1], log_dir / "master.out")
        for i, w in enumerate(workers):
            args = [*NICE, spark_class, "org.apache.spark.deploy.worker.Worker", url,
                    "--host", w["host"], "--cores", str(w.get("cores", 1)),
                    "--memory", w.get("memory", "2g"), "--webui-port", str(common.free_port()),
                    "--work-dir", str(common.fresh_dir(log_dir / f"worker-{i}-work"))]
            wenv = dict(env, SPARK_LOCAL_IP=w["host"])
            if w.get("cpu_quota"):
                cg = quotas.enter_context(cpu_quota(f"sparkdiag-slow-{i}", w["cpu_quota"]))
                args = ["sh", "-c", f'echo $$ > {cg / "cgroup.procs"} && exec "$@"', "sh", *args]
                print(f"worker {i} on {w['host']}: CPU quota {w['cpu_quota']} cores ({cg})", flush=True)
            out = open(log_dir / f"worker-{i}.out", "w")
            daemons.append(subprocess.Popen(args, env=wenv, stdout=out, stderr=subprocess.STDOUT))
            memory.wait_for(lambda n=i + 1: alive_workers(ui_port) >= n,
                            f"worker {i} ALIVE on the master's /json page", daemons[-1],
                            log_dir / f"worker-{i}.out")
        yield url
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                daemon.wait(timeout=20)
            if daemon.poll() is None:
                daemon.kill()
        quotas.close()


def main(script, folder, scenarios, module):
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--run":
        child(module, scenarios, args[1], args[2])
        return
    if args[:1] == ["--table"]:
        write_table(folder, scenarios, args[1:])
        return
    run_all(script, folder, scenarios, args)
    write_table(folder, scenarios, args)


# ------------------------------------------------------------------ measuring

class Log(patterns.Log):
    """patterns.Log, plus what these tables need: SQL executions, stage times, locality."""

    def __init__(self, path):
        super().__init__(path)
        self.sql = {}  # execution id -> {start, end, desc, jobs}
        self.stage_info = {}  # (stage, attempt) -> {submitted, completed, tasks, name}
        for e in self.events:
            ev = e["Event"]
            if ev.endswith("SparkListenerSQLExecutionStart"):
                self.sql[e["executionId"]] = {"start": e["time"], "desc": e.get("description", ""),
                                              "jobs": [], "plan": e.get("physicalPlanDescription", "")}
            elif ev.endswith("SparkListenerSQLExecutionEnd"):
                if e["executionId"] in self.sql:
                    self.sql[e["executionId"]]["end"] = e["time"]
                    self.sql[e["executionId"]]["error"] = e.get("errorMessage")
            elif ev == "SparkListenerJobStart":
                sid = (e.get("Properties") or {}).get("spark.sql.execution.id")
                if sid is not None and int(sid) in self.sql:
                    self.sql[int(sid)]["jobs"].append(e["Job ID"])
            elif ev == "SparkListenerStageCompleted":
                s = e["Stage Info"]
                self.stage_info[(s["Stage ID"], s["Stage Attempt ID"])] = {
                    "submitted": s.get("Submission Time"), "completed": s.get("Completion Time"),
                    "tasks": s["Number of Tasks"], "name": s["Stage Name"],
                    "failure": s.get("Failure Reason")}
        self.locality = {}
        for e in self.events:
            if e["Event"] == "SparkListenerTaskEnd":
                self.locality[e["Task Info"]["Task ID"]] = e["Task Info"]["Locality"]
        self.executor_added = {e["Executor ID"]: e for e in self.executors_added}

    def stage_ms(self, stage, attempt=0):
        s = self.stage_info.get((stage, attempt), {})
        if s.get("submitted") and s.get("completed"):
            return s["completed"] - s["submitted"]
        return None

    def job_of_stage(self, stage):
        return sorted(j for j, v in self.jobs.items() if stage in v["stages"])

    def host(self, executor):
        e = self.executor_added.get(executor)
        return e["Executor Info"]["Host"] if e else "?"


def med(xs):
    return statistics.median(xs) if xs else 0


def ms(n):
    return f"{n:,.0f} ms"


def stage_line(log, stage, attempt=0):
    """stage N (T tasks, W ms wall): median/max task, data per task."""
    ts = log.stage_tasks(stage, attempt)
    if not ts:
        return f"stage {stage}: no successful task"
    d = [t.duration for t in ts]
    wall = log.stage_ms(stage, attempt)
    inp = sum(t_input(log, t) for t in ts)
    parts = [f"stage {stage} ({len(ts)} tasks"
             + (f", {wall:,} ms wall" if wall is not None else "") + ")",
             f"median task {med(d):,.0f} ms, max {max(d):,} ms"]
    if inp:
        parts.append(f"input {patterns.mb(inp)} (max task {patterns.mb(max(t_input(log, t) for t in ts))})")
    sr = sum(t.sr_bytes for t in ts)
    if sr:
        parts.append(f"shuffle read {patterns.mb(sr)} (max task {patterns.mb(max(t.sr_bytes for t in ts))})")
    sw = sum(t.sw_bytes for t in ts)
    if sw:
        parts.append(f"shuffle write {patterns.mb(sw)}")
    return ": ".join(parts[:2]) + ("; " + ", ".join(parts[2:]) if parts[2:] else "")


_INPUT = {}


def t_input(log, task):
    """A task's input bytes (patterns.Task does not keep them)."""
    key = id(log)
    if key not in _INPUT:
        _INPUT[key] = {e["Task Info"]["Task ID"]: ((e.get("Task Metrics") or {}).get("Input Metrics") or {})
                       .get("Bytes Read", 0) for e in log.events if e["Event"] == "SparkListenerTaskEnd"}
    return _INPUT[key].get(task.id, 0)


def t_output(log, task):
    key = ("out", id(log))
    if key not in _INPUT:
        _INPUT[key] = {e["Task Info"]["Task ID"]: ((e.get("Task Metrics") or {}).get("Output Metrics") or {})
                       .get("Bytes Written", 0) for e in log.events if e["Event"] == "SparkListenerTaskEnd"}
    return _INPUT[key].get(task.id, 0)


def sql_metric(log, execution, name):
    """The final value of the SQL metric `name` in an execution's plan (summed over nodes), from
    the SparkListenerDriverAccumUpdates and task accumulables."""
    ids = set()
    for e in log.events:
        if e["Event"].endswith(("SparkListenerSQLExecutionStart", "SparkListenerSQLAdaptiveExecutionUpdate")) \
                and e.get("executionId") == execution:
            stack = [e.get("sparkPlanInfo", {})]
            while stack:
                node = stack.pop()
                stack.extend(node.get("children", []))
                for m in node.get("metrics", []):
                    if m["name"] == name:
                        ids.add(m["accumulatorId"])
    total = 0
    for e in log.events:
        if e["Event"].endswith("SparkListenerDriverAccumUpdates") and e.get("executionId") == execution:
            for acc, v in e["accumUpdates"]:
                if acc in ids:
                    total += v
        elif e["Event"] == "SparkListenerTaskEnd":
            for a in e["Task Info"].get("Accumulables", []):
                if a["ID"] in ids:
                    total += int(a.get("Update", 0))
    return total


def executor_medians(log, stage):
    by = defaultdict(list)
    for t in log.stage_tasks(stage):
        by[t.executor].append(t.duration)
    return {e: (len(d), med(d)) for e, d in sorted(by.items())}


def locality_counts(log, stage=None):
    c = Counter()
    for t in log.tasks:
        if t.ok and (stage is None or t.stage == stage):
            c[(t.executor, log.locality[t.id])] += 1
    return c


# ------------------------------------------------------------------ sparkdiag today

def sparkdiag_today(path):
    """The rules `sparkdiag analyze` fires on the log now, with severity and scope."""
    if not SPARKDIAG.exists():
        return "(not run: build target/debug/sparkdiag first)"
    p = subprocess.run([str(SPARKDIAG), "analyze", "--format", "json", str(path)],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return f"(sparkdiag exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]})"
    r = json.loads(p.stdout)
    app = r["application"]
    out = [f"workload {app.get('workload')}"]
    for f in r["findings"]:
        sc = f["scope"]
        where = []
        if sc["stage_ids"]:
            where.append("stages " + ",".join(map(str, sc["stage_ids"][:8])) + ("…" if len(sc["stage_ids"]) > 8 else ""))
        if sc["executor_ids"]:
            where.append("exec " + ",".join(sc["executor_ids"]))
        if sc["job_ids"] and not sc["stage_ids"]:
            where.append(f"{len(sc['job_ids'])} jobs")
        out.append(f"{f['rule']} {f['severity']}" + (f" ({'; '.join(where)})" if where else ""))
    if len(out) == 1:
        out.append("no findings")
    return "; ".join(out)


# ------------------------------------------------------------------ the table

def the_log(folder, name):
    d = common.LOGS / folder / name
    hits = [p for p in d.iterdir() if not p.name.startswith(".")] if d.is_dir() else []
    if len(hits) != 1:
        return None
    return hits[0]


def write_table(folder, scenarios, only=()):
    """(Re)measure every committed log of the folder; write <FOLDER>.tsv and the MANIFEST rows.
    With names given, only their rows are remeasured; the others are kept as they were."""
    tsv = common.LOGS / folder / f"{folder.upper()}.tsv"
    old = {}
    if tsv.exists():
        lines = tsv.read_text().splitlines()
        head = lines[0].split("\t")
        for line in lines[1:]:
            row = dict(zip(head, line.split("\t")))
            old[row["name"]] = row
    rows = []
    for name, sc_def in scenarios.items():
        if only and name not in only and name in old:
            rows.append(old[name])
            continue
        path = (common.LOGS / sc_def["reuse"]) if sc_def.get("reuse") else the_log(folder, name)
        if path is None or not path.exists():
            print(f"  (no log for {name}; skipped)")
            continue
        if path.is_dir():
            path = next(p for p in path.iterdir() if not p.name.startswith("."))
        log = Log(path)
        m = sc_def["measure"](log)
        starts = [j["start"] for j in log.jobs.values()]
        # On a busy machine the driver's first query can take a minute to plan (class loading,
        # the JIT): said here, since it shows in the log as driver-only time.
        first = f"; first job {min(starts) - log.app_start:,} ms after the application started" if starts else ""
        row = {"name": name, "path": path.relative_to(common.LOGS).as_posix(),
               "planted": sc_def["planted"],
               "notes": sc_def["about"] + " Measured: " + m["notes"] + first,
               "sparkdiag_today": sparkdiag_today(path)}
        for k in ("job_ids", "stage_ids", "task_ids", "executor_ids"):
            row[k] = ",".join(map(str, m.get(k, [])))
        rows.append(row)
        print(f"  {name}: {row['sparkdiag_today']}", flush=True)
    with open(tsv, "w") as fh:
        fh.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            fh.write("\t".join(str(r.get(c, "")).replace("\t", " ").replace("\n", " ") for c in COLUMNS) + "\n")
    print(f"wrote {tsv} ({len(rows)} rows)")
    update_manifest(folder)


def update_manifest(folder):
    """Replace MANIFEST.tsv's rows under `folder/` with rows manifest.py computes for the logs
    there now (the same columns and counts); the other rows stay as they are."""
    path = common.LOGS / "MANIFEST.tsv"
    lines = path.read_text().splitlines()
    keep = [ln for ln in lines[1:] if not ln.startswith(folder + "/")]
    new = []
    for p in sorted((common.LOGS / folder).iterdir()):
        if p.is_dir():
            for log in manifest.units(p):
                r = manifest.row(log)
                new.append("\t".join(str(r[c]).replace("\t", " ") for c in manifest.COLUMNS))
    path.write_text("\n".join([lines[0], *keep, *new]) + "\n")
    print(f"MANIFEST.tsv: {len(new)} rows under {folder}/")
