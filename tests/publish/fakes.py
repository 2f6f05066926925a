"""Local HTTP fakes of the Hugging Face Hub and Zenodo, for the push tests (the only unreachable boundaries).

Each fake is a real ``http.server`` on 127.0.0.1 in a thread; it records every request as (method, path) and keeps
just enough state to answer the calls huggingface_hub (over httpx2) and zenodo-client (over requests) make. The
Hub fake answers ``preupload`` with ``uploadMode: regular`` so files travel inline in the commit (no Xet/LFS
storage is faked); a request it does not know gets a 404 and is recorded like any other.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    """One request as the fake saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class Response:
    """What a route answers."""

    status: int = 200
    body: Any = None
    content_type: str = "application/json"


Route = Callable[[Request, re.Match[str]], Response]


class FakeService:
    """An HTTP server on 127.0.0.1 with regex routes; ``calls`` lists (method, path) in order."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.routes: list[tuple[str, re.Pattern[str], Route]] = []
        self.fail: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL, e.g. http://127.0.0.1:53211."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def calls(self) -> list[tuple[str, str]]:
        """(method, path) of every request, in order."""
        return [(r.method, r.path) for r in self.requests]

    def route(self, method: str, pattern: str, handler: Route) -> None:
        """Answer ``method`` on paths matching ``pattern`` (anchored) with ``handler``."""
        self.routes.append((method, re.compile(f"^{pattern}$"), handler))

    def __enter__(self) -> FakeService:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _dispatch(self, request: Request) -> Response:
        with self._lock:
            self.requests.append(request)
            status = self.fail.get((request.method, request.path))
        if status is not None:
            return Response(status, {"error": f"fake failure {status}"})
        for method, pattern, handler in self.routes:
            match = pattern.match(request.path)
            if method == request.method and match:
                with self._lock:
                    return handler(request, match)
        return Response(404, {"error": f"fake has no route for {request.method} {request.path}"})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                split = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    body = self._read_chunked()
                request = Request(self.command, split.path, parse_qs(split.query),
                                  {k.lower(): v for k, v in self.headers.items()}, body)  # fmt: skip
                response = service._dispatch(request)
                payload = b"" if response.body is None else json.dumps(response.body).encode()
                self.send_response(response.status)
                self.send_header("Content-Type", response.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _read_chunked(self) -> bytes:
                data = b""
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle  # noqa: N815 - http.server's names

        return Handler


@dataclass
class HubRepo:
    """State of one fake dataset repository."""

    files: dict[str, bytes] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    commits: list[dict[str, Any]] = field(default_factory=list)


class FakeHub(FakeService):
    """The Hub endpoints a dataset push uses: create repo, list tree, preupload, commit, tag."""

    REPO = r"/api/datasets/(?P<repo>[^/]+/[^/]+)"

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.repos: dict[str, HubRepo] = {}
        self.validated: list[Any] = []
        self.route("POST", "/api/repos/create", self._create)
        self.route("GET", self.REPO + r"/tree/(?P<rev>[^/]+)(?P<path>/.*)?", self._tree)
        self.route("POST", self.REPO + r"/preupload/(?P<rev>[^/]+)", self._preupload)
        self.route("POST", self.REPO + r"/commit/(?P<rev>[^/]+)", self._commit)
        self.route("POST", self.REPO + r"/tag/(?P<rev>[^/]+)", self._tag)
        self.route("POST", "/api/validate-yaml", self._validate_yaml)

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.token}"

    def _create(self, request: Request, _match: re.Match[str]) -> Response:
        if not self._authorized(request):
            return Response(401, {"error": "Invalid credentials"})
        body = json.loads(request.body)
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
        if body.get("type") != "dataset":
            return Response(400, {"error": "expected a dataset"})
        if repo_id in self.repos:
            return Response(409, {"error": "You already created this dataset repo", "url": self._repo_url(repo_id)})
        self.repos[repo_id] = HubRepo(files={".gitattributes": b"*.parquet filter=lfs\n"})
        return Response(200, {"url": self._repo_url(repo_id)})

    def _repo_url(self, repo_id: str) -> str:
        return f"{self.url}/datasets/{repo_id}"

    def _tree(self, request: Request, match: re.Match[str]) -> Response:
        repo = self.repos.get(match["repo"])
        if repo is None:
            return Response(404, {"error": "Repository not found"})
        entries = [{"type": "file", "path": path, "size": len(data), "oid": f"{abs(hash(data)):040x}"[:40]}
                   for path, data in sorted(repo.files.items())]  # fmt: skip
        return Response(200, entries)

    def _preupload(self, request: Request, match: re.Match[str]) -> Response:
        if not self._authorized(request):
            return Response(401, {"error": "Invalid credentials"})
        files = json.loads(request.body)["files"]
        return Response(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                         "oid": None} for f in files]})  # fmt: skip

    def _commit(self, request: Request, match: re.Match[str]) -> Response:
        if not self._authorized(request):
            return Response(401, {"error": "Invalid credentials"})
        repo = self.repos[match["repo"]]
        lines = [json.loads(line) for line in request.body.splitlines() if line.strip()]
        for line in lines:
            value = line["value"]
            if line["key"] == "file":
                repo.files[value["path"]] = base64.b64decode(value["content"])
            elif line["key"] == "deletedFile":
                repo.files.pop(value["path"], None)
            elif line["key"] != "header":
                return Response(400, {"error": f"fake does not take {line['key']} operations"})
        oid = f"{len(repo.commits) + 1:040x}"
        repo.commits.append({"oid": oid, "operations": lines})
        return Response(200, {"commitUrl": f"{self._repo_url(match['repo'])}/commit/{oid}", "commitOid": oid})

    def _validate_yaml(self, request: Request, _match: re.Match[str]) -> Response:
        """Like the Hub: the card's YAML must parse and declare a licence; each config needs data_files."""
        import yaml

        content = json.loads(request.body)["content"]
        parts = content.split("---\n")
        try:
            meta = yaml.safe_load(parts[1]) if content.startswith("---\n") and len(parts) > 2 else None
        except yaml.YAMLError as exc:
            return Response(400, {"errors": [{"message": f"invalid YAML: {exc}"}]})
        errors = []
        if not isinstance(meta, dict) or "license" not in meta:
            errors.append({"message": "license is required"})
        for config in (meta or {}).get("configs", []) if isinstance(meta, dict) else []:
            if "config_name" not in config or "data_files" not in config:
                errors.append({"message": f"config without config_name or data_files: {config}"})
        self.validated.append(meta)
        return Response(400 if errors else 200, {"errors": errors, "warnings": []})

    def _tag(self, request: Request, match: re.Match[str]) -> Response:
        repo = self.repos[match["repo"]]
        tag = json.loads(request.body)["tag"]
        if tag in repo.tags:
            return Response(409, {"error": "Tag already exists"})
        repo.tags[tag] = match["rev"]
        return Response(200, {})


@dataclass
class Deposition:
    """State of one fake Zenodo deposition."""

    id: int
    metadata: dict[str, Any]
    submitted: bool
    files: dict[str, bytes] = field(default_factory=dict)
    file_ids: dict[str, str] = field(default_factory=dict)


class FakeZenodo(FakeService):
    """The Zenodo deposit API endpoints a release uses, with token checks on ``access_token``."""

    DEP = r"/api/deposit/depositions"

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.depositions: dict[int, Deposition] = {}
        self.next_id = 200
        self.route("POST", self.DEP, self._create)
        self.route("GET", self.DEP + r"/(?P<id>\d+)", self._get)
        self.route("PUT", self.DEP + r"/(?P<id>\d+)", self._put)
        self.route("POST", self.DEP + r"/(?P<id>\d+)/actions/newversion", self._newversion)
        self.route("POST", self.DEP + r"/(?P<id>\d+)/actions/publish", self._publish)
        self.route("DELETE", self.DEP + r"/(?P<id>\d+)/files/(?P<fid>[^/]+)", self._delete_file)
        self.route("PUT", r"/api/files/bucket-(?P<id>\d+)/(?P<name>[^/]+)", self._upload)

    def add_published(self, deposition_id: int, metadata: dict[str, Any], files: dict[str, bytes]) -> None:
        """A published deposition with files, as a previous version of the record."""
        dep = Deposition(deposition_id, metadata, True, dict(files))
        dep.file_ids = {name: f"file-{deposition_id}-{i}" for i, name in enumerate(sorted(files))}
        self.depositions[deposition_id] = dep

    def _ok(self, request: Request) -> bool:
        return request.query.get("access_token") == [self.token]

    def _json(self, dep: Deposition) -> dict[str, Any]:
        base = f"{self.url}{self.DEP}/{dep.id}"
        return {
            "id": dep.id, "submitted": dep.submitted, "state": "done" if dep.submitted else "unsubmitted",
            "metadata": dep.metadata, "doi": f"10.5072/zenodo.{dep.id}" if dep.submitted else None,
            "files": [{"id": dep.file_ids[n], "filename": n, "filesize": len(d)} for n, d in sorted(dep.files.items())],
            "links": {"self": base, "bucket": f"{self.url}/api/files/bucket-{dep.id}",
                      "html": f"{self.url}/deposit/{dep.id}", "latest_draft": base},
        }  # fmt: skip

    def _dep(self, match: re.Match[str]) -> Deposition | None:
        return self.depositions.get(int(match["id"]))

    def _create(self, request: Request, _match: re.Match[str]) -> Response:
        if not self._ok(request):
            return Response(401, {"message": "bad token"})
        dep = Deposition(self.next_id, json.loads(request.body)["metadata"], False)
        self.next_id += 1
        self.depositions[dep.id] = dep
        return Response(201, self._json(dep))

    def _get(self, request: Request, match: re.Match[str]) -> Response:
        dep = self._dep(match)
        if not self._ok(request) or dep is None:
            return Response(404 if dep is None else 401, {"message": "no"})
        return Response(200, self._json(dep))

    def _put(self, request: Request, match: re.Match[str]) -> Response:
        dep = self._dep(match)
        if not self._ok(request) or dep is None or dep.submitted:
            return Response(400, {"message": "cannot edit"})
        dep.metadata = json.loads(request.body)["metadata"]
        return Response(200, self._json(dep))

    def _newversion(self, request: Request, match: re.Match[str]) -> Response:
        dep = self._dep(match)
        if not self._ok(request) or dep is None or not dep.submitted:
            return Response(400, {"message": "cannot version"})
        draft = Deposition(self.next_id, dict(dep.metadata), False, dict(dep.files))
        draft.file_ids = {name: f"file-{draft.id}-{i}" for i, name in enumerate(sorted(draft.files))}
        self.next_id += 1
        self.depositions[draft.id] = draft
        answer = self._json(dep)
        answer["links"]["latest_draft"] = f"{self.url}{self.DEP}/{draft.id}"
        return Response(201, answer)

    def _delete_file(self, request: Request, match: re.Match[str]) -> Response:
        dep = self._dep(match)
        if not self._ok(request) or dep is None:
            return Response(400, {"message": "no"})
        names = [n for n, fid in dep.file_ids.items() if fid == match["fid"]]
        if not names:
            return Response(404, {"message": "no such file"})
        dep.files.pop(names[0])
        dep.file_ids.pop(names[0])
        return Response(204, None)

    def _upload(self, request: Request, match: re.Match[str]) -> Response:
        dep = self.depositions.get(int(match["id"]))
        if not self._ok(request) or dep is None or dep.submitted:
            return Response(400, {"message": "bucket closed"})
        if match["name"] in dep.files:
            return Response(400, {"message": "file already exists"})
        dep.files[match["name"]] = request.body
        dep.file_ids[match["name"]] = f"file-{dep.id}-{len(dep.file_ids)}"
        return Response(201, {"key": match["name"], "size": len(request.body)})

    def _publish(self, request: Request, match: re.Match[str]) -> Response:
        dep = self._dep(match)
        if not self._ok(request) or dep is None:
            return Response(400, {"message": "no"})
        dep.submitted = True
        return Response(202, self._json(dep))
