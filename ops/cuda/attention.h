#pragma once
// The attention op (ops/attention.h) on CUDA tensors; ops::attention_forward/backward route here.
//
// Two kernels compute it:
//   fused         (ops/attention_fused.h, ops/cuda/attention_fused_kernels.cu) online softmax, no [Tq, Tk]
//                 matrix in global memory; the backward recomputes the scores from q, k and the saved row
//                 log-sum-exp. Every scheme whose positional term is one number per pair (none, rope, alibi,
//                 alibi-mult, t5, kerple-*, agf-b, agf-m; PCM-V on or off), dk <= 256, f64/f32/f16/bf16.
//   materialized  (ops/cuda/attention_materialized_kernels.cu + cuBLAS) keeps a, a', P [B, H, Tq, Tk] in
//                 f32 (f64 for f64) and mirrors the CPU op step by step: agf-f (a coefficient per feature),
//                 dk > 256, and any call asked to take it.
// The positional table is computed on the host from the parameters (copied there: a few small transfers per
// call) by ops/cpu/attention_positional.cpp and moved to the device; its gradient comes back the same way,
// and each parameter's gradient is returned on that parameter's device.
#include "ops/attention.h"

namespace agf::ops::cuda {

enum class AttentionKernel : uint8_t { automatic, fused, materialized };

// The kernel a call takes: `requested`, or (automatic) fused when it can serve the call. Asking for fused
// where it cannot serve (agf-f, dk > 256, too little shared memory) is an error that says why.
AttentionKernel attention_kernel_for(const Tensor& q, const AttentionOptions& options,
                                     AttentionKernel requested = AttentionKernel::automatic);

AttentionForward attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_lengths,
                                   const PositionalParameters& positional, const AttentionOptions& options,
                                   AttentionKernel kernel = AttentionKernel::automatic);

// Takes the kernel the forward took (saved.row_logsumexp is defined after the fused one).
AttentionGradients attention_backward(const Tensor& grad, const Tensor& q, const Tensor& k, const Tensor& v,
                                      const Tensor& key_lengths, const PositionalParameters& positional,
                                      const AttentionOptions& options, const AttentionSaved& saved);

}  // namespace agf::ops::cuda
