"""The machine's single-precision matrix-multiply rate through the BLAS LibTorch uses, for the
distance between the training step and the physical limit. Prints one JSON line:
  layer_gflops     the VAE's widest layer (a batch of 128: 128x1024 by 1024x512), repeated;
  square_gflops    a 2048-cube product, repeated (the BLAS at its best);
  products_ms      the matrix products of one vae_mlp training step (forward x W^T for every
                   layer, backward's g^T x for every weight and g W for every layer but the
                   first), each on its own tensors, back to back in the step's order: the step's
                   matrix work with nothing else, its lower bound through this BLAS;
  products_gflops  their FLOPs over that time.

  python3 bench/sgemm.py --threads 2 [--batch 128 --length 1024 --hidden 512 256 --latent 16]
"""
import argparse
import json
import statistics
import time

import torch


def median_seconds(run, repeats, warmup=3):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def gflops(m, k, n, repeats):
    a, b = torch.randn(m, k), torch.randn(k, n)
    return 2.0 * m * k * n / median_seconds(lambda: torch.mm(a, b), repeats) / 1e9


def step_products(batch, length, hidden, latent):
    """The products of a vae_mlp step, as closures on tensors of their own, and their FLOPs."""
    widths = [length] + hidden + [2 * latent]
    layers = [(i, o, n > 0) for n, (i, o) in enumerate(zip(widths, widths[1:]))]  # no input gradient first
    widths = [latent] + hidden[::-1] + [length]
    layers += [(i, o, True) for i, o in zip(widths, widths[1:])]
    forward, backward, flops = [], [], 0
    for i, o, input_grad in layers:
        x, w, b, g = torch.randn(batch, i), torch.randn(o, i), torch.randn(o), torch.randn(batch, o)
        forward.append(lambda x=x, w=w, b=b: torch.addmm(b, x, w.t()))
        backward.insert(0, lambda g=g, x=x: torch.mm(g.t(), x))
        flops += 4 * batch * i * o
        if input_grad:
            backward.insert(1, lambda g=g, w=w: torch.mm(g, w))
            flops += 2 * batch * i * o
    return forward + backward, flops


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--hidden", type=int, nargs="+", default=[512, 256])
    parser.add_argument("--latent", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    products, flops = step_products(args.batch, args.length, args.hidden, args.latent)
    # First, so that processes started together (bench/run.sh at 2 ranks) measure it side by side.
    seconds = median_seconds(lambda: [p() for p in products], 300, warmup=20)
    print(json.dumps({"threads": args.threads, "products_ms": 1e3 * seconds, "products_gflops": flops / seconds / 1e9,
                      "products_gflop": flops / 1e9, "layer_gflops": gflops(128, 1024, 512, 200),
                      "square_gflops": gflops(2048, 2048, 2048, 10)}))


if __name__ == "__main__":
    main()
