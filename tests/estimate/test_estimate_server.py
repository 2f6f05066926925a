"""The HTTP API: FastAPI's TestClient for the routes and the 422s, and one real uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from fastapi.testclient import TestClient

from ecocompute.estimate import Question, estimate
from ecocompute.estimate.server import create_app


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_get_and_post_give_the_engine_answer(client: TestClient) -> None:
    fields = {"gpu": "H200", "params_b": 7.6, "precision": "nf4", "stack": "compiled-all"}
    expected = estimate(Question(**fields)).model_dump(mode="json")  # type: ignore[arg-type]
    assert client.get("/v1/estimate", params=fields).json() == expected
    assert client.post("/v1/estimate", json=fields).json() == expected


@pytest.mark.parametrize(
    ("fields", "field", "valid"),
    [
        ({"gpu": "H200", "params_b": 7, "precision": "fp8"}, "precision", "'nf4', 'q8_0' or 'q4_k_m'"),
        ({"gpu": "H200", "params_b": 7, "precision": "nf4", "engine": "vllm"}, "engine", "'llama.cpp'"),
        ({"gpu": "H200", "params_b": 7, "precision": "nf4", "stack": "tensorrt"}, "stack", "'compiled-all'"),
        ({"gpu": "Z80", "params_b": 7, "precision": "nf4"}, "gpu", "NVIDIA H200"),
        ({"gpu": "H200", "params_b": -1, "precision": "nf4"}, "params_b", ""),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_valid_values(
    client: TestClient, fields: dict[str, object], field: str, valid: str
) -> None:
    for response in (client.get("/v1/estimate", params=fields), client.post("/v1/estimate", json=fields)):
        assert response.status_code == 422
        detail = response.json()["detail"][0]
        assert detail["field"] == field
        assert valid in detail.get("valid", "") + detail["msg"]


def test_a_question_without_a_size_is_a_422(client: TestClient) -> None:
    response = client.get("/v1/estimate", params={"gpu": "H200", "precision": "nf4"})
    assert response.status_code == 422 and "exactly one of params_b" in response.json()["detail"][0]["msg"]


def test_gpus_crossovers_and_openapi(client: TestClient) -> None:
    gpus = client.get("/v1/gpus").json()["gpus"]
    assert {"measured"} <= set(next(g for g in gpus if g["name"] == "NVIDIA H200")["evidence"])
    rows = client.get("/v1/crossovers", params={"precision": "nf4"}).json()["crossovers"]
    assert rows and all(r["precision"] == "nf4" for r in rows)
    assert {"crossover", "none-in-measured-range", "insufficient-data"} >= {r["crossover"]["status"] for r in rows}
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/estimate", "/v1/gpus", "/v1/crossovers"} <= set(paths)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_real_uvicorn_serves_the_estimate() -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ecocompute", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/v1/estimate?gpu=H200&params_b=7.6&precision=nf4"
        for _ in range(200):
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    body = json.loads(response.read())
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("uvicorn did not answer")
        assert body["basis"] == "measured" and body["gpu_resolved"]["name"] == "NVIDIA H200"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
