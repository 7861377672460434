"""The servers tests/remote.rs reads logs from, on 127.0.0.1 and free ports.

    python3 tests/remote/servers.py KIND [ARG...]

KIND is one of:
  s3       moto's S3 server (PyPI moto[server])
  azure    Azurite's blob service (npm azurite)
  gcs      gcp-storage-emulator (PyPI), behind the adapter below
           (each of these three with ROOT REL...: the files under ROOT/REL are uploaded
           to the bucket or container `logs` under the key REL/...)
  shs      a Spark History Server from PySpark, over the log folder ARG
  cut      a TCP proxy in front of ARG (host:port) that cuts every response body
           after 16 KiB, or with ARG2=once only the first long one

It prints one JSON line with the addresses, then runs until its standard input closes (the
test process ended, however it ended), and stops what it started. The emulators are found
under $SPARKDIAG_EMULATORS (default target/emulators), where .ci/run installs them.

gcp-storage-emulator speaks the JSON API; object_store's GCS client uses the XML API for
listing, HEAD and downloads and needs an ETag and a Last-Modified on each download (to resume a
cut one). The adapter answers those three from the emulator's JSON API and passes everything
else (uploads, and the bytes of every download) through to it: the emulator serves the data.
"""
import email.utils
import http.client
import http.server
import json
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parents[2]
EMULATORS = Path(os.environ.get("SPARKDIAG_EMULATORS", REPO / "target" / "emulators"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited early with code {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")


def start(cmd, what, port, env=None, log=None):
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    wait_for_port(port, proc, what)
    return proc


def need(path: Path, what: str) -> str:
    if not path.exists():
        raise SystemExit(f"{what} is not installed at {path}: run .ci/run, or its emulator step")
    return str(path)


def files_under(root: Path, rels):
    """(key, path) of every file under each of `rels` (relative to root), keys as the rels."""
    for rel in rels:
        path = root / rel
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in paths:
            yield p.relative_to(root).as_posix(), p


def put(port, path, body, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("PUT", path, body=body, headers=headers)
    resp = conn.getresponse()
    answer = resp.read()
    conn.close()
    if resp.status not in (200, 201):
        raise SystemExit(f"upload of {path} refused: {resp.status} {answer[:300]!r}")


def s3(root, rels):
    port = free_port()
    moto = need(EMULATORS / "venv" / "bin" / "moto_server", "moto[server]")
    proc = start([moto, "-H", "127.0.0.1", "-p", str(port)], "moto", port)
    # moto checks no signature: the bucket and the objects go in with plain requests.
    put(port, "/logs", b"", {"Content-Length": "0"})
    for key, path in files_under(root, rels):
        put(port, f"/logs/{urllib.parse.quote(key)}", path.read_bytes(),
            {"Content-Type": "application/octet-stream"})
    return [proc], {"endpoint": f"http://127.0.0.1:{port}"}


def azure(tmp: Path, root, rels):
    port = free_port()
    azurite = need(EMULATORS / "node_modules" / ".bin" / "azurite-blob", "azurite")
    cmd = [azurite, "--blobHost", "127.0.0.1", "--blobPort", str(port),
           "--location", str(tmp / "azurite"), "--silent", "--skipApiVersionCheck"]
    proc = start(cmd, "azurite", port)
    create_container(port, "logs")
    for key, path in files_under(root, rels):
        put_blob(port, "logs", key, path.read_bytes())
    return [proc], {"endpoint": f"http://127.0.0.1:{port}"}


# Azurite's well-known development account (documented by Microsoft; no secret).
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
           "KBHBeksoGMGw==")


def shared_key(verb: str, length: str, content_type: str, headers: dict, resource: str,
               query: str) -> str:
    """The Authorization header of a request signed with the development account's key."""
    import base64
    import hashlib
    import hmac

    canonical_headers = "".join(f"{k}:{v}\n" for k, v in sorted(headers.items()))
    to_sign = (f"{verb}\n\n\n{length}\n\n{content_type}\n" + "\n" * 6 + canonical_headers
               + f"/{DEV_ACCOUNT}/{DEV_ACCOUNT}/{resource}" + (f"\n{query}" if query else ""))
    mac = hmac.new(base64.b64decode(DEV_KEY), to_sign.encode(), hashlib.sha256)
    return f"SharedKey {DEV_ACCOUNT}:{base64.b64encode(mac.digest()).decode()}"


def ms_headers(**extra):
    headers = {"x-ms-date": email.utils.formatdate(usegmt=True), "x-ms-version": "2021-08-06"}
    headers.update(extra)
    return headers


def create_container(port: int, name: str):
    headers = ms_headers()
    auth = shared_key("PUT", "", "", headers, name, "restype:container")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("PUT", f"/{DEV_ACCOUNT}/{name}?restype=container",
                 headers={**headers, "Authorization": auth, "Content-Length": "0"})
    resp = conn.getresponse()
    body = resp.read()
    if resp.status not in (201, 409):
        raise SystemExit(f"azurite refused to create container {name}: {resp.status} {body[:200]}")


def put_blob(port: int, container: str, key: str, body: bytes):
    headers = ms_headers(**{"x-ms-blob-type": "BlockBlob"})
    resource = f"{container}/{urllib.parse.quote(key)}"
    auth = shared_key("PUT", str(len(body)) if body else "", "application/octet-stream",
                      headers, resource, "")
    put(port, f"/{DEV_ACCOUNT}/{resource}", body,
        {**headers, "Authorization": auth, "Content-Type": "application/octet-stream"})


class Adapter(http.server.BaseHTTPRequestHandler):
    """The XML-API answers object_store needs, from the emulator's JSON API."""

    protocol_version = "HTTP/1.1"
    upstream = ("127.0.0.1", 0)

    def log_message(self, *args):
        pass

    def upstream_request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection(*self.upstream, timeout=60)
        conn.request(method, path, body=body, headers=headers or {})
        return conn, conn.getresponse()

    def metadata(self, bucket, name):
        quoted = urllib.parse.quote(name, safe="")
        conn, resp = self.upstream_request("GET", f"/storage/v1/b/{bucket}/o/{quoted}")
        body = resp.read()
        conn.close()
        return resp.status, (json.loads(body) if resp.status == 200 else None)

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def split(self):
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.lstrip("/").split("/", 1)
        bucket = parts[0]
        name = urllib.parse.unquote(parts[1]) if len(parts) > 1 else ""
        return url, bucket, name

    @staticmethod
    def object_headers(meta):
        updated = meta.get("updated") or meta.get("timeCreated")
        stamp = time.mktime(time.strptime(updated[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        return [("ETag", f'"{meta.get("md5Hash") or meta.get("generation")}"'),
                ("Last-Modified", email.utils.formatdate(stamp, usegmt=True)),
                ("Content-Type", "application/octet-stream")]

    def do_HEAD(self):
        _, bucket, name = self.split()
        status, meta = self.metadata(bucket, name)
        if status != 200:
            return self.reply(status)
        headers = self.object_headers(meta)
        self.send_response(200)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(meta["size"]))
        self.end_headers()

    def do_GET(self):
        url, bucket, name = self.split()
        if not name:
            return self.list_objects(bucket, urllib.parse.parse_qs(url.query))
        status, meta = self.metadata(bucket, name)
        if status != 200:
            return self.reply(status, b"<Error><Code>NoSuchKey</Code></Error>")
        headers = {"Range": self.headers["Range"]} if self.headers.get("Range") else {}
        conn, resp = self.upstream_request("GET", self.path, headers=headers)
        self.send_response(resp.status)
        for k, v in self.object_headers(meta):
            self.send_header(k, v)
        for k in ("Content-Length", "Content-Range"):
            if resp.getheader(k):
                self.send_header(k, resp.getheader(k))
        self.end_headers()
        while True:
            chunk = resp.read(64 * 1024)
            if not chunk:
                break
            self.wfile.write(chunk)
        conn.close()

    def list_objects(self, bucket, query):
        params = {"prefix": query.get("prefix", [""])[0]}
        if query.get("delimiter"):
            params["delimiter"] = query["delimiter"][0]
        if query.get("continuation-token"):
            params["pageToken"] = query["continuation-token"][0]
        conn, resp = self.upstream_request(
            "GET", f"/storage/v1/b/{bucket}/o?" + urllib.parse.urlencode(params))
        body = resp.read()
        conn.close()
        if resp.status != 200:
            return self.reply(resp.status, b"<Error><Code>NoSuchBucket</Code></Error>")
        listing = json.loads(body)
        items = []
        for item in listing.get("items", []):
            headers = dict(self.object_headers(item))
            stamp = email.utils.parsedate_to_datetime(headers["Last-Modified"])
            items.append(
                "<Contents><Key>{}</Key><Size>{}</Size><LastModified>{}</LastModified>"
                "<ETag>{}</ETag></Contents>".format(
                    escape(item["name"]), item["size"],
                    stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z"), escape(headers["ETag"])))
        prefixes = "".join(f"<CommonPrefixes><Prefix>{escape(p)}</Prefix></CommonPrefixes>"
                           for p in listing.get("prefixes", []))
        token = listing.get("nextPageToken")
        more = (f"<IsTruncated>true</IsTruncated><NextContinuationToken>{escape(token)}"
                f"</NextContinuationToken>" if token else "<IsTruncated>false</IsTruncated>")
        xml = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
               f"<Name>{escape(bucket)}</Name>{more}{''.join(items)}{prefixes}</ListBucketResult>")
        self.reply(200, xml.encode(), [("Content-Type", "application/xml")])

    def do_PUT(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        headers = {"Content-Type": self.headers.get("Content-Type", "application/octet-stream")}
        conn, resp = self.upstream_request("PUT", self.path, body=body, headers=headers)
        answer = resp.read()
        conn.close()
        url, bucket, name = self.split()
        extra = []
        if resp.status == 200:
            _, meta = self.metadata(bucket, name)
            if meta:
                extra = self.object_headers(meta)[:1]
        self.reply(resp.status, answer, extra)


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def gcs(tmp: Path, root, rels):
    port = free_port()
    emulator = need(EMULATORS / "venv" / "bin" / "gcp-storage-emulator", "gcp-storage-emulator")
    cmd = [emulator, "start", "--host", "127.0.0.1", "--port", str(port),
           "--default-bucket", "logs", "--in-memory"]
    proc = start(cmd, "gcp-storage-emulator", port, log=tmp / "gcs.log")
    Adapter.upstream = ("127.0.0.1", port)
    adapter = ThreadingServer(("127.0.0.1", 0), Adapter)
    threading.Thread(target=adapter.serve_forever, daemon=True).start()
    # The emulator's XML upload, the one object_store uses (its media upload fails on an
    # empty body, and a rolling log's appstatus file is empty).
    for key, path in files_under(root, rels):
        body = path.read_bytes()
        if body:
            put(port, f"/logs/{urllib.parse.quote(key)}", body,
                {"Content-Type": "application/octet-stream"})
            continue
        # An empty body reads as no body to the emulator: an empty file goes as the second
        # part of a multipart upload.
        boundary = "sparkdiag-boundary"
        multipart = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n"
                     + json.dumps({"name": key}) + f"\r\n--{boundary}\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n"
                     f"\r\n--{boundary}--\r\n").encode()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/upload/storage/v1/b/logs/o?uploadType=multipart", body=multipart,
                     headers={"Content-Type": f"multipart/related; boundary={boundary}"})
        resp = conn.getresponse()
        answer = resp.read()
        conn.close()
        if resp.status != 200:
            raise SystemExit(f"upload of {key} refused: {resp.status} {answer[:300]!r}")
    return [proc], {"endpoint": f"http://127.0.0.1:{adapter.server_address[1]}",
                    "emulator": f"http://127.0.0.1:{port}"}


def shs(log_dir: str, tmp: Path):
    sys.path.insert(0, str(REPO / "testdata" / "gen"))
    from common import spark_env, spark_home  # noqa: E402

    port = free_port()
    opts = {
        "spark.history.fs.logDirectory": Path(log_dir).resolve().as_uri(),
        "spark.history.fs.update.interval": "1s",
        "spark.history.ui.port": str(port),
        "spark.history.fs.cleaner.enabled": "false",
    }
    env = spark_env()
    env["SPARK_HISTORY_OPTS"] = " ".join(f"-D{k}={v}" for k, v in opts.items())
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["SPARK_DAEMON_MEMORY"] = "512m"
    env["SPARK_LOG_DIR"] = str(tmp)
    cmd = [str(spark_home() / "bin" / "spark-class"),
           "org.apache.spark.deploy.history.HistoryServer"]
    proc = start(cmd, "the History Server", port, env=env, log=tmp / "shs.log")
    # Listening is not yet listing: wait until every log of the folder is there.
    want = {p.name for p in Path(log_dir).iterdir() if not p.name.startswith(".")}
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", "/api/v1/applications")
            apps = json.loads(conn.getresponse().read())
            conn.close()
            if len(apps) >= len(want):
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    else:
        raise SystemExit(f"the History Server did not list the {len(want)} logs of {log_dir}")
    return [proc], {"url": f"http://127.0.0.1:{port}"}


def cut(target: str, mode: str):
    """A proxy that cuts a connection once 16 KiB have gone back to the client through it:
    every such connection (`always`), or only the first (`once`)."""
    host, port = target.rsplit(":", 1)
    limit = 16 * 1024
    state = {"cuts_left": 1}
    lock = threading.Lock()

    def take_cut():
        with lock:
            if mode == "always":
                return True
            if state["cuts_left"] > 0:
                state["cuts_left"] -= 1
                return True
            return False

    def close(*socks):
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def relay(src, dst, cuttable):
        sent = 0
        try:
            while True:
                data = src.recv(64 * 1024)
                if not data:
                    break
                if cuttable and sent + len(data) > limit and take_cut():
                    dst.sendall(data[: max(limit - sent, 0)])
                    break
                dst.sendall(data)
                sent += len(data)
        except OSError:
            pass
        close(src, dst)

    def serve(client):
        upstream = socket.create_connection((host, int(port)))
        threading.Thread(target=relay, args=(client, upstream, False), daemon=True).start()
        relay(upstream, client, True)

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def accept():
        while True:
            client, _ = listener.accept()
            threading.Thread(target=serve, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return [], {"endpoint": f"http://127.0.0.1:{listener.getsockname()[1]}"}


def main():
    import tempfile

    kind = sys.argv[1]
    tmp = Path(tempfile.mkdtemp(prefix=f"sparkdiag-{kind}-"))
    started = time.time()
    # s3, azure, gcs: ROOT REL... uploads each file under ROOT/REL to the bucket `logs` as REL.
    root, rels = (Path(sys.argv[2]), sys.argv[3:]) if len(sys.argv) > 2 else (None, [])
    if kind == "s3":
        procs, info = s3(root, rels)
    elif kind == "azure":
        procs, info = azure(tmp, root, rels)
    elif kind == "gcs":
        procs, info = gcs(tmp, root, rels)
    elif kind == "shs":
        procs, info = shs(sys.argv[2], tmp)
    elif kind == "cut":
        procs, info = cut(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "always")
    else:
        raise SystemExit(f"unknown server kind {kind}")
    info["started_s"] = round(time.time() - started, 2)
    print(json.dumps(info), flush=True)
    try:
        sys.stdin.read()
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        if not os.environ.get("SPARKDIAG_KEEP_SERVER_LOGS"):
            subprocess.run(["rm", "-rf", str(tmp)], check=False)


if __name__ == "__main__":
    main()
