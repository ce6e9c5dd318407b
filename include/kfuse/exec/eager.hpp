// Eager statements: `a = expr;` (Array::operator=) and kfuse::eval(reduction)
// run at once as one kernel (plus a halo exchange if a stencil read needs
// one). A target that is also read at an offset gets NumPy semantics: the
// right side is computed into a temporary first, then copied.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "kfuse/exec/group.hpp"

namespace kfuse::detail {

/// Lowering context of an eager statement: only handles, no placeholders.
template <int N>
struct EagerContext {
  const Grid<N>* grid;
  template <int I>
  static constexpr bool in_register = false;
  index_t index_offset(int d) const { return grid->local_begin(d) - grid->halo(); }
};

/// Checks every array leaf against `grid`, collects stale stencil reads into
/// `exchange`, and reports whether `target` (if any) is read at an offset.
template <int N, class E, class T>
bool prepare_leaves(const char* api, const E& e, const Grid<N>& grid, HaloExchange<N>& exchange,
                    const Array<T, N>* target) {
  bool aliased = false;
  std::vector<const void*> added;
  for_each_leaf(e, [&](const auto& leaf) {
    using L = std::decay_t<decltype(leaf)>;
    auto check = [&](const auto& a, int reach) {
      if (a.grid() != grid)
        throw Error(error_message(api, ": array '", a.label(), "' lives on grid ",
                                  a.grid().describe(), " but the statement runs on grid ",
                                  grid.describe()));
      if (reach > grid.halo())
        throw Error(error_message(api, ": array '", a.label(), "' is read at offset ", reach,
                                  " but its grid's halo is only ", grid.halo()));
    };
    if constexpr (is_leaf_handle<L>::value && expr_traits<L>::domain == N) {
      check(leaf, 0);
    } else if constexpr (is_shifted<L>::value) {
      const auto& a = leaf.leaf;
      if constexpr (std::decay_t<decltype(a)>::rank == N) {
        check(a, L::reach);
        if (!L::pointwise) {
          if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Array<T, N>>)
            if (target && a.same_storage(*target)) aliased = true;
          if (a.halo_stale() && std::find(added.begin(), added.end(), a.storage_id()) == added.end()) {
            exchange.add(a);
            added.push_back(a.storage_id());
          }
        }
      }
    }
  });
  return aliased;
}

/// Finds the grid of the first array leaf (for eval of reductions).
template <class E>
auto first_grid(const E& e) {
  constexpr int N = expr_traits<E>::domain;
  std::optional<Grid<N>> grid;
  for_each_leaf(e, [&](const auto& leaf) {
    using L = std::decay_t<decltype(leaf)>;
    if constexpr (is_leaf_handle<L>::value && expr_traits<L>::domain == N) {
      if (!grid) grid = leaf.grid();
    } else if constexpr (is_shifted<L>::value) {
      if (!grid) grid = leaf.leaf.grid();
    }
  });
  return grid;
}

template <class T, int N, class Expr>
void eager_assign(Array<T, N>& target, const Expr& expr) {
  using E = node_t<Expr>;
  static_assert(!is_reduction<Expr>::value,
                "kfuse::Array::operator=: a reduction gives one value, not an array; use "
                "kfuse::eval(reduction) for its value");
  static_assert(is_operand_v<Expr>,
                "kfuse::Array::operator=: the right side must be an expression or a number");
  static_assert(!expr_traits<E>::strict || std::is_same_v<typename expr_traits<E>::value_type, T>,
                "kfuse::Array::operator=: the expression's element type differs from the "
                "array's; convert it with kfuse::cast<T>(e)");
  static_assert(domain::compatible(expr_traits<E>::domain, N),
                "kfuse::Array::operator=: the expression iterates arrays of another rank");
  const E e = as_node(expr);
  const Grid<N>& grid = target.grid();
  HaloExchange<N> exchange(grid);
  const bool aliased = prepare_leaves("kfuse::Array::operator=", e, grid, exchange, &target);
  if (!exchange.empty()) exchange.run();
  EagerContext<N> ctx{&grid};
  const std::string label = "kfuse:group[assign " + target.label() + "]";
  const auto value = lower(e, ctx);
  using V = std::decay_t<decltype(value)>;
  if (aliased) {  // NumPy semantics: evaluate completely, then copy
    Array<T, N> scratch(grid, target.label() + ".rhs");
    run_kernel<N>(label, owned_box(grid),
                  make_statement_list(StoreView<T, N, V>{scratch.view(), value}),
                  grid.comm());
    const auto copy = lower(scratch, ctx);
    using C = std::decay_t<decltype(copy)>;
    run_kernel<N>(label + ":copy", owned_box(grid),
                  make_statement_list(StoreView<T, N, C>{target.view(), copy}),
                  grid.comm());
  } else {
    run_kernel<N>(label, owned_box(grid),
                  make_statement_list(StoreView<T, N, V>{target.view(), value}),
                  grid.comm());
  }
  target.mark_halo_stale();
}

}  // namespace kfuse::detail

namespace kfuse {

/// Evaluates a reduction now (one kernel and one allreduce), or a
/// scalar-only expression on the host, and returns its value.
template <class E>
auto eval(const E& e) {
  using namespace detail;
  if constexpr (is_reduction<E>::value) {
    using T = typename E::value_type;
    constexpr int N = E::domain;
    static_assert(N >= 1 && N <= 3, "kfuse::eval(r): r must reduce over Array expressions");
    const auto grid = first_grid(e.arg);
    if (!grid) throw Error("kfuse::eval: the reduction reads no array, so its grid is unknown");
    HaloExchange<N> exchange(*grid);
    prepare_leaves<N, decltype(e.arg), T>("kfuse::eval", e.arg, *grid, exchange, nullptr);
    if (!exchange.empty()) exchange.run();
    EagerContext<N> ctx{&*grid};
    const auto value = lower(e.arg, ctx);
    using Op = typename E::op_type;
    const auto acc = run_kernel<N>(
        "kfuse:group[eval " + std::string(Op::symbol) + "]", owned_box(*grid),
        make_statement_list(Accumulate<0, Op, T, std::decay_t<decltype(value)>>{value}), grid->comm());
    return E::finish_type::apply(accumulator_of<0>(acc));
  } else {
    static_assert(is_operand_v<E> && expr_traits<node_t<E>>::domain == domain::scalar,
                  "kfuse::eval(e): e must be a reduction (sum, dot, norm2, reduce_max, "
                  "reduce_min) or an expression of Scalars and numbers");
    EagerContext<1> ctx{nullptr};
    NoRegisters none;
    return lower(as_node(e), ctx).eval(Point<1>{{0}}, none);
  }
}

}  // namespace kfuse
