"""The GPU step in Python with torch.compile(mode="reduce-overhead") (CUDA graphs through
Inductor): the same vae_mlp, loss and Adam as clustertrain's compute-only step, on rows in GPU
memory, at the given batch. Prints one JSON line. Needs a CUDA PyTorch with torch.compile.

  python3 bench/peer/compile_step.py --batch 128
"""
import argparse
import json
import statistics
import time

import torch

from ddp_vae import VaeMlp, vae_loss


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--compile", choices=["none", "reduce-overhead"], default="reduce-overhead")
    args = parser.parse_args()
    torch.manual_seed(1234)
    device = torch.device("cuda")
    model = VaeMlp(1024, [512, 256], 16).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)
    x = torch.randn(16, args.batch, 1024, device=device)
    eps = torch.randn(16, args.batch, 16, device=device)

    def step(xb, eb):
        loss = vae_loss(model, xb, xb, eb, 1e-3)
        loss.backward()
        return loss.detach()

    if args.compile != "none":
        step = torch.compile(step, mode=args.compile)
    times = []
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        step(x[i % 16], eps[i % 16])
        optimizer.step()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(json.dumps({"python_samples_per_s": args.batch / median, "step_ms": 1e3 * median, "batch": args.batch,
                      "compile": args.compile, "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
