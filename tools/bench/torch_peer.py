#!/usr/bin/env python3
"""The PyTorch peer of agf: the same encoder–decoder Transformer (SPEC-AGF §3–7, docs/model.md), written
plainly with torch ops and differentiated by autograd.

It serves as
  * a conformance oracle:  `grad` reads an agf checkpoint and a batch and writes the loss and every
    parameter's gradient, to compare with agf's own backward;
  * a checkpoint maker:    `init` writes a freshly initialised checkpoint that agf can load;
  * a speed peer:          `bench` times full training steps (forward, backward, Adam).

Needs only torch and numpy; run it with the system interpreter that has Debian's python3-torch:
    /usr/bin/python3 tools/bench/torch_peer.py --help
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

PAD = 0  # special ids: pad 0, unk 1, bos 2, eos 3 (SPEC §6)
FIRST_ORDINARY_ID = 4
LABEL_SMOOTHING = 0.1
LAYER_NORM_EPS = 1e-5
T5_BUCKETS = 32
T5_MAX_DISTANCE = 128
KERPLE_MINIMUM = 0.01
KERPLE_POWER_MAXIMUM = 2.0
OPTIMIZER_PREFIXES = ("optimizer.exp_avg.", "optimizer.exp_avg_sq.")  # agf training checkpoints carry these


class PeerError(Exception):
    """A problem with the inputs: reported as one line on stderr, exit status 1."""


# ---- safetensors --------------------------------------------------------------------------------------------
#
# A file is: u64 little-endian header length N, N bytes of JSON header, then the raw little-endian data.
# The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the
# data, after the header) and may hold "__metadata__": {str: str}.

SAFETENSORS_DTYPES = {
    "F64": (torch.float64, np.dtype("<f8")),
    "F32": (torch.float32, np.dtype("<f4")),
    "F16": (torch.float16, np.dtype("<f2")),
    "BF16": (torch.bfloat16, np.dtype("<i2")),  # numpy has no bfloat16: read the bits, then reinterpret
    "I64": (torch.int64, np.dtype("<i8")),
    "I32": (torch.int32, np.dtype("<i4")),
}
TORCH_TO_SAFETENSORS = {torch_dtype: name for name, (torch_dtype, _) in SAFETENSORS_DTYPES.items()}


def read_safetensors(path: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Reads a safetensors file: (tensors by name, metadata)."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise PeerError(f"cannot read '{path}': {error.strerror}") from None
    if len(data) < 8:
        raise PeerError(f"'{path}' is not a safetensors file (shorter than its 8-byte header length)")
    (header_length,) = struct.unpack("<Q", data[:8])
    if 8 + header_length > len(data):
        raise PeerError(f"'{path}': header length {header_length} runs past the end of the file")
    try:
        header = json.loads(data[8:8 + header_length].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PeerError(f"'{path}': the header is not JSON ({error})") from None
    if not isinstance(header, dict):
        raise PeerError(f"'{path}': the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + header_length:]
    tensors = {}
    for name, entry in header.items():
        dtype_name = entry.get("dtype") if isinstance(entry, dict) else None
        if dtype_name not in SAFETENSORS_DTYPES:
            raise PeerError(f"'{path}': tensor '{name}' has dtype {dtype_name!r} "
                            f"(supported: {', '.join(SAFETENSORS_DTYPES)})")
        torch_dtype, numpy_dtype = SAFETENSORS_DTYPES[dtype_name]
        shape = [int(size) for size in entry["shape"]]
        begin, end = (int(offset) for offset in entry["data_offsets"])
        count = math.prod(shape)
        if not 0 <= begin <= end <= len(body) or end - begin != count * numpy_dtype.itemsize:
            raise PeerError(f"'{path}': tensor '{name}' {dtype_name}{shape} has data_offsets [{begin}, {end}], "
                            f"which do not fit its size or the file")
        array = np.frombuffer(body, dtype=numpy_dtype, count=count, offset=begin).reshape(shape)
        tensor = torch.from_numpy(array.astype(array.dtype.newbyteorder("="), copy=True))
        tensors[name] = tensor.view(torch.bfloat16) if dtype_name == "BF16" else tensor
    return tensors, {str(key): str(value) for key, value in metadata.items()}


def write_safetensors(path: str, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> None:
    """Writes tensors (in the order given) and string metadata as a safetensors file."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {str(key): str(value) for key, value in metadata.items()}
    chunks, offset = [], 0
    for name, tensor in tensors.items():
        tensor = tensor.detach().cpu().contiguous()
        if tensor.dtype not in TORCH_TO_SAFETENSORS:
            raise PeerError(f"cannot write tensor '{name}' of dtype {tensor.dtype} as safetensors")
        dtype_name = TORCH_TO_SAFETENSORS[tensor.dtype]
        if dtype_name == "BF16":
            tensor = tensor.view(torch.int16)
        raw = tensor.numpy().astype(SAFETENSORS_DTYPES[dtype_name][1], copy=False).tobytes()
        header[name] = {"dtype": dtype_name, "shape": list(tensor.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)  # the data starts 8-byte aligned, as the safetensors library writes it
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(encoded)))
        file.write(encoded)
        for chunk in chunks:
            file.write(chunk)


# ---- the configuration (nn/transformer_config.{h,cpp}) ----------------------------------------------------------

SCHEMES = ("sinusoidal", "none", "rope", "alibi", "alibi-mult", "t5", "kerple-log", "kerple-power",
           "agf-b", "agf-m", "agf-f")
COEFFICIENT_SCHEMES = ("alibi-mult", "agf-b", "agf-m", "agf-f")  # multiply the score; PCM-V applies
BIAS_SCHEMES = ("alibi", "t5", "kerple-log", "kerple-power")      # are added to the score
GRAVITATIONAL_SCHEMES = ("agf-b", "agf-m", "agf-f")

PRESETS = {  # d_model, heads, ffn, encoder_layers, decoder_layers, dropout
    "paper-big": (1024, 16, 4096, 3, 3, 0.3),
    "base": (512, 8, 2048, 6, 6, 0.1),
    "cpu-small": (256, 4, 1024, 3, 3, 0.1),
    "tiny": (32, 2, 64, 1, 1, 0.0),  # tests and smoke runs, not part of the paper
}


def format_real(value: float) -> str:
    """A double as fmt::format("{}") writes it: the shortest round-trip form, "2" rather than "2.0"."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


@dataclasses.dataclass
class Config:
    """TransformerConfig: the model hyperparameters, stored in a checkpoint as "agf.config.*" strings."""
    preset: str = "cpu-small"
    d_model: int = 256
    heads: int = 4
    ffn: int = 1024
    encoder_layers: int = 3
    decoder_layers: int = 3
    dropout: float = 0.1
    pre_norm: bool = False
    vocabulary_size: int = 0
    pos: str = "agf-m"
    pcmv: bool = True
    abs_pe: bool = False
    max_distance: int = 256  # L
    k: float = 2.0           # the LC1 exponent
    learnable_k: bool = False

    INTEGER_FIELDS = ("d_model", "heads", "ffn", "encoder_layers", "decoder_layers", "vocabulary_size", "max_distance")
    REAL_FIELDS = ("dropout", "k")
    BOOLEAN_FIELDS = ("pre_norm", "pcmv", "abs_pe", "learnable_k")

    @staticmethod
    def from_preset(name: str, **overrides) -> Config:
        if name not in PRESETS:
            raise PeerError(f"unknown preset '{name}' (expected {', '.join(PRESETS)})")
        d_model, heads, ffn, encoder_layers, decoder_layers, dropout = PRESETS[name]
        return Config(preset=name, d_model=d_model, heads=heads, ffn=ffn, encoder_layers=encoder_layers,
                      decoder_layers=decoder_layers, dropout=dropout, **overrides)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def uses_sinusoidal(self) -> bool:
        return self.pos == "sinusoidal" or self.abs_pe

    @property
    def label(self) -> str:
        """scheme_label(): e.g. "agf-m+pcmv", "rope+abs-pe", "sinusoidal"."""
        return self.pos + ("+pcmv" if self.pcmv else "") + ("+abs-pe" if self.abs_pe and self.pos != "sinusoidal" else "")

    def validate(self) -> None:
        """The checks of TransformerConfig::validate, with the same wording."""
        checks = [
            (self.d_model > 0 and self.heads > 0 and self.ffn > 0, "model config: d_model, heads and ffn must be positive"),
            (self.heads > 0 and self.d_model % self.heads == 0,
             f"model config: d_model {self.d_model} is not divisible by heads {self.heads}"),
            (self.encoder_layers >= 0 and self.decoder_layers >= 1, "model config: needs at least one decoder layer"),
            (0.0 <= self.dropout < 1.0, f"model config: dropout must be in [0, 1), got {self.dropout}"),
            (self.vocabulary_size > 0, f"model config: vocabulary size must be positive, got {self.vocabulary_size}"),
            (self.pos in SCHEMES, f"unknown positional scheme '{self.pos}' (expected one of: {', '.join(SCHEMES)})"),
            (not self.pcmv or self.pos in COEFFICIENT_SCHEMES,
             f"--pcmv applies to coefficient schemes (agf-b, agf-m, agf-f, alibi-mult), not to '{self.pos}'"),
            (self.max_distance >= 1, f"model config: max distance L must be at least 1, got {self.max_distance}"),
            (self.pos != "rope" or self.head_dim % 2 == 0, f"rope needs an even head size, got {self.head_dim}"),
            (not self.uses_sinusoidal or self.d_model % 2 == 0,
             f"sinusoidal embeddings need an even d_model, got {self.d_model}"),
        ]
        for ok, message in checks:
            if not ok:
                raise PeerError(message)

    def to_metadata(self) -> dict[str, str]:
        """TransformerConfig::to_metadata: every field as text under "agf.config.<field>"."""
        metadata = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name in self.BOOLEAN_FIELDS:
                text = "true" if value else "false"
            elif field.name in self.REAL_FIELDS:
                text = format_real(value)
            else:
                text = str(value)
            metadata["agf.config." + field.name] = text
        return metadata

    @staticmethod
    def from_metadata(metadata: dict[str, str]) -> Config:
        """TransformerConfig::from_metadata: every key must be present; booleans are "true" or anything else."""
        values = {}
        for field in dataclasses.fields(Config):
            key = "agf.config." + field.name
            if key not in metadata:
                raise PeerError(f"checkpoint metadata lacks '{key}' (not an agf model checkpoint?)")
            text = metadata[key]
            try:
                if field.name in Config.INTEGER_FIELDS:
                    values[field.name] = int(text)
                elif field.name in Config.REAL_FIELDS:
                    values[field.name] = float(text)
                elif field.name in Config.BOOLEAN_FIELDS:
                    values[field.name] = text == "true"
                else:
                    values[field.name] = text
            except ValueError:
                kind = "an integer" if field.name in Config.INTEGER_FIELDS else "a number"
                raise PeerError(f"checkpoint metadata '{key}' is not {kind}: '{text}'") from None
        config = Config(**values)
        config.validate()
        return config


# ---- fixed positional functions ---------------------------------------------------------------------------------

def sinusoidal_table(length: int, d_model: int, dtype: torch.dtype) -> torch.Tensor:
    """PE[p, 2i] = sin(p / 10000^(2i/D)),  PE[p, 2i+1] = cos(p / 10000^(2i/D)),  p = 0..length-1 (in f64)."""
    position = torch.arange(length, dtype=torch.float64)[:, None]
    pair = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]  # 2i
    angle = position / torch.pow(10000.0, pair / d_model)
    table = torch.empty(length, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.to(dtype)


def rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of x [B, H, T, dk] at positions p = 0..T-1, pairs (2i, 2i+1), θ = p·10000^(-2i/dk):
        y[2i] = x[2i]·cos θ - x[2i+1]·sin θ,   y[2i+1] = x[2i]·sin θ + x[2i+1]·cos θ   (cos, sin in f64)."""
    length, dk = x.shape[-2], x.shape[-1]
    position = torch.arange(length, dtype=torch.float64)[:, None]
    pair = torch.arange(0, dk, 2, dtype=torch.float64)[None, :]
    angle = position * torch.pow(10000.0, -pair / dk)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def alibi_slopes(heads: int) -> torch.Tensor:
    """slope_h = 2^(-8(h+1)/H), h = 0..H-1 (f64)."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)], dtype=torch.float64)


def t5_bucket(query_minus_key: torch.Tensor, bidirectional: bool) -> torch.Tensor:
    """T5's relative_position_bucket for d = m - n, in the reference's float32 arithmetic.

    relative_position = n - m. Bidirectional (encoder): 16 buckets per direction, keys after the query in
    16..31; unidirectional (causal decoder): all 32 for keys at or before the query. Within a direction,
    distances below 8 (or 16) get a bucket each, larger ones a logarithmic bucket up to distance 128."""
    relative_position = -query_minus_key.to(torch.int64)
    buckets = T5_BUCKETS
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        buckets //= 2
        bucket = bucket + (relative_position > 0).to(torch.int64) * buckets
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    max_exact = buckets // 2
    ratio = distance.to(torch.float32) / max_exact
    log_span = np.float32(math.log(T5_MAX_DISTANCE / max_exact))
    scaled = torch.log(ratio.clamp(min=1.0)) / float(log_span) * float(buckets - max_exact)  # float32 throughout
    large = (max_exact + scaled.to(torch.int64)).clamp(max=buckets - 1)
    return bucket + torch.where(distance < max_exact, distance, large)


# ---- the positional term of one self-attention module --------------------------------------------------------------

class Positional(nn.Module):
    """The learnable positional parameters of one self-attention module (`…self_attn.pos.*`) and the table of
    the coefficient C or score bias per (direction δ, head h, distance D), gathered to every (m, n).

    δ = [n > m], D = |m - n|, i = min(D, L-1).
      agf:          LC1(δ,h,D) = G[δ,h] · (1 + D·max(rho[δ,h], 0))^(-k)
                    C = LC1 (agf-b),  LC1·lc2[δ,h,i] (agf-m),  LC1·lc2[δ,h,i]·lc3[δ,h,i,j] (agf-f)
      alibi-mult:   C = exp(-slope_h·D)              alibi:  bias = -slope_h·D
      t5:           bias = t5_table[bucket(m - n), h]   (the stack's shared table)
      kerple-log:   bias = -max(r1,.01)·ln(1 + max(r2,.01)·D)
      kerple-power: bias = -max(r1,.01)·D^clamp(r2,.01,2)
    The table is computed in f64 from the parameters (as agf does) and cast to the compute dtype."""

    def __init__(self, config: Config, causal: bool):
        super().__init__()
        self.scheme = "none" if config.pos == "sinusoidal" else config.pos
        self.causal = causal
        self.heads, self.head_dim, self.max_distance = config.heads, config.head_dim, config.max_distance
        self.fixed_k = config.k
        H, L, dk = config.heads, config.max_distance, config.head_dim
        if self.scheme in GRAVITATIONAL_SCHEMES:
            self.G = nn.Parameter(torch.ones(2, H))
            self.rho = nn.Parameter(torch.full((2, H), 1.0 / 24.0))
            if config.learnable_k:
                self.k = nn.Parameter(torch.full((1,), config.k))
            if self.scheme in ("agf-m", "agf-f"):
                self.lc2 = nn.Parameter(torch.ones(2, H, L))
            if self.scheme == "agf-f":
                self.lc3 = nn.Parameter(torch.ones(2, H, L, dk))
        elif self.scheme in ("kerple-log", "kerple-power"):
            self.r1 = nn.Parameter(torch.ones(H))
            self.r2 = nn.Parameter(torch.ones(H))

    @property
    def is_coefficient(self) -> bool:
        return self.scheme in COEFFICIENT_SCHEMES

    @property
    def is_bias(self) -> bool:
        return self.scheme in BIAS_SCHEMES

    @property
    def is_per_feature(self) -> bool:
        return self.scheme == "agf-f"

    def table(self, distances: int, t5_table: torch.Tensor | None) -> torch.Tensor:
        """The f64 table [2, H, distances] ([2, H, distances, dk] for agf-f), D = 0..distances-1."""
        H = self.heads
        D = torch.arange(distances, dtype=torch.float64)
        if self.scheme in GRAVITATIONAL_SCHEMES:
            k = self.k.double() if hasattr(self, "k") else self.fixed_k
            base = 1.0 + D * self.rho.double().clamp(min=0.0)[..., None]   # 1 + D·max(rho, 0)   [2, H, Dd]
            C = self.G.double()[..., None] * base.pow(-k)                     # LC1 (true distance D)
            i = D.clamp(max=self.max_distance - 1).to(torch.int64)           # i = min(D, L-1)
            if self.scheme in ("agf-m", "agf-f"):
                C = C * self.lc2.double()[:, :, i]
            if self.scheme == "agf-f":
                C = C[..., None] * self.lc3.double()[:, :, i, :]
            return C
        if self.scheme in ("alibi", "alibi-mult"):
            slope_distance = (alibi_slopes(H)[:, None] * D).expand(2, H, distances)
            return torch.exp(-slope_distance) if self.scheme == "alibi-mult" else -slope_distance
        if self.scheme == "t5":
            signed = torch.stack((torch.arange(distances), -torch.arange(distances)))  # d = m - n: δ=0 → D, δ=1 → -D
            buckets = t5_bucket(signed, bidirectional=not self.causal)                   # [2, Dd]
            return t5_table.double()[buckets].permute(0, 2, 1)                            # [2, H, Dd]
        r1 = self.r1.double().clamp(min=KERPLE_MINIMUM)[:, None]
        if self.scheme == "kerple-log":
            r2 = self.r2.double().clamp(min=KERPLE_MINIMUM)[:, None]
            return (-r1 * torch.log1p(r2 * D)).expand(2, H, distances)
        # kerple-power: D^r2, 0 at D = 0; the power is taken of max(D, 1) so that ∂/∂r2 = D^r2·ln D is never
        # 0·(-inf) = NaN at D = 0 (where the result is replaced by 0 anyway)
        r2 = self.r2.double().clamp(min=KERPLE_MINIMUM, max=KERPLE_POWER_MAXIMUM)[:, None]
        power = torch.where(D > 0, D.clamp(min=1.0).pow(r2), torch.zeros(()))
        return (-r1 * power).expand(2, H, distances)

    def gathered(self, queries: int, keys: int, dtype: torch.dtype, t5_table: torch.Tensor | None) -> torch.Tensor:
        """The table entry of every (m, n): [H, Tq, Tk] ([H, Tq, Tk, dk] for agf-f), in `dtype`."""
        table = self.table(max(queries, keys, 1), t5_table).to(dtype)
        m = torch.arange(queries)[:, None]
        n = torch.arange(keys)[None, :]
        direction = (n > m).to(torch.int64)  # δ
        distance = (m - n).abs()             # D
        entries = table[direction, :, distance]  # [Tq, Tk, H] (or [Tq, Tk, H, dk])
        return entries.permute(2, 0, 1, 3) if self.is_per_feature else entries.permute(2, 0, 1)


# ---- the attention module ------------------------------------------------------------------------------------

class Attention(nn.Module):
    """Multi-head attention with the positional scheme of SPEC §4–5 (cross-attention: none).

        q, k, v = q_proj(x_q), k_proj(x_kv), v_proj(x_kv)  -> [B, H, T, dk]   (rope rotates q and k)
        P[h,m,n] = (1/√dk)·Σ_j q[h,m,j]·k[h,n,j]
        s = P·C (coefficient), (1/√dk)·Σ_j q·k·C(j) (agf-f), P + bias (bias schemes), P (none, rope)
        s = -inf where n >= key_length[b] or (causal) n > m
        a = softmax_n(s) (a fully masked row: a = 0),  a' = dropout(a)
        o[h,m,j] = Σ_n a'·v  (·C(h,m,n,(j)) with PCM-V),   out = out_proj(o merged over heads)"""

    def __init__(self, config: Config, causal: bool, positional: bool):
        super().__init__()
        D = config.d_model
        self.heads, self.head_dim, self.causal = config.heads, config.head_dim, causal
        self.pcmv = config.pcmv and positional
        self.dropout = config.dropout
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(D, D) for _ in range(4))
        self.pos = Positional(config, causal) if positional else None

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.head_dim).transpose(1, 2)

    def mask(self, queries: int, keys: int, key_lengths: torch.Tensor | None) -> torch.Tensor | None:
        """True where the key is hidden from the query: [B or 1, 1, Tq, Tk], or None when nothing is."""
        hidden = None
        n = torch.arange(keys)
        if key_lengths is not None:
            hidden = (n[None, :] >= key_lengths[:, None])[:, None, None, :]
        if self.causal:
            future = (n[None, :] > torch.arange(queries)[:, None])[None, None]
            hidden = future if hidden is None else hidden | future
        return hidden

    def forward(self, x_q: torch.Tensor, x_kv: torch.Tensor, key_lengths: torch.Tensor | None,
                t5_table: torch.Tensor | None = None) -> torch.Tensor:
        B, Tq, _ = x_q.shape
        Tk = x_kv.shape[1]
        q, k, v = self.split_heads(self.q_proj(x_q)), self.split_heads(self.k_proj(x_kv)), self.split_heads(self.v_proj(x_kv))
        pos = self.pos
        if pos is not None and pos.scheme == "rope":
            q, k = rope(q), rope(k)
        scale = 1.0 / math.sqrt(self.head_dim)
        C = pos.gathered(Tq, Tk, q.dtype, t5_table) if pos is not None and (pos.is_coefficient or pos.is_bias) else None
        if C is not None and pos.is_per_feature:
            # s[b,h,m,n] = (1/√dk)·Σ_j q[b,h,m,j]·k[b,h,n,j]·C[h,m,n,j]. j is shared by all three factors, so
            # any pairwise contraction (torch's einsum, autograd's saved product for ∂L/∂C) is [B,H,Tq,Tk,dk]
            # in size: as many terms as q·kᵀ, but elementwise products rather than a GEMM.
            s = torch.einsum("bhmj,bhnj,hmnj->bhmn", q, k, C) * scale
        else:
            s = torch.matmul(q, k.transpose(-1, -2)) * scale  # P
            if C is not None:
                s = s * C if pos.is_coefficient else s + C
        hidden = self.mask(Tq, Tk, key_lengths)
        if hidden is None:
            a = torch.softmax(s, dim=-1)
        else:
            # a fully masked row is all -inf: softmax gives NaN there, and the second fill makes it 0
            a = torch.softmax(s.masked_fill(hidden, float("-inf")), dim=-1).masked_fill(hidden, 0.0)
        a = F.dropout(a, self.dropout, self.training)
        if self.pcmv and pos.is_per_feature:
            o = torch.einsum("bhmn,hmnj,bhnj->bhmj", a, C, v)  # o[m,j] = Σ_n a'[m,n]·C[m,n,j]·v[n,j]
        elif self.pcmv:
            o = torch.matmul(a * C, v)                          # o = (a' ⊙ C)·v
        else:
            o = torch.matmul(a, v)
        return self.out_proj(o.transpose(1, 2).reshape(B, Tq, self.heads * self.head_dim))


# ---- layers and the model --------------------------------------------------------------------------------------

class FeedForward(nn.Module):
    """ffn(x) = fc2(relu(fc1(x))) (no dropout inside)."""

    def __init__(self, config: Config):
        super().__init__()
        self.fc1 = nn.Linear(config.d_model, config.ffn)
        self.fc2 = nn.Linear(config.ffn, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def residual(x: torch.Tensor, norm: nn.LayerNorm, pre_norm: bool, dropout: float, training: bool, sublayer) -> torch.Tensor:
    """post-norm: norm(x + dropout(f(x)));   pre-norm: x + dropout(f(norm(x)))."""
    if pre_norm:
        return x + F.dropout(sublayer(norm(x)), dropout, training)
    return norm(x + F.dropout(sublayer(x), dropout, training))


class EncoderLayer(nn.Module):
    """x = norm1(x + dropout(self_attn(x, keys masked where padding))); x = norm2(x + dropout(ffn(x)))."""

    def __init__(self, config: Config):
        super().__init__()
        self.config = config
        self.self_attn = Attention(config, causal=False, positional=True)
        self.ffn = FeedForward(config)
        self.norm1 = nn.LayerNorm(config.d_model, eps=LAYER_NORM_EPS)
        self.norm2 = nn.LayerNorm(config.d_model, eps=LAYER_NORM_EPS)

    def forward(self, x, source_lengths, t5_table):
        pre, p, training = self.config.pre_norm, self.config.dropout, self.training
        x = residual(x, self.norm1, pre, p, training, lambda h: self.self_attn(h, h, source_lengths, t5_table))
        return residual(x, self.norm2, pre, p, training, self.ffn)


class DecoderLayer(nn.Module):
    """y = norm1(y + dropout(self_attn(y, causal))); y = norm2(y + dropout(cross_attn(y, memory, source
    padding masked))); y = norm3(y + dropout(ffn(y))). The causal self-attention has no padding mask: padded
    target positions come after every real one (as agf)."""

    def __init__(self, config: Config):
        super().__init__()
        self.config = config
        self.self_attn = Attention(config, causal=True, positional=True)
        self.cross_attn = Attention(config, causal=False, positional=False)
        self.ffn = FeedForward(config)
        self.norm1 = nn.LayerNorm(config.d_model, eps=LAYER_NORM_EPS)
        self.norm2 = nn.LayerNorm(config.d_model, eps=LAYER_NORM_EPS)
        self.norm3 = nn.LayerNorm(config.d_model, eps=LAYER_NORM_EPS)

    def forward(self, y, memory, source_lengths, t5_table):
        pre, p, training = self.config.pre_norm, self.config.dropout, self.training
        y = residual(y, self.norm1, pre, p, training, lambda h: self.self_attn(h, h, None, t5_table))
        y = residual(y, self.norm2, pre, p, training, lambda h: self.cross_attn(h, memory, source_lengths))
        return residual(y, self.norm3, pre, p, training, self.ffn)


class Stack(nn.Module):
    """The encoder or the decoder: its layers, its T5 table [32, H] shared by its layers (t5 only), and the
    final norm of pre-norm."""

    def __init__(self, config: Config, layer_type, count: int):
        super().__init__()
        if config.pos == "t5":
            self.t5_bias = nn.Embedding(T5_BUCKETS, config.heads)
        self.layers = nn.ModuleList(layer_type(config) for _ in range(count))
        if config.pre_norm:
            self.norm = nn.LayerNorm(config.d_model, eps=LAYER_NORM_EPS)

    @property
    def t5_table(self) -> torch.Tensor | None:
        return self.t5_bias.weight if hasattr(self, "t5_bias") else None

    def final(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x) if hasattr(self, "norm") else x


class Transformer(nn.Module):
    """The encoder–decoder Transformer of docs/model.md, with the embedding tied to the output projection."""

    def __init__(self, config: Config):
        super().__init__()
        config.validate()
        self.config = config
        self.embedding = nn.Embedding(config.vocabulary_size, config.d_model)
        self.encoder = Stack(config, EncoderLayer, config.encoder_layers)
        self.decoder = Stack(config, DecoderLayer, config.decoder_layers)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """dropout(E[ids]·√D (+ PE[p]))."""
        x = self.embedding(ids) * math.sqrt(self.config.d_model)
        if self.config.uses_sinusoidal:
            x = x + sinusoidal_table(ids.shape[1], self.config.d_model, x.dtype)
        return F.dropout(x, self.config.dropout, self.training)

    def forward(self, encoder_input: torch.Tensor, decoder_input: torch.Tensor) -> torch.Tensor:
        """ids [B, Ts], [B, Tt] (pad 0 at the end) -> logits [B, Tt, V] = decoder output · Eᵀ."""
        source_lengths = (encoder_input != PAD).sum(dim=1)
        x = self.embed(encoder_input)
        for layer in self.encoder.layers:
            x = layer(x, source_lengths, self.encoder.t5_table)
        memory = self.encoder.final(x)
        y = self.embed(decoder_input)
        for layer in self.decoder.layers:
            y = layer(y, memory, source_lengths, self.decoder.t5_table)
        return torch.matmul(self.decoder.final(y), self.embedding.weight.t())

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Label-smoothed cross-entropy (ε = 0.1) as PyTorch defines it, averaged over non-pad targets:
        (1-ε)·(-log p[y]) + ε·mean_v(-log p[v]); 0 when every target is padding (as agf)."""
        logits = self(batch["encoder_input"], batch["decoder_input"])
        targets = batch["decoder_target"].reshape(-1)
        if not bool((targets != PAD).any()):
            return logits.sum() * 0.0
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets, ignore_index=PAD,
                               label_smoothing=LABEL_SMOOTHING)


def initialise(model: Transformer, seed: int) -> None:
    """docs/model.md: embedding N(0, D^-½); every Linear weight Xavier uniform, bias 0; LayerNorm 1, 0;
    G = 1, rho = 1/24, k = the config's, lc2 = lc3 = 1; r1 = r2 = 1; T5 tables 0."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if name == "embedding.weight":
                parameter.normal_(0.0, model.config.d_model ** -0.5, generator=generator)
            elif name.endswith("t5_bias.weight"):
                parameter.zero_()
            elif leaf == "weight" and ("_proj." in name or ".fc" in name):
                fan_out, fan_in = parameter.shape
                bound = math.sqrt(6.0 / (fan_in + fan_out))
                parameter.uniform_(-bound, bound, generator=generator)
            elif leaf == "weight":  # LayerNorm
                parameter.fill_(1.0)
            elif leaf == "bias":
                parameter.zero_()
            elif leaf == "rho":
                parameter.fill_(1.0 / 24.0)
            elif leaf == "k":
                parameter.fill_(model.config.k)
            else:  # G, lc2, lc3, r1, r2
                parameter.fill_(1.0)


# ---- checkpoints and batches -------------------------------------------------------------------------------------

def load_checkpoint(path: str, dtype: torch.dtype) -> Transformer:
    """Rebuilds the model from the checkpoint's "agf.config.*" metadata and loads every parameter by name.
    Tensors named "optimizer.exp_avg.*" / "optimizer.exp_avg_sq.*" (agf's Adam moments) are skipped; any
    other tensor that is not a parameter, a missing parameter or a shape mismatch is an error."""
    tensors, metadata = read_safetensors(path)
    try:
        config = Config.from_metadata(metadata)
    except PeerError as error:
        raise PeerError(f"'{path}': {error}") from None
    model = Transformer(config).to(dtype)
    parameters = dict(model.named_parameters())
    stored = {name: tensor for name, tensor in tensors.items() if not name.startswith(OPTIMIZER_PREFIXES)}
    missing = [name for name in parameters if name not in stored]
    unknown = [name for name in stored if name not in parameters]
    if missing or unknown:
        problems = []
        if missing:
            problems.append(f"missing parameters: {', '.join(missing)}")
        if unknown:
            problems.append(f"tensors that are no parameter of a {config.label} model: {', '.join(unknown)}")
        raise PeerError(f"'{path}': " + "; ".join(problems))
    with torch.no_grad():
        for name, parameter in parameters.items():
            tensor = stored[name]
            if tuple(tensor.shape) != tuple(parameter.shape):
                raise PeerError(f"'{path}': parameter '{name}' has shape {list(tensor.shape)}, "
                                f"the model expects {list(parameter.shape)}")
            if not tensor.is_floating_point():
                raise PeerError(f"'{path}': parameter '{name}' is {tensor.dtype}, not floating point")
            parameter.copy_(tensor.to(dtype))
    return model


def load_batch(path: str, vocabulary_size: int) -> dict[str, torch.Tensor]:
    """encoder_input [B, Ts], decoder_input and decoder_target [B, Tt]: i32 or i64 ids, pad 0 at the end."""
    tensors, _ = read_safetensors(path)
    names = ("encoder_input", "decoder_input", "decoder_target")
    missing = [name for name in names if name not in tensors]
    unknown = [name for name in tensors if name not in names]
    if missing or unknown:
        raise PeerError(f"'{path}': a batch holds exactly {', '.join(names)}"
                        + (f"; missing: {', '.join(missing)}" if missing else "")
                        + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    batch = {}
    for name in names:
        ids = tensors[name]
        if ids.dtype not in (torch.int32, torch.int64) or ids.dim() != 2:
            raise PeerError(f"'{path}': '{name}' must be i32 or i64 [B, T], got {ids.dtype} {list(ids.shape)}")
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocabulary_size):
            raise PeerError(f"'{path}': '{name}' has ids outside [0, {vocabulary_size})")
        batch[name] = ids.to(torch.int64)
    B = batch["encoder_input"].shape[0]
    if batch["decoder_input"].shape != batch["decoder_target"].shape or batch["decoder_input"].shape[0] != B:
        raise PeerError(f"'{path}': shapes {list(batch['encoder_input'].shape)}, {list(batch['decoder_input'].shape)}, "
                        f"{list(batch['decoder_target'].shape)} do not agree (decoder_input and decoder_target "
                        f"[B, Tt], encoder_input [B, Ts])")
    return batch


# ---- subcommands ----------------------------------------------------------------------------------------------

DTYPES = {"f64": torch.float64, "f32": torch.float32}


def command_grad(args) -> None:
    """Loss and every parameter's gradient, dropout off."""
    dtype = DTYPES[args.dtype]
    model = load_checkpoint(args.checkpoint, dtype)
    batch = load_batch(args.batch, model.config.vocabulary_size)
    model.eval()
    loss = model.loss(batch)
    loss.backward()
    out = {"loss": loss.detach().reshape(())}
    for name, parameter in model.named_parameters():
        out[name] = parameter.grad if parameter.grad is not None else torch.zeros_like(parameter)
    write_safetensors(args.out, out)
    print(f"loss {loss.item():.17g} ({model.config.label}, {args.dtype}, "
          f"{int((batch['decoder_target'] != PAD).sum())} target tokens) -> {args.out}")


def read_bpe(path: str) -> tuple[str, int]:
    """An agf BPE model file (JSON, `agf bpe learn --output`): its text and its vocabulary size."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
        vocabulary_size = json.loads(text)["vocab_size"]
    except OSError as error:
        raise PeerError(f"cannot read '{path}': {error.strerror}") from None
    except (json.JSONDecodeError, KeyError, TypeError):
        raise PeerError(f"'{path}' is not an agf BPE model (JSON with a vocab_size)") from None
    return text, int(vocabulary_size)


def command_init(args) -> None:
    """A freshly initialised checkpoint, metadata as agf's save_checkpoint writes it: TransformerConfig::
    to_metadata, "format": "pt", and with --bpe the BPE model under "agf.bpe"."""
    metadata = {"format": "pt"}
    vocabulary_size = args.vocab_size
    if args.bpe:
        metadata["agf.bpe"], bpe_size = read_bpe(args.bpe)
        if vocabulary_size is not None and vocabulary_size != bpe_size:
            raise PeerError(f"--vocab-size {vocabulary_size} disagrees with the BPE model's {bpe_size}")
        vocabulary_size = bpe_size
    if vocabulary_size is None:
        raise PeerError("give --vocab-size or --bpe")
    config = Config.from_preset(args.preset, vocabulary_size=vocabulary_size, pos=args.pos, pcmv=args.pcmv,
                                abs_pe=args.abs_pe, pre_norm=args.pre_norm, max_distance=args.max_distance,
                                k=args.k, learnable_k=args.learnable_k)
    model = Transformer(config).to(DTYPES[args.dtype])
    initialise(model, args.seed)
    write_safetensors(args.out, dict(model.named_parameters()), {**metadata, **config.to_metadata()})
    count = sum(parameter.numel() for parameter in model.parameters())
    print(f"{config.preset} {config.label}: {count} parameters ({args.dtype}) -> {args.out}")


BENCH_SCHEMES = ("sinusoidal", "none", "rope", "alibi", "alibi-mult+pcmv", "t5", "kerple-log", "kerple-power",
                 "agf-b", "agf-b+pcmv", "agf-m+pcmv", "agf-f+pcmv")


def bench_one(config: Config, args) -> tuple[float, float]:
    """Times `args.steps` training steps after `args.warmup` untimed ones: (target tokens/s, seconds/step).

    A step: forward on a fresh random batch (B sentences × T tokens each side, ids 4..V-1, no padding), the
    loss, backward, Adam (β = (0.9, 0.98), eps 1e-9, lr 1e-4), dropout as the preset's. On `--device cuda`
    with `--precision bf16|fp16` the step runs under torch.autocast (f32 weights and Adam state, half
    compute copies, f32 softmax and loss) — the same split as agf's --precision — with a GradScaler for fp16.
    On the CPU, `--precision bf16` runs under torch.autocast('cpu', dtype=torch.bfloat16) (no scaler)."""
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise PeerError("bench: --device cuda but torch sees no CUDA device")
    if args.precision == "fp16" and device.type != "cuda":
        raise PeerError("bench: --precision fp16 needs --device cuda (bf16 runs on the CPU too)")
    if device.type != "cpu":
        # The model's helper tensors (positions, masks, tables) are made on the default device, so it must be
        # this one; torch.set_default_device came with PyTorch 2.0 (Debian's python3-torch is older, and on
        # the CPU it needs nothing).
        if not hasattr(torch, "set_default_device"):
            raise PeerError(f"bench: --device {args.device} needs PyTorch 2.0 or later (this is {torch.__version__})")
        torch.set_default_device(device)
    torch.manual_seed(args.seed)
    model = Transformer(config)
    initialise(model, args.seed)
    model.to(device)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    scaler = None
    if args.precision == "fp16":  # torch.amp.GradScaler is PyTorch 2.3's name for torch.cuda.amp.GradScaler
        scaler = torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") else torch.cuda.amp.GradScaler()
    batches = [{name: torch.randint(FIRST_ORDINARY_ID, config.vocabulary_size, (args.batch, args.length), device=device)
                for name in ("encoder_input", "decoder_input", "decoder_target")} for _ in range(4)]

    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    elapsed = 0.0
    for step in range(args.warmup + args.steps):
        batch = batches[step % len(batches)]
        synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=half, enabled=half is not None):
            loss = model.loss(batch)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        synchronize()
        if step >= args.warmup:
            elapsed += time.perf_counter() - start
    return args.batch * args.length * args.steps / elapsed, elapsed / args.steps


def command_bench(args) -> None:
    """Training-step throughput, one line per scheme."""
    if args.steps < 1 or args.warmup < 0 or args.batch < 1 or args.length < 1:
        raise PeerError("bench: --steps, --batch and --length must be positive and --warmup non-negative")
    if args.all_schemes:
        labels = BENCH_SCHEMES
    else:
        labels = [args.pos + ("+pcmv" if args.pcmv else "")]
    print(f"# torch {torch.__version__}, {args.device}, {args.precision}, {torch.get_num_threads()} threads, preset {args.preset}, "
          f"batch {args.batch} x {args.length} tokens each side, vocabulary {args.vocab}, "
          f"{args.steps} timed steps after {args.warmup} warm-up", flush=True)
    for label in labels:
        pos, _, flag = label.partition("+")
        config = Config.from_preset(args.preset, vocabulary_size=args.vocab, pos=pos, pcmv=flag == "pcmv",
                                    abs_pe=args.abs_pe, pre_norm=args.pre_norm)
        tokens_per_second, seconds = bench_one(config, args)
        print(f"{config.label:<18} {tokens_per_second:9.1f} target tokens/s  ({seconds * 1000:.0f} ms/step)", flush=True)


# ---- command line ---------------------------------------------------------------------------------------------

def add_model_options(parser: argparse.ArgumentParser, with_scheme: bool) -> None:
    parser.add_argument("--preset", default="cpu-small", choices=list(PRESETS),
                        help="model size (SPEC §6; tiny is for tests), default cpu-small")
    if with_scheme:
        parser.add_argument("--pos", default="sinusoidal", choices=SCHEMES, help="positional scheme (SPEC §5)")
        parser.add_argument("--pcmv", action="store_true", help="PCM-V: the coefficient also weights the values "
                            "(coefficient schemes only)")
    parser.add_argument("--abs-pe", action="store_true", help="add sinusoidal embeddings on top of the scheme")
    parser.add_argument("--pre-norm", action="store_true", help="pre-norm residual blocks (default post-norm)")


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="torch_peer.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{grad,init,bench}")

    grad = commands.add_parser(
        "grad", help="loss and gradients of a checkpoint on a batch (dropout off)",
        description="Rebuilds the model from CHECKPOINT's agf.config.* metadata, loads every parameter by name, "
                    "computes the label-smoothed (0.1) cross-entropy of BATCH averaged over non-pad targets with "
                    "dropout off, and writes OUT: a scalar 'loss' and each parameter's gradient under its name.")
    grad.add_argument("--checkpoint", required=True, help="model safetensors with agf.config.* metadata")
    grad.add_argument("--batch", required=True, help="safetensors with encoder_input, decoder_input, decoder_target "
                      "(i32/i64 [B, T], pad 0)")
    grad.add_argument("--out", required=True, help="where to write the gradients (safetensors)")
    grad.add_argument("--dtype", default="f64", choices=list(DTYPES), help="compute dtype (default f64)")

    init = commands.add_parser(
        "init", help="write a freshly initialised checkpoint",
        description="Writes a checkpoint initialised as docs/model.md says, with the agf.config.* metadata "
                    "TransformerConfig::to_metadata writes.")
    add_model_options(init, with_scheme=True)
    init.add_argument("--vocab-size", type=int, help="vocabulary size V (default: the --bpe model's)")
    init.add_argument("--bpe", help="agf BPE model (JSON) to store as agf.bpe, so that agf commands that tokenize "
                      "text (agf grad --src/--tgt) accept the checkpoint")
    init.add_argument("--seed", type=int, default=0, help="initialisation seed (torch's generator, not agf's)")
    init.add_argument("--max-distance", type=int, default=256, help="L, the lc2/lc3 table length (default 256)")
    init.add_argument("--k", type=float, default=2.0, help="the LC1 exponent (default 2)")
    init.add_argument("--learnable-k", action="store_true", help="make k a parameter (pos.k, agf-* only)")
    init.add_argument("--dtype", default="f32", choices=list(DTYPES), help="parameter dtype stored (default f32)")
    init.add_argument("--out", required=True, help="checkpoint to write (safetensors)")

    bench = commands.add_parser(
        "bench", help="training-step throughput (target tokens/s)",
        description="Times full training steps (forward, backward, Adam β=(0.9, 0.98), eps 1e-9) in f32 on random "
                    "batches without padding, dropout as the preset's, and prints target tokens/s "
                    "(B·T / step time), warm-up steps excluded.")
    add_model_options(bench, with_scheme=True)
    bench.add_argument("--all-schemes", action="store_true",
                       help=f"one line per scheme: {', '.join(BENCH_SCHEMES)} (ignores --pos, --pcmv)")
    bench.add_argument("--batch", type=int, default=64, help="sentences per batch (default 64)")
    bench.add_argument("--length", type=int, default=24, help="tokens per sentence, each side (default 24)")
    bench.add_argument("--vocab", type=int, default=8000, help="vocabulary size (default 8000)")
    bench.add_argument("--steps", type=int, default=10, help="timed steps (default 10)")
    bench.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2)")
    bench.add_argument("--seed", type=int, default=0, help="seed of parameters, batches and dropout")
    bench.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default cpu)")
    bench.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"],
                       help="fp32, or autocast to bf16 (CPU or CUDA) or fp16 (CUDA) (default fp32)")

    for sub in (grad, init, bench):
        sub.add_argument("--threads", type=int, default=2, help="torch intra-op threads (default 2)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_arguments(argv)
    torch.set_num_threads(max(1, args.threads))
    try:
        {"grad": command_grad, "init": command_init, "bench": command_bench}[args.command](args)
    except PeerError as error:
        print(f"torch_peer.py {args.command}: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
