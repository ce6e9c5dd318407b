// kfuse::fuse(args..., lambda): calls the generic lambda once with one placeholder per
// argument (ArrayParam<0, T, D>, ScalarParam<1, T>, ...) and makes the Program of the
// statements it returns, under the Policy's rewrite (Unfused: plan/unfused.hpp).
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/filter.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/unpack.hpp>

#include "kfuse/core/pack.hpp"
#include "kfuse/plan/policy.hpp"
#include "kfuse/plan/statement.hpp"
#include "kfuse/plan/unfused.hpp"
#include "kfuse/program/arguments.hpp"
#include "kfuse/program/program.hpp"

namespace kfuse {

namespace detail {

template <class Statement>
struct extra_temporary_tag {
  using type = void;
};
template <int I, class T, bool S, class E>
struct extra_temporary_tag<Assign<TempParam<I, T, S>, E>> {
  using type = TemporaryTag<T>;
};

/// The user's arguments followed by the Unfused rewrite's temporaries' tags.
template <class... Tags, class... Args, std::size_t... I>
Pack<Args..., Tags...> with_temporaries(const Pack<Args...>& args, std::index_sequence<I...>) {
  return {{{pack_get<I>(args)}..., {Tags{}}...}};
}

template <class Policy, int UserCount, class Statements, class UserArgs>
auto make_program(const Statements& statements, const UserArgs& args) {
  if constexpr (std::is_same_v<Policy, Unfused>) {
    auto split = split_operations(statements, hana::int_c<UserCount>);
    auto rewritten = hana::at_c<0>(split);
    constexpr int total = std::decay_t<decltype(hana::at_c<1>(split))>::value;
    // The rewrite's temporaries are the targets of statements past the user's positions.
    auto extra = hana::filter(rewritten, [](const auto& s) {
      using S = std::decay_t<decltype(s)>;
      using Tag = typename extra_temporary_tag<S>::type;
      if constexpr (!std::is_void_v<Tag>)
        return hana::bool_c<(decltype(s.target)::index >= UserCount)>;
      else
        return hana::false_c;
    });
    static_assert(decltype(hana::length(extra))::value == total - UserCount);
    auto all = hana::unpack(extra, [&](const auto&... s) {
      return with_temporaries<typename extra_temporary_tag<std::decay_t<decltype(s)>>::type...>(
          args, std::make_index_sequence<UserArgs::size>{});
    });
    return Program<Policy, decltype(rewritten), decltype(all), UserCount>(rewritten, all);
  } else {
    return Program<Policy, Statements, UserArgs, UserCount>(statements, args);
  }
}

/// Whether `Lambda` can be called with the first K placeholders of `Params`.
template <class Lambda, class Params, std::size_t... K>
constexpr bool callable_with_first(std::index_sequence<K...>) {
  return std::is_invocable_v<const Lambda&, std::tuple_element_t<K, Params>...>;
}

/// How many of the placeholders `Params` the lambda takes: the largest K it can be called
/// with the first K of, or -1 (it takes more, or a parameter no placeholder binds to).
/// Only a call whose arity matches instantiates the lambda's body, with the placeholders
/// its parameters get from fuse.
template <class Lambda, class Params, std::size_t K = std::tuple_size_v<Params>>
constexpr int parameters_taken() {
  if constexpr (callable_with_first<Lambda, Params>(std::make_index_sequence<K>{}))
    return int(K);
  else if constexpr (K == 0)
    return -1;
  else
    return parameters_taken<Lambda, Params, K - 1>();
}

/// fuse's check of its lambda's parameters; the numbers show in the compiler's message.
template <int Arguments, int LambdaParameters>
struct FuseLambdaTakes {
  static_assert(Arguments == LambdaParameters,
                "kfuse::fuse(args..., lambda): the lambda must take one `auto` parameter per "
                "argument before it; see FuseLambdaTakes<arguments, parameters> in this "
                "message (-1: more parameters than arguments, or one a placeholder cannot bind "
                "to)");
  static constexpr bool value = Arguments == LambdaParameters;
};

template <class Policy, class All, std::size_t... I>
auto fuse_impl(const All& all, std::index_sequence<I...>) {
  constexpr std::size_t count = sizeof...(I);
  using Lambda = std::decay_t<pack_element_t<count, All>>;
  using UserArgs = Pack<std::decay_t<pack_element_t<I, All>>...>;
  // A list of types only (std::tuple_element), never an object: no tuple is instantiated.
  using Params =
      std::tuple<typename param_for<static_cast<int>(I), pack_element_t<I, UserArgs>>::type...>;
  constexpr bool takes_all = FuseLambdaTakes<int(count), parameters_taken<Lambda, Params>()>::value;
  if constexpr (takes_all) {
    using Result = std::invoke_result_t<const Lambda&, std::tuple_element_t<I, Params>...>;
    static_assert(!std::is_void_v<Result>,
                  "kfuse::fuse(args..., lambda): the lambda returns nothing; end it with "
                  "`return kfuse::seq(...);` or `return` one statement");
    if constexpr (!std::is_void_v<Result>) {
      const UserArgs args{{{pack_get<I>(all)}...}};
      auto statements =
          program_statements(pack_get<count>(all)(std::tuple_element_t<I, Params>{}...));
      return make_program<Policy, static_cast<int>(count)>(statements, args);
    }
  }
}

}  // namespace detail

/// Builds a program: fuse(args..., [](auto a, auto b, ...) { return kfuse::seq(...); }).
/// The Policy (Fused, PerStatement, Unfused) decides how statements become kernels.
template <class Policy = Fused, class... A>
auto fuse(const A&... args) {
  static_assert(sizeof...(A) >= 1, "kfuse::fuse(args..., lambda): the lambda is missing");
  static_assert(std::is_same_v<Policy, Fused> || std::is_same_v<Policy, PerStatement> ||
                    std::is_same_v<Policy, Unfused>,
                "kfuse::fuse<Policy>: Policy must be kfuse::Fused, kfuse::PerStatement or "
                "kfuse::Unfused");
  return detail::fuse_impl<Policy>(detail::make_pack<const A&...>(args...),
                                   std::make_index_sequence<sizeof...(A) - 1>{});
}

}  // namespace kfuse
