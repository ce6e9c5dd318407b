// Sizes from user input, checked before anything is allocated: products of
// extents that would overflow, and allocations larger than the memory there is.
// A declared size (a grid's extents, a matrix file's header) must end in a
// kfuse::Error, never in a wrapped size, a huge allocation or the OOM killer.
#pragma once

#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>

#include <unistd.h>

#include "kfuse/core/config.hpp"

namespace kfuse::detail {

/// a * b, or nullopt when it does not fit index_t (or an operand is negative).
inline std::optional<index_t> checked_product(index_t a, index_t b) {
  index_t out = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

/// The product of n factors, or nullopt when it does not fit index_t.
template <class Factors>
std::optional<index_t> checked_product(const Factors& factors) {
  std::optional<index_t> out = 1;
  for (const auto f : factors)
    if (out) out = checked_product(*out, static_cast<index_t>(f));
  return out;
}

/// Bytes of host memory this process may still allocate without swapping:
/// MemAvailable of /proc/meminfo where there is one, else free physical pages.
inline std::uint64_t available_host_bytes() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f))
      found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    std::fclose(f);
    if (found) return static_cast<std::uint64_t>(kib) * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  return std::numeric_limits<std::uint64_t>::max();  // unknown: do not refuse
}

/// "1.5 GB" for messages.
inline std::string describe_bytes(double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) bytes /= 1000, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return text;
}

}  // namespace kfuse::detail
