#!/usr/bin/env python3
"""examples/resnet's training recipe in PyTorch on the CPU, to try variants in minutes.

The ResNet's 0.935 target on Fashion-MNIST costs hours of lavapipe time per run, so a
change of recipe (depth, width, schedule, augmentation, weight decay) is tried here
first: the same model (compare_torch.resnet), He initialization over fan-out, Momentum
0.9 with the example's schedule (lr, /10 from 50% and /100 from 75% of the epochs) or a
per-step cosine decay, weight decay on the kernels, pad-4 random crop and
horizontal flip, batch 128; the test accuracy after every epoch. By hand, never in CI:

    T=2 /usr/bin/python3 bench/resnet_recipe_torch.py DEPTH EPOCHS [--width K]
        [--sched step|cos] [--aug full|flip|none] [--wd W] [--lr L] [--steps N]

(T: threads.) vkpack's ResNet-8 matched this script's step-schedule result (0.9104 and
0.9119 after 8 epochs in vkpack, 0.9111 after 10 here).
"""
import argparse
import gzip
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import Unit  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"


def load(split):
    with gzip.open(f"{DATA}/{split}-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16)
    with gzip.open(f"{DATA}/{split}-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return torch.tensor(x.reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32), torch.tensor(y, dtype=torch.int64)


def resnet(depth, width):
    """compare_torch.resnet with `width` times the channels in every stage."""
    n, c = (depth - 2) // 6, 16 * width
    layers = [nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
    for stage in range(3):
        for k in range(n):
            increase = stage > 0 and k == 0
            layers.append(Unit(c, increase, stage == 0 and k == 0))
            c = c * 2 if increase else c
    layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10)]
    model = nn.Sequential(*layers)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    return model


def augment(x, kind, gen):
    b = x.shape[0]
    if kind == "full":  # pad 4 with zeros, crop 28 x 28 at a random offset
        padded = F.pad(x, (4, 4, 4, 4))
        dx, dy = torch.randint(0, 9, (b,), generator=gen), torch.randint(0, 9, (b,), generator=gen)
        x = torch.stack([padded[i, :, dy[i]:dy[i] + 28, dx[i]:dx[i] + 28] for i in range(b)])
    if kind in ("full", "flip"):
        flip = torch.rand(b, generator=gen) < 0.5
        x = torch.where(flip[:, None, None, None], x.flip(3), x)
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("depth", type=int)
    ap.add_argument("epochs", type=int)
    ap.add_argument("--width", type=int, default=1)
    ap.add_argument("--sched", choices=["step", "cos"], default="step")
    ap.add_argument("--aug", choices=["full", "flip", "none"], default="full")
    ap.add_argument("--wd", type=float, default=2e-4)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=0, help="steps per epoch (default: a pass over the train split)")
    args = ap.parse_args()
    torch.set_num_threads(int(os.environ.get("T", "2")))
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(2)
    x_train, y_train = load("train")
    x_test, y_test = load("t10k")
    model = resnet(args.depth, args.width)
    kernels = [p for p in model.parameters() if p.dim() >= 2]
    others = [p for p in model.parameters() if p.dim() < 2]
    # The example's regularize_cost(".*/W", l2_regularizer(wd)) adds wd * sum(w^2) / 2 over
    # the convolutions' and the linear layer's kernels: a gradient of wd * w.
    opt = torch.optim.SGD([{"params": kernels, "weight_decay": args.wd}, {"params": others, "weight_decay": 0}],
                          lr=args.lr, momentum=0.9)
    steps = args.steps or len(x_train) // args.batch
    total = steps * args.epochs

    def lr_at(step):
        if args.sched == "cos":
            return args.lr * 0.5 * (1 + math.cos(math.pi * step / total))
        epoch = step // steps
        return args.lr * (1 if epoch < args.epochs * 0.5 else 0.1 if epoch < args.epochs * 0.75 else 0.01)

    curve, step = [], 0
    for epoch in range(args.epochs):
        start = time.time()
        model.train()
        order = torch.randperm(len(x_train), generator=gen)
        for i in range(steps):
            idx = order[i * args.batch:(i + 1) * args.batch]
            for group in opt.param_groups:
                group["lr"] = lr_at(step)
            loss = F.cross_entropy(model(augment(x_train[idx], args.aug, gen) * 2 - 1), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
        model.eval()
        with torch.no_grad():
            correct = sum((model(x_test[i:i + 1000] * 2 - 1).argmax(1) == y_test[i:i + 1000]).sum().item()
                          for i in range(0, len(x_test), 1000))
        curve.append(correct / len(x_test))
        print(f"epoch {epoch + 1}: test accuracy {curve[-1]:.4f} ({time.time() - start:.0f} s)", flush=True)
    print(f"{vars(args)}: final {curve[-1]:.4f}, best {max(curve):.4f}; " + " ".join(f"{c:.4f}" for c in curve))


if __name__ == "__main__":
    main()
