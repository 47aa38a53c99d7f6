"""The convolutional autoencoder behind Conv-AE+FA: its dataset and its training.

Training needs PyTorch (the optional extra ``pip install -e ".[train]"``); the
search needs only the encoder's numba forward pass (``encoder.py``). The
PyTorch encoder is layer for layer the one documented there; the decoder
mirrors it with transposed convolutions::

    Linear(F, C2*h*h) + LeakyReLU(0.1) -> [C2, h, h]
    ConvTranspose2d(C2, C1, k1, stride 2) + LeakyReLU(0.1) -> [C1, n//2, n//2]   (k1 = n//2 - 2(h-1))
    ConvTranspose2d(C1, 1, k2, stride 2)         -> [1, n, n]          (k2 = n - 2(n//2) + 2)

Dataset (:func:`make_dataset`): boards of the configured layout (its walls)
with every combination of human and alien counts (1..K each, equal shares),
units placed uniformly at random on free cells such that no human can shoot an
alien (no line of sight between any human and any alien). The input is the
board as the humans' Conv-AE+FA sees it (own +1, enemy -1, walls -2).
"""
from __future__ import annotations

import numpy as np

from games.xcom.kernels import ALIEN_CELL, HUMAN_CELL, WALL, state_from_grid

from .encoder import ENCODER_KEYS, pooled_side

#: Default dataset sizes per board side (the study's).
DEFAULT_SAMPLES = {6: 10_000, 18: 60_000}
#: Conv channels (C1, C2) per board side: wider on the mini board (cheap), narrower on
#: the large one so the forward pass keeps Conv-AE+FA-100 near 5 ms per decision.
DEFAULT_CHANNELS = {6: (8, 16), 18: (4, 8)}
DEFAULT_FEATURES = 16
#: Mini-batch size (batches of 64 saturated the sigmoid features in trials: near-constant phi).
DEFAULT_BATCH = 16


def default_channels(n: int) -> tuple[int, int]:
    return DEFAULT_CHANNELS.get(n, (8, 16) if n <= 8 else (4, 8))


def make_dataset(game_config, count: int, seed: int = 0) -> np.ndarray:
    """float32[count, n, n] boards (see the module docstring)."""
    grid = game_config.grid
    n = grid.shape[0]
    k = game_config.units
    walls = grid == WALL
    state = state_from_grid(grid, game_config.max_move, game_config.max_moves)
    sight = state.sight
    free = np.flatnonzero(~walls.reshape(-1))
    rng = np.random.default_rng(seed)
    combos = [(h, a) for h in range(1, k + 1) for a in range(1, k + 1)]
    base = np.where(walls, np.int8(WALL), np.int8(0)).reshape(-1)
    out = np.empty((count, n * n), dtype=np.float32)
    for i in range(count):
        humans, aliens = combos[i % len(combos)]
        while True:
            cells = rng.choice(free, size=humans, replace=False)
            hidden = free[~sight[cells][:, free].any(axis=0)]  # cells no human sees
            if len(hidden) >= aliens:
                break
        alien_cells = rng.choice(hidden, size=aliens, replace=False)
        board = base.copy()
        board[cells] = HUMAN_CELL
        board[alien_cells] = ALIEN_CELL
        out[i] = board
    rng.shuffle(out)
    return out.reshape(count, n, n)


def build_autoencoder(n: int, channels=None, features: int = DEFAULT_FEATURES):
    """The PyTorch autoencoder for an ``n x n`` board (imports torch)."""
    import torch
    from torch import nn

    c1, c2 = channels if channels is not None else default_channels(n)
    n1 = max(1, n // 2)
    h = pooled_side(n)
    k1 = n1 - 2 * (h - 1)
    k2 = n - 2 * n1 + 2
    if k1 < 1 or k2 < 1:
        raise ValueError(f"board: no decoder shape for a {n}x{n} board")

    class AutoEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, c1, 3, padding=1)
            self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(c2 * h * h, features)
            self.dec_fc = nn.Linear(features, c2 * h * h)
            self.deconv1 = nn.ConvTranspose2d(c2, c1, k1, stride=2)
            self.deconv2 = nn.ConvTranspose2d(c1, 1, k2, stride=2)

        def encode(self, x):  # x [B, 1, n, n]
            x = self.pool(torch.relu(self.conv1(x)))
            x = torch.relu(self.conv2(x))
            x = self.pool(x) if x.shape[-1] > 1 else x
            return self.fc(x.flatten(1))

        def forward(self, x):
            # leaky decoder: with plain ReLUs the transposed conv died in trials on 18x18
            # (constant reconstruction); the decoder is for training only
            z = self.encode(x)
            y = nn.functional.leaky_relu(self.dec_fc(z), 0.1).view(-1, c2, h, h)
            y = nn.functional.leaky_relu(self.deconv1(y), 0.1)
            return self.deconv2(y)

    return AutoEncoder()


def export_encoder(model, n: int) -> dict:
    """The encoder's arrays (float32) in the ``encoder.py`` format."""
    sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    out = {"conv1_w": sd["conv1.weight"], "conv1_b": sd["conv1.bias"],
           "conv2_w": sd["conv2.weight"], "conv2_b": sd["conv2.bias"],
           "fc_w": sd["fc.weight"], "fc_b": sd["fc.bias"], "board_size": np.int64(n)}
    assert tuple(out) == ENCODER_KEYS
    return out


def train_autoencoder(boards: np.ndarray, epochs: int = 10, lr: float = 1e-3,
                      batch_size: int = DEFAULT_BATCH, seed: int = 0, channels=None, features: int = DEFAULT_FEATURES,
                      threads: int = 1, on_epoch=None):
    """Train on ``boards`` (float32[B, n, n]) with MSE and Adam; returns
    ``(model, losses)`` where ``losses[e]`` is the mean training loss of epoch e."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(max(1, int(threads)))
    n = boards.shape[1]
    model = build_autoencoder(n, channels, features)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    data = torch.from_numpy(np.ascontiguousarray(boards, dtype=np.float32)).unsqueeze(1)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for epoch in range(epochs):
        order = torch.randperm(len(data), generator=gen)
        total = 0.0
        for start in range(0, len(data), batch_size):
            x = data[order[start:start + batch_size]]
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), x)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(x)
        losses.append(total / len(data))
        if on_epoch is not None:
            on_epoch(epoch, losses[-1])
    return model, losses
