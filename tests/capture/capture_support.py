"""Shared helpers of the capture tests: the faultline executable, small models, a bit-flipping
dispatch mode, and checks on `faultline bisect --json`."""
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

FAULTLINE = os.environ.get("FAULTLINE_EXE", "faultline")
torch.set_num_threads(2)


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def tmpdir():
    return tempfile.mkdtemp(prefix="faultline-capture-")


def run_faultline(*args):
    p = subprocess.run([FAULTLINE, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def bisect(trace, suspect, *options):
    """(exit code, JSON report) of `faultline bisect TRACE --suspect LABEL --json [OPTIONS]`."""
    rc, out, err = run_faultline("bisect", trace, "--suspect", suspect, "--json", *options)
    check(rc in (0, 1), "bisect %s exited %d: %s" % (trace, rc, err.strip()))
    return rc, json.loads(out)


def judged(report):
    return [o for o in report["ops"] if o["verdict"] in ("ok", "divergent")]


def divergent(report):
    return [o["index"] for o in report["ops"] if o["verdict"] == "divergent"]


def describe(report, indices):
    ops = {o["index"]: o for o in report["ops"]}
    return "; ".join("op %d %s %s: %s beyond, max %s ulp, %s" % (
        i, ops[i]["op"], ops[i]["name"], ops[i].get("beyond_tolerance"), ops[i].get("max_ulp"),
        ops[i].get("detail", "")[:120]) for i in indices)


# ---- models ----------------------------------------------------------------------------------

class Attention(nn.Module):
    """Causal self-attention written out (matmul, softmax), as most training code has it."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, -1)
        q, k, v = [z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v)]
        scores = q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5
        scores = scores + torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1)
        a = torch.softmax(scores, -1) @ v
        return self.proj(a.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """Pre-norm transformer block: layernorm, attention, layernorm, GELU MLP."""

    def __init__(self, d=32, heads=4, approximate="none"):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), Attention(d, heads)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.approximate = approximate

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate=self.approximate))


class SiluMlp(nn.Module):
    """Norm, then a SiLU MLP with a residual: x + W2 silu(W1 norm(x))."""

    def __init__(self, d=48, hidden=96):
        super().__init__()
        self.norm = nn.LayerNorm(d, elementwise_affine=False)
        self.up, self.down = nn.Linear(d, hidden, bias=False), nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(F.silu(self.up(self.norm(x))))


class SdpaBlock(nn.Module):
    """Attention through aten's scaled-dot-product attention op."""

    def __init__(self, d=32, heads=2):
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).split(d, -1)
        q, k, v = [z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2).contiguous() for z in (q, k, v)]
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            a = torch.ops.aten._scaled_dot_product_attention(q, k, v, None, 0.0, False, True)[0]
        return x + self.out(a.transpose(1, 2).reshape(b, t, d))


class TinyGpt(nn.Module):
    """A GPT language model, small: token and position embeddings, two pre-norm blocks, a final
    layernorm and an untied lm head. `loss` is the cross-entropy of the next-token logits (in the
    model's dtype), targets equal to -1 ignored, as nanoGPT writes it."""

    def __init__(self, vocab=64, d=32, heads=4, layers=2, context=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

    def loss(self, idx, targets):
        logits = self(idx)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)


def gpt_batch(vocab=64, batch=2, context=16, seed=0):
    """(idx, targets) of a tiny GPT step: random tokens, the next token as the target, the last
    position of each sequence ignored (-1)."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab, (batch, context + 1), generator=g)
    idx, targets = tokens[:, :-1].clone(), tokens[:, 1:].clone()
    targets[:, -1] = -1
    return idx, targets


def gpt_step(model, idx, targets):
    """Forward, cross-entropy and backward of one GPT training step."""
    loss = model.loss(idx, targets)
    loss.backward()
    return loss


def encoder_layer():
    """PyTorch's own transformer layer (a model this package was not written against)."""
    return nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                      batch_first=True, norm_first=True)


MODELS = {
    "block": lambda: Block(),
    "block_tanh": lambda: Block(approximate="tanh"),
    "silu_mlp": lambda: SiluMlp(),
    "sdpa": lambda: SdpaBlock(),
    "encoder_layer": encoder_layer,
}


def make(name, dtype, seed=0):
    torch.manual_seed(seed)
    model = MODELS[name]().to(dtype)
    d = 48 if name == "silu_mlp" else 32
    x = torch.randn(2, 8, d, dtype=dtype, requires_grad=True)
    return model, x


def step(model, x):
    """One training step's forward and backward."""
    y = model(x)
    loss = y.float().pow(2).mean()
    loss.backward()
    return loss


def make_training(name, dtype, seed=0):
    """A model, its input, class targets and an AdamW optimizer: one training step's parts."""
    model, x = make(name, dtype, seed)
    classes = x.shape[-1]
    target = torch.randint(0, classes, x.shape[:-1], generator=torch.Generator().manual_seed(seed))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    return model, x, target, optimizer


def train_step(model, x, target, optimizer):
    """One whole training step: forward, cross-entropy loss (in float32), backward, AdamW."""
    optimizer.zero_grad()
    y = model(x)
    loss = F.cross_entropy(y.reshape(-1, y.shape[-1]).float(), target.reshape(-1))
    loss.backward()
    optimizer.step()
    return loss


# ---- corruption --------------------------------------------------------------------------------

class FlipBits(TorchDispatchMode):
    """Flips `bit` in `count` elements (the largest in magnitude) of the output of the `nth`
    call (0-based) of `func`: a defect in one kernel launch. Enter it OUTSIDE record(), so the
    recorder sees the corrupted output as the device produced it."""

    def __init__(self, func, nth=0, bit=None, count=8):
        super().__init__()
        self.func, self.nth, self.bit, self.count = func, nth, bit, count
        self.calls = 0
        self.flipped = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is self.func:
            if self.calls == self.nth:
                flip(out[0] if isinstance(out, (tuple, list)) else out, self.bit, self.count)
                self.flipped = True
            self.calls += 1
        return out


class Scale(TorchDispatchMode):
    """Multiplies the `count` largest elements of output `output` of the `nth` call (0-based) of
    `func` by `factor` (1.25: a 25% error in one kernel launch). Enter it OUTSIDE record(), so the
    recorder sees the corrupted output; `calls` counts the calls of `func` seen."""

    def __init__(self, func, nth=0, factor=1.25, count=4, output=0):
        super().__init__()
        self.func, self.nth, self.factor, self.count, self.output = func, nth, factor, count, output
        self.calls = 0
        self.done = False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is self.func:
            if self.calls == self.nth:
                t = out[self.output] if isinstance(out, (tuple, list)) else out
                with torch.no_grad():
                    flat = t.view(-1)
                    idx = flat.abs().float().argsort(descending=True)[:self.count]
                    flat[idx] = (flat[idx].float() * self.factor).to(flat.dtype)
                self.done = True
            self.calls += 1
        return out


def flip(t, bit=None, count=8):
    """Flips bit `bit` of the `count` largest elements, in place; by default an exponent bit
    (bit 27 of float32, bit 11 of bfloat16: x 2^16 or 2^-16)."""
    with torch.no_grad():
        int_type = {torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16}[t.dtype]
        if bit is None:
            bit = 27 if t.dtype == torch.float32 else 11
        flat = t.view(-1)
        idx = flat.abs().float().argsort(descending=True)[:count]
        bits = flat.view(int_type)
        mask = torch.tensor(1 << bit if bit < 31 else -(1 << 31), dtype=torch.int64).to(int_type)
        bits[idx] = bits[idx] ^ mask


def _raw(ds):
    """The dataset's bytes as unsigned integers of its element size, read with its own HDF5 type
    (bfloat16's custom float type would otherwise be converted)."""
    tid = ds.id.get_type()
    data = np.empty(ds.shape, dtype="u%d" % tid.get_size())
    ds.id.read(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=tid)
    return data, tid


def unlink_output(f, path):
    """Makes the dataset at `path` (an op output in h5py file `f`) its own copy: the recorder
    hard-links an output that a later op reads to that op's input, and a planted corruption
    must change the recorded output only. The copy keeps the HDF5 type (bfloat16 included)."""
    ds = f[path]
    data, tid = _raw(ds)
    attrs = dict(ds.attrs)
    del f[path]
    copy = f.create_dataset(path, shape=data.shape, dtype=h5py.Datatype(tid.copy()))
    copy.id.write(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=tid)
    for k, v in attrs.items():
        copy.attrs[k] = v


def flip_recorded(f, path, element, bit):
    """Flips bit `bit` of element `element` (flat index) of dataset `path` in h5py file `f`, in
    place, in the dataset's own type; flipping it again restores it."""
    ds = f[path]
    data, tid = _raw(ds)
    flat = data.reshape(-1)
    flat[element] ^= flat.dtype.type(1 << bit)
    ds.id.write(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=tid)
