#!/usr/bin/env bash
# Issue 15's speed figures, for the README, in one command: run it on a quiet machine (nothing
# else building or running), from anywhere in the repository:
#
#     benches/measure-quiet.sh            # the 1 GB log (1,024 MB of JSON before zstd)
#     SPARKDIAG_BENCH_MB=10240 benches/measure-quiet.sh
#
# It prints, each as the median wall time of 5 runs and the CPU time (user + system, all
# threads) of one run: `zstd -dc` on the log, reading + modelling it (plain and zstd), and
# `analyze` end to end (read, model, rules, report, its JSON text), then the ratios to
# `zstd -dc`; then task ends parsed alone (the template, the general extractor, serde_json).
# The analysis runs in the light `sparkdiag-analysis` crate's release build, the
# code `sparkdiag analyze` runs, without linking polars. The log is generated from the real
# Spark 4.3 fixture on first use, under target/bench-data/ (delete it afterwards).
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
export SPARKDIAG_BENCH_MB="${SPARKDIAG_BENCH_MB:-1024}"
cargo bench --locked -p sparkdiag-analysis --bench read --no-run
cargo bench --locked -p sparkdiag-eventlog --bench parse --no-run
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg) (quiet means below 0.5)"
cargo bench --locked -p sparkdiag-analysis --bench read
# Task ends parsed alone on one thread, in MB per CPU second: the reader's template, the general
# extractor, serde_json.
SPARKDIAG_BENCH_EVENT=TaskEnd cargo bench --locked -p sparkdiag-eventlog --bench parse
