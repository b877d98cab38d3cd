"""One run event as each receiver wants it: Slack (text + attachment fields), Discord, ntfy, or generic JSON."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

FORMATS = ("slack", "discord", "ntfy", "json")
COLORS = {"crashed": "#cf222e", "failed": "#cf222e", "nan": "#9a6700", "stalled": "#9a6700", "alert": "#9a6700",
          "rule": "#9a6700", "finished": "#1a7f37"}


def split_target(target: str) -> tuple[str, str]:
    """("format", url) of a --notify value: `ntfy:https://...` names the format; else the host implies it."""
    head, sep, rest = target.partition(":")
    if sep and head in FORMATS and "://" in rest:
        return head, rest
    host = (urlsplit(target).hostname or "").lower()
    if host == "hooks.slack.com":
        return "slack", target
    if host in ("discord.com", "discordapp.com") or host.endswith(".discord.com"):
        return "discord", target
    if host.startswith("ntfy.") or host == "ntfy.sh":
        return "ntfy", target
    return "json", target


def event(kind: str, env: str, title: str, fields: dict[str, str], link: str | None, key: str) -> dict[str, Any]:
    """The format-free event kept in the outbox: delivered as each receiver wants it."""
    text = f"{title}" + (f" <{link}|open>" if link else "")
    return {"event": kind, "run": env, "title": title, "text": text, "fields": fields, "url": link, "key": key}


def request(fmt: str, ev: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    """The body and headers to POST for one event."""
    fields = [{"title": k, "value": v, "short": len(v) < 40} for k, v in ev["fields"].items()]
    plain = ev["title"] + (f"\n{ev['url']}" if ev.get("url") else "")
    if fmt == "ntfy":
        headers = {"Content-Type": "text/plain; charset=utf-8", "Title": _latin1(ev["title"]), "Tags": ev["event"]}
        if ev.get("url"):
            headers["Click"] = ev["url"]
        body = "\n".join([ev["title"], *[f"{f['title']}: {f['value']}" for f in fields]])
        return body.encode(), headers
    if fmt == "discord":
        embed: dict[str, Any] = {"title": ev["title"][:256], "fields": [
            {"name": f["title"], "value": f["value"][:1024] or "-", "inline": f["short"]} for f in fields][:25]}
        if ev.get("url"):
            embed["url"] = ev["url"]
        body_obj: dict[str, Any] = {"content": plain[:2000], "embeds": [embed]}
    else:
        attachment: dict[str, Any] = {"color": COLORS.get(ev["event"], "#656d76"), "fields": fields,
                                      "fallback": plain}
        if ev.get("url"):
            attachment["title"], attachment["title_link"] = ev["run"], ev["url"]
        body_obj = {"text": ev["text"], "attachments": [attachment]}
        if fmt == "json":  # Slack's shape plus the event itself, for receivers of our own
            body_obj.update(event=ev["event"], run=ev["run"], title=ev["title"], url=ev.get("url"),
                            fields=ev["fields"], id=ev["key"])
    return json.dumps(body_obj).encode(), {"Content-Type": "application/json"}


def _latin1(text: str) -> str:
    """HTTP header values are Latin-1."""
    return text.encode("latin-1", "replace").decode("latin-1")
