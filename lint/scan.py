"""What a Python file does with models, read from its syntax tree: loads, quantization, generate calls, loops.

One pass over the tree in source order keeps, per scope, the expression each name was last bound to, so a
``quantization_config=bnb`` or ``**kwargs`` resolves to what the file assigned before the call. The result is a
:class:`Facts` record; the rules (:mod:`ecocompute.lint.rules`) only read it.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from dataclasses import dataclass, field
from typing import Any

from ecocompute.lint.values import UNKNOWN, BnbConfig, Evaluator, Kwargs, call_name, dotted

NOT_MODELS = ("Tokenizer", "Processor", "Config", "FeatureExtractor", "Dataset", "PeftModel", "Adapter")
BATCH_HINTS = ("batch", "chunk")
ELEMENT_WRAPPERS = frozenset({"enumerate", "tqdm", "zip", "reversed", "sorted", "list", "iter", "tuple"})
INDEX_LOOPS = frozenset({"range", "trange"})
ELEMENT_METHODS = frozenset({"tolist", "items", "values", "keys", "readlines", "splitlines", "split"})
INPUT_KWARGS = frozenset({"input_ids", "inputs", "attention_mask", "inputs_embeds", "text_inputs", "text"})
INT8_DEFAULT_THRESHOLD = 6.0  # bitsandbytes' default llm_int8_threshold (BitsAndBytesConfig's signature)


@dataclass(frozen=True)
class Quant:
    """A bitsandbytes quantization: ``bits`` 8 or 4, and the precision the dataset names it by.

    ``precision`` is ``int8`` (default threshold), ``int8-t0`` (threshold 0.0), ``nf4`` or ``fp4``; any other
    threshold is ``int8-t<value>``; None when the file does not say (a value the linter cannot evaluate).
    """

    bits: int
    precision: str | None


@dataclass(frozen=True)
class Load:
    """A model load (``from_pretrained`` or ``pipeline``) at ``line``:``column`` (1-based)."""

    line: int
    column: int
    end_line: int
    model_id: str | None
    quant: Quant | None
    quant_known: bool
    dtype: str | None
    target: str | None = None


@dataclass(frozen=True)
class Generate:
    """A ``.generate(...)`` call, or a call of a text-generation pipeline.

    ``loop_line`` is the line of the loop that feeds it one prompt per call (None outside such a loop);
    ``static_cache`` is True or None (cannot tell) when the call asks for a static cache, False when it does not.
    """

    line: int
    column: int
    end_line: int
    receiver: str | None
    static_cache: bool | None
    loop_line: int | None
    via_pipeline: bool
    load: Load | None = None


@dataclass
class Facts:
    """Everything the rules read about one file."""

    loads: list[Load] = field(default_factory=list)
    generates: list[Generate] = field(default_factory=list)
    compiles: bool = False  # torch.compile or a static cache set somewhere in the file


@dataclass
class _Loop:
    kind: str  # "elements" or "index"
    line: int
    tainted: set[str]
    index: set[str]


def _targets(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [n for elt in node.elts for n in _targets(elt)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    return []


def _hinted(expr: ast.expr | None) -> bool:
    if expr is None:
        return False
    names = [n.id for n in ast.walk(expr) if isinstance(n, ast.Name)]
    names += [n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute)]
    return any(h in name.lower() for name in names for h in BATCH_HINTS)


def _dtype(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    name = value.rsplit(".", 1)[-1].lower()
    return {"float16": "fp16", "half": "fp16", "fp16": "fp16", "bfloat16": "bf16", "bf16": "bf16"}.get(
        name, "fp32" if name in ("float32", "float", "fp32") else None
    )


def _int8_precision(threshold: Any) -> str | None:
    if threshold is None:
        return "int8"
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        return None
    if float(threshold) == INT8_DEFAULT_THRESHOLD:
        return "int8"
    return "int8-t0" if float(threshold) == 0.0 else f"int8-t{threshold:g}"


def quant_from_bnb(kw: Kwargs) -> tuple[Quant | None, bool]:
    """The quantization a ``BitsAndBytesConfig``'s (or a dict's) keywords ask for, and whether it is known."""
    l8, l4 = kw.get("load_in_8bit", False), kw.get("load_in_4bit", False)
    if l8 is True:
        return Quant(8, _int8_precision(kw.get("llm_int8_threshold"))), True
    if l4 is True:
        qtype = kw.get("bnb_4bit_quant_type", "fp4")
        return Quant(4, qtype if qtype in ("nf4", "fp4") else None), True
    if l8 is UNKNOWN or l4 is UNKNOWN:
        return None, False
    return None, True


def quant_from_kwargs(kw: Kwargs) -> tuple[Quant | None, bool]:
    """The quantization a ``from_pretrained`` call's keywords ask for, and whether the file says it fully."""
    qc = kw.get("quantization_config")
    if isinstance(qc, BnbConfig):
        return quant_from_bnb(qc.kwargs)
    if isinstance(qc, Kwargs):
        method = qc.get("quant_method", None)
        if method not in (None, "bitsandbytes", "bitsandbytes_8bit", "bitsandbytes_4bit"):
            return None, True
        return quant_from_bnb(qc)
    if qc is UNKNOWN:
        return None, False
    if qc is not None:
        return None, True
    return quant_from_bnb(Kwargs({k: v for k, v in kw.values.items() if k.startswith("load_in_")}, kw.complete))


class Scanner(ast.NodeVisitor):
    """One pass over a module in source order; fills :attr:`facts`."""

    def __init__(self) -> None:
        self.facts = Facts()
        self.scopes: list[dict[str, ast.expr | None]] = [{}]
        self.loops: list[_Loop] = []
        self.load_nodes: dict[int, Load] = {}

    # -- scopes and bindings -------------------------------------------------------------------------------
    @property
    def env(self) -> ChainMap[str, ast.expr | None]:
        """Names visible here: the innermost scope first."""
        return ChainMap(*reversed(self.scopes))

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        scope = self.scopes[-1]
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and value is not None:
            key = Evaluator(self.env).value(target.slice)
            old = self.env.get(target.value.id)
            if isinstance(key, str) and old is not None:  # cfg["load_in_8bit"] = True: a dict with one more key
                merged = ast.Dict(keys=[None, ast.Constant(key)], values=[old, value])
                scope[target.value.id] = merged
        else:
            for name in _targets(target):
                scope[name] = None
        for loop in self.loops:
            if value is not None and self._feeds(value, loop):
                loop.tainted.update(_targets(target))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)
            self._bind(target, node.value)
            if isinstance(target, ast.Name) and id(node.value) in self.load_nodes:
                self._name_load(node.value, target.id)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind(node.target, node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind(node.target, node.value)

    def _name_load(self, call: ast.expr, name: str) -> None:
        load = self.load_nodes[id(call)]
        index = self.facts.loads.index(load)
        named = Load(**{**load.__dict__, "target": name})
        self.facts.loads[index] = named
        self.load_nodes[id(call)] = named

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for default in [*node.args.defaults, *node.args.kw_defaults]:
            if default is not None:
                self.visit(default)
        scope: dict[str, ast.expr | None] = {a.arg: None for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        self.scopes.append(scope)
        saved, self.loops = self.loops, []
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            self.visit(stmt)
        self.loops = saved
        self.scopes.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self._function(node)
        self.scopes[-1][node.name] = None

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # noqa: N815

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(expr)
        self.scopes.append({})
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.scopes[-1][node.name] = None

    # -- loops ---------------------------------------------------------------------------------------------
    def _loop_kind(self, it: ast.expr, depth: int = 0) -> str | None:
        if _hinted(it) or depth > 4:
            return None
        if isinstance(it, ast.Name):
            bound = self.env.get(it.id)
            if isinstance(bound, ast.ListComp | ast.GeneratorExp) and self._slices(bound.elt):
                return None  # [prompts[i:i + 8] for i in ...]: a list of batches
            if isinstance(bound, ast.Call) and call_name(bound.func) not in ELEMENT_WRAPPERS | {"open"}:
                return self._loop_kind(bound, depth + 1) if call_name(bound.func) in INDEX_LOOPS else None
            return "elements"
        if isinstance(it, ast.Attribute | ast.List | ast.Tuple | ast.Set | ast.ListComp):
            return "elements"
        if isinstance(it, ast.Subscript):
            return None if isinstance(it.slice, ast.Slice) and self._slices(it) else "elements"
        if isinstance(it, ast.Call):
            name = call_name(it.func)
            if name in INDEX_LOOPS:
                return "index"
            if name in ELEMENT_WRAPPERS and it.args:
                kinds = {self._loop_kind(a, depth + 1) for a in it.args}
                return "elements" if "elements" in kinds else ("index" if "index" in kinds else None)
            if name == "open" or (isinstance(it.func, ast.Attribute) and name in ELEMENT_METHODS):
                return "elements"
        return None

    @staticmethod
    def _slices(expr: ast.expr) -> bool:
        return isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Slice)

    def _start_loop(self, target: ast.expr, it: ast.expr, line: int) -> None:
        kind = None if _hinted(target) else self._loop_kind(it)
        names = set(_targets(target))
        for name in names:
            self.scopes[-1][name] = None
        if kind == "index" and isinstance(target, ast.Tuple):
            kind = None
        if kind == "elements" and isinstance(it, ast.Call) and call_name(it.func) == "enumerate":
            first = _targets(target.elts[0]) if isinstance(target, ast.Tuple) and target.elts else []
            names -= set(first)  # the counter of enumerate(...) is not a prompt
        self.loops.append(
            _Loop(kind or "none", line, names if kind == "elements" else set(), names if kind == "index" else set())
        )

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self._start_loop(node.target, node.iter, node.lineno)
        for stmt in node.body:
            self.visit(stmt)
        self.loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For  # type: ignore[assignment]  # noqa: N815

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        self.scopes.append({})
        for gen in node.generators:
            self.visit(gen.iter)
            self._start_loop(gen.target, gen.iter, node.lineno)
            for cond in gen.ifs:
                self.visit(cond)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        for _ in node.generators:
            self.loops.pop()
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension  # noqa: N815

    def _feeds(self, expr: ast.expr, loop: _Loop) -> bool:
        """True when ``expr`` carries one element of the loop's prompts."""
        for node in ast.walk(expr):
            if isinstance(node, ast.Name) and node.id in loop.tainted:
                return True
            if (
                isinstance(node, ast.Subscript)
                and not isinstance(node.slice, ast.Slice)
                and any(isinstance(n, ast.Name) and n.id in loop.index for n in ast.walk(node.slice))
            ):
                return True
        return False

    def _fed_by_loop(self, call: ast.Call) -> int | None:
        inputs: list[ast.expr] = list(call.args)
        inputs += [kw.value for kw in call.keywords if kw.arg is None or kw.arg in INPUT_KWARGS]
        for loop in reversed(self.loops):
            if loop.kind != "none" and any(self._feeds(e, loop) for e in inputs):
                return loop.line
        return None

    # -- calls -----------------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        name = call_name(node.func)
        ev = Evaluator(self.env)
        if name == "compile" and dotted(node.func) in ("torch.compile", "compile"):
            self.facts.compiles = True
        for kw in node.keywords:
            if kw.arg == "cache_implementation" and ev.value(kw.value) == "static":
                self.facts.compiles = True
        if name == "from_pretrained" and isinstance(node.func, ast.Attribute):
            receiver = dotted(node.func.value) or ""
            if not any(word in receiver for word in NOT_MODELS):
                self._load(node, ev, node.args[0] if node.args else None, ev.kwargs(node.keywords))
        elif name == "pipeline":
            self._pipeline(node, ev)
        elif name == "generate" and isinstance(node.func, ast.Attribute):
            self._generate(node, ev, dotted(node.func.value), via_pipeline=False)
        elif isinstance(node.func, ast.Name) and self._is_pipeline(node.func.id):
            self._generate(node, ev, node.func.id, via_pipeline=True)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        if node.attr == "cache_implementation" and isinstance(node.ctx, ast.Store):
            self.facts.compiles = True  # model.generation_config.cache_implementation = ...

    def _is_pipeline(self, name: str) -> bool:
        bound = self.env.get(name)
        return isinstance(bound, ast.Call) and call_name(bound.func) == "pipeline"

    def _load(self, node: ast.Call, ev: Evaluator, model_expr: ast.expr | None, kw: Kwargs) -> None:
        if model_expr is None:
            model_expr = next((k.value for k in node.keywords if k.arg == "pretrained_model_name_or_path"), None)
        model_id = ev.value(model_expr)
        quant, known = quant_from_kwargs(kw)
        dtype_value = kw.get("torch_dtype", kw.get("dtype", None))
        load = Load(
            line=node.lineno,
            column=node.col_offset + 1,
            end_line=node.end_lineno or node.lineno,
            model_id=model_id if isinstance(model_id, str) else None,
            quant=quant,
            quant_known=known,
            dtype=_dtype(dtype_value),
        )
        self.facts.loads.append(load)
        self.load_nodes[id(node)] = load

    def _pipeline(self, node: ast.Call, ev: Evaluator) -> None:
        kw = ev.kwargs(node.keywords)
        task = ev.value(node.args[0]) if node.args else kw.get("task", None)
        if task not in ("text-generation", "text2text-generation", UNKNOWN):
            return
        model = next((k.value for k in node.keywords if k.arg == "model"), node.args[1] if len(node.args) > 1 else None)
        if not isinstance(ev.value(model), str):
            return  # a model object loaded elsewhere: that load is the one that counts
        inner = kw.get("model_kwargs", Kwargs())
        merged = (
            Kwargs({**kw.values, **inner.values}, kw.complete and inner.complete) if isinstance(inner, Kwargs) else kw
        )
        self._load(node, ev, model, merged)

    def _generate(self, node: ast.Call, ev: Evaluator, receiver: str | None, via_pipeline: bool) -> None:
        # only keywords written at the call count: a **inputs from a tokenizer holds tensors, not a cache choice
        kw = ev.kwargs([k for k in node.keywords if k.arg is not None]).values
        cache = kw.get("cache_implementation")
        static: bool | None = cache == "static" or (None if cache is UNKNOWN else False)
        if static is False and ("generation_config" in kw or "past_key_values" in kw):
            static = None  # a GenerationConfig may ask for a static cache; a StaticCache object may be passed
        self.facts.generates.append(
            Generate(
                line=node.lineno,
                column=node.col_offset + 1,
                end_line=node.end_lineno or node.lineno,
                receiver=receiver,
                static_cache=static,
                loop_line=self._fed_by_loop(node),
                via_pipeline=via_pipeline,
            )
        )


def _link(facts: Facts) -> Facts:
    """Attach to each generate call the load of its model.

    The last load bound to its receiver's name before it,
    or the file's only model load when the receiver names none.
    """
    linked = []
    for gen in facts.generates:
        root = (gen.receiver or "").split(".")[0]
        before = [ld for ld in facts.loads if ld.line <= gen.line]
        named = [ld for ld in before if ld.target == root]
        load = named[-1] if named else (facts.loads[0] if len(facts.loads) == 1 else None)
        linked.append(Generate(**{**gen.__dict__, "load": load}))
    facts.generates = linked
    return facts


def scan(tree: ast.Module) -> Facts:
    """The facts of one parsed module."""
    scanner = Scanner()
    scanner.visit(tree)
    return _link(scanner.facts)
