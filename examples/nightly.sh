#!/usr/bin/env bash
# Run sparkdiag over last night's event logs and keep the fleet report, for cron or any scheduler.
# The log folder keeps every night: --modified-on reads the logs last written on that UTC date.
# 06:30 is past --stale-after (6h) after midnight, so a log killed late in the night counts as
# killed rather than as still being written (docs/batch.md).
#
#   crontab:  30 6 * * *  /opt/sparkdiag/examples/nightly.sh /mnt/spark-events /srv/reports/fleet
#
# On Databricks, point it at the cluster-log delivery destination (e.g. /dbfs/cluster-logs) from a
# job task: a "Python script" or notebook cell that runs
#   subprocess.run(["/dbfs/tools/sparkdiag", "batch", "/dbfs/cluster-logs", "-o", "/dbfs/reports/fleet",
#                   "--modified-on", str(date.today() - timedelta(days=1)), "--fail-on-regression"],
#                  check=False)
# and alerts when the exit code is 1 (a regression) or 2 (a usage error).
set -euo pipefail

logs=${1:?usage: nightly.sh LOG_DIR OUT_DIR [DATE]}
out=${2:?usage: nightly.sh LOG_DIR OUT_DIR [DATE]}
night=${3:-$(date -u -d yesterday +%F)}
sparkdiag=${SPARKDIAG:-sparkdiag}

# Exit code 1 means an application regressed since its previous run: report it, keep the output.
status=0
"$sparkdiag" batch "$logs" -o "$out" --modified-on "$night" --fail-on-regression || status=$?
if [ "$status" -eq 1 ]; then
    echo "sparkdiag: regressions on $night, see $out/index.html" >&2
fi
exit "$status"
