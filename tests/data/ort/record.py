"""How the ONNX Runtime profiles here were recorded (once, on a 2-core x86-64 Linux machine; not run by the tests).

    python record.py CPUExecutionProvider          # onnxruntime 1.32.0 (pip install onnxruntime)
    python record.py OpenVINOExecutionProvider     # onnxruntime-openvino 1.24.1, in a separate environment

Each launch is a fresh process (a new session) with SessionOptions.enable_profiling, 10 runs of one fixed input;
launches of all models and thread counts interleaved. The models come from make_models.py (random weights; the
*_mixed models replace one op by Hardmax, which the OpenVINO provider leaves to the CPU provider).
"""
import gzip
import os
import shutil
import subprocess
import sys

CODE = r'''
import sys, numpy as np, onnxruntime as ort
model, threads, runs, prefix, provider = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
so = ort.SessionOptions(); so.enable_profiling = True; so.profile_file_prefix = prefix; so.intra_op_num_threads = threads
s = ort.InferenceSession(model, so,
                         providers=[provider] + (["CPUExecutionProvider"] if provider != "CPUExecutionProvider" else []))
inp = s.get_inputs()[0]
x = np.random.default_rng(1).standard_normal([d if isinstance(d, int) else 1 for d in inp.shape]).astype(np.float32)
for _ in range(runs):
    s.run(None, {inp.name: x})
print(s.end_profiling())
'''
provider = sys.argv[1]
if provider == "CPUExecutionProvider":
    models, threads, launches, tag = ["cnn", "cnn_int8", "tfm", "tfm_int8"], [1, 2], 3, "cpu"
else:
    models, threads, launches, tag = ["cnn", "cnn_mixed", "tfm_mixed"], [1], 2, "ov"
for launch in range(1, launches + 1):
    for t in threads:
        for m in models:
            out = subprocess.run([sys.executable, "-c", CODE, f"{m}.onnx", str(t), "10", "tmp_profile", provider],
                                 check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            name = f"{m}_{tag}_t{t}_l{launch}.ort.json"
            if (m, t, launch) == ("cnn", 1, 1) and tag == "cpu":
                shutil.move(out, name)  # one plain file; the rest gzip-compressed
            else:
                with open(out, "rb") as f, open(name + ".gz", "wb") as g:
                    g.write(gzip.compress(f.read(), mtime=0))
                os.remove(out)
