// Helpers of the io tests: files as bytes, bitwise comparison, errors caught.
#pragma once

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <kfuse/kfuse.hpp>

namespace kfuse_test {

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// Runs f on rank 0 while the other ranks wait (file preparation).
template <class F>
void on_root(const kfuse::Comm& comm, const F& f) {
  if (comm.rank() == 0) f();
  comm.barrier();
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// The message of the kfuse::Error that f throws, or "" when it throws none.
template <class F>
std::string error_of(const F& f) {
  try {
    f();
  } catch (const kfuse::Error& e) {
    return e.what();
  }
  return {};
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace kfuse_test
