"""The convolutional encoder of Conv-AE+FA: its weights, checks and numba forward pass.

Architecture (the encoder half of the autoencoder trained by
``agents.xcom.autoencoder``; PyTorch layer semantics)::

    input   float[1, n, n]   the board from the agent's side: own units +1,
                             enemy units -1, walls -2, empty 0
    conv1   Conv2d(1, C1, 3, padding=1) + ReLU      -> [C1, n, n]
    pool1   MaxPool2d(2) (floor)                    -> [C1, n//2, n//2]
    conv2   Conv2d(C1, C2, 3, padding=1) + ReLU     -> [C2, n//2, n//2]
    pool2   MaxPool2d(2) (floor)                    -> [C2, h, h],  h = n // 4
    fc      Linear(C2 * h * h, F)                   -> phi, float[F] (linear: a sigmoid
                                                       here saturated in training, phi constant)

(``h`` is at least 1: boards under 8 cells a side skip the second pool's
floor to zero by pooling 1x1 -> the mini board has h = 1.) Flattening is in
PyTorch's (channel, row, column) order. Weights travel as an ``.npz`` with
the arrays ``conv1_w [C1, 1, 3, 3]``, ``conv1_b [C1]``, ``conv2_w [C2, C1, 3, 3]``,
``conv2_b [C2]``, ``fc_w [F, C2 * h * h]``, ``fc_b [F]`` and ``board_size``
(int, ``n``), all float32/float64 except ``board_size``.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numba as nb
import numpy as np

from games.xcom.kernels import ALIEN_CELL, HUMAN_CELL, HUMANS, M_SIZE

ENCODER_KEYS = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc_w", "fc_b", "board_size")
ENCODER_DIR = Path(__file__).resolve().parent / "encoders"
#: Shipped encoders per board side (see ``encoders/PROVENANCE.md``).
BUILTIN_ENCODERS = {6: ENCODER_DIR / "encoder_6x6.npz", 18: ENCODER_DIR / "encoder_18x18.npz"}


class Encoder(NamedTuple):
    conv1_w: np.ndarray  # float64[C1, 1, 3, 3]
    conv1_b: np.ndarray  # float64[C1]
    conv2_w: np.ndarray  # float64[C2, C1, 3, 3]
    conv2_b: np.ndarray  # float64[C2]
    fc_w: np.ndarray     # float64[F, C2 * h * h]
    fc_b: np.ndarray     # float64[F]


def pooled_side(n: int) -> int:
    """Side after the two 2x2 max-pools (floor, at least 1)."""
    return max(1, max(1, n // 2) // 2)


def check_encoder_arrays(arrays: dict, board_size: int | None = None) -> int:
    """Raise ValueError naming the first bad array; return the encoder's board side."""
    for key in ENCODER_KEYS:
        if key not in arrays:
            raise ValueError(f"encoder: missing array {key!r} (needs {list(ENCODER_KEYS)})")
    a = {k: np.asarray(arrays[k]) for k in ENCODER_KEYS}
    n = int(a["board_size"]) if a["board_size"].size == 1 else -1
    if n < 2:
        raise ValueError(f"encoder: board_size must be an int >= 2, got {a['board_size']!r}")
    for key in ENCODER_KEYS[:-1]:
        if not np.issubdtype(a[key].dtype, np.floating) or not np.isfinite(a[key]).all():
            raise ValueError(f"encoder.{key}: must be finite floats, got dtype {a[key].dtype}")
    w1 = a["conv1_w"]
    if w1.ndim != 4 or w1.shape[1:] != (1, 3, 3):
        raise ValueError(f"encoder.conv1_w: expected shape [C1, 1, 3, 3], got {list(w1.shape)}")
    c1 = w1.shape[0]
    if a["conv1_b"].shape != (c1,):
        raise ValueError(f"encoder.conv1_b: expected shape [{c1}], got {list(a['conv1_b'].shape)}")
    w2 = a["conv2_w"]
    if w2.ndim != 4 or w2.shape[1:] != (c1, 3, 3):
        raise ValueError(f"encoder.conv2_w: expected shape [C2, {c1}, 3, 3], got {list(w2.shape)}")
    c2 = w2.shape[0]
    if a["conv2_b"].shape != (c2,):
        raise ValueError(f"encoder.conv2_b: expected shape [{c2}], got {list(a['conv2_b'].shape)}")
    h = pooled_side(n)
    fc = a["fc_w"]
    if fc.ndim != 2 or fc.shape[1] != c2 * h * h:
        raise ValueError(f"encoder.fc_w: expected shape [F, {c2 * h * h}] for a {n}x{n} board, "
                         f"got {list(fc.shape)}")
    if a["fc_b"].shape != (fc.shape[0],):
        raise ValueError(f"encoder.fc_b: expected shape [{fc.shape[0]}], got {list(a['fc_b'].shape)}")
    if board_size is not None and n != board_size:
        raise ValueError(f"encoder: trained for a {n}x{n} board, the game's board is "
                         f"{board_size}x{board_size}")
    return n


def encoder_from_arrays(arrays: dict, board_size: int | None = None) -> Encoder:
    check_encoder_arrays(arrays, board_size)
    return Encoder(*(np.ascontiguousarray(np.asarray(arrays[k], dtype=np.float64))
                     for k in ENCODER_KEYS[:-1]))


def load_encoder_arrays(path) -> dict:
    """The arrays of an encoder ``.npz`` (``allow_pickle=False``); ValueError if unreadable."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except Exception as exc:  # noqa: BLE001 - corrupt, truncated, not an npz
        raise ValueError(f"encoder: cannot read {path} as an .npz of arrays "
                         f"({type(exc).__name__}: {exc})") from None


def builtin_encoder_arrays(board_size: int) -> dict:
    path = BUILTIN_ENCODERS.get(int(board_size))
    if path is None or not path.is_file():
        raise ValueError(f"encoder: no shipped encoder for a {board_size}x{board_size} board "
                         f"(shipped: {sorted(BUILTIN_ENCODERS)}); train one with arena train-encoder")
    return load_encoder_arrays(path)


def encoder_arrays(enc: Encoder, board_size: int) -> dict:
    out = {k: np.asarray(v) for k, v in zip(ENCODER_KEYS[:-1], enc)}
    out["board_size"] = np.int64(board_size)
    return out


# ----------------------------------------------------------------- forward pass
@nb.njit(cache=True)
def board_input(state, player, out):
    """Fill ``out`` (float64[n, n]) with the board from ``player``'s side (own +1, enemy -1, wall -2)."""
    n = state.meta[M_SIZE]
    own = HUMAN_CELL if player == HUMANS else ALIEN_CELL
    for r in range(n):
        for c in range(n):
            v = state.board[r * n + c]
            if v == HUMAN_CELL or v == ALIEN_CELL:
                out[r, c] = 1.0 if v == own else -1.0
            else:
                out[r, c] = float(v)


@nb.njit(cache=True)
def _conv3x3_relu(x, w, b, out):
    """out[co] = relu(b[co] + sum_ci conv(x[ci], w[co, ci])) with zero padding 1.

    The input is copied into a zero-padded buffer so the inner loop has no
    bounds tests (numba vectorises it); same sums as PyTorch up to rounding.
    """
    c_in, n, m = x.shape
    c_out = w.shape[0]
    xp = np.zeros((c_in, n + 2, m + 2))
    for ci in range(c_in):
        for r in range(n):
            for c in range(m):
                xp[ci, r + 1, c + 1] = x[ci, r, c]
    for co in range(c_out):
        for r in range(n):
            for c in range(m):
                out[co, r, c] = b[co]
        for ci in range(c_in):
            w00 = w[co, ci, 0, 0]
            w01 = w[co, ci, 0, 1]
            w02 = w[co, ci, 0, 2]
            w10 = w[co, ci, 1, 0]
            w11 = w[co, ci, 1, 1]
            w12 = w[co, ci, 1, 2]
            w20 = w[co, ci, 2, 0]
            w21 = w[co, ci, 2, 1]
            w22 = w[co, ci, 2, 2]
            for r in range(n):
                for c in range(m):
                    out[co, r, c] += (w00 * xp[ci, r, c] + w01 * xp[ci, r, c + 1] + w02 * xp[ci, r, c + 2]
                                      + w10 * xp[ci, r + 1, c] + w11 * xp[ci, r + 1, c + 1]
                                      + w12 * xp[ci, r + 1, c + 2] + w20 * xp[ci, r + 2, c]
                                      + w21 * xp[ci, r + 2, c + 1] + w22 * xp[ci, r + 2, c + 2])
        for r in range(n):
            for c in range(m):
                if out[co, r, c] < 0.0:
                    out[co, r, c] = 0.0


@nb.njit(cache=True)
def _maxpool2(x, out):
    """2x2 max-pool, stride 2, floor (a 1-wide input is passed through)."""
    ch, n, m = x.shape
    on = out.shape[1]
    om = out.shape[2]
    for k in range(ch):
        for r in range(on):
            for c in range(om):
                best = -np.inf
                for dr in range(2):
                    rr = 2 * r + dr if n > 1 else r
                    if rr >= n:
                        continue
                    for dc in range(2):
                        cc = 2 * c + dc if m > 1 else c
                        if cc >= m:
                            continue
                        if x[k, rr, cc] > best:
                            best = x[k, rr, cc]
                out[k, r, c] = best


@nb.njit(cache=True)
def encode_board(board, enc, phi):
    """phi (float64[F]) = encoder(board) for ``board`` float64[n, n] (see the module docstring)."""
    n = board.shape[0]
    c1 = enc.conv1_w.shape[0]
    c2 = enc.conv2_w.shape[0]
    n1 = max(1, n // 2)
    n2 = max(1, n1 // 2)
    x0 = board.reshape((1, n, n))
    a1 = np.empty((c1, n, n))
    _conv3x3_relu(x0, enc.conv1_w, enc.conv1_b, a1)
    p1 = np.empty((c1, n1, n1))
    _maxpool2(a1, p1)
    a2 = np.empty((c2, n1, n1))
    _conv3x3_relu(p1, enc.conv2_w, enc.conv2_b, a2)
    p2 = np.empty((c2, n2, n2))
    _maxpool2(a2, p2)
    flat = p2.reshape(c2 * n2 * n2)
    f = enc.fc_w.shape[0]
    for i in range(f):
        acc = enc.fc_b[i]
        for j in range(flat.shape[0]):
            acc += enc.fc_w[i, j] * flat[j]
        phi[i] = acc


@nb.njit(cache=True)
def encode_state(state, player, enc, board_scratch, phi):
    """phi = encoder(board of ``state`` from ``player``'s side); board_scratch float64[n, n]."""
    board_input(state, player, board_scratch)
    encode_board(board_scratch, enc, phi)


@nb.njit(cache=True)
def encode_boards(boards, enc, out):
    """out[i] = encoder(boards[i]) for float64[B, n, n] boards (tests, datasets)."""
    for i in range(boards.shape[0]):
        encode_board(np.ascontiguousarray(boards[i]), enc, out[i])
