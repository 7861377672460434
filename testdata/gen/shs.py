"""Start/stop the Spark History Server from the pip-installed pyspark.

Loopback only: it binds 127.0.0.1 on a free port, keeps its store in
memory (spark.history.store.path unset), and is killed by its own pid.
"""
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from common import WORK, free_port, spark_env, spark_home


class HistoryServer:
    def __init__(self, log_dir: Path, conf=None, name="shs"):
        self.log_dir = Path(log_dir).resolve()
        self.conf = dict(conf or {})
        self.port = free_port()
        self.out = WORK / f"{name}.log"
        self.proc = None

    def __enter__(self):
        opts = {
            "spark.history.fs.logDirectory": self.log_dir.as_uri(),
            "spark.history.fs.update.interval": "1s",
            "spark.history.ui.port": str(self.port),
            "spark.history.fs.cleaner.enabled": "false",
        }
        opts.update(self.conf)
        env = spark_env()
        env["SPARK_HISTORY_OPTS"] = " ".join(f"-D{k}={v}" for k, v in opts.items())
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
        env["SPARK_DAEMON_MEMORY"] = "1g"
        cmd = [str(spark_home() / "bin" / "spark-class"), "org.apache.spark.deploy.history.HistoryServer"]
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.out, "w")
        # spark-class execs java, so this pid is the JVM's.
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._fh, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"history server exited early; see {self.out}")
            try:
                self.get("/api/v1/version")
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        raise RuntimeError(f"history server did not start; see {self.out}")

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(20)
        self._fh.close()

    def get(self, path: str):
        url = f"http://127.0.0.1:{self.port}{path}"
        with urllib.request.urlopen(url, timeout=60) as r:
            return json.loads(r.read().decode("utf-8"))

    def wait_for_apps(self, app_ids, timeout=180):
        """Wait until /api/v1/applications lists every id in app_ids."""
        want = set(app_ids)
        deadline = time.time() + timeout
        seen = set()
        while time.time() < deadline:
            seen = {a["id"] for a in self.get("/api/v1/applications")}
            if want <= seen:
                return seen
            time.sleep(1)
        raise RuntimeError(f"history server lists {sorted(seen)}, missing {sorted(want - seen)}")
