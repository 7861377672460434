"""Reruns with the fix sparkdiag recommended: `testdata/logs/fixes/<case>/{before,after}/`.

    python3 testdata/gen/fixes.py            # every case, one JVM at a time
    python3 testdata/gen/fixes.py CASE ...   # only some

Each case runs one pattern workload twice, back to back on the same machine: as the
`patterns/` fixture runs it (BEFORE), then with exactly the change `sparkdiag analyze`
recommended for one of BEFORE's findings (AFTER). `sparkdiag diff BEFORE AFTER` then checks the
fix finding by finding: the saving predicted for it against the time the stages it touched
actually saved (docs/diff.md, "Checking a fix"; tests/diff.rs).

| case | finding fixed | BEFORE | AFTER: the recommendation applied |
|---|---|---|---|
| tiny-partitions | PA001 | 2000 shuffle partitions, AQE off | "Let AQE coalesce partitions: spark.sql.adaptive.enabled=true, spark.sql.adaptive.coalescePartitions.enabled=true, spark.sql.adaptive.advisoryPartitionSizeInBytes=128m" |
| skew-join | SK001 | 60 % of the orders on one key, AQE off, broadcast off | "let AQE split the skewed partition (spark.sql.adaptive.enabled=true, spark.sql.adaptive.skewJoin.enabled=true; lower spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes if it is under 256 MB)": the hot partition read 32.8 MB, so the threshold is set to 16m |
| skew-join-broadcast | EX003 | the same run | "raise spark.sql.autoBroadcastJoinThreshold above its size; make sure it is not -1": the -1 removed (Spark's default, 10 MB, is above the 7.1 MiB side) |
| driver-loop | DR002 | 24 monthly writes, one after the other | "Replace the loop with one Spark job over all items ... and write once": one groupBy written with partitionBy("month") (the `driver-loop-fixed` workload) |
| broadcast-disabled | CF003 | a 100-row dimension joined with broadcast off | "Remove spark.sql.autoBroadcastJoinThreshold=-1 (default 10 MB)" |

Logs over 500 KB are kept as Spark wrote them (zstd); every event is real Spark 4.3's.
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import LOGS, WORK, fresh_dir, run_app  # noqa: E402

OUT = LOGS / "fixes"
PATTERN_LOG = {
    "spark.eventLog.compress": "true",
    "spark.eventLog.compression.codec": "zstd",
    "spark.eventLog.rolling.enabled": "false",
}
AQE_OFF = {"spark.sql.adaptive.enabled": "false"}
NO_BROADCAST = {"spark.sql.autoBroadcastJoinThreshold": "-1"}
SKEW_BEFORE = {**AQE_OFF, **NO_BROADCAST, "spark.sql.shuffle.partitions": "16"}

# case -> (scenario before, conf before, scenario after, conf after)
CASES = {
    "tiny-partitions": (
        "tiny-partitions", {**AQE_OFF, "spark.sql.shuffle.partitions": "2000"},
        "tiny-partitions", {
            "spark.sql.shuffle.partitions": "2000",
            "spark.sql.adaptive.enabled": "true",
            "spark.sql.adaptive.coalescePartitions.enabled": "true",
            "spark.sql.adaptive.advisoryPartitionSizeInBytes": "128m"}),
    "skew-join": (
        "skew-join", SKEW_BEFORE,
        "skew-join", {
            **NO_BROADCAST, "spark.sql.shuffle.partitions": "16",
            "spark.sql.adaptive.enabled": "true",
            "spark.sql.adaptive.skewJoin.enabled": "true",
            "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes": "16m"}),
    "skew-join-broadcast": (
        "skew-join", SKEW_BEFORE,
        "skew-join", {**AQE_OFF, "spark.sql.shuffle.partitions": "16"}),
    "driver-loop": (
        "driver-loop-serial", {},
        "driver-loop-fixed", {"spark.sql.sources.partitionOverwriteMode": "dynamic"}),
    "broadcast-disabled": (
        "broadcast-disabled", {**AQE_OFF, **NO_BROADCAST},
        "broadcast-disabled", AQE_OFF),
}


def run_side(case: str, side: str, scenario: str, conf: dict):
    ev = fresh_dir(WORK / "fixes" / case / side)
    conf = {"spark.app.name": f"sparkdiag-fix {case}", **PATTERN_LOG, **conf}
    print(f"[{time.strftime('%H:%M:%S')}] fixes/{case}/{side}: '{scenario}'", flush=True)
    t0 = time.time()
    run_app(scenario, ev, conf)
    logs = [p for p in ev.glob("*.zstd") if not p.name.startswith(".")]
    if len(logs) != 1:
        sys.exit(f"expected one log in {ev}, found {logs}")
    dest = fresh_dir(OUT / case / side)
    logs[0].rename(dest / logs[0].name)
    print(f"  {time.time() - t0:.0f} s; {logs[0].name}", flush=True)


def main(names):
    for name in names or CASES:
        if name not in CASES:
            sys.exit(f"unknown case {name}; cases: {' '.join(CASES)}")
        before, conf_before, after, conf_after = CASES[name]
        run_side(name, "before", before, conf_before)
        run_side(name, "after", after, conf_after)


if __name__ == "__main__":
    main(sys.argv[1:])
