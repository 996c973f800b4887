# Loopback recording proxy: forwards every request to the oracle and appends
# (method, path, content type, body bytes, status) to a JSONL log.
import http.server, json, sys, urllib.request, urllib.error
UP = "http://127.0.0.1:18481"
LOG = sys.argv[2]
CORE = "--core-v1" in sys.argv[3:]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _do(self):
        # --core-v1: answer core discovery as a cluster would for mapping purposes
        # (/api lists v1, /api/v1 has no resources) so kubectl's RESTMapper knows
        # v1 List; everything else goes to the oracle.
        p = self.path.split("?")[0]
        if CORE and self.command == "GET" and p in ("/api", "/api/v1"):
            data = json.dumps({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": None} if p == "/api"
                              else {"kind": "APIResourceList", "groupVersion": "v1", "resources": []}).encode()
            with open(LOG, "a") as f:
                f.write(json.dumps({"method": "GET", "path": self.path, "synthesized": True, "status": 200}) + "\n")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        req = urllib.request.Request(UP + self.path, data=body, method=self.command)
        for k, v in self.headers.items():
            if k.lower() not in ("host", "content-length", "connection", "accept-encoding"):
                req.add_header(k, v)
        try:
            resp = urllib.request.urlopen(req, timeout=60)
            status, hdrs, data = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as e:
            status, hdrs, data = e.code, e.headers, e.read()
        with open(LOG, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                "contentType": self.headers.get("Content-Type"), "accept": self.headers.get("Accept"),
                "userAgent": self.headers.get("User-Agent"),
                "body": body.decode("utf-8", "backslashreplace") if body is not None else None,
                "status": status, "response": data.decode("utf-8", "backslashreplace")[:20000]}) + "\n")
        self.send_response(status)
        for k, v in hdrs.items():
            if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _do
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
