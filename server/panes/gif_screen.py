"""Animated GIFs whose frames reach past their logical screen, redrawn on that screen as browsers show them."""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

from PIL import Image

from .image import MAX_IMAGE_PIXELS

# Decoded frames held at once while redrawing (RGBA): a long video of a large screen is refused, not swapped.
MAX_TOTAL_PIXELS = 4 * MAX_IMAGE_PIXELS
_TRAILER, _EXTENSION, _DESCRIPTOR, _CONTROL, _APPLICATION = 0x3B, 0x21, 0x2C, 0xF9, 0xFF


@dataclass(frozen=True)
class Frame:
    left: int
    top: int
    width: int
    height: int
    packed: int          # the descriptor's flags: local colour table, interlace
    local_table: bytes
    data: bytes          # LZW minimum code size and the image's sub-blocks, terminator included
    control: bytes       # the Graphic Control Extension before the frame (whole block), or b""
    disposal: int
    delay_ms: int


@dataclass(frozen=True)
class Gif:
    width: int           # the logical screen the header declares
    height: int
    packed: int
    background: int
    global_table: bytes
    frames: list[Frame]
    loop: int | None     # NETSCAPE2.0 loop count; None: plays once

    def overflows(self) -> bool:
        return any(f.left + f.width > self.width or f.top + f.height > self.height for f in self.frames)


def _table_size(packed: int) -> int:
    return 3 * (2 << (packed & 7)) if packed & 0x80 else 0


def _sub_blocks(data: bytes, pos: int) -> int:
    """The position after the sub-block chain starting at pos (its zero terminator included)."""
    while True:
        if pos >= len(data):
            raise ValueError("the GIF ends inside a block")
        size = data[pos]
        pos += 1 + size
        if size == 0:
            return pos


def parse(data: bytes) -> Gif:
    """The GIF's screen and frames; ValueError when its block structure is broken."""
    if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 13:
        raise ValueError("not a GIF")
    width, height, packed, background = struct.unpack_from("<HHBB", data, 6)
    pos = 13 + _table_size(packed)
    global_table = data[13:pos]
    frames: list[Frame] = []
    control, disposal, delay, loop = b"", 0, 0, None
    while pos < len(data) and data[pos] != _TRAILER:
        kind = data[pos]
        if kind == _EXTENSION and pos + 1 < len(data):
            label, end = data[pos + 1], _sub_blocks(data, pos + 2)
            if label == _CONTROL and data[pos + 2] >= 4:
                control = data[pos:end]
                disposal, delay = (data[pos + 3] >> 2) & 7, struct.unpack_from("<H", data, pos + 4)[0] * 10
            elif label == _APPLICATION and data[pos + 3:pos + 14] == b"NETSCAPE2.0" and data[pos + 14] >= 3:
                loop = struct.unpack_from("<H", data, pos + 16)[0]
            pos = end
        elif kind == _DESCRIPTOR and pos + 10 <= len(data):
            left, top, w, h, fpacked = struct.unpack_from("<HHHHB", data, pos + 1)
            table_end = pos + 10 + _table_size(fpacked)
            end = _sub_blocks(data, table_end + 1)
            frames.append(Frame(left, top, w, h, fpacked, data[pos + 10:table_end], data[table_end:end], control,
                                disposal, delay))
            control, disposal, delay = b"", 0, 0
            pos = end
        else:
            raise ValueError(f"unknown GIF block 0x{kind:02x} at byte {pos}")
    return Gif(width, height, packed, background, global_table, frames, loop)


def _frame_pixels(gif: Gif, frame: Frame) -> Image.Image:
    """One frame decoded on its own (a one-frame GIF of the frame's size), transparency as alpha."""
    if frame.width * frame.height > MAX_IMAGE_PIXELS:
        raise ValueError(f"a {frame.width}x{frame.height} frame is more than {MAX_IMAGE_PIXELS} pixels")
    alone = (b"GIF89a" + struct.pack("<HHBBB", frame.width, frame.height, gif.packed, gif.background, 0)
             + gif.global_table + frame.control + struct.pack("<BHHHHB", _DESCRIPTOR, 0, 0, frame.width,
                                                             frame.height, frame.packed)
             + frame.local_table + frame.data + bytes([_TRAILER]))
    with Image.open(io.BytesIO(alone)) as img:
        return img.convert("RGBA")


def fit_to_screen(data: bytes) -> bytes:
    """The GIF as is when every frame lies on its logical screen; otherwise each frame clipped to the screen
    and the animation encoded again at the screen's size.

    Writers that compute frame offsets as negative numbers store them wrapped (65535 for -1): Pillow then grows
    the canvas to cover them (64610x51053 for a 600x400 video of torch's add_video through moviepy), while
    browsers and TensorBoard clip every frame to the screen the header declares. Raises ValueError."""
    gif = parse(data)
    if not gif.frames or not gif.overflows():
        return data
    screen = gif.width * gif.height
    if screen == 0 or screen * len(gif.frames) > MAX_TOTAL_PIXELS:
        raise ValueError(f"{len(gif.frames)} frames of a {gif.width}x{gif.height} screen are too many pixels")
    canvas = Image.new("RGBA", (gif.width, gif.height), (0, 0, 0, 0))
    shown: list[Image.Image] = []
    for frame in gif.frames:
        box = (min(frame.left, gif.width), min(frame.top, gif.height),
               min(frame.left + frame.width, gif.width), min(frame.top + frame.height, gif.height))
        visible = box[2] > box[0] and box[3] > box[1]
        before = canvas.copy() if frame.disposal == 3 else None
        if visible:
            pixels = _frame_pixels(gif, frame)
            canvas.alpha_composite(pixels.crop((box[0] - frame.left, box[1] - frame.top, box[2] - frame.left,
                                                box[3] - frame.top)), box[:2])
        shown.append(canvas.copy())
        if frame.disposal == 2 and visible:  # restore to background: browsers clear to transparent
            canvas.paste((0, 0, 0, 0), box)
        elif before is not None:            # restore to previous
            canvas = before
    out = io.BytesIO()
    extra = {} if gif.loop is None else {"loop": gif.loop}
    shown[0].save(out, format="GIF", save_all=True, append_images=shown[1:], disposal=2,
                  duration=[f.delay_ms for f in gif.frames], **extra)
    return out.getvalue()
