"""The machine's single-precision matrix-multiply rate through the BLAS LibTorch uses, for the
distance between the training step and the physical limit. Prints one JSON line:
the VAE's widest layer (a batch of 128: 128x1024 by 1024x512) and a large square product.

  python3 bench/sgemm.py --threads 2
"""
import argparse
import json
import statistics
import time

import torch


def gflops(m, k, n, repeats):
    a, b = torch.randn(m, k), torch.randn(k, n)
    for _ in range(3):
        torch.mm(a, b)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2.0 * m * k * n / statistics.median(times) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(json.dumps({"threads": args.threads, "layer_gflops": gflops(128, 1024, 512, 200),
                      "square_gflops": gflops(2048, 2048, 2048, 10)}))


if __name__ == "__main__":
    main()
