// Output of a run: the markdown table (stdout, rank 0) and the JSON rows
// (one object per workload x variant) for benchmarks/plot.py.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "runner.hpp"
#include "stream.hpp"

namespace kfuse::bench {

void write_markdown(std::ostream& out, const std::vector<Row>& rows, const StreamResult& stream,
                    const Options& options);
void write_json(const std::string& path, const std::vector<Row>& rows, const Options& options);

}  // namespace kfuse::bench
