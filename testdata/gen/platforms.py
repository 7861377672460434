"""Real Spark 4.3 logs of batch programs run under a platform's defaults (issue 46): settings a
platform puts on every cluster, whatever runs there, that must not decide what the application
is.

    python3 testdata/gen/platforms.py [SCENARIO...]     # all scenarios when none is named

Writes testdata/logs/platforms/<scenario>/<appId>.zstd:

* `connect-plugin-loop`: a batch program on a cluster that loads the Spark Connect plugin
  (`spark.plugins=org.apache.spark.sql.connect.SparkConnectPlugin`, as every Databricks 13.x
  cluster does) and carries `spark.streaming.*` defaults (as Databricks 9.1 does). Nobody
  connects to the Connect server; the driver itself runs a Python loop of 30
  `spark.sql(...).collect()` calls, one small job each, then sleeps 12 s between two queries.
  It is a batch program with a driver loop and a driver pause, not a Connect server or a
  DStreams application.
"""
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

OUT = Path(__file__).resolve().parent.parent / "logs" / "platforms"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def session(name, **conf):
    events = Path(tempfile.mkdtemp(prefix=f"sparkdiag-{name}-"))
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(f"sparkdiag-fixture {name}")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", events.as_uri())
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
    )
    for k, v in conf.items():
        builder = builder.config(k, v)
    return builder.getOrCreate(), events


def keep(name, spark, events):
    spark.stop()
    out = OUT / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for log in events.iterdir():
        shutil.copy(log, out / log.name)
        print("wrote", out / log.name)
    shutil.rmtree(events)


def connect_plugin_loop():
    spark, events = session(
        "connect-plugin-loop",
        **{
            "spark.plugins": "org.apache.spark.sql.connect.SparkConnectPlugin",
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(free_port()),
            "spark.streaming.stopGracefullyOnShutdown": "true",
            "spark.streaming.driver.writeAheadLog.closeFileAfterWrite": "true",
        },
    )
    spark.range(0, 200_000, 1, 4).selectExpr("id", "id % 100 AS item").createOrReplaceTempView("sales")
    # One small job per item, one after another: the loop DR002 is for.
    for item in range(30):
        spark.sql(f"SELECT count(*), sum(id) FROM sales WHERE item = {item}").collect()
    spark.sql("SELECT item, count(*) FROM sales GROUP BY item").collect()
    # The driver waits with no job running.
    time.sleep(12)
    spark.sql("SELECT max(id) FROM sales").collect()
    keep("connect-plugin-loop", spark, events)


SCENARIOS = {"connect-plugin-loop": connect_plugin_loop}

if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        SCENARIOS[name]()
