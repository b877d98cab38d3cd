"""A real S3 endpoint on loopback for tests: moto's ThreadedMotoServer (the S3 REST API over HTTP), one per test."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class S3Endpoint:
    url: str
    bucket: str
    env: dict[str, str]  # the standard AWS variables that point a client (or a dash-server) here

    def client(self) -> Any:
        import boto3

        return boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                     region_name="us-east-1").client("s3", endpoint_url=self.url)

    def keys(self, prefix: str = "") -> list[str]:
        listed = self.client().list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return sorted(o["Key"] for o in listed.get("Contents", []))

    def multipart_uploads(self) -> list[str]:
        return [u["Key"] for u in self.client().list_multipart_uploads(Bucket=self.bucket).get("Uploads", [])]


@contextmanager
def moto_s3(config_dir: Path) -> Iterator[S3Endpoint]:
    """An S3 server with a new empty bucket (moto keeps its buckets per process: the name is unique); `env` has fake keys and config files that do not exist, so no
    developer's ~/.aws settings (or real account) are ever used."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto logs every request it serves
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
               "AWS_CONFIG_FILE": str(config_dir / "no-aws-config"),
               "AWS_SHARED_CREDENTIALS_FILE": str(config_dir / "no-aws-credentials")}
        endpoint = S3Endpoint(env["AWS_ENDPOINT_URL"], f"pb-test-{uuid.uuid4().hex[:16]}", env)
        endpoint.client().create_bucket(Bucket=endpoint.bucket)
        yield endpoint
    finally:
        server.stop()


def apply_env(endpoint: S3Endpoint, monkeypatch: Any) -> None:
    for name, value in endpoint.env.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    assert os.environ["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1:")  # loopback only
