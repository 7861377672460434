//! Where in the user's program a job comes from.
//!
//! Spark names a job after its last stage's short call site, `method at File:line`, taking the
//! first frame it does not recognise as its own. Since Spark 4 a DataFrame write runs its query
//! on a pool thread (`SQLExecution.withThreadLocalCaptured`), so that first frame is the JDK's:
//! `$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768`, the same for every
//! write of every program; broadcast jobs (`run at ThreadPoolExecutor.java:1136`) are alike.
//! The SQL execution the job belongs to keeps the full stack of the call that started it, which
//! says which API call of the program it was (`DataFrameWriter.parquet`) and from where.

use crate::{Application, Job};

/// Packages whose frames are never the user's call: the JDK, Scala's runtime, py4j (PySpark's
/// bridge) and Spark's execution machinery. Spark's public API (`Dataset`, `DataFrameWriter`,
/// `SparkContext`, `RDD`) is where a program calls in, so it stays.
const INTERNAL: &[&str] = &[
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "scala.",
    "py4j.",
    "org.apache.spark.sql.execution.",
    "org.apache.spark.sql.catalyst.",
    "org.apache.spark.sql.internal.",
    "org.apache.spark.scheduler.",
    "org.apache.spark.util.",
    "org.apache.spark.internal.",
    "org.apache.spark.rdd.RDDOperationScope",
];

/// Files of the JDK whose frames Spark takes for the user's when a job runs on a pool thread.
const POOL_FILES: &[&str] = &[
    "CompletableFuture.java",
    "ThreadPoolExecutor.java",
    "FutureTask.java",
    "ForkJoinTask.java",
    "ForkJoinPool.java",
    "Thread.java",
    "Executors.java",
];

impl Application {
    /// The job's call site in the user's program: its name (`collect at job.py:107`) unless
    /// Spark named it after a JDK pool thread or a Scala closure, then the first user-facing
    /// call of its SQL execution's stack (`parquet at DataFrameWriter.scala:383`); the name
    /// when neither says more.
    pub fn user_call_site(&self, job: &Job) -> String {
        if !is_internal_name(&job.name) {
            return job.name.clone();
        }
        job.sql_execution_id
            .and_then(|id| self.sql.iter().find(|s| s.execution_id == id))
            .and_then(|sql| first_user_frame(&sql.details.text()))
            .unwrap_or_else(|| job.name.clone())
    }
}

/// Libraries whose code starts jobs of its own: Spark's machine learning (`spark.ml`, the RDD
/// `spark.mllib`), GraphX, and Delta's commands (open source and Databricks' `tahoe`).
const LIBRARIES: &[(&str, &str)] = &[
    ("org.apache.spark.ml.", "Spark ML"),
    ("org.apache.spark.mllib.", "Spark MLlib"),
    ("org.apache.spark.graphx.", "GraphX"),
    ("io.delta.", "Delta Lake"),
    ("com.databricks.sql.transaction.tahoe.", "Delta Lake"),
];

/// The library whose code called Spark to start a job, from the job's long call site (one
/// frame a line, innermost first): the first frame past Spark's own API and internals, when
/// it is a library's (`Spark ML's RandomForest`); `None` when it is the program's.
pub fn library_caller(stack: &str) -> Option<String> {
    for line in stack.lines() {
        let frame = line.trim();
        let Some((path, site)) = frame.split_once('(') else {
            continue;
        };
        // A module or class-loader prefix (`java.base/`, `app//`) names no package.
        let path = path.rsplit('/').next().unwrap_or(path);
        if let Some((_, library)) = LIBRARIES.iter().find(|(p, _)| path.starts_with(p)) {
            let file = site.split([':', ')']).next().unwrap_or_default();
            let class = file.trim_end_matches(".scala").trim_end_matches(".java");
            return Some(if class.is_empty() {
                library.to_string()
            } else {
                format!("{library}'s {class}")
            });
        }
        let spark_core =
            path.starts_with("org.apache.spark.") || INTERNAL.iter().any(|p| path.starts_with(p));
        if !spark_core {
            return None;
        }
    }
    None
}

/// A short call site (`method at File:line`) that names Spark's or the JDK's internals.
fn is_internal_name(name: &str) -> bool {
    let Some((method, site)) = name.lines().next().unwrap_or_default().rsplit_once(" at ") else {
        return false;
    };
    let file = site.split(':').next().unwrap_or(site);
    method.contains("$anonfun$") || method.starts_with('$') || POOL_FILES.contains(&file)
}

/// A long-form call site (one `pkg.Class.method(File.scala:12)` a line, innermost first) as
/// Spark's short form: the last Spark API method before the first frame of the user's own code,
/// at that frame's `File:line` (`count at Etl.scala:31`). A PySpark program's own frames are
/// Python, not on this stack, so there the API call's own site stands
/// (`parquet at DataFrameWriter.scala:383`). Frames in [`INTERNAL`] are passed over.
fn first_user_frame(stack: &str) -> Option<String> {
    let mut api: Option<(&str, &str)> = None;
    for line in stack.lines() {
        let line = line.trim();
        let Some((path, site)) = line.split_once('(') else {
            continue;
        };
        // `java.base/java.lang.Thread.run`, `app//org.apache...`: a module or class loader
        // comes before the class.
        let path = path.rsplit_once('/').map_or(path, |(_, p)| p);
        let Some(site) = site.strip_suffix(')').filter(|s| s.contains(':')) else {
            continue;
        };
        let method = path.rsplit('.').next().unwrap_or(path);
        if INTERNAL.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        if path.starts_with("org.apache.spark.") {
            api = Some((method, site));
            continue;
        }
        return Some(format!("{} at {site}", api.map_or(method, |(m, _)| m)));
    }
    api.map(|(method, site)| format!("{method} at {site}"))
}

#[cfg(test)]
mod library_tests {
    use super::library_caller;

    /// The stack of one of the jobs MLlib's RandomForest ran in the EMR run of
    /// `../shared/real-world` (`take at DecisionTreeMetadata.scala:119`).
    #[test]
    fn a_random_forests_own_job_is_the_librarys() {
        let stack = "org.apache.spark.rdd.RDD.take(RDD.scala:1396)\n\
            org.apache.spark.ml.tree.impl.DecisionTreeMetadata$.buildMetadata(DecisionTreeMetadata.scala:119)\n\
            org.apache.spark.ml.tree.impl.RandomForest$.run(RandomForest.scala:274)";
        assert_eq!(
            library_caller(stack).as_deref(),
            Some("Spark ML's DecisionTreeMetadata")
        );
        let user = "org.apache.spark.sql.Dataset.count(Dataset.scala:3005)\n\
            com.example.Etl$.main(Etl.scala:31)";
        assert_eq!(library_caller(user), None);
        let python = "org.apache.spark.sql.Dataset.collectToPython(Dataset.scala:3800)\n\
            java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n\
            py4j.Gateway.invoke(Gateway.java:282)";
        assert_eq!(library_caller(python), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SQL execution stack of a PySpark `df.write.parquet(...)` on Spark 4.3
    /// (testdata/logs/patterns/driver-loop-serial).
    const WRITE: &str = "org.apache.spark.sql.DataFrameWriter.parquet(DataFrameWriter.scala:383)
java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
java.base/java.lang.reflect.Method.invoke(Method.java:569)
py4j.reflection.MethodInvoker.invoke(MethodInvoker.java:244)
py4j.ClientServerConnection.run(ClientServerConnection.java:108)
java.base/java.lang.Thread.run(Thread.java:840)";

    #[test]
    fn pool_threads_and_closures_are_not_call_sites() {
        assert!(is_internal_name(
            "$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768"
        ));
        assert!(is_internal_name("run at ThreadPoolExecutor.java:1136"));
        assert!(!is_internal_name(
            "collect at /work/main/testdata/gen/workload.py:107"
        ));
        assert!(!is_internal_name("count at MyJob.scala:42"));
        assert!(!is_internal_name("plain job name"));
    }

    #[test]
    fn the_first_user_facing_frame_is_the_api_call() {
        assert_eq!(
            first_user_frame(WRITE).as_deref(),
            Some("parquet at DataFrameWriter.scala:383")
        );
        let pool = "org.apache.spark.sql.execution.SQLExecution$.$anonfun$withThreadLocalCaptured$1(SQLExecution.scala:401)
java.base/java.util.concurrent.CompletableFuture$AsyncSupply.run(CompletableFuture.java:1768)
java.base/java.lang.Thread.run(Thread.java:840)";
        assert_eq!(first_user_frame(pool), None);
        assert_eq!(
            first_user_frame(
                "org.apache.spark.rdd.RDD.count(RDD.scala:1296)\ncom.acme.Etl$.main(Etl.scala:31)"
            )
            .as_deref(),
            Some("count at Etl.scala:31")
        );
    }
}
