// Scalar<T>: a named value on the host, shared by handle. Reductions write
// it, kernels read it (captured at launch), scalar-only statements update it
// between kernels.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

namespace kfuse {

template <class T>
class Scalar {
  static_assert(std::is_arithmetic_v<T>, "kfuse::Scalar<T>: T must be an arithmetic type");

 public:
  using value_type = T;

  explicit Scalar(std::string label = "scalar", T value = T{})
      : state_(std::make_shared<State>(State{value, std::move(label)})) {}

  Scalar& operator=(T value) {
    state_->value = value;
    return *this;
  }
  T value() const { return state_->value; }
  const std::string& label() const { return state_->label; }
  /// True when both handles name the same value.
  bool same_as(const Scalar& other) const { return state_ == other.state_; }
  const void* storage_id() const { return state_.get(); }

 private:
  struct State {
    T value;
    std::string label;
  };
  std::shared_ptr<State> state_;
};

}  // namespace kfuse
