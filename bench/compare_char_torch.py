#!/usr/bin/env python3
"""examples/char_rnn beside the same model trained in PyTorch, measured in one run.

Trains the LSTM or the transformer of examples/char_rnn with vkpack (the example's own
program), then the same model in PyTorch (Debian's python3-torch, CPU) on the same
data in the same order (vkpack's corpus split and its Philox shuffle, re-implemented
here), with the same hyperparameters, schedule and number of steps, and prints both
validation bits-per-character curves, then tokens/s of a training step of each
(vkpack_bench_graph's figure and PyTorch's, on this machine's cores). Initial values
are drawn from the same distributions, not copied. By hand, never in CI:

    /usr/bin/python3 bench/compare_char_torch.py --model lstm --epochs 2 --steps 400
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MASK32 = 0xFFFFFFFF


def philox4x32(counter, key):
    """Philox4x32-10 as core/rng.cpp computes it."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK32, p1 & MASK32, ((p0 >> 32) ^ c3 ^ k1) & MASK32, p0 & MASK32
        k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
    return [c0, c1, c2, c3]


class Rng:
    """vkp::Rng: a sequential stream over philox4x32 (key = seed, counter = (block, stream))."""

    def __init__(self, seed, stream=0):
        self.seed, self.stream, self.block, self.words = seed, stream, 0, []

    def next_u32(self):
        if not self.words:
            self.words = philox4x32([self.block & MASK32, self.block >> 32, self.stream & MASK32, self.stream >> 32],
                                    [self.seed & MASK32, self.seed >> 32])
            self.block += 1
        return self.words.pop(0)

    def next_u64(self):
        lo = self.next_u32()
        return (self.next_u32() << 32) | lo

    def below(self, n):
        limit = (2**64 - 1) - (2**64 - 1) % n
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


def permutation(n, rng):
    """vkp::dataflow::random_permutation: Fisher-Yates from the back."""
    order = list(range(n))
    for i in range(n, 1, -1):
        j = rng.below(i)
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def read_corpus(directory, separator="%", every=20):
    """vkp::dataflow::read_char_corpus: documents in file-name order, every 20th held out."""
    train, validation, documents = bytearray(), bytearray(), 0
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isfile(path) or name.endswith(".dat"):
            continue
        text = open(path, "rb").read()
        if not text or b"\0" in text:
            continue
        start, line = 0, 0
        docs = []
        while line < len(text):
            end = text.find(b"\n", line)
            end = len(text) if end < 0 else end + 1
            if text[line:end].rstrip(b"\n") == separator.encode():
                docs.append(text[start:end])
                start = end
            line = end
        if start < len(text):
            docs.append(text[start:])
        for doc in docs:
            documents += 1
            (validation if documents % every == 0 else train).extend(doc)
    vocab = sorted(set(train) | set(validation))
    index = np.full(256, -1, dtype=np.int64)
    index[vocab] = np.arange(len(vocab))
    return index[np.frombuffer(bytes(train), np.uint8)], index[np.frombuffer(bytes(validation), np.uint8)], len(vocab)


def windows(ids, length):
    count = (len(ids) - 1) // length
    x = np.stack([ids[i * length:(i + 1) * length] for i in range(count)])
    y = np.stack([ids[i * length + 1:(i + 1) * length + 1] for i in range(count)])
    return torch.from_numpy(x), torch.from_numpy(y)


def glorot_(w):
    """TensorFlow's glorot_uniform for a vkpack [in, out] matrix stored as PyTorch's [out, in]."""
    limit = math.sqrt(6.0 / (w.shape[0] + w.shape[1]))
    nn.init.uniform_(w, -limit, limit)


class Lstm(nn.Module):
    """examples/char_rnn's LSTM: TensorFlow's LSTMCell (gates i, j, f, o; forget_bias 1,
    as a constant on the f preactivation) on a 128-wide embedding, then a linear layer."""

    def __init__(self, vocab, hidden, forget_bias=1.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        self.kernel = nn.Parameter(torch.empty(2 * hidden, 4 * hidden))  # rows of x, then of h
        glorot_(self.kernel)
        self.bias = nn.Parameter(torch.zeros(4 * hidden))
        self.fc = nn.Linear(hidden, vocab)
        glorot_(self.fc.weight)
        nn.init.zeros_(self.fc.bias)
        self.hidden, self.forget_bias = hidden, forget_bias

    def forward(self, x):
        u = self.hidden
        e = self.embed(x)
        projected = e @ self.kernel[:u] + self.bias
        h = torch.zeros(x.shape[0], u)
        c = torch.zeros(x.shape[0], u)
        outputs = []
        for t in range(x.shape[1]):
            z = projected[:, t] + h @ self.kernel[u:]
            i, j, f, o = z.split(u, dim=1)
            c = torch.sigmoid(f + self.forget_bias) * c + torch.sigmoid(i) * torch.tanh(j)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        return self.fc(torch.stack(outputs, 1))


class Block(nn.Module):
    """A pre-norm block as vkp::graph::TransformerBlock builds it."""

    def __init__(self, c, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        for layer in (self.qkv, self.proj, self.fc1, self.fc2):
            glorot_(layer.weight)
            nn.init.zeros_(layer.bias)
        self.heads = heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(c // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        attended = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1) @ v
        x = x + self.proj(attended.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, vocab, c, heads, layers, length):
        super().__init__()
        self.embed = nn.Embedding(vocab, c)
        nn.init.uniform_(self.embed.weight, -0.1, 0.1)
        self.pos = nn.Parameter(torch.randn(length, c) * 0.02)
        self.blocks = nn.ModuleList(Block(c, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(c)
        self.fc = nn.Linear(c, vocab)
        glorot_(self.fc.weight)
        nn.init.zeros_(self.fc.bias)

    def forward(self, x):
        h = self.embed(x) + self.pos
        for block in self.blocks:
            h = block(h)
        return self.fc(self.ln(h))


def learning_rate(step, peak, warmup, total):
    """callbacks::WarmupCosineSchedule."""
    if step < warmup:
        return peak * (step + 1) / warmup
    return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / (total - warmup))))


def validation_bpc(model, vx, vy, batch):
    model.eval()
    total, batches = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(vx) - batch + 1, batch):
            logits = model(vx[start:start + batch])
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), vy[start:start + batch].reshape(-1)).item()
            batches += 1
    model.train()
    return total / batches / math.log(2)


def torch_run(args, vocab, tx, ty, vx, vy, steps):
    torch.manual_seed(args.seed)
    model = (Lstm(vocab, args.hidden) if args.model == "lstm" else
             Transformer(vocab, args.hidden, args.heads, args.layers, args.length))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    total = steps * args.epochs
    warmup = max(1, total // 50)
    rng = Rng(args.seed)
    curve, step, started = [], 0, time.time()
    for epoch in range(args.epochs):
        order = permutation(len(tx), rng)
        for s in range(steps):
            idx = order[s * args.batch:(s + 1) * args.batch]
            for group in opt.param_groups:
                group["lr"] = learning_rate(step, args.lr, warmup, max(total, warmup + 1))
            logits = model(tx[idx])
            loss = F.cross_entropy(logits.reshape(-1, vocab), ty[idx].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        curve.append(validation_bpc(model, vx, vy, args.batch))
        print(f"  PyTorch epoch {epoch + 1}: validation bpc {curve[-1]:.4f} ({time.time() - started:.0f} s)", flush=True)
    return curve, model


def torch_tokens_per_second(model, vocab, tx, ty, args, steps=10):
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x, y = tx[:args.batch], ty[:args.batch]
    for i in range(steps + 2):
        if i == 2:
            started = time.time()
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return args.batch * args.length * steps / (time.time() - started)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--model", choices=["lstm", "transformer"], default="lstm")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--steps", type=int, default=0, help="steps per epoch (0: a pass over the training text)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--length", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=0, help="0: the example's default (1 LSTM layer, 2 blocks)")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data", default="/usr/share/games/fortunes")
    p.add_argument("--logdir", default="/tmp/compare_char_torch")
    p.add_argument("--vkpack-log", default="",
                   help="read vkpack's curve from this finished run's stats.json (trained with these same options) "
                        "instead of training again")
    args = p.parse_args()
    if args.layers == 0:
        args.layers = 2 if args.model == "transformer" else 1
    torch.set_num_threads(os.cpu_count())
    train, validation, vocab = read_corpus(args.data)
    tx, ty = windows(train, args.length)
    vx, vy = windows(validation, args.length)
    steps = args.steps or len(tx) // args.batch
    print(f"{args.model}: {len(train)} training and {len(validation)} validation characters, {vocab} symbols, "
          f"{args.epochs} epochs of {steps} steps of {args.batch} x {args.length}")

    program = os.path.join(args.build, "examples/char_rnn/char_rnn")
    logdir = args.vkpack_log or os.path.join(args.logdir, args.model)
    command = [program, "--model", args.model, "--epochs", str(args.epochs), "--steps", str(steps), "--batch",
               str(args.batch), "--length", str(args.length), "--hidden", str(args.hidden), "--heads", str(args.heads),
               "--layers", str(args.layers), "--lr", str(args.lr), "--seed", str(args.seed), "--data", args.data,
               "--logdir", logdir]
    started = time.time()
    if not args.vkpack_log:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    vkpack_seconds = time.time() - started
    stats = json.load(open(os.path.join(logdir, "stats.json")))
    vkpack_curve = [entry["validation_bpc"] for entry in stats if "validation_bpc" in entry]
    print(f"  vkpack: {vkpack_seconds:.0f} s")

    started = time.time()
    torch_curve, _ = torch_run(args, vocab, tx, ty, vx, vy, steps)
    torch_seconds = time.time() - started

    print("\nepoch  vkpack bpc  PyTorch bpc  difference")
    for epoch, (a, b) in enumerate(zip(vkpack_curve, torch_curve), 1):
        print(f"{epoch:5d}  {a:10.4f}  {b:11.4f}  {a - b:+10.4f}")
    if not args.vkpack_log:
        print(f"training time: vkpack {vkpack_seconds:.0f} s, PyTorch {torch_seconds:.0f} s")

    bench = subprocess.run([os.path.join(args.build, "bench/vkpack_bench_graph"), f"--only={args.model}", "--steps=12"],
                           check=True, capture_output=True, text=True).stdout
    print(bench)
    vk_rate = float(re.search(r"([0-9.]+) tokens/s", bench).group(1))
    # vkpack_bench_graph measures the example's defaults: so does PyTorch here.
    defaults = argparse.Namespace(batch=32, length=64)
    fresh = Lstm(vocab, 128) if args.model == "lstm" else Transformer(vocab, 128, 4, 2, 64)
    dx, dy = windows(train, 64)
    torch_rate = torch_tokens_per_second(fresh, vocab, dx, dy, defaults)
    print(f"tokens/s at the example's defaults: vkpack {vk_rate:.0f}, PyTorch {torch_rate:.0f} "
          f"({torch.get_num_threads()} threads); vkpack / PyTorch = {vk_rate / torch_rate:.2f}")


if __name__ == "__main__":
    sys.exit(main())
