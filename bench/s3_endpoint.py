"""moto's S3 server for the benches, and its own ceiling: how fast it takes a 1 GB file with no dash-server between.

bench/artifacts.py --s3 measures the ceiling on the same server before our upload (`ceiling`). Run alone, this
measures, on one moto server in its own process:
  - boto3's upload_file with a TransferConfig of several threads (the best a client does against this endpoint);
  - a single-threaded multipart upload, one part after the other (the endpoint's per-connection speed);
  - download: get_object of the result streamed in blocks (the ceiling for use_artifact);
  - dash-server's S3 store alone (S3BlobStore in this process, no HTTP in front): where our own path loses time.
Our upload through dash-server (bench/artifacts.py --s3) is compared against the first figure.
    python bench/s3_endpoint.py [--mb 1024] [--part-mb 16] [--threads 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, stop, temp_dir, wait_up  # noqa: E402

BUCKET = "paneboard-bench"


def start_s3(root: Path) -> tuple[subprocess.Popen, dict[str, str]]:
    """moto's S3 server in its own process on loopback, one bucket made; the AWS variables that point at it."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_up(proc, f"http://127.0.0.1:{port}/", "moto S3 server")
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "bench",
           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_CONFIG_FILE": str(root / "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": str(root / "no-aws-creds")}
    s3_client(env).create_bucket(Bucket=BUCKET)
    return proc, env


def ceiling(env: dict[str, str], path: Path, part: int = 8 << 20, threads: int = 4) -> dict[str, float]:
    """Seconds the endpoint takes for `path` straight from boto3: upload_file on `threads` threads, one part after
    the other on one thread, and a streamed get_object; the objects are deleted after."""
    client = s3_client(env)
    got = {"threaded": upload_file(client, path, "ceiling/threaded", part, threads),
           "single": sequential_parts(client, path, "ceiling/single", part),
           "download": download(client, "ceiling/single")}
    for key in ("ceiling/threaded", "ceiling/single"):
        client.delete_object(Bucket=BUCKET, Key=key)
    return got


def write_file(path: Path, mb: int) -> None:
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for i in range(mb):  # every MB differs: no part repeats another
            f.write(i.to_bytes(8, "little") + block[8:])


def s3_client(env: dict[str, str]) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(max_pool_connections=32, request_checksum_calculation="when_required",
                    response_checksum_validation="when_required")
    return boto3.session.Session().client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], aws_access_key_id="bench",
                                          aws_secret_access_key="bench", region_name="us-east-1", config=config)


def upload_file(client: Any, path: Path, key: str, part: int, threads: int) -> float:
    from boto3.s3.transfer import TransferConfig

    config = TransferConfig(multipart_threshold=part, multipart_chunksize=part, max_concurrency=threads)
    t0 = time.perf_counter()
    client.upload_file(str(path), BUCKET, key, Config=config)
    return time.perf_counter() - t0


def sequential_parts(client: Any, path: Path, key: str, part: int) -> float:
    t0 = time.perf_counter()
    upload_id = client.create_multipart_upload(Bucket=BUCKET, Key=key)["UploadId"]
    parts = []
    with open(path, "rb") as f:
        while data := f.read(part):
            number = len(parts) + 1
            etag = client.upload_part(Bucket=BUCKET, Key=key, UploadId=upload_id, PartNumber=number, Body=data)["ETag"]
            parts.append({"PartNumber": number, "ETag": etag})
    client.complete_multipart_upload(Bucket=BUCKET, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts})
    return time.perf_counter() - t0


def download(client: Any, key: str) -> float:
    t0 = time.perf_counter()
    body = client.get_object(Bucket=BUCKET, Key=key)["Body"]
    while body.read(1 << 20):
        pass
    return time.perf_counter() - t0


def store_alone(env: dict[str, str], path: Path, block: int = 4 << 20) -> tuple[float, float]:
    """Seconds for dash-server's S3 store, in this process with no HTTP in front, to take `path` in blocks as the
    upload route hands them over: (writes and close, the whole with finish's completion)."""
    import hashlib

    os.environ.update(env)
    from paneboard.server.artifacts.s3_blobs import S3BlobStore

    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    store = S3BlobStore(BUCKET, "store-alone")
    t0 = time.perf_counter()
    upload = store.open_upload(sha, 0)
    try:
        for at in range(0, len(data), block):
            upload.write(data[at:at + block])
    finally:
        upload.close()
    written = time.perf_counter() - t0
    store.finish(sha)
    return written, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--part-mb", type=int, default=8)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()
    root = temp_dir("s3-ceiling")
    big = root / "big.bin"
    write_file(big, args.mb)
    s3, env = start_s3(root)
    try:
        got = ceiling(env, big, args.part_mb << 20, args.threads)
        written, stored = store_alone(env, big)
    finally:
        stop(s3)
        shutil.rmtree(root, ignore_errors=True)
    mb = args.mb * (1 << 20) / 1e6
    print(f"S3 endpoint ceiling (moto server on loopback, {args.mb} MiB, {args.part_mb} MiB parts; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
    print(f"  boto3 upload_file, {args.threads} threads: {mb / got['threaded']:.0f} MB/s ({got['threaded']:.2f} s)")
    print(f"  one part after the other, one thread: {mb / got['single']:.0f} MB/s ({got['single']:.2f} s)")
    print(f"  get_object streamed: {mb / got['download']:.0f} MB/s ({got['download']:.2f} s)")
    print(f"dash-server's S3 store alone (no HTTP in front, 4 MiB writes): {mb / stored:.0f} MB/s ({stored:.2f} s, "
          f"of which the writes {written:.2f} s and the completion {stored - written:.2f} s)")


if __name__ == "__main__":
    main()
