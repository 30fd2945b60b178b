#pragma once
// Freed memory blocks kept by size for reuse, the policy shared by agf's two caching allocators (CPU,
// core/storage.cpp; CUDA, core/cuda/caching_allocator.cpp): a request for `size` bytes takes the smallest
// cached block of at least `size` and at most 2·size, so a training step, which asks for the same sizes
// every step, is served from the cache after the first. Not thread-safe: the allocators hold a lock.
#include <cstddef>
#include <map>

namespace agf {

class BlockCache {
 public:
  // A cached block of size..max_size bytes, and its size in *block_size; null when none fits.
  void* take(std::size_t size, std::size_t max_size, std::size_t* block_size) {
    const auto it = free_.lower_bound(size);
    if (it == free_.end() || it->first > max_size) return nullptr;
    void* pointer = it->second;
    *block_size = it->first;
    bytes_ -= it->first;
    free_.erase(it);
    return pointer;
  }

  void put(void* pointer, std::size_t size) {
    free_.emplace(size, pointer);
    bytes_ += size;
  }

  // Hands every cached block to release(pointer, size) and forgets it.
  template <class Release>
  void release_all(Release release) {
    for (const auto& [size, pointer] : free_) release(pointer, size);
    free_.clear();
    bytes_ = 0;
  }

  std::size_t bytes() const { return bytes_; }
  bool empty() const { return free_.empty(); }

 private:
  std::multimap<std::size_t, void*> free_;
  std::size_t bytes_ = 0;
};

}  // namespace agf
