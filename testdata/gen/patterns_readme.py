"""The text of gen/README.md's patterns section (patterns.py appends the table)."""

SECTION = """
## Pattern fixtures (`logs/patterns/`, `plans/`)

One real Spark 4.3.0 log per planted performance problem (or per fix of one), for the
detectors. Each is a single zstd file (`spark.eventLog.compress=true`, codec zstd,
`spark.eventLog.rolling.enabled=false`) in `logs/patterns/<name>/`, with
`spark.app.name` = `sparkdiag-pattern <name>`; `plans/<name>.txt` is the printed
`df.explain(mode="formatted")` of the scenario's main query (captured after the query ran when
the action was `df.collect()`, so AQE fixtures show the final plan, `isFinalPlan=true`; before
it for the write-based ones: `spill`, `driver-loop-*`). `logs/patterns/PATTERNS.tsv` lists
them: `name`, `path` (relative to `logs/`), `planted` (skew, straggler, partitions-tiny, spill,
gc, driver-bound, failure, config, healthy), `must_fire_stage_ids`, `must_fire_executor_ids`
and `notes`. The ids and every number in `notes` are measured by `patterns.py` from the
decoded log (task durations = `Finish Time - Launch Time` of successful task ends, shuffle
read = remote + local bytes, GC share = sum `JVM GC Time` / sum `Executor Run Time`), not
taken from the workload's intent. They are not in `MANIFEST.tsv` (`manifest.py` skips
`patterns/`).

```
python3 testdata/gen/make_all.py patterns                  # all pattern fixtures + PATTERNS.tsv (~5-6 min)
python3 testdata/gen/make_all.py patterns/straggler patterns/tsv   # one fixture, then the table
python3 testdata/gen/patterns.py straggler                 # print one fixture's measurements
```

A rerun gives the same shape but new ids and timings (the numbers in `notes` move by tens of
percent on a busy machine; the assertions in `patterns.py` check each fixture still shows its
problem: e.g. the skewed task is the slowest, GC share > 15%). Executors matter for three
scenarios, which run on master `local-cluster[2,1,1024]` (a standalone master + worker in the
driver JVM, two executor JVMs `0` and `1` with 1 core each; their app ids are
`app-<yyyyMMddHHmmss>-0000`, not `local-<ms>`; `common.py` gives them a symlinked
`SPARK_HOME` in the scratch dir, since the worker always writes `SPARK_HOME/work/`). The
others run on `local[2]` (one executor, `driver`).

* `skew-join` (skew): 5M orders (16 partitions), 60% on `customer_id` 0, sort-merge joined
  with 1000 customers (`autoBroadcastJoinThreshold=-1`, AQE off, 16 shuffle partitions), then
  two SHA-512s per row and a groupBy region. The reducer that gets customer 0 reads ~19x the
  median bytes and takes ~15-20x the median time (the other tasks: ~0.3 s).
* `skew-join-aqe` (healthy): the same data and query with AQE on, `skewJoin.enabled`,
  `skewedPartitionThresholdInBytes=1m`, `advisoryPartitionSizeInBytes=1m`: the skewed partition
  is split (one split per map task, so 16), the join stage has 31 tasks of ~2 MB. Its slowest
  tasks are the first two launched (JIT warm-up), not the largest.
* `straggler` (straggler, executor `1`): uniform rows (range, round-robin `repartition(16)`)
  through a Python UDF that sleeps once per task: 1.2 s on executor 1, 0.12 s on executor 0
  (the worker learns its executor id from `SPARK_LOG_URL_STDERR`'s `executorId=`, inherited from
  the executor JVM). Both stages; equal bytes and records per task. Executor 1 runs only 2-3
  of each stage's 16 tasks (the fast executor takes the rest).
* `tiny-partitions` (partitions-tiny): groupBy of 100k rows into
  `spark.sql.shuffle.partitions=2000`, AQE off: 2000 reduce tasks of ~10 ms and ~340 B each.
  `tiny-partitions-fixed` (healthy): the same with AQE on: coalesced to 1 reduce task.
* `spill` (spill): a global sort of 400k ~200-byte rows on `local[1]` with
  `spark.driver.memory=512m`, `spark.memory.fraction=0.1` (22 MB unified memory), 2 shuffle
  partitions, written to the `noop` sink: both sort tasks spill (~70 MB memory, ~60 MB disk).
* `gc-pressure` (gc, executors `0`,`1`): groupBy + `collect_list` of 6M ~130-char strings over 64
  keys on `local-cluster` with `spark.executor.memory=450m` (the minimum Spark accepts), AQE off:
  every map task keeps its 500k strings live in aggregation buffers; ~20-25% of executor run
  time is JVM GC. `gc-healthy` (healthy): the same job shape (groupBy 64 keys, 12 map tasks,
  `local-cluster`, AQE off) with a 1g heap and no per-row objects (count + sum of 1e9
  generated longs): ~2-3% per executor. (Even a garbage-free job shows ~5% GC when it is
  short: the first task on each executor spends ~80 ms in GC while classes load and code is
  generated, so the twin needs several seconds of work per executor to stay under 5%. Its
  tiny reduce stage alone is ~7%.)
* `driver-loop-serial` (driver-bound): the seed case: 24 months, each a `time.sleep(1.0)` of
  driver-side Python then `filter(month==m).groupBy(k).agg().write.parquet(out/month=m)` (2 jobs
  per month with AQE: the shuffle map stage and the write): 48 jobs, and for 3/4 or more of the time
  between the first and the last job no job runs. `driver-loop-threadpool` (driver-bound): the
  same 24 writes submitted from `ThreadPoolExecutor(max_workers=4)` (up to 4 jobs at once, still
  ~1/2 of the window idle). `driver-loop-fixed` (healthy): the same output in one
  `groupBy(month, k)` + `write.partitionBy("month")` with
  `partitionOverwriteMode=dynamic`: 2 jobs.
* `executor-lost` (failure, executor `1`): a shuffle whose 8 reduce tasks each sleep 1.5 s; once
  2 of them are done the driver SIGKILLs executor 1's `CoarseGrainedExecutorBackend` JVM (found
  with `ps` by `--app-id`/`--executor-id`). The log has `ExecutorRemoved` ("Command exited with
  code 137"), an `ExecutorLostFailure` task end, `Resubmitted` task ends for the lost map outputs,
  `FetchFailed` task ends, the reduce stage failed and re-attempted (attempt 1) and the map
  stage re-run (as stage attempt 1 of the reduce job's skipped copy of it: AQE ran the map
  stage as its own job first); the worker starts executor `2`; the app ends normally.
* `broadcast-disabled` (config): 2M-row fact (8 partitions) joined with a 100-row dimension,
  `autoBroadcastJoinThreshold=-1`, AQE off: a SortMergeJoin that shuffles ~146 MB of fact rows.
* `healthy` (healthy): uniform 3M-row fact, broadcast join with a 1000-row dimension, groupBy,
  AQE on, `local[2]`: tasks of a few hundred ms, no spill, no failures, GC ~1-2%.

Measured (`PATTERNS.tsv`, whose `notes` hold the numbers):

"""
