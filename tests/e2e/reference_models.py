"""The built-in models written in PyTorch, attribute for attribute, so that clustertrain's model.pt
loads into them with load_state_dict(strict=True) and their forward passes can be compared."""
import torch
from torch import nn


class VaeMlp(nn.Module):
    def __init__(self, length, hidden, latent):
        super().__init__()
        enc, width = [], length
        for h in hidden:
            enc += [nn.Linear(width, h), nn.ReLU()]
            width = h
        enc.append(nn.Linear(width, 2 * latent))
        dec, width = [], latent
        for h in reversed(hidden):
            dec += [nn.Linear(width, h), nn.ReLU()]
            width = h
        dec.append(nn.Linear(width, length))
        self.encoder, self.decoder = nn.Sequential(*enc), nn.Sequential(*dec)

    def forward(self, x):
        mu, logvar = self.encoder(x).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        return self.decoder(z), mu, logvar


class VaeConv1d(nn.Module):
    def __init__(self, row_dims, channels, kernel_size, stride, latent):
        super().__init__()
        self.in_channels = row_dims[0] if len(row_dims) == 2 else 1
        k, s, p = kernel_size, stride, kernel_size // 2
        lengths = [row_dims[-1]]
        for _ in channels:
            lengths.append((lengths[-1] + 2 * p - k) // s + 1)
        enc, c_in = [], self.in_channels
        for c in channels:
            enc += [nn.Conv1d(c_in, c, k, stride=s, padding=p), nn.ReLU()]
            c_in = c
        self.encoder = nn.Sequential(*enc)
        self.shape = (channels[-1], lengths[-1])
        self.to_latent = nn.Linear(channels[-1] * lengths[-1], 2 * latent)
        self.from_latent = nn.Linear(latent, channels[-1] * lengths[-1])
        dec = []
        for i in reversed(range(len(channels))):
            out = channels[i - 1] if i > 0 else self.in_channels
            pad = lengths[i] - ((lengths[i + 1] - 1) * s - 2 * p + k)
            dec.append(nn.ConvTranspose1d(channels[i], out, k, stride=s, padding=p, output_padding=pad))
            if i > 0:
                dec.append(nn.ReLU())
        self.decoder = nn.Sequential(*dec)

    def forward(self, x):
        h = self.encoder(x.unsqueeze(1) if x.dim() == 2 else x).flatten(1)
        mu, logvar = self.to_latent(h).chunk(2, dim=-1)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        y = self.decoder(torch.relu(self.from_latent(z)).view(x.shape[0], *self.shape))
        return (y.squeeze(1) if x.dim() == 2 else y), mu, logvar
