// libFuzzer target: the Matrix Market parser on arbitrary bytes. A kfuse::Error
// is the parser rejecting its input, which is fine; anything else (a crash, a
// sanitizer report, another exception, a hang, an entry outside the declared
// size) is a bug. Built by tests/fuzz/tests.cmake and scripts/fuzz.sh with
// clang -fsanitize=fuzzer,address,undefined; needs no MPI and no Kokkos.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include <kfuse/sparse/matrix_market_parser.hpp>

namespace {

template <class T>
void parse(const std::string& text) {
  std::istringstream in(text);
  try {
    const auto m = kfuse::detail::parse_matrix_market<T>(in, "fuzz.mtx");
    if (m.row.size() != m.col.size() || m.row.size() != m.value.size()) __builtin_trap();
    for (std::size_t k = 0; k < m.row.size(); ++k)
      if (m.row[k] < 0 || m.row[k] >= m.rows || m.col[k] < 0 || m.col[k] >= m.cols)
        __builtin_trap();
  } catch (const kfuse::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  parse<double>(text);
  parse<float>(text);  // other range limits
  parse<int>(text);    // integer element type: reals rejected, integers range-checked
  return 0;
}
