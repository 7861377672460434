"""A real Spark 4.3 log full of what `--redact` must hide: an application name and job
descriptions naming a customer, a user, an e-mail address, files under a home folder and an
object-store URL with its bucket, and SQL whose WHERE clauses quote literal values (which the
plans then print bare).

    python3 testdata/gen/redact.py

Writes testdata/logs/redact/<appId>.zstd (one zstd file). The values it plants are PLANTED
below; tests/outputs.rs keeps the same list and checks that each is in the log, in some output
of `analyze`, and in no output of `analyze --redact`.
"""
import os
import shutil
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

OUT = Path(__file__).resolve().parent.parent / "logs" / "redact"

# What a report must not show once redacted (tests/outputs.rs keeps the same list).
PLANTED = [
    "Payroll for Globex Corporation",   # the application's name
    "hank.scorpio@globex.example.com",  # an e-mail address, in a job description
    "s3a://globex-payroll-archive/2026/11/salaries.parquet",  # an object store path
    "globex-payroll-archive",           # its bucket
    "Springfield Nuclear Plant",        # a SQL literal
    "Cypress Creek",                    # another
    "SPRINGFIELD NUCLEAR PLANT",        # one PL006 quotes from the plan, bare
    "hscorpio",                         # the user's home folder, in the scans' locations
]


def main() -> None:
    events = Path(tempfile.mkdtemp(prefix="sparkdiag-redact-"))
    # A home folder of the user's own name, as a notebook or a laptop has it.
    home = Path(tempfile.mkdtemp(prefix="sparkdiag-redact-home-")) / "hscorpio" / "payroll"
    home.mkdir(parents=True)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(PLANTED[0])
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.dir", events.as_uri())
        .config("spark.eventLog.compress", "true")
        .config("spark.eventLog.compression.codec", "zstd")
        .config("spark.eventLog.rolling.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        # Where the job says its output goes; the run writes locally.
        .config("spark.globex.archive", PLANTED[2])
        .getOrCreate()
    )
    sc = spark.sparkContext
    rows = [(i, ["Springfield Nuclear Plant", "Cypress Creek", "Shelbyville"][i % 3], i * 7) for i in range(3000)]
    spark.createDataFrame(rows, "id INT, site STRING, pay INT").write.mode("overwrite").parquet(str(home / "staff"))
    spark.read.parquet(str(home / "staff")).createOrReplaceTempView("staff")
    sc.setJobDescription(f"monthly salaries for {PLANTED[1]}, archived to {PLANTED[2]}")
    spark.sql(
        "SELECT site, sum(pay) AS total FROM staff "
        "WHERE site = 'Springfield Nuclear Plant' OR site = 'Cypress Creek' GROUP BY site"
    ).collect()
    sc.setJobDescription(None)
    spark.sql("SELECT count(*) FROM staff WHERE site LIKE 'Cypress Creek%' AND pay > 1000").collect()
    # A function on the column keeps each filter from the source: PL006 quotes its condition.
    spark.sql("SELECT count(*) FROM staff WHERE upper(site) = 'SPRINGFIELD NUCLEAR PLANT'").collect()
    spark.sql("SELECT count(*) FROM staff WHERE CAST(pay AS STRING) = '7007'").collect()
    spark.stop()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for log in events.iterdir():
        shutil.copy(log, OUT / log.name)
        print("wrote", OUT / log.name)
    shutil.rmtree(events)
    shutil.rmtree(home.parent.parent)


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", "python3")
    main()
