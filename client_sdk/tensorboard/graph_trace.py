"""Model graph for the `model_graph` pane: trace a torch module (as TensorBoard's add_graph does) into nodes/edges."""

from __future__ import annotations

import warnings
from typing import Any

# TorchScript plumbing that TensorBoard's graph view hides: consumers are rewired to what these nodes consume.
PASS_THROUGH = frozenset({"prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::ListUnpack",
                          "prim::TupleUnpack", "prim::DictConstruct"})
MAX_ATTR = 120


def shape_text(sizes: Any) -> str | None:
    """"[64, 3, 32, 32]" for a list of ints (unknown dims as "?"), None when there is no shape."""
    if sizes is None:
        return None
    return "[" + ", ".join("?" if d is None or d < 0 else str(int(d)) for d in sizes) + "]"


def short(text: str) -> str:
    return text if len(text) <= MAX_ATTR else text[: MAX_ATTR - 1] + "…"


def _value_shape(value: Any) -> str | None:
    try:
        if value.isCompleteTensor():
            return shape_text(value.type().sizes())
    except RuntimeError:
        pass
    return None


def _module_name(module: Any, torch: Any) -> str:
    if isinstance(module, torch.jit.TracedModule):
        return module._name
    return getattr(module, "original_name", type(module).__name__)


def _trace(model: Any, args: Any, strict: bool, torch: Any) -> Any:
    is_function = isinstance(model, torch.jit.ScriptFunction)
    training = None if is_function else model.training
    if not is_function:
        model.train(False)  # like add_graph: dropout/batch-norm in eval form, restored afterwards
    try:
        with warnings.catch_warnings():
            # jit.trace is deprecated in favour of torch.export, yet it is what add_graph uses; TracerWarnings
            # (data-dependent control flow...) still reach the user.
            warnings.simplefilter("ignore", DeprecationWarning)
            return torch.jit.trace(model, args, strict=strict)
    finally:
        if training is not None:
            model.train(training)


def trace_model_graph(model: Any, input_to_model: Any = None, verbose: bool = False,
                      use_strict_trace: bool = True) -> dict:
    """Trace `model` on `input_to_model` with torch.jit.trace; nodes carry module scopes and output shapes.

    Raises ValueError when the model cannot be traced (the writer logs it instead of failing the run).
    """
    import torch  # lazily: the SDK works without torch

    if not isinstance(model, (torch.nn.Module, torch.jit.ScriptFunction)):
        raise ValueError(f"add_graph needs a torch.nn.Module, got {type(model).__name__}")
    if input_to_model is None:
        args: Any = ()
    elif isinstance(input_to_model, list):
        args = tuple(input_to_model)
    else:
        args = input_to_model
    name = type(model).__name__
    try:
        with torch.no_grad():
            traced = _trace(model, args, use_strict_trace, torch)
        graph = traced.graph
        torch._C._jit_pass_inline(graph)  # one flat graph whose nodes know their module scope
    except Exception as exc:  # the tracer raises RuntimeError, TypeError, AssertionError...
        raise ValueError(f"could not trace {name}: {type(exc).__name__}: {str(exc).strip()[:500]}") from None
    if verbose:
        print(graph)
    return _GraphBuilder(traced, model, torch).build(graph, name)


class _GraphBuilder:
    """One pass over the inlined graph, naming nodes the way TensorBoard's GraphDef does (scope/debugName)."""

    def __init__(self, traced: Any, model: Any, torch: Any) -> None:
        self.model = model
        self.root = _module_name(traced, torch)
        # "__module.features.0" -> "Conv2d[0]": module aliases in scope names, spelled as TensorBoard does.
        self.alias = {prefix: f"{_module_name(mod, torch)}[{prefix.split('.')[-1]}]"
                      for prefix, mod in getattr(traced, "named_modules", lambda prefix: [])(prefix="__module")}
        self.nodes: list[dict] = []
        self.id_of: dict[str, str] = {}             # TorchScript value name -> node id
        self.through: dict[str, list[str]] = {}     # value of a hidden node -> the values it consumed
        self.consts: dict[str, str] = {}            # value -> its constant text (for `attr`)
        self.attr_path: dict[str, list[str]] = {}   # value of a module GetAttr -> attribute path from self

    def scope(self, scope_name: str) -> str:
        parts = [self.alias.get(a, a.split(".")[-1]) for a in scope_name.split("/") if a]
        return "/".join([self.root, *parts])

    def module_scope(self, path: list[str]) -> str:
        prefixes = ["__module." + ".".join(path[: i + 1]) for i in range(len(path))]
        return "/".join([self.root, *(self.alias.get(p, p.split(".")[-1]) for p in prefixes)])

    def resolve(self, value: str, seen: set[str] | None = None) -> list[str]:
        """Node ids a value stands for: itself, or what a hidden pass-through node consumed (recursively)."""
        if value in self.id_of:
            return [self.id_of[value]]
        seen = seen or set()
        if value in seen or value not in self.through:
            return []
        seen.add(value)
        return [i for v in self.through[value] for i in self.resolve(v, seen)]

    def add(self, nid: str, label: str, op: str, scope: str, shape: str | None, inputs: list[str],
            attr: str = "") -> None:
        ids = list(dict.fromkeys(i for v in inputs for i in self.resolve(v)))
        self.nodes.append({"id": nid, "label": label, "op": op, "scope": scope, "shape": shape,
                           "inputs": ids, "attr": short(attr)})

    def const_args(self, values: list[str]) -> str:
        return ", ".join(self.consts[v] for v in values if v in self.consts)

    def build(self, graph: Any, name: str) -> dict:
        for value in graph.inputs():
            if value.type().kind() == "ClassType":
                self.attr_path[value.debugName()] = []
            elif value.uses():  # unused inputs are left out, as add_graph does
                nid = f"input/{value.debugName()}"
                self.id_of[value.debugName()] = nid
                self.add(nid, value.debugName(), "input", "", _value_shape(value), [])
        for node in graph.nodes():
            self.visit(node)
        for i, value in enumerate(graph.outputs()):
            self.add(f"output/output.{i + 1}", f"output.{i + 1}", "output", "", _value_shape(value),
                     [value.debugName()])
        return {"nodes": self.nodes, "name": name}

    def visit(self, node: Any) -> None:
        kind = node.kind()
        ins = [v.debugName() for v in node.inputs()]
        outs = list(node.outputs())
        if kind == "prim::GetAttr":
            self.get_attr(node, ins, outs[0])
            return
        if kind in PASS_THROUGH:
            for out in outs:
                self.through[out.debugName()] = ins
            if kind == "prim::Constant" and outs:
                self.consts[outs[0].debugName()] = _constant_text(node)
            elif kind == "prim::ListConstruct" and ins and all(v in self.consts for v in ins):
                self.consts[outs[0].debugName()] = "[" + self.const_args(ins) + "]"
            return
        scope = self.scope(node.scopeName())
        attr = self.const_args(ins)
        for out in outs:
            nid = f"{scope}/{out.debugName()}"
            self.id_of[out.debugName()] = nid
        for out in outs:
            self.add(self.id_of[out.debugName()], kind.split("::")[-1], kind, scope, _value_shape(out), ins, attr)

    def get_attr(self, node: Any, ins: list[str], out: Any) -> None:
        """Module attributes become scope (no node); tensors held by a module become `parameter` nodes."""
        parent = self.attr_path.get(ins[0]) if ins else None
        attr_name = node.s("name")
        if parent is None:
            return
        path = [*parent, attr_name]
        if out.type().kind() == "ClassType":
            self.attr_path[out.debugName()] = path
            return
        scope = self.module_scope(parent)
        target: Any = self.model
        for part in path:
            target = getattr(target, part, None)
        shape = shape_text(list(target.shape)) if hasattr(target, "shape") else _value_shape(out)
        nid = f"{scope}/{attr_name}/{out.debugName()}"
        self.id_of[out.debugName()] = nid
        self.add(nid, attr_name, "parameter", scope, shape, [], "")


def _constant_text(node: Any) -> str:
    if not node.attributeNames():
        return "None"
    try:
        return short(repr(node.output().toIValue()))
    except Exception:  # tensors and exotic constants: the kind is enough for a label
        return node.output().type().str()
