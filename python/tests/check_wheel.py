"""The wheel as a new user gets it: built by maturin, installed into a fresh virtualenv, its
`sparkdiag` on PATH, `python -m sparkdiag`, the API on a bundled real log, and the example
notebook executed by nbclient with ipykernel.

    python python/tests/check_wheel.py WHEEL_DIR

WHEEL_DIR holds the wheel `maturin build --release` wrote (.ci/run builds it once). This
script's own interpreter needs nbclient, nbformat and ipykernel; the fresh virtualenv gets only
the wheel and ipykernel (the notebook's kernel runs in it, as a user's would).
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import venv

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A real Spark 4.3 log (testdata/gen/): a join with one hot key, whose finding is SK001.
LOG = os.path.join(REPO, "testdata", "logs", "patterns", "skew-join")
BEFORE = os.path.join(REPO, "testdata", "logs", "patterns", "tiny-partitions")
AFTER = os.path.join(REPO, "testdata", "logs", "patterns", "tiny-partitions-fixed")


def check(condition, what):
    if not condition:
        raise SystemExit(f"check_wheel: FAILED: {what}")
    print(f"ok: {what.splitlines()[0][:100]}")


def main():
    wheels = glob.glob(os.path.join(sys.argv[1], "sparkdiag-*.whl"))
    check(len(wheels) == 1, f"one sparkdiag wheel in {sys.argv[1]}: {wheels}")
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = os.path.join(tmp, "venv")
        venv.create(env_dir, with_pip=True)
        bin_dir = os.path.join(env_dir, "Scripts" if os.name == "nt" else "bin")
        python = os.path.join(bin_dir, "python")
        pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, wheels[0], "ipykernel"], check=True)

        # On PATH as a command, with nothing else set up.
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
        env.pop("SPARKDIAG_BINARY", None)
        which = subprocess.run(
            ["sh", "-c", "command -v sparkdiag"], env=env, capture_output=True, text=True
        )
        check(which.stdout.strip() == os.path.join(bin_dir, "sparkdiag"), f"sparkdiag on PATH from the venv: {which.stdout}")
        text = subprocess.run(
            ["sparkdiag", "analyze", LOG], env=env, capture_output=True, text=True, check=True
        ).stdout
        check("SK001" in text, f"`sparkdiag analyze` names the skew: {text[:400]}")
        version = subprocess.run(
            [python, "-m", "sparkdiag", "--version"], env=env, capture_output=True, text=True
        )
        check(version.returncode == 0 and version.stdout.startswith("sparkdiag "), f"python -m sparkdiag --version: {version.stdout}{version.stderr}")

        # The API, in the venv's interpreter (its own binary, found without PATH).
        api = r"""
import json, sys, sparkdiag
log, before, after = sys.argv[1:4]
report = sparkdiag.analyze(log)
codes = [f["rule"] for f in report["findings"]]
html = sparkdiag.report_html(log)
changes = sparkdiag.diff(before, after)
try:
    sparkdiag.analyze(log + "-missing")
    error = None
except sparkdiag.SparkdiagError as err:
    error = {"code": err.exit_code, "message": err.message}
try:
    sparkdiag.analyze(log, fail_on="bogus")
    usage = None
except sparkdiag.SparkdiagError as err:
    usage = err.exit_code
print(json.dumps({"schema": report["schema"], "codes": codes, "html": html[:200], "html_has_sk": "SK001" in html,
                  "diff_schema": changes.get("schema"), "error": error, "usage": usage}))
"""
        clean = dict(os.environ)
        clean.pop("SPARKDIAG_BINARY", None)
        clean["PATH"] = "/usr/bin:/bin"
        out = subprocess.run(
            [python, "-c", api, LOG, BEFORE, AFTER], env=clean, capture_output=True, text=True
        )
        check(out.returncode == 0, f"the API ran: {out.stderr}")
        got = json.loads(out.stdout)
        check(got["schema"] == "sparkdiag/report/v1", f"analyze() gives the report: {got['schema']}")
        check("SK001" in got["codes"], f"analyze() finds the skew: {got['codes']}")
        check(got["html"].lstrip().lower().startswith("<!doctype html"), f"report_html() is a page: {got['html'][:60]}")
        check(got["html_has_sk"], "report_html() carries the finding")
        check(got["diff_schema"] == "sparkdiag/diff/v1", f"diff() gives the diff: {got['diff_schema']}")
        check(
            got["error"] is not None and got["error"]["code"] == 2 and "skew-join-missing" in got["error"]["message"],
            f"a missing log raises SparkdiagError with the path and exit code 2: {got['error']}",
        )
        check(got["usage"] == 2, f"a bad option raises SparkdiagError with exit code 2: {got['usage']}")

        # Databricks: displayHTML in the caller's globals gets the page itself.
        databricks = r"""
import sys, sparkdiag
shown = []
def displayHTML(html):
    shown.append(html)
sparkdiag.display(sys.argv[1])
assert len(shown) == 1 and "SK001" in shown[0] and "<iframe" not in shown[0][:200], shown[:1]
print("shown", len(shown[0]))
"""
        out = subprocess.run([python, "-c", databricks, LOG], env=clean, capture_output=True, text=True)
        check(out.returncode == 0 and out.stdout.startswith("shown"), f"display() uses Databricks' displayHTML: {out.stderr[-500:]}")

        execute_notebook(env_dir, python)


def execute_notebook(env_dir, python):
    import nbclient
    import nbformat

    kernels = os.path.join(env_dir, "share", "jupyter", "kernels")
    # The kernel is the fresh venv's interpreter, which has only the wheel and ipykernel.
    spec_dir = os.path.join(kernels, "sparkdiag-venv")
    os.makedirs(spec_dir, exist_ok=True)
    with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
        json.dump(
            {"argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "sparkdiag venv", "language": "python"},
            f,
        )
    os.environ["JUPYTER_PATH"] = os.path.join(env_dir, "share", "jupyter")
    os.environ["SPARKDIAG_EXAMPLE_LOG"] = LOG
    os.environ.pop("SPARKDIAG_BINARY", None)
    notebook = nbformat.read(os.path.join(REPO, "examples", "notebook.ipynb"), as_version=4)
    client = nbclient.NotebookClient(
        notebook, kernel_name="sparkdiag-venv", timeout=120, resources={"metadata": {"path": os.path.join(REPO, "examples")}}
    )
    client.execute()
    printed = ""
    html = ""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                raise SystemExit(f"check_wheel: FAILED: the notebook raised {output.get('ename')}: {output.get('evalue')}")
            printed += output.get("text", "")
            html += output.get("data", {}).get("text/html", "")
    check("SK001" in printed and "SK001" in [w for line in printed.splitlines() for w in line.split()[1:2]], f"the notebook printed the findings: {printed[:400]}")
    check("<iframe srcdoc=" in html and "SK001" in html, f"the notebook displayed the HTML report inline: {html[:200]}")
    check("2 " in printed and "no-such-log" in printed, f"the notebook caught SparkdiagError: {printed[-300:]}")


if __name__ == "__main__":
    main()
