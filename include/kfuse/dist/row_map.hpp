// RowMap: a 1-D index space [0, global_size) split into contiguous blocks of
// rows, one per rank of a Comm (remainders spread over the first ranks, like
// PETSc's PETSC_DECIDE). Vectors live on a RowMap; a CsrMatrix has one for
// its rows (range) and one for its columns (domain). A handle: copies share
// the block table; two maps are equal when their blocks are.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/dist/comm.hpp"

namespace kfuse {

class RowMap {
 public:
  /// Collective: every rank must pass the same global size.
  RowMap(const Comm& comm, index_t global_size) : impl_(std::make_shared<Impl>(comm)) {
    std::string error;
    if (global_size < 0)
      error = detail::error_message("kfuse::RowMap: global size ", global_size, " is negative");
    comm.agree_or_throw(error);
    comm.check_same(global_size, "kfuse::RowMap", "global sizes");
    const int p = comm.size();
    impl_->offsets.resize(static_cast<std::size_t>(p) + 1);
    for (int r = 0; r <= p; ++r)
      impl_->offsets[r] = global_size / p * r + std::min<index_t>(r, global_size % p);
  }

  /// Collective: each rank owns `local_size` rows, in rank order.
  static RowMap from_local_size(const Comm& comm, index_t local_size) {
    std::string error;
    if (local_size < 0)
      error = detail::error_message("kfuse::RowMap::from_local_size: local size ", local_size,
                                    " is negative");
    comm.agree_or_throw(error);
    RowMap map(std::make_shared<Impl>(comm));
    const int p = comm.size();
    std::vector<index_t> sizes(static_cast<std::size_t>(p), 0);
    sizes[comm.rank()] = local_size;
    comm.allreduce(sizes.data(), p, ReduceOp::sum);
    map.impl_->offsets.assign(1, 0);
    for (int r = 0; r < p; ++r) map.impl_->offsets.push_back(map.impl_->offsets.back() + sizes[r]);
    return map;
  }

  const Comm& comm() const { return impl_->comm; }
  /// The communicator the map was made on: comm() itself (Grid::base_comm's twin).
  const Comm& base_comm() const { return impl_->comm; }
  index_t global_size() const { return impl_->offsets.back(); }
  index_t local_size() const { return size_of(impl_->comm.rank()); }
  /// First global row owned by this rank.
  index_t local_begin() const { return begin_of(impl_->comm.rank()); }
  index_t begin_of(int rank) const { return impl_->offsets[rank]; }
  index_t size_of(int rank) const { return impl_->offsets[rank + 1] - impl_->offsets[rank]; }
  /// The rank owning global row `row` (0 <= row < global_size()).
  int owner(index_t row) const {
    const auto& o = impl_->offsets;
    return static_cast<int>(std::upper_bound(o.begin(), o.end(), row) - o.begin()) - 1;
  }
  bool owns(index_t row) const { return row >= local_begin() && row < local_begin() + local_size(); }

  friend bool operator==(const RowMap& a, const RowMap& b) {
    return a.impl_ == b.impl_ || (a.impl_->comm == b.impl_->comm && a.impl_->offsets == b.impl_->offsets);
  }
  friend bool operator!=(const RowMap& a, const RowMap& b) { return !(a == b); }

  /// "1000 rows over 4 ranks (250 here, from 500)".
  std::string describe() const {
    return detail::error_message(global_size(), " rows over ", comm().size(), " ranks (",
                                 local_size(), " here, from ", local_begin(), ")");
  }

 private:
  struct Impl {
    Comm comm;
    std::vector<index_t> offsets;  // rank r owns [offsets[r], offsets[r+1])
    explicit Impl(const Comm& c) : comm(c) {}
  };
  explicit RowMap(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  std::shared_ptr<Impl> impl_;
};

}  // namespace kfuse
