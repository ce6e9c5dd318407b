// kfuse::Error: the exception every run-time check throws (on every rank, before
// anything is modified). Messages start with the API name, like Kokkos'.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kfuse {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {

/// Builds a message from streamable parts: error_message("kfuse::Grid: ", n, " ranks").
template <class... Parts>
std::string error_message(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

}  // namespace detail
}  // namespace kfuse
