#include "train/sequence_loss.h"

#include "autograd/functions.h"
#include "data/bpe_model.h"
#include "train/mixed_precision.h"

namespace agf::train {

Variable sequence_loss(const Variable& logits, const Tensor& targets, double label_smoothing) {
  const int64_t vocabulary = logits.size(-1);
  const Variable wide = cast(logits, accumulation_dtype(logits.dtype()));
  return cross_entropy(reshape(wide, {-1, vocabulary}), targets.reshape({-1}),
                       {.label_smoothing = label_smoothing, .ignore_index = data::pad_id});
}

}  // namespace agf::train
