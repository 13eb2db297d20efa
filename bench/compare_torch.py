#!/usr/bin/env python3
"""vkpack's training steps beside PyTorch's on the CPU, measured in one run.

Runs build/bench/vkpack_bench_graph for the MLP, the convnet, examples/resnet's ResNet
and examples/gan's conditional DCGAN (samples/s and the share of device time per kernel
family), then the same models and steps in PyTorch (Debian's python3-torch) on this
machine's cores, and prints samples/s side by side with the ratio vkpack / PyTorch.
By hand, never in CI, on a quiet machine (after `apt-get install python3-torch`):

    /usr/bin/python3 bench/compare_torch.py [--build build] [--steps 20] [--depth 14]
                                            [--only mlp,convnet,resnet,dcgan] [--repeat N]

--repeat N measures both N times in turn (vkpack, then PyTorch, then vkpack again...) and
prints each round and the median of the ratios: on a shared machine one round can be off
by 2x either way.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def convnet():
    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]
    return nn.Sequential(*block(1, 32), *block(32, 64), nn.Flatten(), nn.Linear(7 * 7 * 64, 128), nn.ReLU(),
                         nn.Linear(128, 10))


class Unit(nn.Module):
    """A pre-activation residual unit as examples/resnet builds it."""

    def __init__(self, cin, increase, first):
        super().__init__()
        cout = cin * 2 if increase else cin
        self.first, self.increase, self.pad = first, increase, cin // 2
        self.preact = nn.BatchNorm2d(cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=2 if increase else 1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)

    def forward(self, x):
        b1 = x if self.first else F.relu(self.preact(x))
        c2 = self.conv2(F.relu(self.bn1(self.conv1(b1))))
        shortcut = x
        if self.increase:
            shortcut = F.pad(F.avg_pool2d(x, 2), (0, 0, 0, 0, self.pad, self.pad))
        return c2 + shortcut


def resnet(depth):
    n = (depth - 2) // 6
    layers = [nn.Conv2d(1, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    channels = 16
    for stage in range(3):
        for k in range(n):
            increase = stage > 0 and k == 0
            layers.append(Unit(channels, increase, stage == 0 and k == 0))
            if increase:
                channels *= 2
    layers += [nn.BatchNorm2d(channels), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10)]
    return nn.Sequential(*layers)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(110, 7 * 7 * 64, bias=False)
        self.bn0 = nn.BatchNorm1d(7 * 7 * 64)
        self.deconv0 = nn.ConvTranspose2d(64, 32, 5, stride=2, padding=2, output_padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.deconv1 = nn.ConvTranspose2d(32, 1, 5, stride=2, padding=2, output_padding=1)

    def forward(self, z, onehot):
        t = F.relu(self.bn0(self.fc(torch.cat([z, onehot], 1)))).view(-1, 64, 7, 7)
        return torch.sigmoid(self.deconv1(F.relu(self.bn1(self.deconv0(t)))))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(11, 32, 5, stride=2, padding=2)
        self.conv1 = nn.Conv2d(32, 64, 5, stride=2, padding=2, bias=False)
        self.bn = nn.BatchNorm2d(64)
        self.fc = nn.Linear(7 * 7 * 64, 1)

    def forward(self, image, onehot):
        classes = onehot.view(-1, 10, 1, 1).expand(-1, 10, 28, 28)
        t = F.leaky_relu(self.conv0(torch.cat([image, classes], 1)), 0.2)
        t = F.leaky_relu(self.bn(self.conv1(t)), 0.2)
        return self.fc(t.flatten(1))


def seconds_per_step(step, steps):
    for _ in range(3):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def classifier_step(model, optimizer, shape, batch):
    x, y = torch.rand(batch, *shape), torch.randint(0, 10, (batch,))

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    return step


def dcgan_step(batch):
    g, d = Generator(), Discriminator()
    g_opt = torch.optim.Adam(g.parameters(), 2e-4, betas=(0.5, 0.999))
    d_opt = torch.optim.Adam(d.parameters(), 2e-4, betas=(0.5, 0.999))
    image, z = torch.rand(batch, 1, 28, 28), torch.rand(batch, 100) * 2 - 1
    onehot = F.one_hot(torch.randint(0, 10, (batch,)), 10).float()
    ones, zeros = torch.ones(batch, 1), torch.zeros(batch, 1)

    def step():  # the discriminator's update, then the generator's through the updated one
        d_opt.zero_grad()
        d_loss = (F.binary_cross_entropy_with_logits(d(image, onehot), ones) +
                  F.binary_cross_entropy_with_logits(d(g(z, onehot).detach(), onehot), zeros))
        d_loss.backward()
        d_opt.step()
        g_opt.zero_grad()
        F.binary_cross_entropy_with_logits(d(g(z, onehot), onehot), ones).backward()
        g_opt.step()
    return step


def vkpack_rates(build, steps, depth, only):
    program = os.path.join(build, "bench", "vkpack_bench_graph")
    out = subprocess.run([program, f"--steps={steps}", f"--depth={depth}", "--only=" + ",".join(only)],
                         check=True, capture_output=True, text=True).stdout
    print(out)
    # float32 steps only: the mixed-precision lines name the same models.
    lines = "\n".join(line for line in out.splitlines() if "in mixed precision" not in line)
    rates = re.findall(r"^(\S+).*?, batch (\d+): [\d.]+ ms/step, (\d+) samples/s", lines, re.M)
    names = {"MLP": "mlp", "convnet": "convnet", "conditional": "dcgan"}
    return {names.get(first, "resnet" if first.startswith("ResNet") else first): float(rate)
            for first, _, rate in rates}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--depth", type=int, default=14)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--only", default="mlp,convnet,resnet,dcgan")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    only = args.only.split(",")

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    heavy = max(2, args.steps // 4)  # as vkpack_bench_graph does for the examples' models
    models = {
        "mlp": (128, args.steps, lambda: classifier_step(m := mlp(), torch.optim.SGD(m.parameters(), 0.01), (784,), 128)),
        "convnet": (128, args.steps,
                    lambda: classifier_step(m := convnet(), torch.optim.SGD(m.parameters(), 0.01, momentum=0.9),
                                            (1, 28, 28), 128)),
        "resnet": (128, heavy,
                   lambda: classifier_step(m := resnet(args.depth),
                                           torch.optim.SGD(m.parameters(), 0.1, momentum=0.9, weight_decay=2e-4),
                                           (1, 28, 28), 128)),
        "dcgan": (64, heavy, lambda: dcgan_step(64)),
    }
    unknown = [name for name in only if name not in models]
    if unknown:
        parser.error(f"--only: no model {', '.join(unknown)} (models: {', '.join(models)})")
    ratios = {name: [] for name in only}
    for round_ in range(args.repeat):
        ours = vkpack_rates(args.build, args.steps, args.depth, only)
        print(f"round {round_ + 1}: PyTorch {torch.__version__} on the CPU, {torch.get_num_threads()} threads; "
              "vkpack on the device above")
        print(f"{'model':<10} {'batch':>5} {'vkpack samples/s':>17} {'PyTorch samples/s':>18} {'vkpack/PyTorch':>15}")
        for name in only:
            batch, steps, make = models[name]
            theirs = batch / seconds_per_step(make(), steps)
            mine = ours.get(name, float("nan"))
            ratios[name].append(mine / theirs)
            label = f"ResNet-{args.depth}" if name == "resnet" else name
            print(f"{label:<10} {batch:>5} {mine:>17.0f} {theirs:>18.0f} {mine / theirs:>15.2f}")
    if args.repeat > 1:
        print("median vkpack/PyTorch over the rounds: " +
              ", ".join(f"{name} {statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})" for name, r in ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
