"""Independent, small Python reader for the fixtures: decompress Spark's
event-log framings and count events. Used to fill MANIFEST.tsv; it shares
no code with the Rust reader, so the two can check each other.

Codecs (see shared/research/eventlog-format.md section 2):
  zstd   - sequence of standard zstd frames (last one may be cut short)
  lz4    - lz4-java LZ4BlockOutputStream: 21-byte "LZ4Block" headers
  snappy - xerial SnappyOutputStream: 16-byte header, BE length + raw block
  lzf    - ning "ZV" chunks (pure-Python LZF decoder below)
  gz     - gzip, possibly several members
"""
import gzip
import json
import re
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections import Counter
from pathlib import Path

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_MAGIC = b"LZ4Block"
SNAPPY_MAGIC = b"\x82SNAPPY\x00"


class Decoded:
    """Decompressed bytes plus notes about how the stream ended."""

    def __init__(self, data: bytes, codec: str, notes=None):
        self.data = data
        self.codec = codec
        self.notes = notes or []


def sniff(raw: bytes, name: str) -> str:
    if raw.startswith(ZSTD_MAGIC):
        return "zstd"
    if raw.startswith(LZ4_MAGIC):
        return "lz4"
    if raw.startswith(SNAPPY_MAGIC):
        return "snappy"
    if raw[:2] == b"ZV" and len(raw) > 2 and raw[2] in (0, 1):
        return "lzf"
    if raw[:2] == b"\x1f\x8b":
        return "gzip"
    base = re.sub(r"(\.compact|\.inprogress)+$", "", name)
    ext = base.rsplit(".", 1)[-1] if "." in base else ""
    return ext if ext in ("zstd", "lz4", "snappy", "lzf", "gz") else "none"


def decode_zstd(raw: bytes) -> Decoded:
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    out, frames, rest = [], 0, raw
    notes = []
    while rest:
        d = dctx.decompressobj()
        out.append(d.decompress(rest))
        if not d.eof:
            notes.append(f"last zstd frame truncated ({len(rest)} bytes after {frames} whole frames)")
            break
        frames += 1
        rest = d.unused_data
    notes.insert(0, f"{frames} zstd frames")
    return Decoded(b"".join(out), "zstd", notes)


def decode_lz4(raw: bytes) -> Decoded:
    import lz4.block

    out, pos, blocks, ends = [], 0, 0, 0
    notes = []
    while pos < len(raw):
        if len(raw) - pos < 21:
            notes.append(f"lz4 stream ends inside a block header ({len(raw) - pos} bytes)")
            break
        if raw[pos:pos + 8] != LZ4_MAGIC:
            raise ValueError(f"bad LZ4Block magic at {pos}")
        token = raw[pos + 8]
        clen, olen, _check = struct.unpack_from("<iii", raw, pos + 9)
        pos += 21
        if clen == 0 and olen == 0:
            ends += 1
            continue
        if len(raw) - pos < clen:
            notes.append(f"lz4 stream ends inside a block ({len(raw) - pos} of {clen} bytes)")
            break
        body = raw[pos:pos + clen]
        pos += clen
        method = token & 0xF0
        out.append(body if method == 0x10 else lz4.block.decompress(body, uncompressed_size=olen))
        blocks += 1
    notes.insert(0, f"{blocks} lz4 blocks, {ends} end marks")
    return Decoded(b"".join(out), "lz4", notes)


def decode_snappy(raw: bytes) -> Decoded:
    import cramjam

    out, pos, chunks = [], 0, 0
    notes = []
    while pos < len(raw):
        if raw[pos:pos + 8] == SNAPPY_MAGIC:
            pos += 16  # magic, version (BE int), compatible version (BE int)
            continue
        if len(raw) - pos < 4:
            notes.append("snappy stream ends inside a chunk length")
            break
        (n,) = struct.unpack_from(">i", raw, pos)
        pos += 4
        if len(raw) - pos < n:
            notes.append("snappy stream ends inside a chunk")
            break
        out.append(bytes(cramjam.snappy.decompress_raw(raw[pos:pos + n])))
        pos += n
        chunks += 1
    notes.insert(0, f"{chunks} snappy chunks")
    return Decoded(b"".join(out), "snappy", notes)


def lzf_block(data: bytes, out_len: int) -> bytes:
    """Plain LZF decompression (liblzf / ning format)."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:  # literal run of ctrl+1 bytes
            ln = ctrl + 1
            out += data[i:i + ln]
            i += ln
            continue
        ln = ctrl >> 5
        if ln == 7:
            ln += data[i]
            i += 1
        ref = len(out) - ((ctrl & 0x1F) << 8) - data[i] - 1
        i += 1
        ln += 2
        if ref + ln <= len(out):
            out += out[ref:ref + ln]
        else:  # overlapping copy
            for k in range(ln):
                out.append(out[ref + k])
    if len(out) != out_len:
        raise ValueError(f"lzf chunk decoded to {len(out)} bytes, header says {out_len}")
    return bytes(out)


def decode_lzf(raw: bytes) -> Decoded:
    out, pos, stored, comp = [], 0, 0, 0
    sizes = Counter()
    notes = []
    while pos < len(raw):
        if raw[pos:pos + 2] != b"ZV":
            raise ValueError(f"bad LZF chunk magic at {pos}")
        kind = raw[pos + 2]
        if kind == 0:
            (ln,) = struct.unpack_from(">H", raw, pos + 3)
            out.append(raw[pos + 5:pos + 5 + ln])
            pos += 5 + ln
            stored += 1
            sizes[ln] += 1
        elif kind == 1:
            clen, olen = struct.unpack_from(">HH", raw, pos + 3)
            out.append(lzf_block(raw[pos + 7:pos + 7 + clen], olen))
            pos += 7 + clen
            comp += 1
            sizes[olen] += 1
        else:
            raise ValueError(f"bad LZF chunk type {kind} at {pos}")
    full = sizes.get(65535, 0)
    notes.append(f"{comp} compressed + {stored} stored lzf chunks, {full} of them full 64 KiB")
    return Decoded(b"".join(out), "lzf", notes)


def decode_gzip(raw: bytes) -> Decoded:
    out, members, rest = [], 0, raw
    while rest:
        d = zlib.decompressobj(wbits=31)
        out.append(d.decompress(rest))
        if not d.eof:
            raise ValueError("truncated gzip member")
        members += 1
        rest = d.unused_data
    assert b"".join(out) == gzip.decompress(raw)
    return Decoded(b"".join(out), "gzip", [f"{members} gzip members"])


def decode_bytes(raw: bytes, name: str) -> Decoded:
    codec = sniff(raw, name)
    if codec == "zstd":
        return decode_zstd(raw)
    if codec == "lz4":
        return decode_lz4(raw)
    if codec == "snappy":
        return decode_snappy(raw)
    if codec == "lzf":
        return decode_lzf(raw)
    if codec in ("gzip", "gz"):
        return decode_gzip(raw)
    return Decoded(raw, "none")


# ---------------------------------------------------------------- layouts

def event_index(name: str) -> int:
    return int(name.split("_", 2)[1])


def log_files(path: Path):
    """The files that make up one app's log, in read order, and a layout name."""
    path = Path(path)
    if path.is_file():
        return [path], "single"
    names = sorted(p.name for p in path.iterdir() if not p.name.startswith("."))
    evs = [n for n in names if n.startswith("events_")]
    if evs:
        evs.sort(key=event_index)
        compacts = [i for i, n in enumerate(evs) if n.endswith(".compact")]
        if compacts:
            evs = evs[compacts[-1]:]
        return [path / n for n in evs], "rolling"
    if "eventlog" in names or any(n.startswith("eventlog-") for n in names):
        rolls = sorted(n for n in names if n.startswith("eventlog-"))
        tail = ["eventlog"] if "eventlog" in names else []
        return [path / n for n in rolls + tail], "databricks"
    raise ValueError(f"no event log in {path}")


def find_app_dirs(root: Path):
    """Databricks context dirs / rolling dirs / single files below root."""
    root = Path(root)
    out = []
    for p in sorted(root.rglob("*")):
        if p.name.startswith("."):
            continue
        if p.is_dir() and (p.name.startswith("eventlog_v2_") or (p / "eventlog").is_file()):
            out.append(p)
    return out


def read_log(path: Path):
    """Return (lines, codecs, notes, layout) for a file, rolling dir,
    Databricks context dir, or a .zip/.tar.gz holding exactly one of those."""
    path = Path(path)
    if path.is_file() and (path.name.endswith(".zip") or path.name.endswith(".tar.gz")):
        with tempfile.TemporaryDirectory() as tmp:
            if path.name.endswith(".zip"):
                zipfile.ZipFile(path).extractall(tmp)
            else:
                with tarfile.open(path) as t:
                    t.extractall(tmp, filter="data")
            dirs = find_app_dirs(Path(tmp))
            if len(dirs) != 1:
                raise ValueError(f"{path}: expected one app inside, found {dirs}")
            lines, codecs, notes, layout = read_log(dirs[0])
            return lines, codecs, notes, ("zip" if path.name.endswith(".zip") else "tar.gz") + ":" + layout
    files, layout = log_files(path)
    chunks, codecs, notes = [], [], []
    for f in files:
        d = decode_bytes(f.read_bytes(), f.name)
        chunks.append(d.data)
        codecs.append(d.codec)
        notes += [f"{f.name}: {n}" for n in d.notes]
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return text.split("\n"), codecs, notes, layout


# ---------------------------------------------------------------- counting

def count(lines):
    c = Counter()
    info = {"app_id": "", "app_name": "", "spark_version": "", "version_from": "", "bad_lines": 0}
    events = [ln for ln in lines if ln.strip()]
    for i, ln in enumerate(events):
        try:
            e = json.loads(ln)
        except json.JSONDecodeError:
            info["bad_lines"] += 1
            if i != len(events) - 1:
                raise
            continue
        ev = e.get("Event")
        c["events"] += 1
        if ev == "SparkListenerLogStart":
            info["spark_version"] = e["Spark Version"]
            info["version_from"] = "SparkListenerLogStart"
        elif ev == "SparkListenerApplicationStart":
            info["app_id"] = e.get("App ID", "")
            info["app_name"] = e.get("App Name", "")
        elif ev == "SparkListenerEnvironmentUpdate" and not info["spark_version"]:
            v = e.get("Spark Properties", {}).get("spark.databricks.clusterUsageTags.sparkVersion")
            if v:
                info["spark_version"] = v
                info["version_from"] = "spark.databricks.clusterUsageTags.sparkVersion"
        elif ev == "SparkListenerJobStart":
            c["jobs"] += 1
        elif ev == "SparkListenerJobEnd":
            if e["Job Result"]["Result"] != "JobSucceeded":
                c["failed_jobs"] += 1
        elif ev == "SparkListenerStageSubmitted":
            c["stages"] += 1
        elif ev == "SparkListenerTaskEnd":
            c["tasks"] += 1
            if e["Task End Reason"]["Reason"] not in ("Success", "TaskKilled"):
                c["failed_tasks"] += 1
        elif ev == "SparkListenerExecutorAdded":
            c["executors"] += 1
        elif ev == "SparkListenerApplicationEnd":
            c["app_end"] += 1
    info.update({k: c.get(k, 0) for k in
                 ("events", "jobs", "failed_jobs", "stages", "tasks", "failed_tasks", "executors")})
    info["complete"] = "yes" if c.get("app_end") else "no"
    return info


if __name__ == "__main__":
    import sys

    for arg in sys.argv[1:]:
        lines, codecs, notes, layout = read_log(Path(arg))
        print(arg, layout, sorted(set(codecs)), count(lines), *notes, sep="\n  ")
