"""A night of event logs spread over a Spark cluster, written as one `sparkdiag batch` would.

Each Spark task runs `sparkdiag batch LOG_DIR... --slice K/N` over the same directories and
analyses every N-th log found (positions K, K+N, ...), writing its share of the night into
OUTDIR/slices/DATE/K/. The driver then runs `sparkdiag batch --merge` over the N slices, which
writes OUTDIR exactly as `sparkdiag batch LOG_DIR... -o OUTDIR --date DATE` on one machine
would: the same Parquet tables row for row (rows in slice order), the same reports, the night,
the regressions against earlier nights and the index page. The slices are removed afterwards.

sparkdiag must be installed at the same path on every executor (e.g. by an init script), and
LOG_DIRs and OUTDIR must be the same paths on the driver and every executor (a shared
filesystem: DBFS, NFS, a mounted bucket).

    spark-submit examples/distributed_batch.py OUTDIR DATE LOG_DIR... [--slices N]
        [--sparkdiag BINARY] [-- BATCH_OPTIONS...]

BATCH_OPTIONS (e.g. `--key spark-property:... --set SK001.ratio=8 --fail-on-regression`) are
passed to every slice and to the merge. The exit code is the merge's (1 when
--fail-on-regression found a regression). Tested by tests/distributed.rs in local mode:

    python3 examples/distributed_batch.py /tmp/fleet 2026-11-29 testdata/logs/multi \\
        testdata/logs/failed --slices 3 --sparkdiag target/debug/sparkdiag
"""
import argparse
import os
import shutil
import subprocess
import sys

from pyspark.sql import SparkSession


def main() -> int:
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("outdir")
    parser.add_argument("date")
    parser.add_argument("log_dirs", nargs="+")
    parser.add_argument("--slices", type=int, default=8)
    parser.add_argument("--sparkdiag", default="sparkdiag")
    argv = sys.argv[1:]
    batch_options = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if args.slices < 1:
        parser.error("--slices must be at least 1")

    # Absolute paths: executors do not share the driver's working directory.
    binary = os.path.abspath(args.sparkdiag) if os.path.exists(args.sparkdiag) else args.sparkdiag
    log_dirs = [os.path.abspath(d) for d in args.log_dirs]
    outdir = os.path.abspath(args.outdir)
    slices_root = os.path.join(outdir, "slices", args.date)
    slice_dirs = [os.path.join(slices_root, str(k)) for k in range(args.slices)]
    n = args.slices

    def run_slice(k: int):
        done = subprocess.run(
            [binary, "batch", *log_dirs, "-o", slice_dirs[k], "--date", args.date,
             "--slice", f"{k}/{n}", *batch_options],
            capture_output=True, text=True,
        )
        return k, done.returncode, done.stdout, done.stderr

    spark = SparkSession.builder.appName("sparkdiag distributed batch").getOrCreate()
    try:
        # One Spark task per slice: the logs are listed by every task, each analyses its share.
        results = spark.sparkContext.parallelize(range(n), n).map(run_slice).collect()
    finally:
        spark.stop()
    failed = False
    for k, code, stdout, stderr in sorted(results):
        print(stdout.strip().splitlines()[0] if stdout.strip() else f"slice {k}/{n}: no output")
        if code != 0:
            failed = True
            print(f"slice {k}/{n} failed with exit code {code}:\n{stderr}", file=sys.stderr)
    if failed:
        return 2

    merged = subprocess.run(
        [binary, "batch", "--merge", *slice_dirs, "-o", outdir, "--date", args.date, *batch_options]
    )
    if merged.returncode in (0, 1):
        shutil.rmtree(slices_root)
        # The date's folder was the last under slices/.
        if not os.listdir(os.path.join(outdir, "slices")):
            os.rmdir(os.path.join(outdir, "slices"))
    return merged.returncode


if __name__ == "__main__":
    sys.exit(main())
