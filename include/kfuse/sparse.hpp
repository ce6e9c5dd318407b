// Layer umbrella: kfuse/sparse.
#pragma once
#include "kfuse/sparse/csr_matrix.hpp"
#include "kfuse/sparse/generators.hpp"
#include "kfuse/sparse/matrix_market.hpp"
#include "kfuse/sparse/matrix_market_parser.hpp"
