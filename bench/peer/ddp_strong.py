"""The strong peer: PyTorch DDP as a skilled Python user writes it, for the same training.

Same model, loss, Adam, batch per rank, linear lr rule and epochs as bench/peer/ddp_vae.py, but
the data path a careful user would write: each rank reads its own contiguous rows of the HDF5
file once, in one slab read, and keeps them in memory; every epoch it reshuffles them with a
permutation and slices batches with index_select (no DataLoader, no per-row reads); the loss is
summed on the device and read once per epoch (no `.item()` per batch); subnormal floats are
flushed to zero, as clustertrain does. Gradients go through DDP over gloo. Prints one JSON line
per epoch on rank 0.

  mpirun -np 2 python3 bench/peer/ddp_strong.py --data data/gw_train.h5 --epochs 2 --threads 1
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


def train(args):
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMIX_RANK", 0)))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", 1))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29534")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(args.seed)
    model = VaeMlp(args.length, args.hidden, args.latent)
    ddp = nn.parallel.DistributedDataParallel(Forward(model, args.beta))
    lr = args.lr * (args.batch * world) / args.base_batch
    optimizer = torch.optim.Adam(ddp.parameters(), lr=lr)
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
            loss = ddp(x, y, eps)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += loss.detach()
        mean_loss = total.item() / max(steps, 1)  # the one host read of the epoch
        seconds = time.perf_counter() - start
        if rank == 0:
            print(json.dumps({"epoch": epoch + 1, "train_loss": mean_loss, "steps": steps,
                              "samples_per_s": steps * args.batch * world / seconds, "epoch_seconds": seconds,
                              "threads": torch.get_num_threads(), "world_size": world}), flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_training_arguments(parser)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    train(args)


if __name__ == "__main__":
    main()
