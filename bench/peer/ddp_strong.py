"""The strong peer: PyTorch DDP as a skilled Python user writes it, for the same training.

Same model, loss, Adam, batch per rank, linear lr rule and epochs as bench/peer/ddp_vae.py, but
the data path a careful user would write: each rank reads its own contiguous rows of the HDF5
file once, in one slab read, and keeps them in memory; every epoch it reshuffles them with a
permutation and slices batches with index_select (no DataLoader, no per-row reads); the loss is
summed on the device and read once per epoch (no `.item()` per batch); subnormal floats are
flushed to zero, as clustertrain does. Gradients go through DDP over gloo. Prints one JSON line
per epoch on rank 0.

What PyTorch 2.x adds, for the best peer a skilled user would run: --fused (Adam's fused CPU
kernel, torch >= 2.4) and --compile (torch.compile of the DDP module: Inductor fuses the
elementwise work, DDP's optimizer splits the graph at bucket boundaries; compiled in epoch 1,
so time the later epochs). --bf16 runs the forward under torch.autocast("cpu", bfloat16), as
clustertrain's train.precision=bf16 does. --model vae_conv1d trains clustertrain's
convolutional VAE instead.

  mpirun -np 2 python3 bench/peer/ddp_strong.py --data data/gw_train.h5 --epochs 2 --threads 1
  mpirun -np 2 .venv-torch/bin/python3 bench/peer/ddp_strong.py --threads 1 --fused --compile
"""
import argparse
import json
import os
import time

import h5py
import torch
import torch.distributed as dist
from torch import nn

from ddp_vae import Forward, VaeMlp, add_training_arguments
from reference_models import VaeConv1d


class ConvForward(nn.Module):
    """vae_conv1d's loss, with the noise passed in as for the MLP (clustertrain's forward)."""

    def __init__(self, model, beta):
        super().__init__()
        self.model, self.beta = model, beta

    def forward(self, x, target, eps):
        m = self.model
        mu, logvar = m.to_latent(m.encoder(x.unsqueeze(1)).flatten(1)).chunk(2, dim=-1)
        z = mu + eps * torch.exp(0.5 * logvar)
        recon = m.decoder(torch.relu(m.from_latent(z)).view(x.shape[0], *m.shape)).squeeze(1)
        mse = (recon - target).pow(2).mean(dim=1)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
        return mse.mean() + self.beta * kl.mean()


def make_forward(args):
    if args.model == "vae_conv1d":
        return ConvForward(VaeConv1d([args.length], args.channels, args.kernel_size, args.stride, args.latent), args.beta)
    return Forward(VaeMlp(args.length, args.hidden, args.latent), args.beta)


def train(args):
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMIX_RANK", 0)))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", 1))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29534")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(args.seed)
    ddp = nn.parallel.DistributedDataParallel(make_forward(args))
    lr = args.lr * (args.batch * world) / args.base_batch
    optimizer = torch.optim.Adam(ddp.parameters(), lr=lr, **({"fused": True} if args.fused else {}))
    step_loss = torch.compile(ddp) if args.compile else ddp
    with h5py.File(args.data, "r") as f:  # this rank's rows, one slab read each
        rows = f[args.input_key].shape[0]
        begin, end = rows * rank // world, rows * (rank + 1) // world
        x_all = torch.from_numpy(f[args.input_key][begin:end])
        y_all = torch.from_numpy(f[args.target_key][begin:end])
    steps = (end - begin) // args.batch
    shuffle = torch.Generator().manual_seed(args.seed + rank)
    for epoch in range(args.epochs):
        start = time.perf_counter()
        order = torch.randperm(end - begin, generator=shuffle)
        total = torch.zeros(())
        for step in range(steps):
            index = order[step * args.batch:(step + 1) * args.batch]
            x, y = x_all.index_select(0, index), y_all.index_select(0, index)
            eps = torch.randn(args.batch, args.latent)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.bf16):
                loss = step_loss(x, y, eps)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        mean_loss = total.item() / max(steps, 1)  # the one host read of the epoch
        seconds = time.perf_counter() - start
        if rank == 0:
            print(json.dumps({"epoch": epoch + 1, "train_loss": mean_loss, "steps": steps,
                              "samples_per_s": steps * args.batch * world / seconds, "epoch_seconds": seconds,
                              "threads": torch.get_num_threads(), "world_size": world, "model": args.model,
                              "fused": args.fused, "compile": args.compile, "bf16": args.bf16,
                              "torch": torch.__version__}), flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_training_arguments(parser)
    parser.add_argument("--model", choices=["vae_mlp", "vae_conv1d"], default="vae_mlp")
    parser.add_argument("--channels", type=int, nargs="+", default=[16, 32, 64], help="vae_conv1d")
    parser.add_argument("--kernel-size", type=int, default=7, help="vae_conv1d")
    parser.add_argument("--stride", type=int, default=2, help="vae_conv1d")
    parser.add_argument("--fused", action="store_true", help="Adam's fused kernel (PyTorch >= 2.4 on the CPU)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the DDP module (PyTorch 2.x)")
    parser.add_argument("--bf16", action="store_true", help="the forward under bf16 autocast")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    train(args)


if __name__ == "__main__":
    main()
