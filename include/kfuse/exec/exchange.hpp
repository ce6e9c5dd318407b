// The exchanges that bring a group's neighbour data up to date, one kind per index space
// (exchange_t<D>): HaloRefresh<N> on grids, the halos of the arrays a group reads at an
// offset; GhostRefresh on row maps, the ghost values of its products' vectors. Each reads
// the handles' freshness, skips what is current or already queued, and marks what it
// refreshed fresh: exec alone reads and writes freshness. A group with one ghost import
// overlaps it with its interior rows (rows of A without ghost columns); several imports
// run one after the other before the kernel.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kfuse/array/array.hpp"
#include "kfuse/array/vector.hpp"
#include "kfuse/dist/halo_exchange.hpp"
#include "kfuse/exec/lower.hpp"
#include "kfuse/exec/space.hpp"

namespace kfuse::detail {

/// Calls f(product) for every A * x in a user-facing tree.
template <class E, class F>
void for_each_sparse_product(const E& e, F&& f) {
  for_each_node_of<is_sparse_product>(e, f);
}

/// The ghost imports of a row-map group: every A * x whose x lacks current ghost values for
/// A's import plan, once; finish() marks them fresh for that matrix.
class GhostRefresh {
 public:
  using rows_view = Kokkos::View<const int*, Kokkos::LayoutRight, MemSpace>;

  GhostRefresh() = default;
  /// Made from the row map it serves, as every index space's exchange is (exchange_t).
  explicit GhostRefresh(const RowMap&) {}

  /// Checks that x lies on A's columns and the group's rows on A's rows,
  /// then schedules x's import unless its ghosts are current.
  template <class T>
  void add(const char* api, const CsrMatrix<T>& A, const Vector<T>& x, const RowMap* rows) {
    check(api, A, x, rows);
    GhostImport<T>* plan = &A.import_plan();
    const void* matrix = A.storage_id();
    const auto ghosts = x.ghost_buffer(A.storage(), A.num_ghosts());
    if (x.ghosts_fresh_for(matrix)) return;
    const void* key[2] = {matrix, x.storage_id()};
    for (const Pending& p : pending_)
      if (p.key[0] == key[0] && p.key[1] == key[1]) return;
    pending_.push_back(Pending{{key[0], key[1]},
                               [plan, x, ghosts] { plan->start(x.view(), ghosts); },
                               [plan, x, matrix] {
                                 plan->finish();
                                 x.mark_ghosts_fresh(matrix);
                               },
                               A.interior_rows(),
                               A.interior_range(),
                               A.boundary_rows(),
                               A.col_idx().data()});
  }

  /// x must lie on A's columns, and A's rows be the statement's (`rows`, if known).
  template <class T>
  static void check(const char* api, const CsrMatrix<T>& A, const Vector<T>& x,
                    const RowMap* rows) {
    if (x.row_map() != A.domain())
      throw Error(error_message(api, ": in ", A.label(), " * ", x.label(), ", '", x.label(),
                                "' lives on row map ", x.row_map().describe(),
                                " but the columns of '", A.label(), "' are ",
                                A.domain().describe()));
    if (rows && *rows != A.range())
      throw Error(error_message(api, ": ", A.label(), " * ", x.label(), " has the rows of '",
                                A.label(), "' (", A.range().describe(),
                                ") but the statement runs on row map ", rows->describe()));
  }

  bool empty() const { return pending_.empty(); }
  /// One import, so its messages can fly while the interior rows run.
  bool can_overlap() const { return pending_.size() == 1 && pending_[0].interior.extent(0) > 0; }
  const rows_view& interior_rows() const { return pending_.front().interior; }
  /// The interior rows as one range, when they are consecutive.
  const std::optional<std::pair<index_t, index_t>>& interior_range() const {
    return pending_.front().interior_range;
  }
  const rows_view& boundary_rows() const { return pending_.front().boundary; }
  /// The column indices of the matrix whose interior and boundary rows these are.
  const int* matrix_columns() const { return pending_.front().columns; }

  void start() { pending_.front().start(); }
  void finish() { pending_.front().finish(); }
  /// Every import, completed (one at a time: imports of one matrix share its buffers).
  void run() {
    for (Pending& p : pending_) {
      p.start();
      p.finish();
    }
  }

 private:
  struct Pending {
    const void* key[2];  // import plan, vector storage
    std::function<void()> start, finish;
    rows_view interior;
    std::optional<std::pair<index_t, index_t>> interior_range;
    rows_view boundary;
    const int* columns;
  };
  std::vector<Pending> pending_;
};

/// The halo exchange of a grid group: every array it reads at an offset whose halo is
/// stale, once; finish() marks them fresh.
template <int N>
class HaloRefresh : public HaloExchange<N> {
 public:
  using HaloExchange<N>::HaloExchange;

  template <class T>
  void add(const Array<T, N>& a) {
    if (!a.halo_stale()) return;
    if (std::find(added_.begin(), added_.end(), a.storage_id()) != added_.end()) return;
    added_.push_back(a.storage_id());
    HaloExchange<N>::add(a.view(), [a] { a.mark_halo_fresh(); });
  }

 private:
  std::vector<const void*> added_;
};

/// The exchange that refreshes the neighbour data read on index space D, made from the
/// space. Both kinds offer add, empty, run, start/finish and what an overlapped launch
/// needs.
template <int D>
struct exchange_of {
  using type = HaloRefresh<domain::rank_of(D)>;
};
template <>
struct exchange_of<domain::row_map> {
  using type = GhostRefresh;
};
template <int D>
using exchange_t = typename exchange_of<D>::type;

/// Schedules the imports of every product in `e` (resolving placeholders
/// through ctx); `rows`: the row map the statement runs on, if known.
template <class E, class Ctx>
void collect_imports(const char* api, const E& e, const Ctx& ctx, const RowMap* rows,
                     GhostRefresh& imports) {
  for_each_sparse_product(e, [&](const auto& product) {
    imports.add(api, matrix_of(product.matrix, ctx), vector_of(product.x, ctx), rows);
  });
}

}  // namespace kfuse::detail
