"""The peer: what clustertrain's users ran before, PyTorch DistributedDataParallel in Python.

Trains the same vae_mlp (same sizes, Adam, batch per rank, linear lr rule, epochs) on the same
HDF5 file as `clustertrain train`, launched by the same mpirun, with the seeds' data path: a
worker-safe h5py Dataset read one row per __getitem__, a DataLoader and a DistributedSampler,
and gradients averaged by DDP over gloo. Prints one JSON line per epoch on rank 0.

  mpirun -np 2 python3 bench/peer/ddp_vae.py --data data/gw_train.h5 --epochs 2 --threads 1 --workers 0
  python3 bench/peer/ddp_vae.py --compute-only --threads 2     (the step alone, tensors in memory)
"""
import argparse
import json
import os
import statistics
import sys
import time

import h5py
import torch
import torch.distributed as dist
from torch import nn

# clustertrain's vae_mlp in PyTorch, the one replica the tests check model.pt against.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
from reference_models import VaeMlp  # noqa: E402


def vae_loss(model, x, target, eps, beta):
    """clustertrain's loss: MSE(recon, target) + beta * KL, both averaged over the batch."""
    mu, logvar = model.encoder(x).chunk(2, dim=-1)
    recon = model.decoder(mu + eps * torch.exp(0.5 * logvar))
    mse = (recon - target).pow(2).mean(dim=1)
    kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(dim=1)
    return mse.mean() + beta * kl.mean()


class Waveforms(torch.utils.data.Dataset):
    """The seeds' worker-safe reader: each process (or DataLoader worker) opens the file itself
    on first use and reads one row per item."""

    def __init__(self, path, input_key, target_key):
        self.path, self.input_key, self.target_key = path, input_key, target_key
        with h5py.File(path, "r") as f:
            self.rows = f[input_key].shape[0]
        self.file = None

    def __len__(self):
        return self.rows

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        return torch.from_numpy(self.file[self.input_key][i]), torch.from_numpy(self.file[self.target_key][i])


class Forward(nn.Module):
    """DDP wraps a module whose forward returns the loss."""

    def __init__(self, model, beta):
        super().__init__()
        self.model, self.beta = model, beta

    def forward(self, x, target, eps):
        return vae_loss(self.model, x, target, eps, self.beta)


def train(args):
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMIX_RANK", 0)))
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", 1))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(args.seed)
    model = VaeMlp(args.length, args.hidden, args.latent)
    ddp = nn.parallel.DistributedDataParallel(Forward(model, args.beta))
    lr = args.lr * (args.batch * world) / args.base_batch  # the linear rule, as clustertrain's
    optimizer = torch.optim.Adam(ddp.parameters(), lr=lr)
    data = Waveforms(args.data, args.input_key, args.target_key)
    sampler = torch.utils.data.distributed.DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True,
                                                              seed=args.seed, drop_last=True)
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, sampler=sampler, num_workers=args.workers,
                                         drop_last=True, persistent_workers=args.workers > 0)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        total, steps = 0.0, 0
        for x, y in loader:
            eps = torch.randn(x.shape[0], args.latent)
            loss = ddp(x, y, eps)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()  # the seeds' host sync per batch, kept: it is what they ran
            steps += 1
        seconds = time.perf_counter() - start
        if rank == 0:
            print(json.dumps({"epoch": epoch + 1, "train_loss": total / max(steps, 1), "steps": steps,
                              "samples_per_s": steps * args.batch * world / seconds, "epoch_seconds": seconds,
                              "workers": args.workers, "threads": torch.get_num_threads(), "world_size": world}),
                  flush=True)
    dist.destroy_process_group()


def compute_only(args):
    """The step on training rows already in memory (16 batches of rows drawn across the file,
    cycled, as clustertrain's `bench step` does): no data loading, no communication."""
    torch.manual_seed(args.seed)
    model = VaeMlp(args.length, args.hidden, args.latent)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    with h5py.File(args.data, "r") as f:
        x_all, y_all = torch.from_numpy(f[args.input_key][:]), torch.from_numpy(f[args.target_key][:])
    pool = min(16, x_all.shape[0] // args.batch)
    rows = torch.randperm(x_all.shape[0], generator=torch.Generator().manual_seed(args.seed))[: pool * args.batch]
    x = x_all.index_select(0, rows).view(pool, args.batch, -1)
    y = y_all.index_select(0, rows).view(pool, args.batch, -1)
    eps = torch.randn(pool, args.batch, args.latent)
    times = []
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        loss = vae_loss(model, x[i % pool], y[i % pool], eps[i % pool], args.beta)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i >= args.warmup:
            times.append(time.perf_counter() - start)
    step = statistics.median(times)
    print(json.dumps({"compute_only_samples_per_s": args.batch / step, "step_ms": 1e3 * step,
                      "threads": torch.get_num_threads()}), flush=True)


def add_training_arguments(parser):
    """The data, model and training options both DDP peers share (clustertrain's demo values)."""
    parser.add_argument("--data", default="data/gw_train.h5")
    parser.add_argument("--input-key", default="input")
    parser.add_argument("--target-key", default="target")
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--hidden", type=int, nargs="+", default=[512, 256])
    parser.add_argument("--latent", type=int, default=16)
    parser.add_argument("--beta", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=128, help="per rank")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--base-batch", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--threads", type=int, required=True, help="intra-op threads per rank (clustertrain's)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_training_arguments(parser)
    parser.add_argument("--workers", type=int, default=0, help="DataLoader workers per rank")
    parser.add_argument("--compute-only", action="store_true")
    parser.add_argument("--steps", type=int, default=100, help="timed steps, with --compute-only")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first, with --compute-only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    compute_only(args) if args.compute_only else train(args)


if __name__ == "__main__":
    main()
