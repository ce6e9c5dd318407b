// Eager statements: `a = expr;` (Array::operator=) and kfuse::eval(reduction)
// run at once as one kernel (after the halo exchange or ghost import its
// reads need, through the programs' runner, run_exchanged, not overlapped),
// and return when it is done, as a program does: on a GPU the host and
// MPI may then read the target. A target that is also read at an offset gets
// NumPy semantics: the right side is computed into a temporary first, then
// copied.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "kfuse/core/box_loop.hpp"
#include "kfuse/exec/exchange.hpp"
#include "kfuse/exec/group.hpp"
#include "kfuse/exec/space.hpp"

namespace kfuse::detail {

/// Lowering context of an eager statement: only handles, no placeholders.
template <int D>
struct EagerContext {
  const space_t<D>* grid;
  template <int I>
  static constexpr bool in_register = false;
  index_t index_offset(int d) const { return detail::index_offset(*grid, d); }
};

/// Whether `a` is the statement's target (never when the target has another
/// type, or there is none). A named function: nvcc rejects `*target` on a
/// `const void*` in for_each_leaf's generic lambda even where `if constexpr`
/// discards it.
template <class A, class Target>
bool is_target(const A& a, const Target* target) {
  if constexpr (std::is_same_v<A, Target>) {
    return target != nullptr && a.same_storage(*target);
  } else {
    (void)a, (void)target;
    return false;
  }
}

/// Checks every array leaf against `space` (collectively: an error on one rank throws on
/// all), adds its stencil reads and products to `exchange` (which keeps the stale ones),
/// and reports whether `target` (if any) is read at an offset.
template <int D, class E, class Target>
bool prepare_leaves(const char* api, const E& e, const space_t<D>& space, exchange_t<D>& exchange,
                    const Target* target) {
  bool aliased = false;
  auto check = [&](const auto& a, int reach) {
    if (space_of(a) != space)
      throw Error(error_message(api, ": '", a.label(), "' lives on ", describe_space(space_of(a)),
                                " but the statement runs on ", describe_space(space)));
    if constexpr (D != domain::row_map)
      if (reach > space.halo())
        throw Error(error_message(api, ": array '", a.label(), "' is read at offset ", reach,
                                  " but its grid's halo is only ", space.halo()));
  };
  std::string error;
  try {
    for_each_leaf(e, [&](const auto& leaf) {
      using L = std::decay_t<decltype(leaf)>;
      if constexpr (is_leaf_handle<L>::value && expr_traits<L>::domain == D) {
        check(leaf, 0);
      } else if constexpr (is_sparse_product<L>::value) {
        if constexpr (D == domain::row_map) {
          exchange.add(api, leaf.matrix, leaf.x, &space);
          if (is_target(leaf.x, target)) aliased = true;
        }
      } else if constexpr (is_shifted<L>::value) {
        const auto& a = leaf.leaf;
        if constexpr (expr_traits<std::decay_t<decltype(a)>>::domain == D) {
          check(a, L::reach);
          if (!L::pointwise) {
            if (is_target(a, target)) aliased = true;
            exchange.add(a);  // if stale, once
          }
        }
      }
    });
  } catch (const Error& failure) {
    error = failure.what();
  }
  // A mismatch on one rank only (other ranks would wait in the exchange) throws
  // on all; agreed on the communicator the space was made on, which is the
  // same for every grid of a run, unlike a grid's own Cartesian one.
  space.base_comm().agree_or_throw(error);
  return aliased;
}

/// The index space of the first array leaf (for eval of reductions).
template <class E>
auto first_space(const E& e) {
  constexpr int D = expr_traits<E>::domain;
  std::optional<space_t<D>> space;
  for_each_leaf(e, [&](const auto& leaf) {
    using L = std::decay_t<decltype(leaf)>;
    if constexpr (is_leaf_handle<L>::value && expr_traits<L>::domain == D) {
      if (!space) space = space_of(leaf);
    } else if constexpr (is_shifted<L>::value) {
      if (!space) space = space_of(leaf.leaf);
    } else if constexpr (is_sparse_product<L>::value) {
      if (!space) space = leaf.matrix.range();
    }
  });
  return space;
}

/// `target = expr` now, for an Array or a Vector target.
template <class Target, class Expr>
void eager_assign_to(const char* api, Target& target, const Expr& expr) {
  using T = typename Target::value_type;
  using E = node_t<Expr>;
  constexpr int D = domain_of<Target>::value;
  constexpr int R = kernel_rank<D>;
  static_assert(!is_reduction<Expr>::value,
                "kfuse::Array::operator=: a reduction gives one value, not an array; use "
                "kfuse::eval(reduction) for its value");
  static_assert(is_operand_v<Expr>,
                "kfuse::Array::operator=: the right side must be an expression or a number");
  static_assert(!expr_traits<E>::strict || std::is_same_v<typename expr_traits<E>::value_type, T>,
                "kfuse::Array::operator=: the expression's element type differs from the "
                "array's; convert it with kfuse::cast<T>(e)");
  static_assert(domain::compatible(expr_traits<E>::domain, D),
                "kfuse::Array::operator=: the expression iterates another domain (arrays of "
                "another rank, or grid arrays and vectors mixed)");
  const E e = as_node(expr);
  const auto& space = space_of(target);
  // y = A * x alone under the GPU schedule: Kokkos Kernels' SpMV on the local block
  // (after the import), whose teams balance rows where the general path runs a thread
  // per row; unless y is x (then the general path computes through a copy). On the
  // host the general path loops along rows as fused programs do: 3-13% faster than
  // Kokkos Kernels' SpMV here (a 2-D Poisson matrix of 1-2 M rows, 1 and 2 ranks),
  // and a file's eager products then compile no SpMV of Kokkos Kernels (docs/benchmarks-log.md,
  // Compile cost).
  if constexpr (is_sparse_product<E>::value && std::is_same_v<default_schedule, DeviceSchedule>) {
    if (!e.x.same_storage(target)) {
      space.base_comm().agree_on([&] { GhostRefresh::check(api, e.matrix, e.x, &space); });
      spmv(e.matrix, e.x.view(), target.view());
      target.mark_halo_stale();
      ExecSpace().fence();
      return;
    }
  }
  exchange_t<D> exchange(space);
  const bool aliased = prepare_leaves<D>(api, e, space, exchange, &target);
  EagerContext<D> ctx{&space};
  const std::string label = "kfuse:group[assign " + target.label() + "]";
  const auto value = lower(e, ctx);
  using V = std::decay_t<decltype(value)>;
  if (aliased) {  // NumPy semantics: evaluate completely, then copy
    // Not the collective constructor: whether the target is aliased is this
    // rank's view (the same on every rank for the same handles).
    Target scratch(space, target.label() + ".rhs", local_errors);
    run_exchanged<D, false>(
        label, space, make_statement_list(StoreView<T, R, V>{scratch.view(), value}), exchange);
    const auto copy = lower(scratch, ctx);
    using C = std::decay_t<decltype(copy)>;
    run_kernel<R>(label + ":copy", owned_box(space),
                  make_statement_list(StoreView<T, R, C>{target.view(), copy}), space.comm());
  } else {
    run_exchanged<D, false>(
        label, space, make_statement_list(StoreView<T, R, V>{target.view(), value}), exchange);
  }
  target.mark_halo_stale();
  ExecSpace().fence();  // on a device, the kernel may still run otherwise
}

template <class T, int N, class Expr>
void eager_assign(Array<T, N>& target, const Expr& expr) {
  eager_assign_to("kfuse::Array::operator=", target, expr);
}
template <class T, class Expr>
void eager_assign(Vector<T>& target, const Expr& expr) {
  eager_assign_to("kfuse::Vector::operator=", target, expr);
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
    constexpr int D = E::domain;
    static_assert(has_space(D), "kfuse::eval(r): r must reduce over Array or Vector expressions");
    const auto grid = first_space(e.arg);
    if (!grid) throw Error("kfuse::eval: the reduction reads no array, so its grid is unknown");
    exchange_t<D> exchange(*grid);
    prepare_leaves<D, decltype(e.arg), void>("kfuse::eval", e.arg, *grid, exchange, nullptr);
    EagerContext<D> ctx{&*grid};
    const auto value = lower(e.arg, ctx);
    using Op = typename E::op_type;
    const auto acc = run_exchanged<D, false>(
        "kfuse:group[eval " + std::string(Op::symbol) + "]", *grid,
        make_statement_list(Accumulate<0, Op, T, std::decay_t<decltype(value)>>{value}), exchange);
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
