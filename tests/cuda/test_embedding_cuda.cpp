// Embedding on a GPU against the CPU: the gather copies rows exactly (any dtype, i32 or i64 ids), the
// scatter-add backward sums repeated ids (f32 atomics: compared within a tolerance), and bad ids fail
// with the CPU's message before any kernel reads them.
#include <catch2/catch.hpp>

#include "ops/embedding.h"
#include "tests/cuda/nn_op_compare.h"

using namespace agf;
using testing::random_f64;
using testing::require_near;
using testing::rounded;

namespace {
// ids in [0, vocabulary) with many repeats (a small vocabulary share), shape [4, 9].
Tensor some_ids(int64_t vocabulary, uint64_t seed) {
  Generator generator(seed);
  const std::vector<double> u = uniform({36}, generator, 0.0, 1.0, DType::f64).to_double_vector();
  std::vector<int64_t> ids;
  for (double value : u)
    ids.push_back(static_cast<int64_t>(value * static_cast<double>(std::min<int64_t>(vocabulary, 7))));
  ids[3] = vocabulary - 1;
  return Tensor::from_vector(ids, {4, 9}, DType::i64);
}
}  // namespace

TEST_CASE("embedding forward on the GPU copies the CPU's rows exactly", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (int64_t features : {1, 33, 512}) {
    const Tensor table = random_f64({50, features}, 40 + features);
    for (DType id_dtype : {DType::i64, DType::i32}) {
      const Tensor ids = some_ids(50, 7).to(id_dtype);
      for (DType dtype : testing::kFloatingDtypes) {
        const Tensor out = ops::embedding_forward(table.to(dtype).to(Device::cuda()), ids.to(Device::cuda()));
        REQUIRE(out.shape() == Shape{4, 9, features});
        testing::require_close(out, ops::embedding_forward(rounded(table, dtype), ids).to(dtype), 0, 0, "gather");
      }
    }
  }
  // A strided table (a column slice) is gathered like its contiguous copy.
  const Tensor wide = random_f64({50, 20}, 3);
  const Tensor ids = some_ids(50, 8);
  testing::require_close(ops::embedding_forward(wide.to(Device::cuda()).slice(1, 2, 9), ids.to(Device::cuda())),
                         ops::embedding_forward(wide.slice(1, 2, 9), ids), 0, 0, "strided table");
}

TEST_CASE("embedding backward on the GPU sums repeated ids as the CPU does", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  for (int64_t features : {1, 33, 512}) {
    const Tensor grad = random_f64({4, 9, features}, 50 + features);
    for (DType id_dtype : {DType::i64, DType::i32}) {
      const Tensor ids = some_ids(50, 9).to(id_dtype);
      for (DType dtype : testing::kFloatingDtypes) {
        const Tensor result = ops::embedding_backward(grad.to(dtype).to(Device::cuda()), ids.to(Device::cuda()), 50);
        REQUIRE(result.shape() == Shape{50, features});
        REQUIRE(result.dtype() == dtype);
        require_near(result, ops::embedding_backward(rounded(grad, dtype), ids, 50), testing::tolerance(dtype),
                     std::string("scatter-add ") + std::string(dtype_name(dtype)));
      }
    }
  }
}

// The GPU checks ids without a host wait (core/cuda/deferred_check.h): the error comes at the next
// synchronisation with the device, with the CPU's message; meanwhile the kernels stay inside the table.
TEST_CASE("embedding on the GPU refuses ids outside the table with the CPU's message", "[cuda][gpu]") {
  AGF_REQUIRE_GPU();
  const Tensor table = random_f64({10, 4}, 1);
  for (int64_t bad : {10, -1, 1000000}) {
    for (DType id_dtype : {DType::i64, DType::i32}) {
      const Tensor ids = Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, bad, 6, bad}, {2, 4}).to(id_dtype);
      const std::string cpu = testing::error_of([&] { ops::embedding_forward(table, ids); });
      Tensor rows;
      CHECK(testing::error_of([&] {
              rows = ops::embedding_forward(table.to(Device::cuda()), ids.to(Device::cuda()));
            }) == "no error");                                                               // deferred ...
      const std::string gpu = testing::error_of([&] { agf::synchronize(Device::cuda()); });  // ... to here
      CHECK(cpu.find("at position 5") != std::string::npos);
      CHECK(gpu == cpu);
      // The bad positions read zero rows, the good ones their rows.
      const std::vector<double> gathered = rows.to(Device::cpu()).to_double_vector();
      CHECK(std::vector<double>(gathered.begin() + 20, gathered.begin() + 24) == std::vector<double>(4, 0.0));
      CHECK(gathered[0] == table.to_double_vector()[4]);
      const Tensor grad = Tensor::ones({2, 4, 4}, DType::f64);
      CHECK(testing::error_of([&] {
              ops::embedding_backward(grad.to(Device::cuda()), ids.to(Device::cuda()), 10).to(Device::cpu());
            }) == testing::error_of([&] { ops::embedding_backward(grad, ids, 10); }));
    }
  }
  // The device is still usable after the refusal.
  const Tensor ids = Tensor::from_vector(std::vector<int64_t>{9, 0}, {2});
  testing::require_close(ops::embedding_forward(table.to(Device::cuda()), ids.to(Device::cuda())),
                         ops::embedding_forward(table, ids), 0, 0, "after an error");
  CHECK_THROWS_WITH(ops::embedding_forward(table.to(Device::cuda()), ids), Catch::Contains("different devices"));
}
