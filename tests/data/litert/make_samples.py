"""The LiteRT op-profiling outputs here are ILLUSTRATIVE: benchmark_model (which writes them) is not on PyPI and
the ai-edge-litert package has no op profiler, so they were written by this script in the exact layout of
TensorFlow Lite's StatsCalculator / ProfileSummarizer (tensorflow/core/util/stats_calculator.cc,
tensorflow/lite/profiling/profile_summarizer.cc: tab-separated fields right-aligned to fixed widths, node names
"[<output tensors>]:<node index>", delegate operators "Delegate/<op>:<k>"), for the real models beside it: the
node types, tensor names, node indices and the XNNPACK delegate's partitions are those ai-edge-litert 2.3 reports
for cnn.tflite and tfm.tflite. The times are invented (fixed numbers, below).

    python make_samples.py    # needs ai-edge-litert (the models' op lists)
"""
from ai_edge_litert.interpreter import Interpreter

W = {"type": 24, "start": 17, "first": 9, "avg": 9, "pct": 8, "cdf": 8, "mem": 10, "times": 9}
US = {"CONV_2D": 61, "DEPTHWISE_CONV_2D": 9, "MAX_POOL_2D": 7, "LOGISTIC": 4, "MUL": 2, "RESHAPE": 1, "TILE": 11,
      "MEAN": 6, "FULLY_CONNECTED": 3, "SOFTMAX": 2}


def ops(model):
    it = Interpreter(model_path=model)
    it.allocate_tensors()
    names = {t["index"]: t["name"] for t in it.get_tensor_details()}
    return [(o["index"], o["op_name"], "[" + ", ".join(names[i] for i in o["outputs"]) + "]") for o in it._get_ops_details()]


def field(v, w, pct=False):
    s = f"{v:.3f}" if isinstance(v, float) else str(v)
    return "\t" + (s + "%" if pct else s).rjust(w - (1 if pct else 0))


def table(title, rows, total_us, start_col=True):
    """rows: (type, start_ms, first_ms, avg_ms, times, name)"""
    out = ["============================== " + title + " ==============================",
           "".join("\t" + h.rjust(W[k]) for k, h in [("type", "[node type]"), *([("start", "[start]")] if start_col else []),
                                                     ("first", "[first]"), ("avg", "[avg ms]"), ("pct", "[%]"),
                                                     ("cdf", "[cdf%]"), ("mem", "[mem KB]"), ("times", "[times called]")])
           + "\t[Name]"]
    cdf = 0.0
    for t, start, first, avg, times, name in rows:
        pct = avg * times * 1000 * 100 / total_us
        cdf += pct
        out.append(field(t, W["type"]) + (field(start, W["start"]) if start_col else "") + field(first, W["first"])
                   + field(avg, W["avg"]) + field(pct, W["pct"], True) + field(cdf, W["cdf"], True)
                   + field(0.0, W["mem"]) + field(times, W["times"]) + "\t" + name)
    return [*out, ""]


def csv_table(title, rows, total_us):
    out = ["============================== " + title + " ==============================",
           "node type, start, first, avg_ms, %, cdf%, mem KB, times called, name"]
    cdf = 0.0
    for t, start, first, avg, times, name in rows:
        pct = avg * times * 1000 * 100 / total_us
        cdf += pct
        out.append(f"{t}, {start:.3f}, {first:.3f}, {avg:.3f}, {pct:.3f}%, {cdf:.3f}%, 0.000, {times}, {name}")
    return [*out, ""]


def summary(rows, total_us, runs):
    return [f"Timings (microseconds): count={runs} first={total_us + 40} curr={total_us - 3} min={total_us - 21} "
            f"max={total_us + 57} avg={total_us:g} std=14", "Memory (bytes): count=0", f"{len(rows)} nodes observed", ""]


def laid(items):
    """(type, avg µs, times, name) in run order → rows with start and first."""
    rows, t = [], 0
    for typ, us, times, name in items:
        rows.append((typ, t / 1000, (us + 5) / 1000, us / 1000, times, name))
        t += us * times
    return rows, t


def init_section(csv=False):
    items = [("ModifyGraphWithDelegate", 812, 1, "ModifyGraphWithDelegate/0"), ("AllocateTensors", 96, 1, "AllocateTensors/0")]
    rows, total = laid(items)
    return ["Profiling Info for Benchmark Initialization:", *(csv_table if csv else table)("Run Order", rows, total),
            *summary(rows, total, 1)]


cnn = ops("cnn.tflite")
# the XNNPACK delegate's three partitions (nodes 0-10, 12, 14-17) and the two TILEs it leaves to the CPU
by_index = {i: (op, name) for i, op, name in cnn}
plan = [18, 11, 19, 13, 20]
internal = {18: [("Convolution (NHWC, F32) IGEMM", 58), ("Max Pooling (NHWC, F32)", 6), ("Convolution (NHWC, F32) IGEMM", 49),
                 ("Max Pooling (NHWC, F32)", 3), ("Convolution (NHWC, F32) IGEMM", 41), ("Max Pooling (NHWC, F32)", 2),
                 ("Convolution (NHWC, F32) DWConv", 5), ("Convolution (NHWC, F32) GEMM", 7), ("Sigmoid (NC, F32)", 3),
                 ("Multiply (ND, F32)", 1), ("Copy (NC, X32)", 1)],
            19: [("Copy (NC, X32)", 1)],
            20: [("Copy (NC, X32)", 2), ("Mean (ND, F32)", 5), ("Fully Connected (NC, F32) GEMM", 2), ("Softmax (NC, F32)", 1)]}
items = []
for i in plan:
    op, name = by_index[i]
    us = sum(u for _, u in internal[i]) + 4 if op == "DELEGATE" else US[op]
    items.append(("TfLiteXNNPackDelegate" if op == "DELEGATE" else op, us, 1, f"{name}:{i}"))
rows, total = laid(items)
# the delegate's operators on the same time base as the nodes: each inside its call (2 µs after the call starts)
d_rows, k = [], 0
call_start = {i: r[1] for i, r in zip(plan, rows)}
for part in plan:
    t = call_start[part] * 1000 + 2
    for n, u in internal.get(part, []):
        d_rows.append((n, t / 1000, (u + 1) / 1000, u / 1000, 1, f"Delegate/{n}:{k}"))
        t += u
        k += 1
d_total = sum(r[3] * 1000 for r in d_rows)
by_time = sorted(rows, key=lambda r: -r[3])
log = ["INFO: Loaded model cnn.tflite", "INFO: Created TensorFlow Lite XNNPACK delegate for CPU.",
       "INFO: Explicitly applied XNNPACK delegate, and the model graph will be partially executed by the delegate w/ 3 "
       "delegate kernels.",
       "INFO: The input model file size (MB): 0.121152",
       "INFO: Inference timings in us: Init: 2541, First inference: 1512, Warmup (avg): 640.3, Inference (avg): "
       f"{total + 21}", "INFO: ", *init_section(), "", "Operator-wise Profiling Info for Regular Benchmark Runs:",
       *table("Run Order", rows, total), *table("Top by Computation Time", by_time, total),
       *summary(rows, total, 50), "Delegate internal: ", *table("Run Order", d_rows, d_total),
       *summary(d_rows, d_total, 50)]
with open("cnn_xnnpack_benchmark.log", "w") as out:
    out.write("\n".join(log) + "\n")

# the CPU kernels only (--use_xnnpack=false), written by --op_profiling_output_mode=csv
items = [(op, US[op], 1, f"{name}:{i}") for i, op, name in cnn if op != "DELEGATE"]
rows, total = laid(items)
csv = [*init_section(csv=True)[:1], "Operator-wise Profiling Info for Regular Benchmark Runs:",
       *csv_table("Run Order", rows, total), *summary(rows, total, 100)]
with open("cnn_cpu_ops.csv", "w") as out:
    out.write("\n".join(csv) + "\n")

# an older release: no [start] column, the delegate's operators in the same table (DelegateOpInvoke)
tfm = ops("tfm.tflite")
kind = {"FULLY_CONNECTED": ("Fully Connected (NC, F32) GEMM", 9), "BATCH_MATMUL": ("Batch Matrix Multiply (NC, F32)", 6),
        "SOFTMAX": ("Softmax (NC, F32)", 3), "GELU": ("GELU (NC, F32)", 4), "TRANSPOSE": ("Transpose (ND, X32)", 2),
        "RESHAPE": ("Copy (NC, X32)", 1), "MEAN": ("Mean (ND, F32)", 2), "ADD": ("Add (ND, F32)", 1),
        "MUL": ("Multiply (ND, F32)", 1), "SQUARED_DIFFERENCE": ("Squared Difference (ND, F32)", 1),
        "RSQRT": ("Reciprocal Square Root (NC, F32)", 1), "NEG": ("Negate (NC, F32)", 1)}
d_items = [(kind[op][0], kind[op][1], 1, f"Delegate/{kind[op][0]}:{k}") for k, (i, op, _) in enumerate(
    [x for x in tfm if x[1] != "DELEGATE"])]
call = next(x for x in tfm if x[1] == "DELEGATE")
call_us = sum(u for _, u, _, _ in d_items) + 6
rows = [("TfLiteXNNPackDelegate", 0.0, (call_us + 9) / 1000, call_us / 1000, 1, f"{call[2]}:{call[0]}")]
old = []
t = 0
for _typ, us, _times, name in d_items:  # delegate operators interleave the run order, inside the call
    old.append(("DelegateOpInvoke", t / 1000, (us + 1) / 1000, us / 1000, 1, name))
    t += us
log = ["STARTING!", "Inference timings in us: Init: 3310, First inference: 2120, Warmup (avg): 905.5, Inference (avg): "
       f"{call_us + 12}", "Operator-wise Profiling Info for Regular Benchmark Runs:",
       *table("Run Order", [*rows[:1], *old], call_us, start_col=False), *summary(rows, call_us, 20)]
with open("tfm_xnnpack_old_release.log", "w") as out:
    out.write("\n".join(log) + "\n")
