"""A real Spark 4.3 log for CF002: a small aggregation shuffled into the default 200 partitions
with AQE off, as a job written for Spark 2 runs today.

    python3 testdata/gen/default_partitions.py

Writes testdata/logs/config/default-shuffle-partitions/<appId>.zstd (one zstd file).
"""
import shutil
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession, functions as F

OUT = Path(__file__).resolve().parent.parent / "logs" / "config" / "default-shuffle-partitions"


def main() -> None:
    events = Path(tempfile.mkdtemp(prefix="sparkdiag-cf002-"))
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sparkdiag-fixture default-shuffle-partitions")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", events.as_uri())
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.sql.adaptive.enabled", "false")  # and spark.sql.shuffle.partitions left at 200
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    df = spark.range(0, 200_000, 1, 4).groupBy((F.col("id") % 1000).alias("k")).agg(F.sum("id").alias("s"))
    df.collect()
    spark.stop()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for log in events.iterdir():
        shutil.copy(log, OUT / log.name)
        print("wrote", OUT / log.name)
    shutil.rmtree(events)


if __name__ == "__main__":
    main()
