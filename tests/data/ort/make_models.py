"""Build small ONNX models (random weights) for profiling fixtures."""
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
from onnxruntime.quantization import quantize_dynamic, quantize_static, QuantType, CalibrationDataReader
rng = np.random.default_rng(0)
def init(name, shape, scale=0.1):
    return nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

def cnn():
    nodes, inits = [], []
    x, c = "input", 3
    for i, co in enumerate([16, 32, 64]):
        inits += [init(f"w{i}", (co, c, 3, 3)), init(f"b{i}", (co,))]
        nodes.append(h.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], name=f"/block{i}/conv/Conv", pads=[1,1,1,1]))
        nodes.append(h.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"/block{i}/act/Relu"))
        nodes.append(h.make_node("MaxPool", [f"r{i}"], [f"p{i}"], name=f"/block{i}/pool/MaxPool", kernel_shape=[2,2],
                                 strides=[2,2]))
        x, c = f"p{i}", co
    # depthwise + pointwise
    inits += [init("wd", (c, 1, 3, 3)), init("wp", (c, c, 1, 1))]
    nodes.append(h.make_node("Conv", [x, "wd"], ["dw"], name="/dw/Conv", group=c, pads=[1,1,1,1]))
    nodes.append(h.make_node("Conv", ["dw", "wp"], ["pw"], name="/pw/Conv"))
    nodes.append(h.make_node("Sigmoid", ["pw"], ["sg"], name="/gate/Sigmoid"))
    nodes.append(h.make_node("Mul", ["pw", "sg"], ["sw"], name="/gate/Mul"))
    nodes.append(h.make_node("Resize", ["sw", "", "scales"], ["up"], name="/up/Resize", mode="nearest"))
    inits.append(nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales"))
    nodes.append(h.make_node("GlobalAveragePool", ["up"], ["gap"], name="/head/GlobalAveragePool"))
    nodes.append(h.make_node("Flatten", ["gap"], ["fl"], name="/head/Flatten"))
    inits += [init("fcw", (c, 10)), init("fcb", (10,))]
    nodes.append(h.make_node("Gemm", ["fl", "fcw", "fcb"], ["logits"], name="/head/fc/Gemm"))
    nodes.append(h.make_node("Softmax", ["logits"], ["output"], name="/head/Softmax", axis=1))
    g = h.make_graph(nodes, "cnn", [h.make_tensor_value_info("input", T.FLOAT, [1, 3, 64, 64])],
                     [h.make_tensor_value_info("output", T.FLOAT, [1, 10])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="edgeprof-fixtures")

def tfm(d=64, seq=32, layers=2):
    nodes, inits = [], []
    x = "input"
    inits.append(nh.from_array(np.array([1, seq, 4, d // 4], np.int64), "hshape"))
    inits.append(nh.from_array(np.array([1, seq, d], np.int64), "oshape"))
    inits.append(nh.from_array(np.array([0.5], np.float32), "scale"))
    for j in range(layers):
        p = f"/layers.{j}"
        inits += [nh.from_array(np.ones(d, np.float32), f"g{j}"), nh.from_array(np.zeros(d, np.float32), f"be{j}")]
        nodes.append(h.make_node("LayerNormalization", [x, f"g{j}", f"be{j}"], [f"ln{j}"], name=f"{p}/norm/LayerNormalization",
                                 axis=-1))
        for k in "qkv":
            inits.append(init(f"w{k}{j}", (d, d)))
            nodes.append(h.make_node("MatMul", [f"ln{j}", f"w{k}{j}"], [f"{k}{j}"], name=f"{p}/attn/{k}_proj/MatMul"))
            nodes.append(h.make_node("Reshape", [f"{k}{j}", "hshape"], [f"{k}r{j}"], name=f"{p}/attn/{k}/Reshape"))
            perm = [0, 2, 3, 1] if k == "k" else [0, 2, 1, 3]
            nodes.append(h.make_node("Transpose", [f"{k}r{j}"], [f"{k}t{j}"], name=f"{p}/attn/{k}/Transpose", perm=perm))
        nodes.append(h.make_node("MatMul", [f"qt{j}", f"kt{j}"], [f"s{j}"], name=f"{p}/attn/scores/MatMul"))
        nodes.append(h.make_node("Mul", [f"s{j}", "scale"], [f"ss{j}"], name=f"{p}/attn/scale/Mul"))
        nodes.append(h.make_node("Softmax", [f"ss{j}"], [f"a{j}"], name=f"{p}/attn/Softmax", axis=-1))
        nodes.append(h.make_node("MatMul", [f"a{j}", f"vt{j}"], [f"o{j}"], name=f"{p}/attn/ctx/MatMul"))
        nodes.append(h.make_node("Transpose", [f"o{j}"], [f"ot{j}"], name=f"{p}/attn/out/Transpose", perm=[0, 2, 1, 3]))
        nodes.append(h.make_node("Reshape", [f"ot{j}", "oshape"], [f"or{j}"], name=f"{p}/attn/out/Reshape"))
        inits.append(init(f"wo{j}", (d, d)))
        nodes.append(h.make_node("MatMul", [f"or{j}", f"wo{j}"], [f"op{j}"], name=f"{p}/attn/o_proj/MatMul"))
        nodes.append(h.make_node("Add", [x, f"op{j}"], [f"h{j}"], name=f"{p}/residual/Add"))
        inits += [init(f"w1{j}", (d, 4 * d)), init(f"w2{j}", (4 * d, d))]
        nodes.append(h.make_node("MatMul", [f"h{j}", f"w1{j}"], [f"f1{j}"], name=f"{p}/mlp/fc1/MatMul"))
        nodes.append(h.make_node("Gelu", [f"f1{j}"], [f"ge{j}"], name=f"{p}/mlp/act/Gelu"))
        nodes.append(h.make_node("MatMul", [f"ge{j}", f"w2{j}"], [f"f2{j}"], name=f"{p}/mlp/fc2/MatMul"))
        nodes.append(h.make_node("Add", [f"h{j}", f"f2{j}"], [f"x{j}"], name=f"{p}/mlp/residual/Add"))
        x = f"x{j}"
    inits.append(nh.from_array(np.array([1], np.int64), "raxes"))
    nodes.append(h.make_node("ReduceMean", [x, "raxes"], ["output"], name="/pool/ReduceMean", keepdims=0))
    g = h.make_graph(nodes, "tfm", [h.make_tensor_value_info("input", T.FLOAT, [1, seq, d])],
                     [h.make_tensor_value_info("output", T.FLOAT, [1, d])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 20)], producer_name="edgeprof-fixtures")

for name, m in (("cnn", cnn()), ("tfm", tfm())):
    m.ir_version = 9
    onnx.checker.check_model(m)
    onnx.save(m, f"{name}.onnx")
quantize_dynamic("tfm.onnx", "tfm_int8.onnx", weight_type=QuantType.QInt8)
class R(CalibrationDataReader):
    def __init__(self): self.i = 0
    def get_next(self):
        self.i += 1
        return {"input": rng.standard_normal((1, 3, 64, 64)).astype(np.float32)} if self.i <= 4 else None
quantize_static("cnn.onnx", "cnn_int8.onnx", R(),
                quant_format=__import__("onnxruntime.quantization", fromlist=["QuantFormat"]).QuantFormat.QOperator)
print("ok")

# the *_mixed models: one op replaced by Hardmax, which the OpenVINO provider leaves to the CPU provider
m = onnx.load("cnn.onnx")
nodes = list(m.graph.node)
i = [n.name for n in nodes].index("/gate/Sigmoid")
nodes[i] = h.make_node("Hardmax", ["pw"], ["sg"], name="/gate/Hardmax", axis=1)
del m.graph.node[:]
m.graph.node.extend(nodes)
onnx.checker.check_model(m)
onnx.save(m, "cnn_mixed.onnx")
m = onnx.load("tfm.onnx")
nodes = list(m.graph.node)
i = [n.name for n in nodes].index("/layers.0/attn/Softmax")
nodes[i] = h.make_node("Hardmax", ["ss0"], ["a0"], name="/layers.0/attn/Hardmax", axis=-1)
del m.graph.node[:]
m.graph.node.extend(nodes)
onnx.checker.check_model(m)
onnx.save(m, "tfm_mixed.onnx")
