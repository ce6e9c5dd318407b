// The Matrix Market text format (coordinate; real, integer or pattern;
// general, symmetric or skew-symmetric), parsed by a pure function over a
// stream: no MPI, no Kokkos, so the reader (sparse/matrix_market.hpp) and the
// fuzz target share it. Every malformed input is a kfuse::Error naming the
// file and the line; nothing is allocated from the sizes a file declares.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <istream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"

namespace kfuse::detail {

/// A parsed file: 0-based entries, symmetric storage expanded to both triangles.
template <class T>
struct MatrixMarketData {
  index_t rows = 0, cols = 0;
  std::vector<index_t> row, col;
  std::vector<T> value;
};

class MatrixMarketParser {
 public:
  MatrixMarketParser(std::istream& in, const std::string& name) : in_(in), name_(name) {}

  template <class T>
  MatrixMarketData<T> parse() {
    MatrixMarketData<T> data;
    if (!next_line()) fail_at_end("empty file; expected the banner ", banner_example);
    read_banner();
    if (!next_content_line()) fail_at_end("the file ends before the size line");
    if (tokens_.size() != 3 || !parse_integer(tokens_[0], data.rows) ||
        !parse_integer(tokens_[1], data.cols) || !parse_integer(tokens_[2], entries_) ||
        data.rows < 0 || data.cols < 0 || entries_ < 0)
      fail("malformed size line ", quote(line_), "; expected 'rows columns entries'");
    if (symmetry_ != Symmetry::general && data.rows != data.cols)
      fail("a ", symmetry_name(), " matrix must be square, not ", data.rows, " x ", data.cols);

    const std::size_t fields = field_ == Field::pattern ? 2 : 3;
    index_t read = 0;
    while (next_content_line()) {
      if (read == entries_) fail("more entries than the ", entries_, " the size line declares");
      ++read;
      if (tokens_.size() != fields)
        fail("expected ", fields == 2 ? "'row column'" : "'row column value'", ", found ",
             quote(line_));
      const index_t i = index(tokens_[0], "row", data.rows);
      const index_t j = index(tokens_[1], "column", data.cols);
      const T v = field_ == Field::pattern ? T(1) : value<T>(tokens_[2]);
      if (symmetry_ != Symmetry::general) check_triangle(i, j);
      push(data, i, j, v);
      if (i != j && symmetry_ == Symmetry::symmetric) push(data, j, i, v);
      if (i != j && symmetry_ == Symmetry::skew_symmetric) push(data, j, i, negated(v));
    }
    if (in_.bad()) fail_at_end("read error");
    if (read < entries_)
      fail_at_end("the file ends after ", read, " of the ", entries_, " declared entries");
    return data;
  }

 private:
  enum class Field { real, integer, pattern };
  enum class Symmetry { general, symmetric, skew_symmetric };
  static constexpr const char* banner_example =
      "'%%MatrixMarket matrix coordinate real|integer|pattern general|symmetric'";

  template <class... Parts>
  [[noreturn]] void fail(Parts&&... parts) const {
    throw Error(error_message("kfuse::read_matrix_market: ", name_, ":", line_number_, ": ",
                              std::forward<Parts>(parts)...));
  }
  /// Errors about what is missing point at the line after the last one.
  template <class... Parts>
  [[noreturn]] void fail_at_end(Parts&&... parts) {
    ++line_number_;
    fail(std::forward<Parts>(parts)...);
  }

  /// Quoted and cut short: a message never carries a whole (fuzzed) line.
  static std::string quote(std::string_view text) {
    constexpr std::size_t max = 60;
    std::string out = "'";
    for (char c : text.substr(0, max)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    return out + (text.size() > max ? "...'" : "'");
  }

  bool next_line() {
    if (!std::getline(in_, line_)) return false;
    ++line_number_;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();  // CRLF files
    tokens_.clear();
    std::size_t at = 0;
    while (true) {
      at = line_.find_first_not_of(" \t", at);
      if (at == std::string::npos) break;
      const std::size_t end = std::min(line_.find_first_of(" \t", at), line_.size());
      tokens_.emplace_back(line_.data() + at, end - at);
      at = end;
    }
    return true;
  }
  /// The next line that is neither blank nor a comment.
  bool next_content_line() {
    while (next_line())
      if (!tokens_.empty() && tokens_[0][0] != '%') return true;
    return false;
  }

  static std::string lower(std::string_view word) {
    std::string out(word);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }

  void read_banner() {
    if (tokens_.empty() || lower(tokens_[0]) != "%%matrixmarket")
      fail("expected the banner ", banner_example, ", found ", quote(line_));
    if (tokens_.size() != 5) fail("malformed banner ", quote(line_), "; expected ", banner_example);
    const std::string object = lower(tokens_[1]), format = lower(tokens_[2]);
    const std::string field = lower(tokens_[3]), symmetry = lower(tokens_[4]);
    if (object != "matrix")
      fail("object ", quote(tokens_[1]), " is not supported; expected 'matrix'");
    if (format == "array") fail("dense 'array' files are not supported; expected 'coordinate'");
    if (format != "coordinate")
      fail("unknown format ", quote(tokens_[2]), "; expected 'coordinate'");
    if (field == "real" || field == "double") {
      field_ = Field::real;
    } else if (field == "integer") {
      field_ = Field::integer;
    } else if (field == "pattern") {
      field_ = Field::pattern;
    } else if (field == "complex") {
      fail("complex matrices are not supported; expected real, integer or pattern");
    } else {
      fail("unknown field ", quote(tokens_[3]), "; expected real, integer or pattern");
    }
    if (symmetry == "general") {
      symmetry_ = Symmetry::general;
    } else if (symmetry == "symmetric") {
      symmetry_ = Symmetry::symmetric;
    } else if (symmetry == "skew-symmetric" && field_ != Field::pattern) {
      symmetry_ = Symmetry::skew_symmetric;
    } else if (symmetry == "hermitian") {
      fail("hermitian matrices are not supported; expected general or symmetric");
    } else {
      fail("unsupported symmetry ", quote(tokens_[4]), " for field '", field,
           "'; expected general or symmetric");
    }
  }
  /// A symmetric or skew-symmetric file stores one triangle, which the other
  /// mirrors: the lower one (row >= column) in the standard, the upper one as
  /// some writers do; the first entry off the diagonal tells which. An entry
  /// of the other triangle would be summed with its mirror image silently.
  void check_triangle(index_t i, index_t j) {
    if (i == j) {
      if (symmetry_ == Symmetry::skew_symmetric)
        fail("a skew-symmetric matrix has a zero diagonal, which the file does not store; "
             "found the entry (", i + 1, ", ", j + 1, ")");
      return;
    }
    const int side = i > j ? 1 : -1;
    if (triangle_ == 0) {
      triangle_ = side;
      triangle_line_ = line_number_;
    } else if (side != triangle_) {
      auto where = [](int s) { return s > 0 ? "below" : "above"; };
      fail("the entry (", i + 1, ", ", j + 1, ") lies ", where(side), " the diagonal, but line ",
           triangle_line_, " has one ", where(triangle_), " it; a ", symmetry_name(),
           " file stores one triangle (the lower one: row >= column) and its mirror image is "
           "implied, so write each pair once or use 'general'");
    }
  }
  const char* symmetry_name() const {
    return symmetry_ == Symmetry::symmetric ? "symmetric" : "skew-symmetric";
  }

  /// A whole token as a decimal integer (an optional sign, then digits).
  static bool parse_integer(std::string_view text, index_t& out) {
    if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
  }

  /// A 1-based index in [1, n], returned 0-based.
  index_t index(std::string_view text, const char* what, index_t n) const {
    index_t i = 0;
    if (!parse_integer(text, i)) fail("cannot read the ", what, " index ", quote(text));
    if (i < 1 || i > n) fail(what, " index ", i, " is outside [1, ", n, "]");
    return i - 1;
  }

  template <class T>
  T value(std::string_view text) const {
    if (field_ == Field::integer || std::is_integral_v<T>) {
      index_t v = 0;
      if (!parse_integer(text, v)) fail("cannot read the integer value ", quote(text));
      if constexpr (std::is_integral_v<T>) {  // fits when it survives the round trip
        const T t = static_cast<T>(v);
        if (static_cast<index_t>(t) != v || (v < 0 && !std::is_signed_v<T>))
          fail("value ", v, " does not fit the matrix's element type");
      }
      return static_cast<T>(v);
    } else {
      std::string_view digits = text;  // from_chars takes no '+'
      if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
      const char* last = digits.data() + digits.size();
      T v{};
      const auto [end, ec] = std::from_chars(digits.data(), last, v);
      if ((ec != std::errc() && ec != std::errc::result_out_of_range) || end != last)
        fail("cannot read the value ", quote(text));
      if (ec == std::errc::result_out_of_range) {
        // Too small for T: what a cast gives (0 or subnormal). Too large: an error.
        long double wide = 0;
        const auto wider = std::from_chars(digits.data(), last, wide);
        if (wider.ec != std::errc() ||
            std::fabs(wide) > static_cast<long double>(std::numeric_limits<T>::max()))
          fail("value ", quote(text), " is out of the range of the matrix's element type");
        v = static_cast<T>(wide);
      }
      if (!std::isfinite(v)) fail("value ", quote(text), " is not a finite number");
      return v;
    }
  }

  /// The mirror image of a skew-symmetric entry, which must fit T too: an
  /// integer type's minimum has no negation, an unsigned type no negatives.
  template <class T>
  T negated(T v) const {
    if constexpr (std::is_integral_v<T>)
      if (v != 0 && (!std::is_signed_v<T> || v == std::numeric_limits<T>::min()))
        fail("value ", +v, " has no negation in the matrix's element type, which the mirror ",
             "entry of a skew-symmetric file needs");
    return static_cast<T>(-v);
  }

  template <class T>
  static void push(MatrixMarketData<T>& data, index_t i, index_t j, T v) {
    data.row.push_back(i);
    data.col.push_back(j);
    data.value.push_back(v);
  }

  std::istream& in_;
  const std::string& name_;
  std::string line_;
  std::vector<std::string_view> tokens_;  // views into line_
  index_t line_number_ = 0;
  index_t entries_ = 0;
  Field field_ = Field::real;
  Symmetry symmetry_ = Symmetry::general;
  int triangle_ = 0;  // +1: entries below the diagonal, -1: above, 0: none yet
  index_t triangle_line_ = 0;
};

/// Parses a Matrix Market file read from `in`; `name` (the file name) goes
/// into error messages. Throws kfuse::Error on any malformed input.
template <class T = double>
MatrixMarketData<T> parse_matrix_market(std::istream& in, const std::string& name) {
  return MatrixMarketParser(in, name).parse<T>();
}

}  // namespace kfuse::detail
