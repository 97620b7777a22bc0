"""Record the LLM fixture: a tiny decoder with a static KV cache (mutable buffers), exported to one .pte with
two methods, ``prefill`` (8 tokens) and ``decode`` (1 token), portable and XNNPACK; then profiled by the
ExecuTorch runtime for two generations of a prompt and 64 decode steps each, into one ETDump per build.

    python tools/recipes/llm_kv_decoder.py OUT_DIR [--steps 64] [--generations 2]

Needs the `run` extra (torch + executorch). The tests read the recorded files without torch.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from torch import nn

VOCAB, D, HEADS, MAX_SEQ, PROMPT = 128, 64, 4, 160, 8


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.ff1, self.ff2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.head = nn.Linear(D, VOCAB)
        hd = D // HEADS
        self.register_buffer("k_cache", torch.zeros(1, HEADS, MAX_SEQ, hd))
        self.register_buffer("v_cache", torch.zeros(1, HEADS, MAX_SEQ, hd))

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        b, t = tokens.shape
        hd = D // HEADS
        x = self.emb(tokens)
        q, k, v = self.qkv(x).split(D, dim=-1)
        q = q.view(b, t, HEADS, hd).transpose(1, 2)
        k = k.view(b, t, HEADS, hd).transpose(1, 2)
        v = v.view(b, t, HEADS, hd).transpose(1, 2)
        pos = input_pos + torch.arange(t)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v)
        mask = torch.arange(MAX_SEQ).unsqueeze(0) <= pos.unsqueeze(1)          # (t, MAX_SEQ): keys up to each query
        att = (q @ self.k_cache.transpose(-1, -2)) / (hd ** 0.5)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ self.v_cache).transpose(1, 2).reshape(b, t, D)
        x = x + self.proj(y)
        x = x + self.ff2(torch.relu(self.ff1(x)))
        return self.head(x[:, -1])


def export(out: Path, xnnpack: bool) -> Path:
    from executorch.exir import to_edge_transform_and_lower

    torch.manual_seed(0)
    m = TinyDecoder().eval().requires_grad_(False)
    eps = {
        "prefill": torch.export.export(m, (torch.zeros(1, PROMPT, dtype=torch.long), torch.zeros(1, dtype=torch.long))),
        "decode": torch.export.export(m, (torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, dtype=torch.long))),
    }
    partitioner = []
    if xnnpack:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        partitioner = [XnnpackPartitioner()]
    prog = to_edge_transform_and_lower(eps, partitioner=partitioner).to_executorch()
    p = out / f"llm_kv_{'xnn' if xnnpack else 'portable'}.pte"
    p.write_bytes(prog.buffer)
    return p


def profile(pte: Path, steps: int, generations: int) -> dict:
    from executorch.runtime import Runtime

    program = Runtime.get().load_program(str(pte), enable_etdump=True, debug_buffer_size=0)
    prefill, decode = program.load_method("prefill"), program.load_method("decode")
    order = []
    torch.manual_seed(1)
    for g in range(generations):
        tok = torch.randint(0, VOCAB, (1, PROMPT))
        logits = prefill.execute([tok, torch.tensor([0])])[0]
        order.append({"method": "prefill", "position": 0, "generation": g})
        for s in range(steps):
            nxt = logits.argmax(-1).reshape(1, 1)
            logits = decode.execute([nxt, torch.tensor([PROMPT + s])])[0]
            order.append({"method": "decode", "position": PROMPT + s, "generation": g})
    et = pte.with_suffix(f".G{generations}S{steps}.etdp")
    program.write_etdump_result_to_file(str(et), str(et.with_suffix(".debug.bin")))
    et.with_suffix(".debug.bin").unlink(missing_ok=True)
    et.with_suffix(".runs.json").write_text(json.dumps(order))
    return {"etdump": str(et), "runs": len(order)}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--generations", type=int, default=2)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for x in (False, True):
        pte = export(out, x)
        print(pte, profile(pte, a.steps, a.generations))
