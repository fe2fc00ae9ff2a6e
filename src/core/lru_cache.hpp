// A map with a fixed capacity that forgets its least recently used entry when full. Every
// in-memory cache of the library that a long-running process could grow without end (a
// context's plans and hardware descriptions, the compiled kernels) is one of these, so memory
// stays bounded however many distinct problems a service sees. Not thread-safe: its owner locks.
#pragma once

#include <cstddef>
#include <iterator>
#include <list>
#include <map>
#include <utility>

namespace dgemm {

template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

  // The value stored for `key`, now the most recently used; nullptr when absent.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Stores `value` unless `key` is already present (then the stored value is kept: two threads
  // that built the same entry share the first one). Returns the stored value, most recently used;
  // forgets the least recently used entry beyond the capacity.
  Value& insert(const Key& key, Value value) {
    if (Value* existing = find(key)) return *existing;
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

  std::size_t size() const { return order_.size(); }
  std::size_t capacity() const { return capacity_; }
  void clear() {
    index_.clear();
    order_.clear();
  }

 private:
  using Entries = std::list<std::pair<Key, Value>>;  // most recently used first
  std::size_t capacity_;
  Entries order_;
  std::map<Key, typename Entries::iterator> index_;
};

}  // namespace dgemm
