"""W&B-style run API: `paneboard.init/log/finish`, config, summary and media objects over paneboard.Client."""

from .artifact import Artifact
from .media import Audio, Histogram, Html, Image, Object3D, Table, Video
from .run import Run

__all__ = ["Artifact", "Audio", "Histogram", "Html", "Image", "Object3D", "Run", "Table", "Video"]
