"""sparkdiag from Python: diagnose slow and failed Apache Spark jobs from their event logs.

A thin layer over the `sparkdiag` binary that this wheel installs: each call runs it once and
reads its versioned JSON report (schema ``sparkdiag/report/v1``), so Python sees exactly what
the command line prints. Paths may be local, ``/dbfs/...`` (Databricks' FUSE mount) or
``dbfs:/...`` (read through ``/dbfs``)::

    import sparkdiag
    report = sparkdiag.analyze("/dbfs/cluster-logs/0102-abc/eventlog/")
    sparkdiag.display("/dbfs/cluster-logs/0102-abc/eventlog/")
"""

import html as _html
import json
import os
import shutil
import subprocess
import sys
import sysconfig

__all__ = [
    "SparkdiagError",
    "analyze",
    "report_html",
    "diff",
    "display",
    "binary",
    "run",
]


class SparkdiagError(RuntimeError):
    """sparkdiag refused or failed: ``message`` is what it said, ``exit_code`` its exit code
    (2: a usage error or unreadable input), ``args_used`` the command line it was given."""

    def __init__(self, message, exit_code, args_used=()):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.args_used = list(args_used)

    def __str__(self):
        return f"{self.message} (exit code {self.exit_code})"


def binary():
    """The path of the `sparkdiag` binary: ``$SPARKDIAG_BINARY``, else the one this wheel put
    in the interpreter's scripts folder, else the first on ``PATH``."""
    exe = "sparkdiag" + (".exe" if os.name == "nt" else "")
    override = os.environ.get("SPARKDIAG_BINARY")
    if override:
        return override
    schemes = [sysconfig.get_default_scheme()] if hasattr(sysconfig, "get_default_scheme") else []
    schemes.append(f"{os.name}_user")
    for scheme in schemes:
        try:
            scripts = sysconfig.get_path("scripts", scheme)
        except KeyError:
            continue
        candidate = os.path.join(scripts, exe)
        if os.path.isfile(candidate):
            return candidate
    # A venv's interpreter sits beside its scripts.
    beside = os.path.join(os.path.dirname(sys.executable), exe)
    if os.path.isfile(beside):
        return beside
    found = shutil.which(exe)
    if found:
        return found
    raise SparkdiagError(
        "the sparkdiag binary was not found: reinstall with `pip install sparkdiag`, or set "
        "SPARKDIAG_BINARY to its path",
        2,
    )


def _path(path):
    """A path sparkdiag can open: ``dbfs:/x`` is ``/dbfs/x`` on a Databricks driver."""
    text = os.fspath(path)
    if text.startswith("dbfs:/"):
        return "/dbfs/" + text[len("dbfs:/") :].lstrip("/")
    return text


def _flags(options):
    """Keyword options as flags: ``fail_on="high"`` is ``--fail-on high``, ``True`` a bare
    flag, a list or tuple one flag per item (``set=["SK001.ratio=4"]``)."""
    args = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.rstrip("_").replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                args += [flag, os.fspath(item) if hasattr(item, "__fspath__") else str(item)]
        else:
            args += [flag, os.fspath(value) if hasattr(value, "__fspath__") else str(value)]
    return args


def run(*args, check=True):
    """Runs ``sparkdiag ARGS`` and returns its standard output as text. Exit code 2 (or any
    code but 0 and 1, which means findings at ``--fail-on``) raises :class:`SparkdiagError`."""
    argv = [binary(), *[os.fspath(a) if hasattr(a, "__fspath__") else str(a) for a in args]]
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stderr = done.stderr.decode("utf-8", "replace").strip()
    if check and done.returncode not in (0, 1):
        message = stderr
        if message.startswith("sparkdiag: "):
            message = message[len("sparkdiag: ") :]
        raise SparkdiagError(message or f"sparkdiag exited with {done.returncode}", done.returncode, argv[1:])
    return done.stdout.decode("utf-8")


def analyze(path, *more_paths, **options):
    """The report of the log(s) at ``path`` as a dict (a list of dicts when the input holds
    several applications). Options are ``analyze``'s flags: ``price_per_core_hour=0.5``,
    ``set=["SK001.ratio=4"]``, ``disable=["GC001"]``, ``config="sparkdiag.toml"``."""
    paths = [_path(p) for p in (path, *more_paths)]
    out = run("analyze", *paths, "--format", "json", *_flags(options))
    return json.loads(out)


def report_html(path, *more_paths, **options):
    """The self-contained HTML report (charts included) of the log(s) at ``path``, as text."""
    paths = [_path(p) for p in (path, *more_paths)]
    return run("analyze", *paths, "--format", "html", *_flags(options))


def diff(before, after, **options):
    """The comparison of two runs of a job (schema ``sparkdiag/diff/v1``) as a dict. Options are
    ``diff``'s flags: ``app_name="nightly-sales"``, ``price_per_core_hour=0.5``."""
    out = run("diff", _path(before), _path(after), "--format", "json", *_flags(options))
    return json.loads(out)


def _caller_display_html():
    """Databricks' ``displayHTML``, from the notebook's globals or ``__main__``, else None."""
    frame = sys._getframe(1)
    while frame is not None:
        found = frame.f_globals.get("displayHTML")
        if callable(found):
            return found
        frame = frame.f_back
    main = sys.modules.get("__main__")
    found = getattr(main, "displayHTML", None)
    return found if callable(found) else None


def display(path, *more_paths, height=900, **options):
    """Shows the HTML report of the log(s) at ``path`` in the notebook: Databricks'
    ``displayHTML`` when there is one, else IPython's display (Jupyter, VS Code), where the
    report goes in an iframe of its own so its styles and scripts do not touch the notebook's."""
    page = report_html(path, *more_paths, **options)
    display_html = _caller_display_html()
    if display_html is not None:
        # Databricks shows displayHTML's page in a sandboxed frame of its own.
        display_html(page)
        return None
    frame = (
        f'<iframe srcdoc="{_html.escape(page, quote=True)}" '
        f'style="width:100%;height:{int(height)}px;border:0" '
        'sandbox="allow-scripts allow-popups"></iframe>'
    )
    try:
        from IPython.display import HTML, display as ipython_display
    except ImportError as err:
        raise SparkdiagError(
            "display() needs a notebook (IPython, or Databricks' displayHTML); "
            "report_html() gives the page as text",
            2,
        ) from err
    ipython_display(HTML(frame))
    return None
