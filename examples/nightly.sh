#!/usr/bin/env bash
# Run sparkdiag over last night's event logs and keep the fleet report, for cron or any scheduler.
#
#   crontab:  30 6 * * *  /opt/sparkdiag/examples/nightly.sh /mnt/spark-events /srv/reports/fleet
#
# On Databricks, point it at the cluster-log delivery destination (e.g. /dbfs/cluster-logs) from a
# job task: a "Python script" or notebook cell that runs
#   subprocess.run(["/dbfs/tools/sparkdiag", "batch", "/dbfs/cluster-logs", "-o", "/dbfs/reports/fleet",
#                   "--date", date.today().isoformat(), "--fail-on-regression"], check=False)
# and alerts when the exit code is 1 (a regression) or 2 (a usage error).
set -euo pipefail

logs=${1:?usage: nightly.sh LOG_DIR OUT_DIR [DATE]}
out=${2:?usage: nightly.sh LOG_DIR OUT_DIR [DATE]}
night=${3:-$(date -u -d yesterday +%F)}
sparkdiag=${SPARKDIAG:-sparkdiag}

# Exit code 1 means an application regressed since its previous run: report it, keep the output.
status=0
"$sparkdiag" batch "$logs" -o "$out" --date "$night" --fail-on-regression || status=$?
if [ "$status" -eq 1 ]; then
    echo "sparkdiag: regressions on $night, see $out/index.html" >&2
fi
exit "$status"
