// Softmax and log-softmax on a GPU against the CPU: forward and backward, rows of 1 to 50,000 columns
// (one warp per row up to 1,024 columns, one block per row beyond), every floating dtype, strided input.
#include <catch2/catch.hpp>

#include "ops/softmax.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;
using testing::random_f64;
using testing::require_near;
using testing::rounded;

namespace {
struct RowCase {
  int64_t rows, columns;
};
// Awkward lengths around a warp, a long row (block per row) and a vocabulary-sized row.
const std::vector<RowCase> kRowCases{{5, 1}, {37, 31}, {37, 33}, {9, 1000}, {3, 1025}, {4, 50000}};

std::string label(const char* op, DType dtype, const RowCase& shape) {
  return std::string(op) + " " + std::string(dtype_name(dtype)) + " [" + std::to_string(shape.rows) + ", " +
         std::to_string(shape.columns) + "]";
}
}  // namespace

TEST_CASE("softmax and log_softmax forward on the GPU equal the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (const RowCase& shape : kRowCases) {
    const Tensor x = random_f64({shape.rows, shape.columns}, 11 + shape.columns, 3.0);
    for (DType dtype : testing::kFloatingDtypes) {
      const Tensor input = x.to(dtype).to(Device::cuda());
      const Tensor base = rounded(x, dtype);
      require_near(ops::softmax_forward(input), ops::softmax_forward(base), testing::tolerance(dtype),
                   label("softmax", dtype, shape));
      require_near(ops::log_softmax_forward(input), ops::log_softmax_forward(base), testing::tolerance(dtype),
                   label("log_softmax", dtype, shape));
      if (dtype == DType::f32) {  // and against the CPU's own f32 result
        // (the CPU sums 50,000 f32 terms in a row: its own error reaches 2e-5 of the largest value)
        require_near(ops::softmax_forward(input), ops::softmax_forward(x.to(DType::f32)).to(DType::f64), 1e-4,
                     label("softmax vs cpu f32", dtype, shape));
      }
    }
  }
}

TEST_CASE("softmax and log_softmax backward on the GPU equal the CPU", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (const RowCase& shape : kRowCases) {
    const Tensor x = random_f64({shape.rows, shape.columns}, 21 + shape.columns, 3.0);
    const Tensor g = random_f64({shape.rows, shape.columns}, 31 + shape.columns);
    for (DType dtype : testing::kFloatingDtypes) {
      const Tensor grad = rounded(g, dtype);
      // Both sides start from the same (rounded) forward outputs.
      const Tensor y = rounded(ops::softmax_forward(x), dtype);
      const Tensor log_y = rounded(ops::log_softmax_forward(x), dtype);
      require_near(ops::softmax_backward(grad.to(dtype).to(Device::cuda()), y.to(dtype).to(Device::cuda())),
                   ops::softmax_backward(grad, y), testing::tolerance(dtype), label("softmax_backward", dtype, shape));
      require_near(ops::log_softmax_backward(grad.to(dtype).to(Device::cuda()), log_y.to(dtype).to(Device::cuda())),
                   ops::log_softmax_backward(grad, log_y), testing::tolerance(dtype),
                   label("log_softmax_backward", dtype, shape));
    }
  }
}

TEST_CASE("GPU softmax of strided input, -inf entries, 3-D shapes and errors", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  // A transposed view: rows are not contiguous.
  const Tensor x = random_f64({40, 6}, 5);
  const Tensor view_gpu = x.to(Device::cuda()).transpose(0, 1);
  require_near(ops::softmax_forward(view_gpu), ops::softmax_forward(x.transpose(0, 1)), 1e-12, "strided softmax");
  // Masked entries (-inf) get probability 0, also at the start of a row.
  std::vector<double> values(2 * 40);
  for (int64_t i = 0; i < 80; ++i) values[i] = (i % 40 < 7 || i % 5 == 0) ? -INFINITY : 0.1 * static_cast<double>(i);
  const Tensor masked = Tensor::from_vector(values, {2, 40}, DType::f64);
  require_near(ops::softmax_forward(masked.to(Device::cuda())), ops::softmax_forward(masked), 1e-12, "masked softmax");
  const Tensor gpu_log = ops::log_softmax_forward(masked.to(Device::cuda()));
  const std::vector<double> cpu_log = ops::log_softmax_forward(masked).to_double_vector();
  const std::vector<double> got = gpu_log.to(Device::cpu()).to_double_vector();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(cpu_log[i])) CHECK(got[i] == cpu_log[i]);
    else CHECK(got[i] == Approx(cpu_log[i]).epsilon(1e-12));
  }
  // Leading axes are rows.
  const Tensor cube = random_f64({2, 3, 33}, 6);
  require_near(ops::log_softmax_forward(cube.to(Device::cuda())), ops::log_softmax_forward(cube), 1e-12, "3-D");
  // Errors: integer input, mismatched shapes.
  const Tensor ids = Tensor::zeros({2, 3}, DType::i64, Device::cuda());
  CHECK_THROWS_WITH(ops::softmax_forward(ids), Catch::Contains("softmax") && Catch::Contains("floating"));
  CHECK_THROWS_WITH(ops::softmax_backward(Tensor::zeros({2, 3}, DType::f32, Device::cuda()),
                                          Tensor::zeros({2, 4}, DType::f32, Device::cuda())),
                    Catch::Contains("shapes differ"));
}
