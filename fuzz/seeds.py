#!/usr/bin/env python3
"""Writes the seed inputs of one fuzz target that cannot be read in place: event logs made
plain (zstd, lz4 and xz logs decompressed with the system's tools) and cut at line ends into
pieces no longer than the target's -max_len, MCP sessions, and BEFORE/AFTER pairs for `diff`.

Usage: seeds.py TARGET OUT_DIR MAX_LEN [SHARED_DIR]
The logs are read in place from testdata/ and SHARED_DIR (../shared); nothing is copied into
the repository: OUT_DIR is under fuzz/artifacts/, which git ignores.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOGS = os.path.join(ROOT, "testdata", "logs")
# At most this many pieces of one log: a long log's later pieces repeat its earlier ones.
PIECES_PER_LOG = 6

DECOMPRESS = {".zstd": ["zstd", "-dcq"], ".zst": ["zstd", "-dcq"], ".lz4": ["lz4", "-dcq"]}
SKIP = (".lzf", ".snappy", ".zip", ".gz", ".crc", ".tsv", ".md", ".json", ".py")


def plain(path):
    """The log's text, or None for a codec without a system tool (snappy, lzf) or an archive."""
    name = os.path.basename(path)
    base = name[: -len(".inprogress")] if name.endswith(".inprogress") else name
    ext = os.path.splitext(base)[1]
    if ext in DECOMPRESS:
        try:
            return subprocess.run(DECOMPRESS[ext] + [path], capture_output=True, check=False).stdout
        except FileNotFoundError:
            return None
    if base.endswith(SKIP) or base.startswith(".") or os.path.getsize(path) == 0:
        return None
    with open(path, "rb") as f:
        return f.read()


def logs_under(*dirs):
    for top in dirs:
        if not os.path.isdir(top):
            continue
        for folder, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                yield os.path.join(folder, name)


def pieces(text, max_len):
    """Line-aligned pieces of at most max_len bytes; a line longer than that is left out."""
    out, piece = [], b""
    for line in text.splitlines(keepends=True):
        if len(line) > max_len:
            continue
        if len(piece) + len(line) > max_len:
            out.append(piece)
            piece = b""
        piece += line
    if piece:
        out.append(piece)
    if len(out) > PIECES_PER_LOG:
        step = len(out) / PIECES_PER_LOG
        out = [out[int(i * step)] for i in range(PIECES_PER_LOG)]
    return out


def only(text, needles):
    return b"".join(l for l in text.splitlines(keepends=True) if any(n in l for n in needles))


def write(out_dir, name, data):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data)


def log_seeds(out_dir, max_len, dirs, needles=None):
    n = 0
    for path in logs_under(*dirs):
        text = plain(path)
        if not text or not text.lstrip().startswith(b"{"):
            continue
        chosen = [text] if needles is None else [only(text, needles)]
        for t in chosen:
            for piece in pieces(t, max_len):
                write(out_dir, f"log-{n:04}", piece)
                n += 1
    return n


def mcp_seeds(out_dir):
    # The folder the target lets the server read (fuzz_targets/mcp.rs) and its one log; the
    # server takes a relative path from its first root, so the corpus holds no checkout's path.
    single = "."
    plain_log = "app"
    zstd_log = os.path.join(LOGS, "single", "zstd", "local-1796049355449.zstd")
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "fuzz", "version": "0"}}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    def call(i, tool, args):
        return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}

    sessions = [
        [init, initialized, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
         {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
         {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
         {"jsonrpc": "2.0", "id": 4, "method": "ping"}],
        [init, initialized, call(1, "list_applications", {"path": single})],
        [init, initialized, call(1, "analyze_application", {"path": plain_log}),
         call(2, "get_finding", {"path": plain_log, "rank": 1}),
         call(3, "get_stage", {"path": plain_log, "stage_id": 8}),
         call(4, "get_job", {"path": plain_log, "job_id": 1})],
        [init, initialized, call(1, "failure_postmortem", {"path": zstd_log}),
         call(2, "what_if", {"path": zstd_log, "cores": 8}),
         call(3, "compare_runs", {"before": plain_log, "after": zstd_log})],
        [init, initialized, call(1, "list_rules", {"category": "skew"}),
         call(2, "analyze_plan", {"text": "== Physical Plan ==\n* Project [a#1]\n+- * Filter (a#1 > 1)\n   +- Scan parquet t[a#1]\n"}),
         {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}],
        [init, {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": "diagnose"}},
         {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "sparkdiag://rules"}},
         {"jsonrpc": "2.0", "id": [1], "method": 7}, [{"jsonrpc": "2.0"}]],
    ]
    for i, session in enumerate(sessions):
        text = "".join(json.dumps(m) + "\n" for m in session)
        write(out_dir, f"session-{i}", text.encode())
    write(out_dir, "session-bad", b'{"jsonrpc":"2.0","id":1,"method":"initialize"\n\xff\xfe\n\n{}\n')
    return len(sessions) + 1


def diff_seeds(out_dir, max_len):
    """BEFORE and AFTER of the committed fixes, each cut to half the length, joined by \\n\\0\\n."""
    pairs = [("diff/loop-serial", "diff/fixed"), ("diff/loop-threadpool", "diff/fixed"),
             ("diff/partitions-default", "diff/partitions-aqe"),
             ("diff/fixed", "diff/fixed-drops-rows"), ("diff/loop-killed", "diff/fixed-unpartitioned"),
             ("memory/heap-oom-wide", "memory/heap-oom-wide-fixed"),
             ("memory/overprovisioned", "memory/overprovisioned-fixed"),
             ("patterns/tiny-partitions", "patterns/tiny-partitions-fixed"),
             ("patterns/driver-loop-serial", "patterns/driver-loop-fixed")]
    half = max_len // 2 - 2
    n = 0
    for before, after in pairs:
        texts = []
        for d in (before, after):
            logs = [plain(p) for p in logs_under(os.path.join(LOGS, d))]
            logs = [t for t in logs if t]
            # The jobs, stages and SQL executions matter to diff, not every task.
            texts.append(b"".join(l for l in (logs[0] if logs else b"").splitlines(keepends=True)
                                  if b"SparkListenerTaskStart" not in l))
        for i, (b, a) in enumerate(zip(pieces(texts[0], half), pieces(texts[1], half))):
            write(out_dir, f"pair-{n:03}-{i}", b + b"\n\0\n" + a)
        n += 1
    return n


def main():
    target, out_dir, max_len = sys.argv[1], sys.argv[2], int(sys.argv[3])
    shared = sys.argv[4] if len(sys.argv) > 4 else os.path.join(ROOT, "..", "shared")
    os.makedirs(out_dir, exist_ok=True)
    conformance = os.path.join(shared, "spark-conformance")
    real_world = os.path.join(shared, "real-world")
    if target == "model":
        n = log_seeds(out_dir, max_len, [LOGS, conformance, real_world])
    elif target == "streaming":
        n = log_seeds(out_dir, max_len, [os.path.join(LOGS, "streaming"),
                                         os.path.join(conformance, "sql-spark-events")])
        n += log_seeds(out_dir, max_len, [os.path.join(LOGS, "streaming")],
                       [b"StreamingQueryListener", b"SparkListenerJobStart", b"SparkListenerJobEnd"])
    elif target == "memory":
        n = log_seeds(out_dir, max_len, [os.path.join(LOGS, "memory"), conformance])
        n += log_seeds(out_dir, max_len, [os.path.join(LOGS, "memory")],
                       [b"Executor Metrics", b"StageExecutorMetrics", b"ExecutorAdded",
                        b"ExecutorRemoved", b"EnvironmentUpdate", b"Failed", b"LogStart"])
    elif target == "mcp":
        n = mcp_seeds(out_dir)
    elif target == "diff":
        n = diff_seeds(out_dir, max_len)
    else:
        sys.exit(f"seeds.py: no generated seeds for {target}")
    print(f"{target}: {n} seeds in {out_dir}")


if __name__ == "__main__":
    main()
