"""Save what the Spark History Server 4.3.0 shows in its Structured Streaming tab.

    python3 testdata/gen/shs_streaming.py

The tab has no REST API, so its two pages are read as HTML: the query list
(/history/<app>/StreamingQuery/) and each run's statistics page
(.../statistics/?id=<runId>), whose charts carry every batch's figures as
JavaScript arrays. Per streaming fixture with a query, it writes
testdata/expected/streaming/<name>.json:

  queries[]: the list's row (name, status, id, run_id, start_time, duration,
             avg_input_per_s, avg_process_per_s, latest_batch, error) and the
             statistics page's batches (timestamp_ms, input_rows_per_second,
             processed_rows_per_second, input_rows, duration_ms, and the
             durationMs parts), as the page prints them.

Spark's StreamingQueryPage: a finished query's duration is its last progress's
timestamp less its start, and the averages are the means over the retained
progress updates (NaN and infinite rates count as 0).
"""
import json
import re
import shutil
import sys
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import evlog  # noqa: E402
from common import EXPECTED, LOGS, WORK, fresh_dir  # noqa: E402
from shs import HistoryServer  # noqa: E402

STREAMING = LOGS / "streaming"


class Rows(HTMLParser):
    """The cells of every <tr> inside a table whose id ends in -table."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.rows = []
        self.cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and (attrs.get("id") or "").endswith("-table"):
            self.depth += 1
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag == "td":
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


COLUMNS = ["name", "status", "id", "run_id", "start_time", "duration",
           "avg_input_per_s", "avg_process_per_s", "latest_batch", "error"]


def series(page: str, var: str):
    """The chart array `var` of the statistics page, as {x: y}."""
    m = re.search(rf"var {var} = (\[.*?\]);", page, re.S)
    if not m:
        return {}
    return {p["x"]: p["y"] for p in json.loads(m.group(1))}


def parts(page: str):
    """v5: each batch's durationMs parts, keyed by the batch's HH:MM:SS.mmm."""
    m = re.search(r"var v5 = (\[.*?\]);", page, re.S)
    if not m:
        return []
    # Its keys are unquoted (`x: "07:17:45.695"`), so quote them to read it as JSON.
    return json.loads(re.sub(r"\{x:", '{"x":', m.group(1)))


def batches(page: str):
    rate_in, rate_out = series(page, "v1"), series(page, "v2")
    rows_in, took = series(page, "v3"), series(page, "v4")
    split = parts(page)
    ids = [int(b) for b in re.findall(r"'batch (\d+) \(", page)]
    out = []
    for i, ts in enumerate(sorted(took)):
        out.append({
            "batch_id": ids[i] if i < len(ids) else None,
            "timestamp_ms": ts,
            "input_rows_per_second": rate_in.get(ts),
            "processed_rows_per_second": rate_out.get(ts),
            "input_rows": rows_in.get(ts),
            "duration_ms": took[ts],
            "duration_parts_ms": {k: float(v) for k, v in split[i].items() if k != "x"}
            if i < len(split) else {},
        })
    return out


def main():
    logdir = fresh_dir(WORK / "shs-streaming")
    fixtures = {}
    for folder in sorted(p for p in STREAMING.iterdir() if p.is_dir()):
        logs = [p for p in folder.iterdir() if not p.name.startswith(".")]
        if len(logs) != 1:
            continue
        lines, _, _, _ = evlog.read_log(logs[0])
        if not any("StreamingQueryListener$QueryStartedEvent" in ln for ln in lines):
            continue
        app_id = evlog.count(lines)["app_id"]
        shutil.copy2(logs[0], logdir / logs[0].name)
        fixtures[folder.name] = (app_id, logs[0].relative_to(LOGS))
    out_dir = fresh_dir(EXPECTED / "streaming")
    with HistoryServer(logdir, name="shs-streaming") as shs:
        shs.wait_for_apps([a for a, _ in fixtures.values()])
        base = f"http://127.0.0.1:{shs.port}"
        for name, (app_id, log) in sorted(fixtures.items()):
            shs.get(f"/api/v1/applications/{app_id}")  # loads the app's UI
            listing = urllib.request.urlopen(f"{base}/history/{app_id}/StreamingQuery/", timeout=60)
            parser = Rows()
            parser.feed(listing.read().decode("utf-8"))
            queries = []
            for cells in parser.rows:
                if len(cells) < len(COLUMNS) - 1:
                    continue
                row = dict(zip(COLUMNS, cells))
                # The error cell is the exception's first line, then "+details" and the
                # whole trace: the first line is what the page shows.
                if "error" in row:
                    row["error"] = row["error"].split(" +details", 1)[0]
                stats = urllib.request.urlopen(
                    f"{base}/history/{app_id}/StreamingQuery/statistics/?id={row['run_id']}",
                    timeout=60).read().decode("utf-8")
                row["batches"] = batches(stats)
                queries.append(row)
            doc = {"app_id": app_id, "log": str(log), "queries": queries}
            (out_dir / f"{name}.json").write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
            print(f"{name}: {len(queries)} queries, "
                  f"{sum(len(q['batches']) for q in queries)} batches")


if __name__ == "__main__":
    main()
