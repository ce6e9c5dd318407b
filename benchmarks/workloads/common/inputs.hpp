// Deterministic pseudo-random inputs for the workloads: the same values on
// every rank count and in every variant.
#pragma once

#include <cstdint>

#include <Kokkos_Core.hpp>

namespace kfuse::bench {

/// U[0, 1) from a 64-bit mix (splitmix64) of an index and a stream number.
KOKKOS_INLINE_FUNCTION double uniform(std::int64_t index, std::uint64_t stream) {
  std::uint64_t z = static_cast<std::uint64_t>(index) * 0x9E3779B97F4A7C15ull +
                    (stream + 1) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

}  // namespace kfuse::bench
