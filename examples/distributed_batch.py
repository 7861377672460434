"""Spread a very large event-log directory over a Spark cluster.

Each Spark task runs `sparkdiag batch` over its slice of the log paths and writes the usual
layout under OUTDIR/slices/<slice>/; the driver then reads every slice's Parquet tables as one
table. sparkdiag must be installed at the same path on every executor (e.g. by an init script).

    spark-submit examples/distributed_batch.py LOG_DIR OUTDIR DATE [SLICES] [SPARKDIAG_BINARY]

Tried locally in PySpark local mode (see the README):

    python3 examples/distributed_batch.py testdata/logs/patterns /tmp/fleet 2026-11-29 3 target/debug/sparkdiag
"""
import functools
import os
import subprocess
import sys

from pyspark.sql import SparkSession, functions as F


def main(log_dir: str, outdir: str, date: str, slices: int = 8, binary: str = "sparkdiag") -> None:
    spark = SparkSession.builder.appName("sparkdiag distributed batch").getOrCreate()
    paths = sorted(os.path.join(log_dir, p) for p in os.listdir(log_dir) if not p.startswith((".", "_")))
    chunks = [(i, paths[i::slices]) for i in range(slices) if paths[i::slices]]
    binary = os.path.abspath(binary) if os.path.exists(binary) else binary

    def run(chunk):
        index, chunk_paths = chunk
        target = os.path.join(outdir, "slices", str(index))
        done = subprocess.run([binary, "batch", *chunk_paths, "-o", target, "--date", date], capture_output=True, text=True)
        return index, done.returncode, done.stdout.strip().splitlines()[:1]

    for index, code, summary in spark.sparkContext.parallelize(chunks, len(chunks)).map(run).collect():
        print(f"slice {index}: exit {code}: {summary[0] if summary else ''}")

    # Every slice wrote the same Hive-partitioned layout; Spark reads each table root on its own
    # (partition discovery refuses several roots at once), and the slices union into one table.
    roots = [os.path.join(outdir, "slices", str(index), "tables", "applications") for index, _ in chunks]
    apps = functools.reduce(lambda a, b: a.unionByName(b), [spark.read.parquet(r) for r in roots])
    print(f"{apps.count()} applications across {len(chunks)} slices")
    apps.orderBy(F.desc("impact_ms")).select("date", "name", "status", "duration_ms", "impact_ms").show(10, truncate=40)
    spark.stop()


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) < 3:
        sys.exit(__doc__)
    main(args[0], args[1], args[2], int(args[3]) if len(args) > 3 else 8, args[4] if len(args) > 4 else "sparkdiag")
