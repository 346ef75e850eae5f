"""A small decoder-only GPT training step, ember vs torch in one run.

    python bench/gpt.py [--threads N]

Model: vocab 65 (characters), d_model 256, 4 layers, 4 heads, context 128, batch 16; token and
position embeddings, pre-norm blocks (LayerNorm, causal self-attention, LayerNorm, GELU MLP
4x), final LayerNorm and a linear head; cross-entropy on next-token targets; AdamW.
Two attention variants:
  manual  q @ k^T * scale, masked_fill with the causal mask, softmax, @ v
  sdpa    F.scaled_dot_product_attention(q, k, v, is_causal=True)
"""
import argparse
import math
import os
import sys

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)  # before NumPy loads its BLAS, which reads them once

import numpy as np  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench._harness import compare, report, set_threads  # noqa: E402

VOCAB, D_MODEL, LAYERS, HEADS, CONTEXT, BATCH = 65, 256, 4, 4, 128, 16


def _model(lib, sdpa):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.register_buffer("causal", lib.ones(CONTEXT, CONTEXT, dtype=lib.bool)
                                 .triu(1), persistent=False)

        def forward(self, x):
            batch, steps, _ = x.shape
            q, k, v = (t.view(batch, steps, HEADS, D_MODEL // HEADS).transpose(1, 2)
                       for t in self.qkv(x).chunk(3, -1))
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.shape[-1]))
                scores = scores.masked_fill(self.causal[:steps, :steps], float("-inf"))
                y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(batch, steps, D_MODEL))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D_MODEL)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(D_MODEL)
            self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(),
                                     nn.Linear(4 * D_MODEL, D_MODEL))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, D_MODEL)
            self.positions = nn.Embedding(CONTEXT, D_MODEL)
            self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB)

        def forward(self, idx):
            positions = lib.arange(idx.shape[1])
            x = self.tokens(idx) + self.positions(positions)
            return self.head(self.ln(self.blocks(x)))

    return GPT()


def _workload(sdpa):
    def make(lib):
        lib.manual_seed(0)
        model = _model(lib, sdpa)
        optimizer = lib.optim.AdamW(model.parameters(), lr=3e-4)
        data = np.random.default_rng(0).integers(0, VOCAB, (BATCH, CONTEXT + 1))
        inputs = lib.from_numpy(data[:, :-1].copy())
        targets = lib.from_numpy(data[:, 1:].copy())

        def step():
            optimizer.zero_grad()
            logits = model(inputs)
            loss = lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB),
                                                   targets.reshape(-1))
            loss.backward()
            optimizer.step()
        return step
    return make


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads, both libraries")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    set_threads(THREADS)
    results = [compare(f"GPT step, manual attention ({args.threads} thr)", _workload(False),
                       repeats=args.repeats, warmup=1),
               compare(f"GPT step, F.scaled_dot_product_attention ({args.threads} thr)",
                       _workload(True), repeats=args.repeats, warmup=1)]
    report(results, path="bench/results/gpt.json")


if __name__ == "__main__":
    main()
