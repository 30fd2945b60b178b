#pragma once
// The attention gradient checks (added to the registry by attention_checks.cpp for `agf gradcheck` and the tests):
// one configuration = scheme × PCM-V × causal, each checked with and without key padding, plus
// cross-attention shapes (Tq ≠ Tk), dropout and edge cases. The helpers are public so the tests can
// build the very same inputs (e.g. to compare with attention composed from primitive ops).
#include <string>
#include <vector>

#include "autograd/attention.h"
#include "autograd/gradcheck.h"

namespace agf {

struct AttentionCheckCase {
  ops::AttentionOptions options;
  int64_t batch = 2, heads = 2, queries = 4, keys = 4, head_dim = 4;
  std::vector<int64_t> key_lengths;  // empty: no padding
  bool learnable_k = true;           // agf-*: include k among the checked parameters
  bool negative_rho_before = false;  // rho[δ=0, :] < 0 (the clamped branch)
  uint64_t seed = 1;
};

// Names of the scheme's learnable parameters, in PositionalVariables order (G, rho, k, lc2, lc3, t5_table, r1, r2).
std::vector<std::string> positional_parameter_names(ops::PositionalScheme scheme, bool learnable_k);

// f64 inputs: q, k, v, then the parameters named above, drawn from case.seed (parameters near, not at,
// their initial values so that every gradient term is exercised).
std::vector<Tensor> attention_check_inputs(const AttentionCheckCase& c);

// Splits inputs back into q, k, v and the PositionalVariables, and calls the op.
Variable attention_check_function(const AttentionCheckCase& c, const std::vector<Variable>& inputs);

// "attention:agf-m+pcmv+causal" — the name `agf gradcheck --op attention --pos agf-m --pcmv --causal` runs.
std::string attention_check_name(ops::PositionalScheme scheme, bool pcmv, bool causal);

// gradcheck of every input of the case.
GradcheckResult run_attention_gradcheck(const AttentionCheckCase& c);

}  // namespace agf
