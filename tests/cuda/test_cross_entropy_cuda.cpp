// Cross-entropy on a GPU against the CPU: loss and gradient with and without label smoothing, with
// ignored rows (ignore_index -100 and an in-range ignore_index), vocabularies of 1 to 50,000 classes,
// every floating dtype, i32 and i64 targets, every row ignored, and bad targets.
#include <catch2/catch.hpp>

#include "ops/cross_entropy.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;
using testing::random_f64;
using testing::require_near;
using testing::rounded;

namespace {
// Targets in [0, classes), with every fifth row set to `ignore`.
Tensor some_targets(int64_t rows, int64_t classes, int64_t ignore, uint64_t seed) {
  Generator generator(seed);
  const std::vector<double> u = uniform({rows}, generator, 0.0, 1.0, DType::f64).to_double_vector();
  std::vector<int64_t> targets;
  for (int64_t r = 0; r < rows; ++r) {
    targets.push_back(r % 5 == 2 ? ignore : static_cast<int64_t>(u[r] * static_cast<double>(classes)));
  }
  return Tensor::from_vector(targets, {rows}, DType::i64);
}

std::string label(DType dtype, int64_t rows, int64_t classes, const ops::CrossEntropyOptions& options) {
  return std::string(dtype_name(dtype)) + " [" + std::to_string(rows) + ", " + std::to_string(classes) +
         "] smoothing " + std::to_string(options.label_smoothing) + " ignore " + std::to_string(options.ignore_index);
}
}  // namespace

TEST_CASE("cross_entropy forward and backward on the GPU equal the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  struct Case {
    int64_t rows, classes;
  };
  for (const Case& shape : std::vector<Case>{{6, 1}, {40, 31}, {40, 33}, {17, 1000}, {6, 50000}}) {
    const Tensor logits = random_f64({shape.rows, shape.classes}, 60 + shape.classes, 2.0);
    for (const ops::CrossEntropyOptions& options :
         {ops::CrossEntropyOptions{0.0, -100}, ops::CrossEntropyOptions{0.1, -100}, ops::CrossEntropyOptions{0.1, 0}}) {
      for (DType target_dtype : {DType::i64, DType::i32}) {
        const Tensor targets = some_targets(shape.rows, shape.classes, options.ignore_index, 70).to(target_dtype);
        const Tensor targets_gpu = targets.to(Device::cuda());
        for (DType dtype : testing::kFloatingDtypes) {
          const Tensor base = rounded(logits, dtype);
          const Tensor input = logits.to(dtype).to(Device::cuda());
          const std::string what = label(dtype, shape.rows, shape.classes, options);
          const Tensor loss = ops::cross_entropy_forward(input, targets_gpu, options);
          REQUIRE(loss.dim() == 0);
          REQUIRE(loss.dtype() == dtype);
          require_near(loss, ops::cross_entropy_forward(base, targets, options), testing::tolerance(dtype),
                       "loss " + what);
          // ∂L/∂z = 0.75·(softmax − smoothed target)/counted, counted = the rows not ignored (≤ rows): terms of
          // at least 0.75/rows, which cancel to 0 exactly with one class (the reference then holds 1e-17).
          const Tensor grad = Tensor::scalar(0.75, DType::f64);
          require_near(ops::cross_entropy_backward(grad.to(dtype).to(Device::cuda()), input, targets_gpu, options),
                       ops::cross_entropy_backward(grad, base, targets, options), testing::tolerance(dtype),
                       "grad " + what, 0.75 / static_cast<double>(shape.rows));
        }
      }
    }
  }
}

TEST_CASE("GPU cross_entropy: every row ignored, grad in another dtype, bad targets", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const Tensor logits = random_f64({4, 7}, 1);
  const Tensor ignored = Tensor::from_vector(std::vector<int64_t>{-100, -100, -100, -100}, {4});
  const ops::CrossEntropyOptions options{0.1, -100};
  const Tensor loss = ops::cross_entropy_forward(logits.to(Device::cuda()), ignored.to(Device::cuda()), options);
  CHECK(loss.item() == 0.0);
  const Tensor zero_grad = ops::cross_entropy_backward(Tensor::scalar(1.0, DType::f64).to(Device::cuda()),
                                                       logits.to(Device::cuda()), ignored.to(Device::cuda()), options);
  CHECK(zero_grad.to(Device::cpu()).to_double_vector() == std::vector<double>(28, 0.0));
  // The incoming gradient may be f32 for f64 logits (converted on the device).
  const Tensor targets = Tensor::from_vector(std::vector<int64_t>{1, 6, -100, 0}, {4});
  require_near(ops::cross_entropy_backward(Tensor::scalar(2.0, DType::f32).to(Device::cuda()),
                                           logits.to(Device::cuda()), targets.to(Device::cuda()), options),
               ops::cross_entropy_backward(Tensor::scalar(2.0, DType::f64), logits, targets, options), 1e-12,
               "f32 grad");
  for (int64_t bad : {7, -1, -99}) {
    const Tensor wrong = Tensor::from_vector(std::vector<int64_t>{1, -100, bad, bad}, {4});
    const std::string cpu = testing::error_of([&] { ops::cross_entropy_forward(logits, wrong, options); });
    CHECK(cpu.find("at row 2") != std::string::npos);
    // Checked on the GPU without a host wait: the error comes with the next read of a result.
    CHECK(testing::error_of([&] {
            ops::cross_entropy_forward(logits.to(Device::cuda()), wrong.to(Device::cuda()), options).item();
          }) == cpu);
    CHECK(testing::error_of([&] {
            ops::cross_entropy_backward(Tensor::scalar(1.0, DType::f64).to(Device::cuda()), logits.to(Device::cuda()),
                                        wrong.to(Device::cuda()), options)
                .to(Device::cpu());
          }) == testing::error_of([&] {
            ops::cross_entropy_backward(Tensor::scalar(1.0, DType::f64), logits, wrong, options);
          }));
  }
  CHECK_THROWS_WITH(ops::cross_entropy_forward(logits.to(Device::cuda()), targets, options),
                    Catch::Contains("different devices"));
}
