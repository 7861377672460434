"""Shared helpers for the sparkdiag fixture generators.

Paths, the Spark/Java environment, and the "run one Spark app in its own
process" helper. Everything here is plain standard library.
"""
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

GEN_DIR = Path(__file__).resolve().parent
TESTDATA = GEN_DIR.parent
LOGS = TESTDATA / "logs"
EXPECTED = TESTDATA / "expected"
WORK = Path(os.environ.get("SPARKDIAG_GEN_WORK", "/tmp/sparkdiag-gen"))

SPARK_VERSION = "4.3.0"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now, for a daemon started here."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spark_env():
    """Environment for a child process that runs pyspark or spark-class."""
    env = dict(os.environ)
    if "JAVA_HOME" not in env:
        java = shutil.which("java")
        if java is None:
            sys.exit("java not found: install a JDK 17+ (apt-get install openjdk-17-jre-headless)")
        env["JAVA_HOME"] = str(Path(os.path.realpath(java)).parent.parent)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Keep the JVM small: the machine is shared.
    env.setdefault("SPARK_DRIVER_MEMORY", "1g")
    return env


def local_cluster_home() -> Path:
    """A SPARK_HOME for master local-cluster[...]: symlinks to the pyspark
    package's entries. The in-process standalone Worker always puts its
    executors' work dirs in SPARK_HOME/work (it ignores SPARK_WORKER_DIR),
    which would otherwise be inside site-packages."""
    real = spark_home()
    home = WORK / "spark-home"
    home.mkdir(parents=True, exist_ok=True)
    for p in real.iterdir():
        link = home / p.name
        if p.name != "work" and not link.exists():
            link.symlink_to(p)
    return home


def spark_home():
    import pyspark

    if pyspark.__version__ != SPARK_VERSION:
        sys.exit(f"need pyspark=={SPARK_VERSION}, found {pyspark.__version__}: pip install pyspark=={SPARK_VERSION}")
    return Path(pyspark.__file__).resolve().parent


def fresh_dir(path: Path) -> Path:
    """Delete and recreate a directory (the scripts are idempotent)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def run_app(scenario: str, event_dir: Path, conf: dict, master: str = "local[2]", check=True, extra=()):
    """Run gen/app.py SCENARIO in a fresh python+JVM, writing its event log to event_dir.

    Returns the CompletedProcess. The app's own stdout/stderr go to
    event_dir/../<scenario>.out so the event dir holds only Spark's files.
    """
    event_dir.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, str(GEN_DIR / "app.py"), scenario, "--master", master,
            "--event-dir", str(event_dir)]
    for k, v in conf.items():
        args += ["--conf", f"{k}={v}"]
    args += [str(a) for a in extra]
    out = event_dir.parent / f"{event_dir.name}.out"
    env = spark_env()
    if master.startswith("local-cluster"):
        env["SPARK_HOME"] = str(local_cluster_home())
    with open(out, "w") as fh:
        proc = subprocess.run(args, env=env, stdout=fh, stderr=subprocess.STDOUT)
    if check and proc.returncode != 0:
        sys.exit(f"app {scenario} failed (rc={proc.returncode}); see {out}")
    return proc
