#!/usr/bin/env python3
"""The bundled example trained on three Vulkan drivers ends at the same place.

    drivers_agree.py DRIVERS_ENV PROGRAM WORKDIR TEST_IMAGES [example options...]

DRIVERS_ENV is the file scripts/setup-drivers writes (.drivers/env). PROGRAM
(fashion_mnist) trains with the given options, from the same seed, once on each of
lavapipe 22.3, Mesa 25's lavapipe and SwiftShader (VK_ICD_FILENAMES naming one), and
each run's last epoch must agree with lavapipe 22.3's within the tolerance below: its
training cost, its validation cost and its validation accuracy.

Within one driver a run is bitwise reproducible (the kill-and-resume tests hold it to
that); across drivers it is not, and cannot be: Vulkan requires add, subtract and
multiply to be correctly rounded but lets a driver contract a * b + c into one fused
rounding or not, and gives exp, log, pow, division and square root an error of a few
ulp (SPIR-V's precision table: exp and log 3 + 2|x| ulp, division 2.5 ulp), which
SwiftShader's Subzero, LLVM 15 and LLVM 19 each spend differently. So each operation's
result may differ by up to about 2^-21 in relative terms (8 ulp, covering the
transcendentals at the magnitudes a network produces). Those differences pass through
a step: the forward and backward passes go through at most D products or reductions
on any path (the MLP: 3 layers forward and back, D = 6; the convnet: two convolutions,
two batch norms and two FC layers, D = 12), each summing at most K terms (784 for the
MLP's first layer, 3136 for the convnet's first FC layer), whose relative error grows
at most as sqrt(K) for errors of random sign, so a step's gradients differ by at most
D * sqrt(K) * 2^-21 relative (8e-5 for the MLP). Adam turns a gradient into an update
whose relative error is the gradient's, and a step's change of the cost is that
update's effect, so each step moves the cost by at most that relative amount again;
the steps' errors are independent roundings of random sign, so over N steps they add
as sqrt(N). The costs must agree within
    tol = sqrt(N) * D * sqrt(K) * 2^-21        (relative)
(3.2e-4 for the MLP's 16 steps, 1.3e-3 for the convnet's), and the accuracy within
max(2 of the TEST_IMAGES, tol) (an image whose logits are closer than tol may change
class). A kernel that is wrong, rather than rounded otherwise, moves them by 1e-2 or more.

A control shows the test can fail: the same training from another seed (on lavapipe
22.3) must differ from the first by more than the tolerance on the costs.
"""
import json
import math
import os
import shutil
import subprocess
import sys

OP_ERROR = 2.0**-21
SHAPES = {"mlp": (6, 784), "conv": (12, 3136)}  # depth D and largest fan-in K, as above
DRIVERS = ("VKPACK_ICD_LAVAPIPE", "VKPACK_ICD_MESA25", "VKPACK_ICD_SWIFTSHADER")


def read_env(path):
    """The exports of setup-drivers' env file, with ${VAR} references expanded."""
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("export ") and "=" in line:
                name, value = line[len("export "):].split("=", 1)
                env[name] = value
    return env


def train(program, logdir, icd, ld_path, options):
    if os.path.exists(logdir):
        shutil.rmtree(logdir)
    env = dict(os.environ, VK_ICD_FILENAMES=icd, VKPACK_LOG_LEVEL="warn")
    env["LD_LIBRARY_PATH"] = ld_path + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    run = subprocess.run([program, "--logdir", logdir] + options, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{program} on {icd} exited with {run.returncode}:\n{run.stderr}\n{run.stdout}")
    with open(os.path.join(logdir, "stats.json")) as f:
        return json.load(f)[-1]


def relative(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    env_file, program, workdir, test_images, options = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
    model = options[options.index("--model") + 1] if "--model" in options else "mlp"
    depth, fan_in = SHAPES[model]
    drivers = read_env(env_file)
    ld_path = drivers.get("LD_LIBRARY_PATH", "").split("${", 1)[0].rstrip(":")
    missing = [d for d in DRIVERS if not os.path.exists(drivers.get(d, ""))]
    if missing:
        sys.exit(f"{env_file} names no ICD file for {', '.join(missing)}: run scripts/setup-drivers")
    runs = {d: train(program, os.path.join(workdir, d.lower()), drivers[d], ld_path, options) for d in DRIVERS}
    reference = runs[DRIVERS[0]]
    steps = reference["global_step"]
    tol = math.sqrt(steps) * depth * math.sqrt(fan_in) * OP_ERROR
    accuracy_tol = max(2 / test_images, tol)
    print(f"{steps} steps: tolerance {tol:.2e} relative on the costs, {accuracy_tol:.4f} on the accuracy")
    failures = []
    for d in DRIVERS[1:]:
        r = runs[d]
        if r["global_step"] != steps:
            failures.append(f"{d}: {r['global_step']} steps, lavapipe 22.3 {steps}")
        for key in ("cost", "validation_cost"):
            diff = relative(r[key], reference[key])
            print(f"{d} {key}: {r[key]:.7g} vs {reference[key]:.7g} ({diff:.2e})")
            if diff > tol:
                failures.append(f"{d}: {key} {r[key]} differs from lavapipe 22.3's {reference[key]} by {diff:.2e}")
        diff = abs(r["validation_accuracy"] - reference["validation_accuracy"])
        print(f"{d} validation_accuracy: {r['validation_accuracy']} vs {reference['validation_accuracy']}")
        if diff > accuracy_tol:
            failures.append(f"{d}: validation accuracy {r['validation_accuracy']} vs {reference['validation_accuracy']}")
    # The control: another seed must land outside the tolerance.
    # The example takes the last --seed given.
    other = train(program, os.path.join(workdir, "other_seed"), drivers[DRIVERS[0]], ld_path, options + ["--seed", "12345"])
    spread = max(relative(other[k], reference[k]) for k in ("cost", "validation_cost"))
    print(f"another seed: costs differ by {spread:.2e}")
    if spread <= tol:
        failures.append(f"another seed moves the costs by only {spread:.2e}, within the tolerance: the test cannot fail")
    if failures:
        sys.exit("\n".join(failures))
    print("the three drivers agree")


if __name__ == "__main__":
    main()
