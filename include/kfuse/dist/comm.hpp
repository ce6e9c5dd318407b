// Comm: the communicator every distributed object lives on. With MPI it wraps
// an MPI_Comm; built with KFUSE_ENABLE_MPI=0 it is a one-rank stand-in with
// the same interface, so user code never needs #ifdefs.
//
// Also the collective error protocol (docs/architecture.md §11): a check that fails on one
// rank is agreed on by all ranks (agree_or_throw), so every rank throws the
// same kfuse::Error and none is left waiting in MPI.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"

#if KFUSE_ENABLE_MPI
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // kfuse uses the C API; the C++ bindings only add warnings
#endif
#include <mpi.h>
#endif

namespace kfuse {

enum class ReduceOp { sum, max, min };

class Comm {
 public:
#if KFUSE_ENABLE_MPI
  Comm() : Comm(MPI_COMM_WORLD) {}
  explicit Comm(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  MPI_Comm native() const { return comm_; }
#else
  Comm() = default;
#endif

  int rank() const { return rank_; }
  int size() const { return size_; }

  void barrier() const {
#if KFUSE_ENABLE_MPI
    MPI_Barrier(comm_);
#endif
  }

  /// Reduces `count` values in place over all ranks.
  template <class T>
  void allreduce(T* values, int count, ReduceOp op) const {
#if KFUSE_ENABLE_MPI
    MPI_Allreduce(MPI_IN_PLACE, values, count, mpi_type<T>(), mpi_op(op), comm_);
#else
    (void)values, (void)count, (void)op;
#endif
  }

  template <class T>
  T allreduce(T value, ReduceOp op) const {
    allreduce(&value, 1, op);
    return value;
  }

  /// Reduces one value in place over all ranks with `value.join(other)`: T is trivially
  /// copyable (MPI moves its bytes), and its join may combine several sums, maxima and
  /// minima at once, so one message carries them all.
  template <class T>
  void allreduce_joined(T& value) const {
    static_assert(std::is_trivially_copyable_v<T>,
                  "kfuse::Comm::allreduce_joined(value): value must be trivially copyable");
#if KFUSE_ENABLE_MPI
    static const JoinedReduction<T> reduction;  // made once per T, after MPI_Init
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, reduction.type, reduction.op, comm_);
#else
    (void)value;
#endif
  }

  /// Every rank's block, in rank order, on every rank: rank r's
  /// counts[r] values land at all + displacements[r]. `mine` holds this
  /// rank's block and may not overlap `all`.
  template <class T>
  void allgatherv(const T* mine, T* all, const std::vector<int>& counts,
                  const std::vector<int>& displacements) const {
#if KFUSE_ENABLE_MPI
    MPI_Allgatherv(mine, counts[static_cast<std::size_t>(rank_)], mpi_type<T>(), all, counts.data(),
                   displacements.data(), mpi_type<T>(), comm_);
#else
    std::copy(mine, mine + counts[0], all + displacements[0]);
#endif
  }

  /// Reduces a value over the ranks of this communicator that share this
  /// rank's node (memory), e.g. what they are about to allocate. Collective.
  template <class T>
  T node_allreduce(T value, ReduceOp op) const {
#if KFUSE_ENABLE_MPI
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, mpi_type<T>(), mpi_op(op), node);
    MPI_Comm_free(&node);
#else
    (void)op;
#endif
    return value;
  }

  /// Collective: throws the same kfuse::Error on every rank when any rank
  /// passes a non-empty message (the lowest failing rank's message wins,
  /// prefixed with that rank when there are several ranks).
  void agree_or_throw(const std::string& local_error) const {
#if KFUSE_ENABLE_MPI
    int failing = local_error.empty() ? size_ : rank_;
    MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, comm_);
    if (failing != size_) throw_agreed(failing, local_error);
#else
    if (!local_error.empty()) throw Error(local_error);
#endif
  }

  /// Collective: runs f() on every rank; an exception it throws on any rank
  /// (its what(): std::bad_alloc too) is a kfuse::Error on every rank, as
  /// agree_or_throw throws it.
  template <class F>
  void agree_on(F&& f) const {
    std::string error;
    try {
      f();
    } catch (const std::exception& e) {
      error = e.what();
    }
    agree_or_throw(error);
  }

  /// Collective, one allreduce: `values` becomes each value's smallest over the
  /// ranks and the returned vector its largest (the smallest is the largest
  /// complement: ~ reverses the order of two's-complement integers).
  std::vector<std::int64_t> reduce_extremes(std::vector<std::int64_t>& values) const {
    return agree_or_throw({}, values);
  }

  /// agree_or_throw(local_error) and reduce_extremes(values) in one allreduce:
  /// a setup checks its arguments and compares what must be alike on every
  /// rank in one message. Collective.
  std::vector<std::int64_t> agree_or_throw(const std::string& local_error,
                                           std::vector<std::int64_t>& values) const {
#if !KFUSE_ENABLE_MPI
    if (!local_error.empty()) throw Error(local_error);
#endif
    const std::size_t n = values.size();
    std::vector<std::int64_t> all(values);
    for (std::int64_t v : values) all.push_back(~v);
    // The lowest failing rank as the largest of the negated ranks (size_: none fails).
    all.push_back(-std::int64_t(local_error.empty() ? size_ : rank_));
    allreduce(all.data(), static_cast<int>(all.size()), ReduceOp::max);
#if KFUSE_ENABLE_MPI
    if (const int failing = static_cast<int>(-all.back()); failing != size_)
      throw_agreed(failing, local_error);
#endif
    for (std::size_t i = 0; i < n; ++i) values[i] = ~all[n + i];
    all.resize(n);
    return all;
  }

  /// Collective: throws on every rank unless all ranks passed the same value
  /// (collective constructors check their global arguments with this). Every
  /// rank sees the same extremes, so all throw alike without an agreement.
  void check_same(std::int64_t value, const std::string& api, const std::string& what) const {
    std::vector<std::int64_t> lo{value};
    const std::int64_t hi = reduce_extremes(lo)[0];
    if (lo[0] != hi)
      throw Error(detail::error_message(api, ": ranks passed different ", what, " (", lo[0],
                                        " and ", hi,
                                        "); every rank must pass the same global arguments"));
  }

  friend bool operator==(const Comm& a, const Comm& b) {
#if KFUSE_ENABLE_MPI
    if (a.comm_ == b.comm_) return true;
    int result = MPI_UNEQUAL;
    MPI_Comm_compare(a.comm_, b.comm_, &result);
    return result == MPI_IDENT || result == MPI_CONGRUENT;
#else
    (void)a, (void)b;
    return true;
#endif
  }
  friend bool operator!=(const Comm& a, const Comm& b) { return !(a == b); }

#if KFUSE_ENABLE_MPI
  template <class T>
  static MPI_Datatype mpi_type() {
    if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
    else if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
    else if constexpr (std::is_same_v<T, int>) return MPI_INT;
    else if constexpr (std::is_same_v<T, long>) return MPI_LONG;
    else if constexpr (std::is_same_v<T, long long>) return MPI_LONG_LONG;
    else if constexpr (std::is_same_v<T, unsigned long>) return MPI_UNSIGNED_LONG;
    else if constexpr (std::is_same_v<T, char>) return MPI_CHAR;
    else {
      static_assert(sizeof(T) == 0, "kfuse::Comm: no MPI datatype for this element type");
      return MPI_DATATYPE_NULL;
    }
  }
  static MPI_Op mpi_op(ReduceOp op) {
    return op == ReduceOp::sum ? MPI_SUM : op == ReduceOp::max ? MPI_MAX : MPI_MIN;
  }
#endif

 private:
#if KFUSE_ENABLE_MPI
  /// The failing rank's message, sent to every rank and thrown there (agree_or_throw).
  [[noreturn]] void throw_agreed(int failing, const std::string& local_error) const {
    int length = rank_ == failing ? static_cast<int>(local_error.size()) : 0;
    MPI_Bcast(&length, 1, MPI_INT, failing, comm_);
    std::string message = rank_ == failing ? local_error : std::string(length, ' ');
    MPI_Bcast(message.data(), length, MPI_CHAR, failing, comm_);
    if (size_ > 1) message += " (detected on rank " + std::to_string(failing) + ")";
    throw Error(message);
  }

  /// allreduce_joined's datatype (T's bytes) and operation (T::join). Never freed: a
  /// static's destructor would run after MPI_Finalize, which releases them.
  template <class T>
  struct JoinedReduction {
    MPI_Datatype type;
    MPI_Op op;
    JoinedReduction() {
      MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &type);
      MPI_Type_commit(&type);
      MPI_Op_create(&join, /*commute=*/1, &op);
    }
    static void join(void* in, void* inout, int* count, MPI_Datatype*) {
      const T* from = static_cast<const T*>(in);
      T* into = static_cast<T*>(inout);
      for (int k = 0; k < *count; ++k) into[k].join(from[k]);
    }
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
#endif
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace kfuse
