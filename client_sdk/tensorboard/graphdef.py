"""TensorBoard GraphDef (torch's add_graph) → the `model_graph` pane's node list, with a small protobuf reader."""

from __future__ import annotations

from collections.abc import Iterator

# TorchScript plumbing hidden from the view, as client_sdk/tensorboard/graph_trace.py does; consumers are rewired through it.
PASS_THROUGH = frozenset({"prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::ListUnpack",
                          "prim::TupleUnpack", "prim::DictConstruct"})
MAX_ATTR = 120


class GraphDefError(ValueError):
    """The bytes are not a GraphDef this reader understands."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise GraphDefError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise GraphDefError("varint too long")


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of one message; length-delimited values are bytes, varints ints."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
            yield field, wire, value
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise GraphDefError("truncated field")
            yield field, wire, data[pos:pos + size]
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise GraphDefError(f"unsupported wire type {wire}")


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _shape(data: bytes) -> str:
    """TensorShapeProto: dim (2) = {size (1), name (2)}; unknown_rank (3)."""
    dims: list[str] = []
    for field, wire, value in _fields(data):
        if field == 3 and wire == 0 and value:
            return "?"
        if field == 2 and wire == 2:
            size = 0
            for f, w, v in _fields(value):
                if f == 1 and w == 0:
                    size = _signed(v)
            dims.append("?" if size < 0 else str(size))
    return "[" + ", ".join(dims) + "]"


def _attr(data: bytes) -> tuple[str | None, list[str]]:
    """AttrValue: s (2) as text, list (1) → its shapes (7); other values are not written by add_graph."""
    text, shapes = None, []
    for field, wire, value in _fields(data):
        if field == 2 and wire == 2:
            text = value.decode("utf-8", "replace")
        elif field == 1 and wire == 2:
            shapes += [_shape(v) for f, w, v in _fields(value) if f == 7 and w == 2]
    return text, shapes


def _node(data: bytes) -> dict:
    """NodeDef: name (1), op (2), input (3), attr (5: map entries key 1 / value 2)."""
    node = {"name": "", "op": "", "input": [], "attr": "", "shapes": []}
    for field, wire, value in _fields(data):
        if wire != 2:
            continue
        if field == 1:
            node["name"] = value.decode("utf-8", "replace")
        elif field == 2:
            node["op"] = value.decode("utf-8", "replace")
        elif field == 3:
            node["input"].append(value.decode("utf-8", "replace"))
        elif field == 5:
            key, attr = "", b""
            for f, w, v in _fields(value):
                if f == 1 and w == 2:
                    key = v.decode("utf-8", "replace")
                elif f == 2 and w == 2:
                    attr = v
            text, shapes = _attr(attr)
            if key == "attr" and text is not None:
                node["attr"] = text
            elif key == "_output_shapes":
                node["shapes"] = shapes
    return node


def parse_graphdef(data: bytes) -> list[dict]:
    """The raw NodeDefs of a serialized GraphDef (node is field 1)."""
    try:
        return [_node(v) for f, w, v in _fields(bytes(data)) if f == 1 and w == 2]
    except GraphDefError:
        raise
    except (IndexError, UnicodeError) as exc:
        raise GraphDefError(f"not a GraphDef: {exc}") from None


def _short(text: str) -> str:
    return text if len(text) <= MAX_ATTR else text[: MAX_ATTR - 1] + "…"


def _constant(attr: str) -> str:
    """add_graph writes a constant's attributes as "{ value : 1}" (quotes replaced by spaces)."""
    inner = attr.strip().removeprefix("{").removesuffix("}").strip()
    if inner.startswith("value :"):
        return inner[len("value :"):].strip()
    return inner or "None"


def graph_from_graphdef(data: bytes) -> dict:
    """The pane dict {"nodes": [...], "name": root module} from an add_graph GraphDef (Event.graph_def bytes)."""
    raw = parse_graphdef(data)
    through: dict[str, list[str]] = {}
    consts: dict[str, str] = {}
    kept: list[dict] = []
    for n in raw:
        if n["op"] in PASS_THROUGH:
            through[n["name"]] = n["input"]
            if n["op"] == "prim::Constant":
                consts[n["name"]] = _constant(n["attr"])
            elif n["op"] == "prim::ListConstruct" and n["input"] and all(i in consts for i in n["input"]):
                consts[n["name"]] = "[" + ", ".join(consts[i] for i in n["input"]) + "]"
        else:
            kept.append(n)
    known = {n["name"] for n in kept}

    def resolve(name: str, seen: set[str]) -> list[str]:
        if name in known:
            return [name]
        if name in seen or name not in through:
            return []  # e.g. a GetAttr's module input, which add_graph never writes as a node
        seen.add(name)
        return [i for v in through[name] for i in resolve(v, seen)]

    nodes, roots = [], []
    for n in kept:
        name, op = n["name"], n["op"]
        parts = name.split("/")
        if op == "IO Node":
            op = "output" if parts[0] == "output" else "input"
            scope, label, attr = "", parts[-1], ""
        elif op in ("prim::GetAttr", "Parameter"):
            # Named "<module scope>/<attr>/<value>": the tensor belongs to the module two levels up.
            scope = "/".join(parts[:-2]) if len(parts) > 2 else "/".join(parts[:-1])
            label = parts[-2] if len(parts) > 2 else parts[-1]
            op, attr = "parameter", ""
        else:
            scope, label = "/".join(parts[:-1]), op.split("::")[-1]
            attr = ", ".join(consts[i] for i in n["input"] if i in consts)
            roots.append(parts[0])
        inputs = list(dict.fromkeys(i for v in n["input"] for i in resolve(v, set())))
        nodes.append({"id": name, "label": label, "op": op, "scope": scope,
                      "shape": n["shapes"][0] if n["shapes"] else None, "inputs": inputs, "attr": _short(attr)})
    name = max(set(roots), key=roots.count) if roots else "model"
    return {"nodes": nodes, "name": name}
