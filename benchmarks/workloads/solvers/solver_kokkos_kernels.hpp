// Vectors of the Kokkos Kernels solver variants: LayoutLeft (what Debian's
// Kokkos Kernels instantiates), one array over the local columns of A for a
// vector that spmv reads (owned entries, then the ghosts the matrix's import
// plan brings in).
#pragma once

#include <string>
#include <utility>

#include "solvers.hpp"

namespace kfuse::bench::solvers::kk {

using KView = Kokkos::View<double*, Kokkos::LayoutLeft, detail::MemSpace>;

struct KColumnVector {
  KView all;
  std::int64_t owned = 0;
  KColumnVector(const Matrix& A, const std::string& label)
      : all(label, static_cast<std::size_t>(A.domain().local_size() + A.num_ghosts())),
        owned(A.domain().local_size()) {}
  KView owned_part() const { return Kokkos::subview(all, std::make_pair(std::int64_t(0), owned)); }
  /// Imports the ghosts into the tail (the plan's buffers are LayoutRight:
  /// unmanaged views of the same memory).
  void import(const Matrix& A) const {
    const std::size_t ghosts = all.extent(0) - static_cast<std::size_t>(owned);
    A.import_plan().run(GhostImport<double>::const_view_type(all.data(), std::size_t(owned)),
                        GhostImport<double>::view_type(all.data() + owned, ghosts));
  }
};

/// A LayoutLeft copy of a vector's owned entries.
inline KView copy_of(const Vec& v) {
  KView out(v.label(), v.view().extent(0));
  Kokkos::deep_copy(out, v.view());
  return out;
}

}  // namespace kfuse::bench::solvers::kk
