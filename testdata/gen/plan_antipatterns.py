"""Real Spark 4.3 plans with planted anti-patterns, for the plan rules (EX*, PL*).

Writes testdata/plans/antipattern-<name>.txt, each the df.explain(mode="formatted") text of one
query, captured from Spark itself. Nothing is executed: explain only plans the queries.

    python3 testdata/gen/plan_antipatterns.py
"""
import contextlib
import io
from pathlib import Path

from pyspark.sql import SparkSession, Window, functions as F

OUT = Path(__file__).resolve().parent.parent / "plans"


def formatted(df) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain(mode="formatted")
    return buf.getvalue()


def main() -> None:
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("sparkdiag plan anti-patterns")
        .config("spark.sql.adaptive.enabled", "false")  # show the static plan's exchanges
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
        .config("spark.sql.crossJoin.enabled", "true")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    orders = spark.range(0, 1000, 1, 4).select(
        F.col("id").alias("order_id"), (F.col("id") % 50).alias("customer_id"),
        (F.col("id") % 7).alias("store_id"), (F.col("id") % 13).alias("item_id"), F.rand(1).alias("amount"))
    customers = spark.range(0, 50, 1, 2).select(F.col("id").alias("customer_id"), (F.col("id") % 5).alias("region_id"))
    stores = spark.range(0, 7).select(F.col("id").alias("store_id"), (F.col("id") % 3).alias("city_id"))
    items = spark.range(0, 13).select(F.col("id").alias("item_id"), (F.col("id") % 4).alias("category_id"))

    plans = {
        # repartition by one key, then aggregate by another: the first shuffle is wasted.
        "back-to-back": orders.repartition("store_id").groupBy("customer_id").agg(F.sum("amount")),
        # A window with no partitionBy moves every row into one task.
        "window-no-partition": orders.withColumn("rank", F.row_number().over(Window.orderBy(F.desc("amount")))),
        # A join without an equality condition.
        "cross-join": orders.join(customers, orders.amount > customers.customer_id / 100.0),
        # Joins and aggregations on four different keys, broadcasts off: many shuffles.
        "many-exchanges": orders.join(customers, "customer_id").join(stores, "store_id").join(items, "item_id")
        .groupBy("region_id", "city_id").agg(F.sum("amount")),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    for name, df in plans.items():
        (OUT / f"antipattern-{name}.txt").write_text(formatted(df))
        print("wrote", OUT / f"antipattern-{name}.txt")

    # Plans over a real parquet table, which EXPLAIN prints with its scan details.
    import tempfile
    warehouse = tempfile.mkdtemp(prefix="sparkdiag-plans-")
    orders.write.mode("overwrite").parquet(f"{warehouse}/orders")
    spark.sql(f"CREATE TABLE orders_pq USING parquet LOCATION '{warehouse}/orders'")
    spark.sql(f"CREATE TABLE orders_sorted (order_id BIGINT, amount DOUBLE) USING parquet LOCATION '{warehouse}/sorted'")
    sql_plans = {
        # A cast on the column keeps the filter from reaching the parquet reader.
        "filter-not-pushed": "SELECT * FROM orders_pq WHERE CAST(customer_id AS STRING) = '7'",
        # ORDER BY before a write: a full range shuffle and sort of everything written.
        "sort-before-write": "INSERT OVERWRITE TABLE orders_sorted SELECT order_id, amount FROM orders_pq ORDER BY amount",
    }
    for name, query in sql_plans.items():
        text = spark.sql(f"EXPLAIN FORMATTED {query}").collect()[0][0]
        (OUT / f"antipattern-{name}.txt").write_text(text)
        print("wrote", OUT / f"antipattern-{name}.txt")
    spark.stop()


if __name__ == "__main__":
    main()
