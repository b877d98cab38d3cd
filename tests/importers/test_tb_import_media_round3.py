"""TensorBoard import of videos whose GIF frames lie off their logical screen (torch's add_video through
moviepy + imageio), and records the import still cannot keep: named in its output and counted in alerts."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from PIL import Image  # noqa: E402
from tensorboard.compat.proto.summary_pb2 import Summary  # noqa: E402
from torch.utils.tensorboard import SummaryWriter  # noqa: E402

from helpers.tb_import import blob, import_tb, steps  # noqa: E402

RED, BLUE, GREEN = 0, 1, 2
PALETTE = [(255, 0, 0), (0, 0, 255), (0, 200, 0)] + [(0, 0, 0)] * 125  # 128 colours: 8-bit LZW codes


def lzw_uncompressed(indices: list[int]) -> bytes:
    """GIF image data without compression: one 8-bit code per pixel, a clear code every 100 pixels so the
    code width never grows (written by hand, independent of any GIF library)."""
    codes = bytearray()
    for i in range(0, len(indices), 100):
        codes.append(128)                        # clear code
        codes += bytes(indices[i:i + 100])
    codes.append(129)                            # end of information
    out = bytearray([7])                         # LZW minimum code size
    for i in range(0, len(codes), 255):
        out += bytes([len(codes[i:i + 255])]) + codes[i:i + 255]
    return bytes(out + b"\x00")


def frame(left: int, top: int, width: int, height: int, colour: int) -> bytes:
    control = b"\x21\xf9\x04" + bytes([1 << 2]) + struct.pack("<H", 10) + b"\x00\x00"  # keep; 100 ms
    return (control + b"\x2c" + struct.pack("<HHHHB", left, top, width, height, 0)
            + lzw_uncompressed([colour] * (width * height)))


def gif(width: int, height: int, frames: list[bytes]) -> bytes:
    head = b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80 | 6, 0, 0) + bytes(c for rgb in PALETTE for c in rgb)
    loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    return head + loop + b"".join(frames) + b"\x3b"


# A 600x400 video whose first frame's offsets wrapped (-1526, -14883 stored as 64010, 50653): Pillow grows
# the canvas to 64610x51053. Browsers clip every frame to the header's screen.
WRAPPED = gif(600, 400, [frame(64010, 50653, 600, 400, BLUE),   # entirely off screen: shows nothing
                         frame(0, 0, 600, 400, RED),
                         frame(100, 100, 50, 50, BLUE),
                         frame(590, 390, 20, 20, GREEN)])       # half off screen: its visible corner shows


def write_video(writer: SummaryWriter, tag: str, data: bytes, step: int) -> None:
    """What torch's add_video writes: an image summary holding the GIF (make_video's header sizes)."""
    image = Summary.Image(height=400, width=600, colorspace=3, encoded_image_string=data)
    writer._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, image=image)]), step)


def test_pillow_alone_refuses_the_wrapped_gif() -> None:
    with pytest.raises(Image.DecompressionBombError, match="3298534330 pixels"):  # 64610 x 51053
        Image.open(io.BytesIO(WRAPPED))


@pytest.mark.e2e  # runs `python -m paneboard.server import-tb` itself
def test_a_video_with_wrapped_frame_offsets_is_imported_on_its_screen(tmp_path: Path, server_types) -> None:
    logdir = tmp_path / "runs"
    with SummaryWriter(log_dir=str(logdir / "vid")) as w:
        write_video(w, "rollout", WRAPPED, 3)
        w.add_scalar("loss", 1.0, 3)
    db = tmp_path / "tb.db"
    out = import_tb(logdir, db, "--quiet")
    assert "0 problems" in out, out
    srv = server_types.InProcessServer(db=db).start()
    try:
        recs = steps(srv, "runs/vid", "rollout")
        assert [(r["step"], r["width"], r["height"], r["mime"]) for r in recs] == [(3, 600, 400, "image/gif")]
        with Image.open(io.BytesIO(blob(srv, recs[0]["src"]))) as img:
            assert img.size == (600, 400) and img.n_frames >= 3
            shown = []
            for i in range(img.n_frames):
                img.seek(i)
                rgb = img.convert("RGB")
                shown.append((rgb.getpixel((0, 0)), rgb.getpixel((125, 125)), rgb.getpixel((595, 395)),
                              img.info["duration"]))
        assert shown[-1][:3] == (PALETTE[RED], PALETTE[BLUE], PALETTE[GREEN])
        assert shown[-2][:3] == (PALETTE[RED], PALETTE[BLUE], PALETTE[RED])
        assert sum(d for *_, d in shown) == 400  # every frame's 100 ms kept (the blank first included)
    finally:
        srv.stop()


@pytest.mark.e2e  # runs `python -m paneboard.server import-tb` itself
def test_records_still_skipped_are_named_and_counted(tmp_path: Path, server_types) -> None:
    logdir = tmp_path / "runs"
    broken = WRAPPED[:800]  # a GIF cut inside its first frame's data
    with SummaryWriter(log_dir=str(logdir / "bad")) as w:
        write_video(w, "good", WRAPPED, 1)
        write_video(w, "cut", broken, 5)
        bad = Summary.Image(height=2, width=2, colorspace=3, encoded_image_string=b"BM not a known format")
        w._get_file_writer().add_summary(Summary(value=[Summary.Value(tag="bmp", image=bad)]), 7)
    db = tmp_path / "tb.db"
    out = import_tb(logdir, db, "--quiet")
    assert "2 problems" in out, out
    assert "skipped runs/bad: tag 'cut' step 5: an unreadable GIF" in out, out
    assert "skipped runs/bad: tag 'bmp' step 7: an image in an unknown format" in out, out
    srv = server_types.InProcessServer(db=db).start()
    try:
        assert [r["step"] for r in steps(srv, "runs/bad", "good")] == [1]  # the rest of the run is kept
        alerts = srv.get_json("/api/v1/envs/runs%2Fbad/panes/alerts")["data"]["html"]
        assert "2 TensorBoard records not imported" in alerts, alerts
        assert "tag &#x27;cut&#x27; step 5" in alerts or "tag 'cut' step 5" in alerts, alerts
    finally:
        srv.stop()
